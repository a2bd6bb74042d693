"""The tero.policy.v1 wire format: binary protobuf and the proto3 JSON mapping."""

from __future__ import annotations

import http.client
import json
import logging
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format

from sluice.policy import PolicySnapshot, load_document
from sluice.policy.canonical import canonical_policy
from sluice.policy.model import KeepKind
from sluice.policy.parse import json_repr
from sluice.providers.server import PolicyFileSource
from sluice.providers.sync import read_json_response, read_response
from sluice.providers.wire import policy_pb2 as pb
from tests.conformance.harness import TESTCASES
from tests.conformance.servers import policy_server
from tests.providers.helpers import drop, surviving, write_policies

POLICY_FILES = sorted(TESTCASES.glob("*/policies.json"))


@pytest.mark.parametrize("path", POLICY_FILES, ids=[p.parent.name for p in POLICY_FILES])
def test_every_policy_file_survives_binary_protobuf(path: Path) -> None:
    """Either dialect -> canonical proto-JSON -> binary -> back: same policies, same errors."""
    doc = json.loads(path.read_text())
    message = json_format.ParseDict(
        {"policies": [canonical_policy(p) for p in doc["policies"]]}, pb.SyncResponse()
    )
    wire = pb.SyncResponse.FromString(message.SerializeToString())
    assert read_response(wire).report.policies == load_document(doc).policies


def post(url: str, body: bytes, content_type: str = "application/json") -> Any:
    request = urllib.request.Request(url, data=body, method="POST")
    request.add_header("Content-Type", content_type)
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


@pytest.mark.parametrize(
    "request_json",
    [
        {
            "fullSync": True,
            "lastSyncTimestampUnixNano": "1700000000000000000",
            "clientMetadata": {"supportedPolicyStages": ["POLICY_STAGE_LOG_FILTER", 3]},
            "policyStatuses": [{"id": "drop-x", "matchHits": "5", "matchMisses": 1}],
        },
        {
            "full_sync": True,
            "last_sync_timestamp_unix_nano": 1700000000000000000,
            "client_metadata": {"supported_policy_stages": [1, "POLICY_STAGE_METRIC_FILTER"]},
            "policy_statuses": [{"id": "drop-x", "match_hits": 5, "match_misses": "1"}],
        },
    ],
    ids=["camelCase", "snake_case"],
)
def test_the_server_reads_both_json_spellings(tmp_path: Path, request_json: Any) -> None:
    policies = tmp_path / "p.json"
    write_policies(policies, drop("drop-x", "x"))
    with policy_server(policies) as server:
        answer = post(server.sync_url, json.dumps(request_json).encode())
        stats = server.get("/stats")
    assert stats == {"policies": [{"policy_id": "drop-x", "hits": 5}]}
    # Answers use enum numbers, 64-bit integers as strings, every field written out.
    matcher = answer["policies"][0]["log"]["match"][0]
    assert matcher["logField"] == 1 and matcher["exact"] == "x"
    assert isinstance(answer["syncTimestampUnixNano"], str)
    assert answer["syncType"] == 1 and answer["errorMessage"] == ""


def test_responses_with_enum_names_or_numbers_read_the_same() -> None:
    def response(field: Any, kind: Any) -> bytes:
        return json.dumps(
            {
                "hash": "h",
                "recommendedSyncIntervalSeconds": 30,
                "policies": [
                    {
                        "id": "t",
                        "name": "t",
                        "enabled": True,
                        "trace": {
                            "match": [{"traceField": field, "regex": "^GET"}, {"spanKind": kind}],
                            "keep": {"percentage": 10, "mode": "SAMPLING_MODE_EQUALIZING"},
                        },
                    }
                ],
            }
        ).encode()

    by_name = read_json_response(response("TRACE_FIELD_NAME", "SPAN_KIND_SERVER"))
    by_number = read_json_response(response(1, 2))
    assert by_name.report.policies == by_number.report.policies
    assert by_name.report.policies[0].valid
    assert by_name.interval_secs == 30.0 and by_name.hash == "h"


@pytest.mark.parametrize(
    ("written", "interval"),
    [("30", 30.0), ("0.1", 1.0), ("1e999", 86400.0), ("1e12", 86400.0), ("-5", None), ("0", None)],
)
def test_a_recommended_interval_is_kept_within_bounds(written: str, interval: float | None) -> None:
    """A server's interval of 1e999 (infinity) or 1e12 overflowed the poll's
    wait and killed the polling thread; it is bounded to a day."""
    body = f'{{"hash": "h", "policies": [], "recommendedSyncIntervalSeconds": {written}}}'
    assert read_json_response(body.encode()).interval_secs == interval


