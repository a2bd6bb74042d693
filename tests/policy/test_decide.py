"""Deciding a record reads it only when the decision needs it (a sample key, a
trace sample or threshold, a transform), and counts exactly as it did when
every decision read it."""

from __future__ import annotations

from typing import Any

from sluice.policy import PolicyRuntime, PolicySnapshot, Signal, load_document
from sluice.policy.view import Ctx
from tests.policy.test_snapshot import attr, bodies, compile_log, logs, rec
from tests.policy.views import ForwardingView


class _CountingView(ForwardingView):
    """Counts the records whose Ctx the engine asks for."""

    contexts = 0

    def context(self, resource: Any, scope: Any, records: Any, position: int, record: Any) -> Ctx:
        self.contexts += 1
        return super().context(resource, scope, records, position, record)


def _counts(runtime: PolicyRuntime) -> dict[str, tuple[int, int]]:
    return {pid: (c.hits, c.misses) for pid, c in runtime.stats.totals().items()}


def test_unchecked_keep_all_none_rate_and_unkeyed_percent_do_not_read_the_record() -> None:
    runtime = PolicyRuntime(clock=lambda: 0.0)
    snap = compile_log(
        {"id": "all", "match": [{"log_field": "body", "starts_with": "keep"}], "keep": "all"},
        {"id": "none", "match": [{"log_field": "body", "starts_with": "drop"}], "keep": "none"},
        {"id": "rate", "match": [{"log_field": "body", "starts_with": "rate"}], "keep": "1/s"},
        {"id": "pct", "match": [{"log_field": "body", "starts_with": "pct"}], "keep": "50%"},
        runtime=runtime,
    )
    view = _CountingView(Signal.LOG)
    doc = logs(*[rec(b) for b in ["keep", "drop", "rate1", "rate2", "other", "pct"]])
    outcome = snap.evaluate(Signal.LOG, view, doc)
    assert view.contexts == 0
    assert bodies(doc)[:3] == ["keep", "rate1", "other"]
    pct_kept = len(bodies(doc)) - 3
    assert (outcome.kept, outcome.sampled, outcome.no_match) == (1, 1 + pct_kept, 1)
    assert outcome.dropped == 3 - pct_kept
    counts = _counts(runtime)
    assert (counts["all"], counts["none"], counts["rate"]) == ((1, 0), (1, 0), (2, 0))
    assert counts["pct"] == (1, 0)  # kept or not, the winner counts a hit


def test_a_rate_limited_winner_counts_its_losers_without_reading_the_record() -> None:
    runtime = PolicyRuntime(clock=lambda: 0.0)
    snap = compile_log(
        {"id": "a-all", "match": [{"log_field": "body", "contains": "x"}], "keep": "all"},
        {"id": "b-rate", "match": [{"log_field": "body", "contains": "x"}], "keep": "2/s"},
        {"id": "c-all", "match": [{"log_field": "body", "contains": "x"}], "keep": "all"},
        runtime=runtime,
    )
    view = _CountingView(Signal.LOG)
    doc = logs(*[rec(f"x{i}") for i in range(5)])
    outcome = snap.evaluate(Signal.LOG, view, doc)
    assert view.contexts == 0
    assert bodies(doc) == ["x0", "x1"]
    assert (outcome.sampled, outcome.dropped, outcome.kept) == (2, 3, 0)
    # Kept: every matched policy hits; limited: the winner hits, the others miss.
    assert _counts(runtime) == {"a-all": (2, 3), "b-rate": (5, 0), "c-all": (2, 3)}


def test_a_keyed_sample_reads_the_record() -> None:
    runtime = PolicyRuntime()
    snap = compile_log(
        {"id": "all", "match": [{"log_field": "body", "contains": "x"}], "keep": "all"},
        {
            "id": "keyed",
            "match": [{"log_field": "body", "contains": "x"}],
            "keep": "1%",
            "sample_key": {"log_attribute": "k"},
        },
        runtime=runtime,
    )
    view = _CountingView(Signal.LOG)
    # A configured key that is absent keeps the record; one present decides by
    # its hash, the same way for the same key.
    doc = logs(rec("x-no-key"), *[rec(f"x{i}", k="same") for i in range(4)])
    snap.evaluate(Signal.LOG, view, doc)
    assert view.contexts == 5
    kept = bodies(doc)
    assert kept[0] == "x-no-key"
    assert len(kept) in (1, 5)
    assert _counts(runtime)["keyed"][0] == 5


def test_a_losing_candidates_transform_runs_on_kept_records_only() -> None:
    runtime = PolicyRuntime(clock=lambda: 0.0)
    snap = compile_log(
        {
            "id": "a-tag",
            "match": [{"log_field": "body", "contains": "x"}],
            "keep": "all",
            "transform": {"add": [{"log_attribute": "tagged", "value": "yes"}]},
        },
        {"id": "b-rate", "match": [{"log_field": "body", "contains": "x"}], "keep": "1/s"},
        runtime=runtime,
    )
    view = _CountingView(Signal.LOG)
    doc = logs(rec("x1"), rec("x2"))
    outcome = snap.evaluate(Signal.LOG, view, doc)
    assert view.contexts == 1  # the limited record is dropped unread
    (kept,) = doc["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    assert kept["body"]["stringValue"] == "x1"
    assert kept["attributes"] == [attr("tagged", "yes")]
    assert (outcome.transformed, outcome.dropped, outcome.sampled) == (1, 1, 0)
    totals = runtime.stats.totals()
    assert (totals["a-tag"].hits, totals["a-tag"].misses) == (1, 1)
    assert totals["a-tag"].transform[3] == (1, 0)  # the add stage hit once


def test_a_checked_candidate_decides_only_the_records_it_matches() -> None:
    runtime = PolicyRuntime()
    snap = compile_log(
        {
            "id": "a-drop",
            "match": [{"log_field": "body", "contains": "x"}, {"log_attribute": "n", "gt": 5}],
            "keep": "none",
        },
        {"id": "b-keep", "match": [{"log_field": "body", "contains": "x"}], "keep": "all"},
        runtime=runtime,
    )
    view = _CountingView(Signal.LOG)
    doc = logs(rec("x-big", n=10), rec("x-small", n=1), rec("x-none"))
    outcome = snap.evaluate(Signal.LOG, view, doc)
    assert view.contexts == 3
    assert bodies(doc) == ["x-small", "x-none"]
    assert (outcome.dropped, outcome.kept) == (1, 2)
    assert _counts(runtime) == {"a-drop": (1, 0), "b-keep": (2, 1)}


def test_trace_keep_all_writes_the_zero_threshold() -> None:
    report = load_document(
        {
            "policies": [
                {
                    "id": "spans",
                    "name": "n",
                    "trace": {
                        "match": [{"trace_field": "name", "exact": "op"}],
                        "keep": {"percentage": 100},
                    },
                }
            ]
        }
    )
    snap = PolicySnapshot.compile(report.policies)
    assert not snap.errors
    span = {"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "op", "traceState": "vendor=1"}
    other = {"traceId": "ab" * 16, "spanId": "ef" * 8, "name": "other"}
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": [span, other]}]}]}
    view = _CountingView(Signal.TRACE)
    outcome = snap.evaluate(Signal.TRACE, view, doc)
    assert view.contexts == 1
    assert (outcome.kept, outcome.no_match, outcome.modified) == (1, 1, True)
    assert span["traceState"] == "ot=th:0,vendor=1"
    assert "traceState" not in other
