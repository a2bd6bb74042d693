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