def test_a_protobuf_request_gets_a_protobuf_answer(tmp_path: Path) -> None:
    policies = tmp_path / "p.json"
    write_policies(policies, drop("drop-x", "x"))
    request = pb.SyncRequest(full_sync=True)
    request.policy_statuses.add(id="drop-x", match_hits=2, errors=["e"])
    with policy_server(policies) as server:
        http_request = urllib.request.Request(
            server.sync_url, data=request.SerializeToString(), method="POST"
        )
        http_request.add_header("Content-Type", "application/x-protobuf")
        http_request.add_header("Accept", "application/x-protobuf")
        with urllib.request.urlopen(http_request, timeout=10) as answer:
            kind = answer.headers["Content-Type"]
            message = pb.SyncResponse.FromString(answer.read())
        stats = server.get("/stats")
    assert kind == "application/x-protobuf"
    assert [p.id for p in message.policies] == ["drop-x"]
    assert len(message.hash) == 64
    assert stats == {"policies": [{"policy_id": "drop-x", "hits": 2, "errors": ["e"]}]}


@pytest.mark.parametrize("method", ["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE", "PURGE"])
def test_the_sync_path_answers_any_other_method_405(tmp_path: Path, method: str) -> None:
    """POLICY.md 11.2: ``POST`` syncs; other methods -> 405 (not 501 for the
    methods the HTTP library has no handler for). A HEAD answer has no body,
    so the connection stays usable."""
    policies = tmp_path / "p.json"
    write_policies(policies, drop("drop-x", "x"))
    with policy_server(policies) as server:
        connection = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=10)
        try:
            connection.request(method, "/v1/policy/sync")
            answer = connection.getresponse()
            answer.read()
            assert answer.status == 405
            assert answer.getheader("Allow") == "POST"
            connection.request("POST", "/v1/policy/sync", body=b"{}")
            after = connection.getresponse()
            assert after.status == 200
            assert [p["id"] for p in json.loads(after.read())["policies"]] == ["drop-x"]
        finally:
            connection.close()


def json_response(*policies: dict[str, Any], **fields: Any) -> bytes:
    return json.dumps({"hash": "h", **fields, "policies": list(policies)}).encode()


PROTO_DROP_X = {
    "id": "drop-x",
    "name": "drop-x",
    "log": {"match": [{"logField": "LOG_FIELD_BODY", "exact": "x"}], "keep": "none"},
}
"""Exact proto3 JSON (it parses as a SyncResponse), without ``enabled``."""
AUTHORING_DROP_X = drop("drop-x", "x")


@pytest.mark.parametrize("policy", [PROTO_DROP_X, AUTHORING_DROP_X], ids=["proto3", "authoring"])
def test_a_sync_policy_without_enabled_is_enabled(policy: dict[str, Any]) -> None:
    """POLICY.md section 0: ``enabled`` missing means true, in sync JSON too.
    Proto3 reads a missing bool as false: the policy was silently disabled."""
    [read] = read_json_response(json_response(policy)).report.policies
    assert read.enabled and read.valid
    assert surviving(PolicySnapshot.compile([read]), "x", "y") == ["y"]


def test_enabled_false_disables_in_json_and_binary() -> None:
    disabled = {**PROTO_DROP_X, "enabled": False}
    assert not read_json_response(json_response(disabled)).report.policies[0].enabled
    message = json_format.ParseDict(
        {"policies": [PROTO_DROP_X]}, pb.SyncResponse()
    )  # binary protobuf cannot tell false from absent: the wire's false stands
    wire = pb.SyncResponse.FromString(message.SerializeToString())
    assert not read_response(wire).report.policies[0].enabled


@pytest.mark.parametrize(
    "raw, shown", [(None, "null"), ("false", '"false"'), (0, "0")], ids=["null", "string", "zero"]
)
def test_a_sync_policy_whose_enabled_is_no_boolean_is_reported_not_applied(
    raw: Any, shown: str
) -> None:
    """As in a policy file: only a missing ``enabled`` means true. Proto3
    reads null as false (and "false" or 0 are no proto3 JSON: the tolerant
    reader takes them); both used to come out enabled and drop "x"."""
    [read] = read_json_response(json_response({**PROTO_DROP_X, "enabled": raw})).report.policies
    assert read.enabled and read.errors == (f"enabled: expected true or false, got {shown}",)
    assert surviving(PolicySnapshot.compile([read]), "x", "y") == ["x", "y"]


