"""The Agent's protobuf payloads as Edge reads and writes them back: the lean
messages carry every field they leave out, and dropping any set of records
removes exactly those."""

from __future__ import annotations

import json
import random

import pytest

from sluice.policy import PolicySnapshot, Signal
from sluice.policy.parse import load_document
from sluice.telemetry.datadog import NotAnArray
from sluice.telemetry.datadog_metrics import (
    AGENT_SERIES_VIEW,
    SERIES_VIEW,
    AgentPayload,
    DatadogSeries,
)
from sluice.telemetry.wire.agent_payload_pb2 import MetricPayload
from tests.edge.agent_replay import SKETCHES, series_payload, sketch_payload


def _payload(count: int) -> MetricPayload:
    return series_payload(
        [
            {"metric": f"m{n}", "tags": [f"n:{n}"], "points": [(1_700_000_000 + n, n / 2)]}
            for n in range(count)
        ]
    )


def test_any_set_of_drops_leaves_exactly_the_others() -> None:
    rng = random.Random(20261125)
    full = _payload(12)
    body = full.SerializeToString()
    for _ in range(200):
        dropped = {n for n in range(12) if rng.random() < rng.random()}
        payload = AgentPayload.parse_series(body)
        payload.dropped.update(dropped)
        out = MetricPayload.FromString(payload.encode())
        assert list(out.series) == [s for n, s in enumerate(full.series) if n not in dropped]


def test_fields_no_policy_reads_survive_a_rewrite() -> None:
    original = sketch_payload([*SKETCHES, {"metric": "third", "host": "db-1"}])
    payload = AgentPayload.parse_sketches(original.SerializeToString())
    payload.dropped.add(1)
    out = type(original).FromString(payload.encode())
    assert list(out.sketches) == [original.sketches[0], original.sketches[2]]
    assert out.metadata == original.metadata


def test_the_lean_series_reads_what_policies_select() -> None:
    payload = AgentPayload.parse_series(_payload(2).SerializeToString())
    first = payload.records[0]
    assert AGENT_SERIES_VIEW.record_class is type(first)
    assert (first.metric, list(first.tags), first.resources[0].name) == ("m0", ["n:0"], "web-1")


@pytest.mark.parametrize("body", [b"\x0a\x05abc", b"\xff\xff\xff", b"\x0a\x02\x22\x80"])
def test_bodies_that_are_not_payloads_are_refused(body: bytes) -> None:
    with pytest.raises(NotAnArray):
        AgentPayload.parse_series(body)


def test_an_empty_unit_does_not_exist_and_an_empty_tag_does() -> None:
    # POLICY.md 2.1/2.4: an empty string is absent for a field (`exists`
    # fails), present for an attribute (a bare tag's value is "").
    policies = [
        {
            "id": "unit",
            "metric": {"match": [{"metric_field": "unit", "exists": True}], "keep": False},
        },
        {
            "id": "tag",
            "metric": {"match": [{"datapoint_attribute": "canary", "exists": True}], "keep": False},
        },
    ]
    snapshot = PolicySnapshot.compile(load_document({"policies": policies}).policies)
    series = [
        {"metric": "a", "unit": ""},
        {"metric": "b", "unit": "ms"},
        {"metric": "c", "tags": ["canary"]},
    ]
    payload = DatadogSeries.parse(json.dumps({"series": series}).encode())
    snapshot.evaluate(Signal.METRIC, SERIES_VIEW, payload)
    assert json.loads(payload.encode())["series"] == [{"metric": "a", "unit": ""}]
