"""The OTLP JSON views (Edge, ``sluice eval``) read a value as upstream's OTLP
JSON reader reads it (pdata v1.21, ``pdata/internal/json``), since the
request they filter goes on to a collector that reads it so. What pdata
refuses is read as a value of the wrong JSON type is (absent, or present
without a typed value): the record is evaluated and forwarded, never dropped
for it (EDGE.md 2, "never lose data")."""

from __future__ import annotations

from typing import Any

import pytest

from sluice.policy import PolicySnapshot, Signal, load_document
from sluice.telemetry.otlp_json import json_view

_KEEP: dict[Signal, Any] = {
    Signal.LOG: "none",
    Signal.METRIC: False,
    Signal.TRACE: {"percentage": 0},
}


def _request(signal: Signal, record: dict[str, Any]) -> dict[str, Any]:
    if signal is Signal.LOG:
        return {"resourceLogs": [{"scopeLogs": [{"logRecords": [record]}]}]}
    if signal is Signal.METRIC:
        return {"resourceMetrics": [{"scopeMetrics": [{"metrics": [record]}]}]}
    return {"resourceSpans": [{"scopeSpans": [{"spans": [record]}]}]}


def matches(signal: Signal, matcher: dict[str, Any], record: dict[str, Any]) -> bool:
    """Whether a policy with the one `matcher` matches `record` (which is
    never counted malformed)."""
    target = {"match": [matcher], "keep": _KEEP[signal]}
    [policy] = load_document(
        {"policies": [{"id": "p", "name": "p", signal.value: target}]}
    ).policies
    assert policy.valid, policy.errors
    outcome = PolicySnapshot.compile([policy]).evaluate(
        signal, json_view(signal), _request(signal, record)
    )
    assert outcome.malformed == 0
    return outcome.no_match == 0


@pytest.mark.parametrize(
    ("kind", "server"),
    [
        ("SPAN_KIND_SERVER", True),
        (2, True),
        # pdata's ReadEnumValue looks a string up among the enum's names
        # alone (exactly as spelt): a number in a string is an unknown name.
        ("2", False),
        ("\u0662", False),  # ARABIC-INDIC DIGIT TWO
        ("SPAN_KIND_server", False),
        ("span_kind_server", False),
    ],
)
def test_span_kind_is_an_enum_name_or_a_json_number(kind: Any, server: bool) -> None:
    span = {"name": "s", "kind": kind}
    assert matches(Signal.TRACE, {"span_kind": "SPAN_KIND_SERVER"}, span) is server
    assert matches(Signal.TRACE, {"trace_field": "name", "exact": "s"}, span)


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("STATUS_CODE_ERROR", "error"),
        (2, "error"),
        ("2", "unset"),
        ("\u0662", "unset"),
        ("STATUS_CODE_Error", "unset"),
    ],
)
def test_span_status_code_is_an_enum_name_or_a_json_number(code: Any, status: str) -> None:
    span = {"name": "s", "status": {"code": code}}
    assert matches(Signal.TRACE, {"span_status": f"SPAN_STATUS_CODE_{status.upper()}"}, span)


@pytest.mark.parametrize(
    ("temporality", "delta"),
    [
        ("AGGREGATION_TEMPORALITY_DELTA", True),
        (1, True),
        ("1", False),
        ("\u0661", False),
        ("AGGREGATION_TEMPORALITY_delta", False),
    ],
)
def test_aggregation_temporality_is_an_enum_name_or_a_json_number(
    temporality: Any, delta: bool
) -> None:
    metric = {"name": "m", "sum": {"aggregationTemporality": temporality, "dataPoints": []}}
    assert matches(Signal.METRIC, {"aggregation_temporality": "delta"}, metric) is delta
    assert matches(Signal.METRIC, {"metric_type": "sum"}, metric)


@pytest.mark.parametrize(
    ("text", "data"),
    [
        ("AQID", True),
        ("AQID\r\n", True),  # Go's decoder skips line breaks
        # Go's base64.StdEncoding refuses what Python's lenient decoder took.
        ("A QID", False),
        ("A!QID", False),
        ("AQID=", False),
        ("AQ==AQID", False),
    ],
)
def test_bytes_value_is_standard_base64_as_go_reads_it(text: str, data: bool) -> None:
    record = {"attributes": [{"key": "b", "value": {"bytesValue": text}}]}
    equals = {"log_attribute": "b", "equals": {"bytes_value": "AQID"}}
    assert matches(Signal.LOG, equals, record) is data
    assert matches(Signal.LOG, {"log_attribute": "b", "exists": True}, record)


TRACE_ID = "5B8EFFF798038103D269B633813FC60C"


@pytest.mark.parametrize(
    ("text", "read"),
    [
        (TRACE_ID, True),
        (TRACE_ID.lower(), True),
        (f'"{TRACE_ID}"', True),  # pdata's UnmarshalJSON takes the quotes off
        # What pdata refuses (invalid length for ID, or hex.Decode's error).
        (TRACE_ID[:16], False),
        (TRACE_ID + "00", False),
        (TRACE_ID + "0", False),
        (f"{TRACE_ID[:8]} {TRACE_ID[9:]}", False),
        ("zz" + TRACE_ID[2:], False),
        (TRACE_ID[:30] + "\u0661\u0661", False),
    ],
)
@pytest.mark.parametrize("signal", [Signal.LOG, Signal.TRACE], ids=["log", "trace"])
def test_a_trace_id_is_read_as_pdata_reads_it(signal: Signal, text: str, read: bool) -> None:
    """A trace id pdata refuses is no trace id: neither scanned, nor typed."""
    record = {"traceId": text, "name": "s"}
    field = "log_field" if signal is Signal.LOG else "trace_field"
    exact = {field: "trace_id", "exact": TRACE_ID.lower()}
    assert matches(signal, exact, record) is read
    assert matches(signal, {field: "trace_id", "regex": "^5b8e"}, record) is read
    assert matches(signal, {field: "trace_id", "exists": True}, record) is read
    equals = {field: "trace_id", "equals": {"hex_value": TRACE_ID.lower()}}
    assert matches(signal, equals, record) is read


@pytest.mark.parametrize(
    ("text", "read"),
    [("00F067AA0BA902B7", True), ("00f067aa0ba902b7" * 2, False), ("00f067aa0ba902", False)],
)
def test_a_span_id_is_read_as_pdata_reads_it(text: str, read: bool) -> None:
    span = {"spanId": text, "parentSpanId": text}
    for field in ("span_id", "parent_span_id"):
        assert matches(Signal.TRACE, {"trace_field": field, "exists": True}, span) is read
        exact = {"trace_field": field, "exact": "00f067aa0ba902b7"}
        assert matches(Signal.TRACE, exact, span) is read