@pytest.mark.parametrize("raw", ["false", 0, None, "true"], ids=["false", "zero", "null", "true"])
def test_the_server_serves_a_policy_whose_enabled_is_no_boolean_disabled(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, raw: Any
) -> None:
    """A file policy with such an ``enabled`` is an error (skipped); the proto
    bool cannot carry that, so it is served disabled and the server says so.
    It used to be served enabled: every client ran "enabled": "false"."""
    path = tmp_path / "p.json"
    write_policies(path, {**drop("drop-x", "x"), "enabled": raw}, drop("drop-y", "y"))
    caplog.set_level(logging.WARNING, "sluice.providers.server")
    served = read_response(PolicyFileSource(path).current()).report.policies
    assert [(p.id, p.enabled) for p in served] == [("drop-x", False), ("drop-y", True)]
    assert [r.getMessage() for r in caplog.records] == [
        f'{path}: policy "drop-x": enabled: expected true or false, got {json_repr(raw)}; '
        "served disabled"
    ]


def proto_metric(*keep: Any) -> dict[str, Any]:
    """Exact proto3 JSON of a metric policy dropping "m", with ``keep`` when given."""
    metric: dict[str, Any] = {"match": [{"metricField": "METRIC_FIELD_NAME", "exact": "m"}]}
    if keep:
        metric["keep"] = keep[0]
    return {"id": "drop-m", "name": "drop-m", "metric": metric}


@pytest.mark.parametrize(
    "keep, error",
    [((), "metric: keep: missing"), ((None,), "metric: keep: invalid value null")],
    ids=["missing", "null"],
)
def test_a_sync_metric_policy_without_a_boolean_keep_is_reported_not_applied(
    keep: tuple[Any, ...], error: str
) -> None:
    """POLICY.md section 0: a missing metric ``keep`` is an error, as in a
    policy file. Proto3 reads a missing or null bool as false: the policy
    used to drop every metric it matched, without a word."""
    [read] = read_json_response(json_response(proto_metric(*keep))).report.policies
    assert read.errors == (error,) and not read.valid


@pytest.mark.parametrize("keep", [False, True])
def test_a_sync_metric_keep_written_is_read(keep: bool) -> None:
    [read] = read_json_response(json_response(proto_metric(keep))).report.policies
    assert read.valid and read.keep.kind is (KeepKind.ALL if keep else KeepKind.NONE)


@pytest.mark.parametrize(
    "keep, why",
    [(..., "metric: keep: missing"), ("some", 'metric: keep: invalid value "some"')],
    ids=["missing", "string"],
)
def test_the_server_serves_a_metric_policy_without_a_boolean_keep_disabled(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, keep: Any, why: str
) -> None:
    """Served as it is, its proto ``keep`` reads false: every client would drop
    the metrics it matches, where the file's own reader skips the policy."""
    metric: dict[str, Any] = {"match": [{"metric_field": "name", "exact": "m"}]}
    if keep is not ...:
        metric["keep"] = keep
    path = tmp_path / "p.json"
    write_policies(
        path,
        {"id": "drop-m", "name": "drop-m", "metric": metric},
        {"id": "keep-n", "name": "keep-n", "metric": {**metric, "keep": "all"}},
    )
    caplog.set_level(logging.WARNING, "sluice.providers.server")
    served = read_response(PolicyFileSource(path).current()).report.policies
    assert [(p.id, p.enabled) for p in served] == [("drop-m", False), ("keep-n", True)]
    assert [r.getMessage() for r in caplog.records] == [
        f'{path}: policy "drop-m": {why}; served disabled'
    ]


def test_authoring_keys_in_sync_json_are_read_not_dropped() -> None:
    """``sample_rate`` is no protocol field: a proto3 reader dropped it, so the
    policy kept everything instead of 10%."""
    policy = {
        "id": "sample",
        "name": "sample",
        "enabled": True,
        "log": {"match": [{"logField": "LOG_FIELD_BODY", "exact": "x"}], "sample_rate": 0.1},
    }
    [read] = read_json_response(json_response(policy)).report.policies
    assert read.valid and read.keep.kind is KeepKind.PERCENT and read.keep.percent == 10.0


def test_unknown_fields_in_sync_json_are_reported() -> None:
    """A key neither dialect knows (a typo, a newer server's field) is
    reported as a warning naming the policy and the key; the policy still
    applies (a newer control plane must not switch policies off). Both used to
    vanish silently."""
    typo = {
        "id": "typo",
        "name": "typo",
        "enabled": True,
        "log": {"match": [{"logField": 1, "exact": "x", "negat": True}], "keep": "none"},
        "priority": 3,
    }
    fine = {**PROTO_DROP_X, "id": "fine", "extensions": {}}
    report = read_json_response(json_response(typo, fine, syncVersion=2)).report
    assert all(p.valid for p in report.policies)  # `extensions` is a protocol field
    assert report.warnings == [
        'sync response: unknown field "syncVersion"; ignored',
        'policy "typo": log: match[0]: unknown field "negat"; ignored',
        'policy "typo": unknown field "priority"; ignored',
    ]
