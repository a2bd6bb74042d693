"""Decoding without loss, against the real Edge process (issue 12, defects 2,
5, 6 and 7): every gzip member and zstd frame is read, trailing garbage is
refused, one malformed container or record never switches filtering off for
the rest of the request, lone surrogates survive re-encoding, and typed
``event_attribute`` conditions work in the compiled build."""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator
from typing import Any

import pytest
import zstandard
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.edge.helpers import (
    EdgeLauncher,
    EdgeProcess,
    Prometheus,
    Upstream,
    otlp_logs_json,
    otlp_logs_proto,
    policies,
    proto_bodies,
)

JSON = "application/json"
PROTOBUF = "application/x-protobuf"
CARD = "4111-1111-1111-1111"
POLICIES = policies(
    {
        "id": "drop-debug",
        "name": "drop-debug",
        "log": {"match": [{"log_field": "severity_text", "exact": "DEBUG"}], "keep": "none"},
    },
    {
        "id": "drop-me",
        "name": "drop-me",
        "log": {"match": [{"log_field": "body", "contains": "drop-me"}], "keep": "none"},
    },
    {
        "id": "mask-cards",
        "name": "mask-cards",
        "log": {
            "match": [{"log_field": "body", "regex": r"\d{4}-\d{4}-\d{4}-\d{4}"}],
            "keep": "all",
            "transform": {
                "redact": [
                    {
                        "log_field": "body",
                        "regex": r"\d{4}-\d{4}-\d{4}-\d{4}",
                        "replacement": "****",
                    }
                ]
            },
        },
    },
    {
        "id": "keep-checkout",
        "name": "keep-checkout",
        "log": {
            "match": [{"resource_attribute": "service.name", "exact": "checkout"}],
            "keep": "all",
        },
    },
    {
        "id": "drop-retried-spans",
        "name": "drop-retried-spans",
        "trace": {
            "match": [{"event_attribute": "retries", "gte": 3}],
            "keep": {"percentage": 0},
        },
    },
    {
        "id": "drop-failed-spans",
        "name": "drop-failed-spans",
        "trace": {
            "match": [{"event_attribute": "code", "equals": 500}],
            "keep": {"percentage": 0},
        },
    },
)


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[EdgeProcess, Upstream]]:
    """One Edge with POLICIES and its recording upstream, for the module."""
    upstream = Upstream()
    launcher = EdgeLauncher(tmp_path_factory.mktemp("decoding-edge"), upstream)
    yield launcher(POLICIES), upstream
    problems = launcher.stop_all()
    upstream.stop()
    assert not problems, problems


@pytest.fixture
def edge(running: tuple[EdgeProcess, Upstream]) -> EdgeProcess:
    edge, upstream = running
    upstream.reset()
    assert edge.process.poll() is None, edge.stderr()
    return edge


@pytest.fixture
def up(running: tuple[EdgeProcess, Upstream]) -> Upstream:
    return running[1]


def only_body(up: Upstream) -> bytes:
    [got] = up.received()
    return got.decoded()


# -- defect 2: every member and frame --------------------------------------------------


def _members(encoding: str, parts: list[bytes]) -> bytes:
    if encoding == "gzip":
        return b"".join(gzip.compress(part) for part in parts)
    return b"".join(zstandard.ZstdCompressor().compress(part) for part in parts)


@pytest.mark.parametrize("encoding", ["gzip", "zstd"])
def test_every_member_or_frame_is_decompressed(
    edge: EdgeProcess, up: Upstream, encoding: str
) -> None:
    """Two protobuf requests back to back are one request (repeated fields
    concatenate); compressed as two members or frames, records 4-7 come from
    the second one and must survive a policy changing the batch."""
    first = otlp_logs_proto(["one", "drop-me", "three"])
    second = otlp_logs_proto(["four", "five", "six", "seven"])
    body = _members(encoding, [first, second])
    answer = edge.post("/v1/logs", body, PROTOBUF, Content_Encoding=encoding)
    assert answer.status == 200, answer
    assert proto_bodies(only_body(up)) == ["one", "three", "four", "five", "six", "seven"]


