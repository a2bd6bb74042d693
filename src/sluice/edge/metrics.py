"""Edge's own metrics, served as Prometheus text at ``/_metrics``."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from sluice.policy import BatchOutcome

Labels = tuple[tuple[str, str], ...]
OUTCOME_RESULTS = ("dropped", "kept", "sampled", "transformed", "no_match", "malformed")
"""The ``result`` label values of ``processor_policy_records``."""


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(labels: Labels) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in labels) + "}"


class EdgeMetrics:
    """Counters updated on the event loop (no locking needed) and gauges read
    at scrape time."""

    def __init__(self) -> None:
        self.counters: dict[str, dict[Labels, float]] = defaultdict(lambda: defaultdict(float))
        self.help: dict[str, tuple[str, str]] = {
            "sluice_edge_requests_total": (
                "counter",
                "HTTP requests answered, by route and status",
            ),
            "sluice_edge_records_received_total": ("counter", "Records received, by signal"),
            "processor_policy_records": (
                "counter",
                "Records by policy outcome (dropped, kept, sampled, transformed, "
                "no_match, malformed)",
            ),
            "sluice_edge_fail_open_total": (
                "counter",
                "Requests forwarded unevaluated (unreadable body or media type)",
            ),
            "sluice_edge_upstream_errors_total": ("counter", "Upstream failures, by kind"),
            "sluice_edge_upstream_latency_seconds_sum": ("counter", "Total upstream latency"),
            "sluice_edge_upstream_latency_seconds_count": ("counter", "Upstream requests timed"),
        }
        self.gauges: list[tuple[str, str, Callable[[], dict[Labels, float]]]] = []
        self._requests: dict[tuple[str, int], int] = {}
        self._outcomes: dict[str, list[int]] = {}
        self._latency = [0.0, 0]

    def inc(self, name: str, labels: Labels = (), value: float = 1.0) -> None:
        self.counters[name][labels] += value

    # The per-request counters below are plain ints and tuples, turned into
    # labelled series only at scrape time: they run on every request.

    def request(self, route: str, status: int) -> None:
        key = (route, status)
        self._requests[key] = self._requests.get(key, 0) + 1

    def upstream_latency(self, seconds: float) -> None:
        self._latency[0] += seconds
        self._latency[1] += 1

    def outcome(self, telemetry_type: str, outcome: BatchOutcome) -> None:
        # row: records, then the counts in OUTCOME_RESULTS order (spelled out:
        # a getattr loop would cost more on every request).
        row = self._outcomes.get(telemetry_type)
        if row is None:
            row = self._outcomes[telemetry_type] = [0] * (len(OUTCOME_RESULTS) + 1)
        row[0] += outcome.records
        row[1] += outcome.dropped
        row[2] += outcome.kept
        row[3] += outcome.sampled
        row[4] += outcome.transformed
        row[5] += outcome.no_match
        row[6] += outcome.malformed

    def _fold(self) -> dict[str, dict[Labels, float]]:
        """Every counter as labelled series (the per-request ones folded in)."""
        series: dict[str, dict[Labels, float]] = {
            "sluice_edge_requests_total": {
                (("route", route), ("code", str(status))): count
                for (route, status), count in self._requests.items()
            },
            "sluice_edge_records_received_total": {
                (("telemetry_type", kind),): row[0] for kind, row in self._outcomes.items()
            },
            "processor_policy_records": {
                (("telemetry_type", kind), ("result", result)): row[i + 1]
                for kind, row in self._outcomes.items()
                for i, result in enumerate(OUTCOME_RESULTS)
                if row[i + 1]
            },
        }
        if self._latency[1]:
            series["sluice_edge_upstream_latency_seconds_sum"] = {(): self._latency[0]}
            series["sluice_edge_upstream_latency_seconds_count"] = {(): self._latency[1]}
        for name, values in self.counters.items():
            series[name] = dict(values)
        return series

    def gauge(self, name: str, help_text: str, read: Callable[[], dict[Labels, float]]) -> None:
        self.gauges.append((name, help_text, read))

    def render(self) -> bytes:
        lines: list[str] = []
        for name, series in self._fold().items():
            kind, text = self.help.get(name, ("counter", name))
            lines += [f"# HELP {name} {text}", f"# TYPE {name} {kind}"]
            lines += [f"{name}{_labels(labels)} {value:g}" for labels, value in series.items()]
        for name, text, read in self.gauges:
            lines += [f"# HELP {name} {text}", f"# TYPE {name} gauge"]
            lines += [f"{name}{_labels(labels)} {value:g}" for labels, value in read().items()]
        return ("\n".join(lines) + "\n").encode()
