"""DatadogBatch: one json.loads per batch, source text worked out only when a
partly dropped batch is re-encoded, and ddtags parsed once per distinct string."""

from __future__ import annotations

import json

import pytest

from sluice.policy import PolicySnapshot, Signal
from sluice.policy.parse import load_document
from sluice.telemetry import datadog

BODY = (
    b' [ {"message": "keep me",  "status": "info", "ddtags": "env:prod, version:1.2"} ,\n'
    b'{"message":"drop me","status":"debug"},'
    b'{ "message" : "edit me", "status": "info", "n": 1.50} ] '
)


def _snapshot(policies: list[dict[str, object]]) -> PolicySnapshot:
    return PolicySnapshot.compile(load_document({"policies": policies}).policies)


def test_kept_untouched_records_keep_their_source_text_and_edits_are_reencoded() -> None:
    snapshot = _snapshot(
        [
            {
                "id": "drop-debug",
                "log": {
                    "match": [{"log_field": "severity_text", "exact": "debug"}],
                    "keep": "none",
                },
            },
            {
                "id": "tag",
                "log": {
                    "match": [{"log_field": "body", "exact": "edit me"}],
                    "keep": "all",
                    "transform": {"add": [{"log_attribute": "edited", "value": "yes"}]},
                },
            },
        ]
    )
    batch = datadog.DatadogBatch.parse(BODY)
    outcome = snapshot.evaluate(Signal.LOG, datadog.LOG_VIEW, batch)
    assert (outcome.records, outcome.dropped, outcome.transformed) == (3, 1, 1)
    assert outcome.modified
    out = batch.encode().decode()
    first = '{"message": "keep me",  "status": "info", "ddtags": "env:prod, version:1.2"}'
    assert out.startswith("[" + first + ",")  # untouched: exactly as sent
    assert json.loads(out) == [
        json.loads(first),
        {"message": "edit me", "status": "info", "n": 1.5, "edited": "yes"},
    ]


def test_batch_with_only_edits_needs_no_source_spans() -> None:
    batch = datadog.DatadogBatch.parse(b'[{"message": "a"}]')
    batch.edited.add(0)
    batch.records[0]["message"] = "b"
    assert batch.encode() == b'[{"message":"b"}]'


@pytest.mark.parametrize("body", [b"[1,", b"[1] x", b"\xff[]", b'"text"', b"", b"null", b"1"])
def test_not_an_array_is_refused(body: bytes) -> None:
    with pytest.raises(datadog.NotAnArray):
        datadog.DatadogBatch.parse(body)


def test_a_single_object_is_a_batch_of_one_written_back_as_an_object() -> None:
    body = b'{"message": "a",  "n": 1}'
    batch = datadog.DatadogBatch.parse(body)
    assert batch.records == [{"message": "a", "n": 1}]
    assert batch.encode() == body
    batch.edited.add(0)
    batch.records[0]["message"] = "b"
    assert batch.encode() == b'{"message":"b","n":1}'


def test_ddtags_are_matched_by_key_and_parsed_once_per_string() -> None:
    snapshot = _snapshot(
        [
            {
                "id": "old-version",
                "log": {"match": [{"log_attribute": "version", "exact": "1.2"}], "keep": "none"},
            }
        ]
    )
    tags = "env:prod, version:1.2 ,team:core"
    records = [{"message": str(i), "ddtags": tags} for i in range(3)]
    records.append({"message": "own key wins", "version": "2.0", "ddtags": tags})
    batch = datadog.DatadogBatch.parse(json.dumps(records).encode())
    outcome = snapshot.evaluate(Signal.LOG, datadog.LOG_VIEW, batch)
    assert outcome.dropped == 3
    assert batch.kept() == [3]
    parsed = datadog._tags(records[0])
    assert parsed == {"env": "prod", "version": "1.2", "team": "core"}
    assert datadog._tags({"ddtags": tags}) is parsed  # remembered, not re-parsed
    assert datadog._tags({"ddtags": 7}) == {}


def test_a_trace_id_sample_key_that_is_not_hex_keeps_the_record() -> None:
    snapshot = _snapshot(
        [
            {
                "id": "sample",
                "log": {
                    "match": [{"log_field": "body", "contains": "x"}],
                    "keep": "1%",
                    "sample_key": {"log_field": "trace_id"},
                },
            }
        ]
    )
    body = json.dumps(
        [{"message": "x", "trace_id": "not hex"}, {"message": "x", "trace_id": "ab" * 16}]
    ).encode()
    batch = datadog.DatadogBatch.parse(body)
    outcome = snapshot.evaluate(Signal.LOG, datadog.LOG_VIEW, batch)
    # No randomness to sample on: kept, like a record without the key.
    assert (outcome.dropped, outcome.sampled, outcome.malformed) == (1, 1, 0)
    assert json.loads(batch.encode()) == [{"message": "x", "trace_id": "not hex"}]


def test_an_empty_message_or_status_does_not_exist() -> None:
    # POLICY.md 2.1/2.3: an empty string is absent for `exists` on the
    # well-known scalar fields, body and severity text (message and status here).
    snapshot = _snapshot(
        [
            {
                "id": "has-status",
                "log": {
                    "match": [{"log_field": "severity_text", "exists": True}],
                    "keep": "none",
                },
            },
            {
                "id": "no-body",
                "log": {"match": [{"log_field": "body", "exists": False}], "keep": "none"},
            },
        ]
    )
    records = [
        {"message": "a", "status": ""},
        {"message": "b", "status": "info"},
        {"message": "", "n": 1},
        {"n": 2},
        {"msg": "c"},
    ]
    batch = datadog.DatadogBatch.parse(json.dumps(records).encode())
    snapshot.evaluate(Signal.LOG, datadog.LOG_VIEW, batch)
    assert json.loads(batch.encode()) == [{"message": "a", "status": ""}, {"msg": "c"}]