@pytest.mark.parametrize("encoding", ["gzip", "zstd"])
def test_members_share_one_size_cap(
    start_edge: EdgeLauncher, upstream: Upstream, encoding: str
) -> None:
    """Each member alone fits max_body_size; together they do not: 413."""
    edge = start_edge(POLICIES, max_body_size=4096)
    part = json.dumps(otlp_logs_json(["x" * 3000])).encode()
    answer = edge.post(
        "/v1/logs", _members(encoding, [part, part]), JSON, Content_Encoding=encoding
    )
    assert answer.status == 413, answer
    assert upstream.received() == []


GARBAGE = b"trailing garbage"


@pytest.mark.parametrize(
    "encoding,body",
    [
        ("gzip", gzip.compress(otlp_logs_proto(["drop-me", "kept"])) + GARBAGE),
        ("gzip", gzip.compress(otlp_logs_proto(["kept"])) + gzip.compress(b"second")[:-4]),
        ("zstd", zstandard.ZstdCompressor().compress(otlp_logs_proto(["drop-me"])) + GARBAGE),
        (
            "zstd",
            zstandard.ZstdCompressor().compress(otlp_logs_proto(["kept"]))
            + zstandard.ZstdCompressor().compress(b"second" * 50)[:-3],
        ),
        ("deflate", zlib.compress(otlp_logs_proto(["drop-me", "kept"])) + GARBAGE),
    ],
    ids=[
        "gzip-garbage",
        "gzip-truncated-member",
        "zstd-garbage",
        "zstd-truncated-frame",
        "deflate",
    ],
)
def test_data_after_the_compressed_stream_is_400(
    edge: EdgeProcess, up: Upstream, encoding: str, body: bytes
) -> None:
    answer = edge.post("/v1/logs", body, PROTOBUF, Content_Encoding=encoding)
    assert answer.status == 400, answer
    assert "error" in answer.json()
    assert up.received() == []


# -- defect 5: one malformed entry never switches filtering off -------------------------


