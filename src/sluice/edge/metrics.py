"""Edge's own metrics, served as Prometheus text at ``/_metrics``."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from sluice.policy import BatchOutcome

Labels = tuple[tuple[str, str], ...]


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

    def inc(self, name: str, labels: Labels = (), value: float = 1.0) -> None:
        self.counters[name][labels] += value

    def request(self, route: str, status: int) -> None:
        self.counters["sluice_edge_requests_total"][(("route", route), ("code", str(status)))] += 1

    def outcome(self, telemetry_type: str, outcome: BatchOutcome) -> None:
        self.inc(
            "sluice_edge_records_received_total",
            (("telemetry_type", telemetry_type),),
            outcome.records,
        )
        counter = self.counters["processor_policy_records"]
        for result in ("dropped", "kept", "sampled", "transformed", "no_match", "malformed"):
            count = getattr(outcome, result)
            if count:
                counter[(("telemetry_type", telemetry_type), ("result", result))] += count

    def gauge(self, name: str, help_text: str, read: Callable[[], dict[Labels, float]]) -> None:
        self.gauges.append((name, help_text, read))

    def render(self) -> bytes:
        lines: list[str] = []
        for name, series in self.counters.items():
            kind, text = self.help.get(name, ("counter", name))
            lines += [f"# HELP {name} {text}", f"# TYPE {name} {kind}"]
            lines += [f"{name}{_labels(labels)} {value:g}" for labels, value in series.items()]
        for name, text, read in self.gauges:
            lines += [f"# HELP {name} {text}", f"# TYPE {name} gauge"]
            lines += [f"{name}{_labels(labels)} {value:g}" for labels, value in read().items()]
        return ("\n".join(lines) + "\n").encode()
