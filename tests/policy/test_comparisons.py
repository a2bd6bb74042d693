"""gt/gte/lt/lte compare in float64 (POLICY.md 3.5), for every signal.

The difference from exact comparison only shows past 2^53, where int64
values stop being exact doubles: 2^53 + 1 becomes 2^53.
"""

from __future__ import annotations

from typing import Any

import pytest

from sluice.policy import PolicySnapshot, Signal, load_document
from sluice.telemetry.otlp_json import json_view
from tests.policy.test_snapshot import attr

P53 = 2**53

_TARGETS: dict[Signal, tuple[str, Any]] = {
    Signal.LOG: ("log_attribute", "none"),
    Signal.METRIC: ("datapoint_attribute", False),
    Signal.TRACE: ("span_attribute", {"percentage": 0}),
}


def _one_record(signal: Signal, attribute: dict[str, Any]) -> dict[str, Any]:
    if signal is Signal.LOG:
        return {"resourceLogs": [{"scopeLogs": [{"logRecords": [{"attributes": [attribute]}]}]}]}
    if signal is Signal.METRIC:
        point = {"asInt": "1", "attributes": [attribute]}
        metric = {"name": "m", "gauge": {"dataPoints": [point]}}
        return {"resourceMetrics": [{"scopeMetrics": [{"metrics": [metric]}]}]}
    span = {"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "s", "attributes": [attribute]}
    return {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}


def matches(signal: Signal, condition: dict[str, Any], attribute: dict[str, Any]) -> bool:
    """Whether a policy with `condition` on the attribute ``n`` matches a
    record holding `attribute`."""
    key, keep = _TARGETS[signal]
    target = {"match": [{key: "n", **condition}], "keep": keep}
    [policy] = load_document(
        {"policies": [{"id": "p", "name": "p", signal.value: target}]}
    ).policies
    assert policy.valid, policy.errors
    doc = _one_record(signal, attribute)
    outcome = PolicySnapshot.compile([policy]).evaluate(signal, json_view(signal), doc)
    return outcome.no_match == 0


@pytest.mark.parametrize("signal", list(_TARGETS), ids=[s.value for s in _TARGETS])
@pytest.mark.parametrize(
    "condition, value, passes",
    [
        ({"gt": P53}, P53 + 1, False),  # exactly: True
        ({"gt": P53}, P53 + 2, True),
        ({"gte": P53 + 1}, P53, True),  # exactly: False
        ({"lt": P53 + 1}, P53, False),  # exactly: True
        ({"lte": P53}, P53 + 1, True),  # exactly: False
        ({"gt": {"int_value": str(P53)}}, P53 + 1, False),  # exactly: True
        ({"gt": {"double_value": float(P53)}}, P53 + 1, False),  # exactly: True
        ({"gt": P53, "negate": True}, P53 + 1, True),  # exactly: False
        ({"gt": P53}, float(P53 + 2), True),
        ({"lt": 0.5}, 0, True),
    ],
)
def test_comparisons_are_in_float64(
    signal: Signal, condition: dict[str, Any], value: Any, passes: bool
) -> None:
    assert matches(signal, condition, attr("n", value)) is passes


def test_an_int_past_the_double_range_is_no_number() -> None:
    """An OTLP JSON ``intValue`` may have hundreds of digits, and float() of
    it raises: it compares like a non-numeric value (false) instead."""
    huge = {"key": "n", "value": {"intValue": "9" * 400}}
    assert not matches(Signal.LOG, {"gt": 0}, huge)
    assert matches(Signal.LOG, {"gt": 0, "negate": True}, huge)


@pytest.mark.parametrize(
    ("variant", "text", "number"),
    [
        # What pdata reads: Go's strconv.ParseInt(s, 10, 64) for an intValue,
        # strconv.ParseFloat(s, 64) for a doubleValue.
        ("intValue", "+5", True),
        ("intValue", "-05", True),
        ("intValue", str(-(2**63)), True),
        ("doubleValue", "0x1p-2", True),
        ("doubleValue", "1_0.5", True),
        ("doubleValue", "Infinity", True),
        # What it refuses, and Python's int() and float() took.
        ("intValue", " 5", False),
        ("intValue", "5\n", False),
        ("intValue", "1_000", False),
        ("intValue", "\u0665", False),  # ARABIC-INDIC DIGIT FIVE
        ("intValue", str(2**63), False),
        ("doubleValue", " 1.5", False),
        ("doubleValue", "\u0661.5", False),
        ("doubleValue", "+nan", False),
        ("doubleValue", "1e400", False),
    ],
)
def test_a_number_in_a_string_is_one_as_pdata_reads_it(
    variant: str, text: str, number: bool
) -> None:
    """POLICY.md 2.1: an intValue is a JSON number or a decimal string (an
    int64); what upstream's OTLP JSON reader refuses is a value without a
    number, as an intValue of another JSON type is (the record is kept and
    evaluated, never dropped for it)."""
    value = {"key": "n", "value": {variant: text}}
    assert (
        matches(Signal.LOG, {"gte": -1e308 if variant == "doubleValue" else -(2**63)}, value)
        is number
    )
    assert matches(Signal.LOG, {"exists": True}, value)


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1])
def test_an_int_past_int64_is_no_number(value: int) -> None:
    assert not matches(Signal.LOG, {"gte": -(2**63)}, {"key": "n", "value": {"intValue": value}})


@pytest.mark.parametrize(
    ("value", "condition"),
    [(float("inf"), {"gte": -1e308}), (float("-inf"), {"lte": 1e308})],
)
def test_a_double_number_past_the_double_range_is_no_number(
    value: float, condition: dict[str, Any]
) -> None:
    """``"doubleValue": 1e400`` reads as infinity here (Python's json), where
    pdata's reader (jsoniter, strconv.ParseFloat: ErrRange) refuses it, as
    it does ``"1e400"`` in a string and an integer past the double range:
    no number, as those."""
    assert not matches(Signal.LOG, condition, {"key": "n", "value": {"doubleValue": value}})