def _card_logs(resource_attributes: Any) -> dict[str, Any]:
    doc = otlp_logs_json(["paid with " + CARD, "drop-me", "fine"], service="checkout")
    doc["resourceLogs"][0]["resource"]["attributes"] = resource_attributes
    records = doc["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    records.append({**records[2], "severityText": "DEBUG", "body": {"stringValue": "debug"}})
    return doc


@pytest.mark.parametrize(
    "attributes",
    [
        [
            {"value": {"stringValue": "no key"}},
            {"key": "service.name", "value": {"stringValue": "c"}},
        ],
        [{"key": 7, "value": {"stringValue": "number key"}}],
        [5, "entry", None, {"key": "service.name", "value": "not an AnyValue"}],
        "zz",
        {"key": "service.name"},
    ],
    ids=["entry-without-key", "number-key", "entries-not-objects", "string", "object"],
)
def test_a_malformed_resource_attribute_does_not_switch_filtering_off(
    edge: EdgeProcess, up: Upstream, attributes: Any
) -> None:
    body = json.dumps(_card_logs(attributes)).encode()
    assert edge.post("/v1/logs", body, JSON).status == 200
    forwarded = json.loads(only_body(up))
    resource = forwarded["resourceLogs"][0]
    assert resource["resource"]["attributes"] == attributes  # forwarded as it came
    records = resource["scopeLogs"][0]["logRecords"]
    assert [r["body"]["stringValue"] for r in records] == ["paid with ****", "fine"]


def test_a_malformed_record_is_kept_as_it_came_and_the_others_are_filtered(
    edge: EdgeProcess, up: Upstream
) -> None:
    doc = _card_logs([{"key": "service.name", "value": {"stringValue": "checkout"}}])
    records = doc["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    records.insert(1, ["not", "a", "record", CARD])
    records.insert(2, "drop-me")
    body = json.dumps(doc).encode()
    assert edge.post("/v1/logs", body, JSON).status == 200
    out = json.loads(only_body(up))["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    assert out == [
        {**records[0], "body": {"stringValue": "paid with ****"}},
        ["not", "a", "record", CARD],
        "drop-me",
        records[4],
    ]
    assert Prometheus.parse(edge.metrics()).results("logs")["malformed"] >= 2


def test_a_malformed_datadog_record_is_kept_and_counted(edge: EdgeProcess, up: Upstream) -> None:
    before = Prometheus.parse(edge.metrics()).results("logs")["malformed"]
    body = json.dumps(
        [{"message": "drop-me"}, 5, {"message": "paid " + CARD, "status": "info"}, ["x"]]
    ).encode()
    assert edge.post("/api/v2/logs", body, JSON).status == 200  # the upstream's answer
    assert json.loads(only_body(up)) == [5, {"message": "paid ****", "status": "info"}, ["x"]]
    after = Prometheus.parse(edge.metrics()).results("logs")["malformed"]
    assert after - before == 2


# -- defect 7: lone surrogates ------------------------------------------------------------


def test_a_lone_surrogate_in_a_reencoded_otlp_json_batch_passes_through(
    edge: EdgeProcess, up: Upstream
) -> None:
    doc = otlp_logs_json(["odd \ud800 text " + CARD, "drop-me", "\udfff"])
    body = json.dumps(doc).encode()  # ASCII, the surrogates as \ud800 and \udfff escapes
    assert b"\\ud800" in body
    answer = edge.post("/v1/logs", body, JSON)
    assert answer.status == 200, answer
    forwarded = only_body(up)
    assert b"\\ud800" in forwarded and b"\\udfff" in forwarded
    bodies = [
        r["body"]["stringValue"]
        for r in json.loads(forwarded)["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    ]
    assert bodies == ["odd \ud800 text ****", "\udfff"]


def test_a_lone_surrogate_in_an_edited_datadog_record_passes_through(
    edge: EdgeProcess, up: Upstream
) -> None:
    body = b'[{"message":"card ' + CARD.encode() + b' \\ud800","service":"\\udbff"}]'
    answer = edge.post("/api/v2/logs", body, JSON)
    assert answer.status == 200, answer
    forwarded = only_body(up)
    assert b"\\ud800" in forwarded and b"\\udbff" in forwarded
    assert json.loads(forwarded) == [{"message": "card **** \ud800", "service": "\udbff"}]


# -- defect 6: typed event_attribute conditions ------------------------------------------


def _spans_with_events(events: dict[str, list[tuple[str, int]]]) -> bytes:
    request = ExportTraceServiceRequest()
    scope = request.resource_spans.add().scope_spans.add()
    for n, (name, attributes) in enumerate(events.items(), start=1):
        span = scope.spans.add(name=name, trace_id=bytes([n] * 16), span_id=bytes([n] * 8))
        for key, value in attributes:
            event = span.events.add(name="attempt")
            event.attributes.add(key=key).value.int_value = value
    return bytes(request.SerializeToString())


@pytest.mark.parametrize("media", [PROTOBUF, JSON])
def test_typed_event_attribute_conditions_filter_spans(
    edge: EdgeProcess, up: Upstream, media: str
) -> None:
    body = _spans_with_events(
        {
            "retried-often": [("retries", 1), ("retries", 4)],
            "retried-once": [("retries", 1)],
            "failed": [("code", 500)],
            "fine": [("code", 200)],
        }
    )
    if media == JSON:
        from tests.telemetry.otlp_convert import to_json

        body = json.dumps(to_json(ExportTraceServiceRequest.FromString(body))).encode()
    assert edge.post("/v1/traces", body, media).status == 200
    forwarded = only_body(up)
    if media == JSON:
        spans = json.loads(forwarded)["resourceSpans"][0]["scopeSpans"][0]["spans"]
        names = [span["name"] for span in spans]
    else:
        request = ExportTraceServiceRequest.FromString(forwarded)
        names = [span.name for span in request.resource_spans[0].scope_spans[0].spans]
    assert names == ["retried-once", "fine"]
