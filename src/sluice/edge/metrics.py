"""Edge's own counters. On the request path they are plain integers, a few
additions per request and per batch, never per record; they become labelled
series only when a scrape (or the worker group, see :mod:`sluice.edge.group`)
folds them. Every series exists from the start, at 0."""

from __future__ import annotations

from sluice.policy import BatchOutcome, Signal
from sluice.policy.outcomes import OutcomeTally

Labels = tuple[str, ...]
"""Label values, in the order of the family's label names."""
Folded = dict[str, dict[Labels, float]]
"""Counter family name -> label values -> value (histograms: per-bucket counts
under ``<name>_bucket`` by upper bound, and ``<name>_sum``)."""

ROUTES: dict[str, int] = {
    "/v1/logs": 200,
    "/v1/metrics": 200,
    "/v1/traces": 200,
    "/api/v2/logs": 202,
    "/api/v2/series": 202,
    "/api/v1/series": 202,
    "/api/beta/sketches": 202,
    "/api/v1/check_run": 202,
    "/api/v1/distribution_points": 202,
    "datadog_api": 200,
    "datadog_logs_legacy": 200,
    "passthrough": 200,
    "health": 200,
    "ready": 200,
    "metrics": 200,
    "policies": 200,
}
"""Every ``route`` label value and its usual answer, whose series are present
from the start (as Prometheus seeds its own ``code="200"`` series)."""
FILTERED_ROUTES = (
    "/v1/logs",
    "/v1/metrics",
    "/v1/traces",
    "/api/v2/logs",
    "/api/v2/series",
    "/api/v1/series",
    "/api/beta/sketches",
)
TELEMETRY_TYPES = {Signal.LOG: "logs", Signal.METRIC: "metrics", Signal.TRACE: "traces"}
"""The ``telemetry_type`` label of each signal (OTLP and Datadog alike)."""
UPSTREAM_ERRORS = ("timeout", "failed")
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""Upper bounds in seconds of the upstream latency histogram (then +Inf)."""
BUCKET_LABELS = (*(f"{bound:g}" for bound in LATENCY_BUCKETS), "+Inf")
"""The ``le`` label of each bucket."""

REQUESTS = "sluice_edge_requests"
RECORDS = "sluice_edge_records_received"
POLICY_RECORDS = "sluice_processor_policy_records"
FAIL_OPEN = "sluice_edge_fail_open"
UPSTREAM_ERRORS_FAMILY = "sluice_edge_upstream_errors"
PROVIDER_ERRORS = "sluice_edge_provider_sync_errors"
LATENCY = "sluice_edge_upstream_request_duration_seconds"


class EdgeMetrics:
    """Counters of one Edge process, updated on its event loop (no locking)."""

    def __init__(self) -> None:
        self._requests: dict[tuple[str, int], int] = {item: 0 for item in ROUTES.items()}
        self._tallies: dict[str, OutcomeTally] = {
            kind: OutcomeTally() for kind in TELEMETRY_TYPES.values()
        }
        self._fail_open: dict[str, int] = dict.fromkeys(FILTERED_ROUTES, 0)
        self._upstream_errors: dict[str, int] = dict.fromkeys(UPSTREAM_ERRORS, 0)
        self._bounds: tuple[float, ...] = LATENCY_BUCKETS
        self._latency = [0] * len(BUCKET_LABELS)
        self._latency_sum = 0.0

    def request(self, route: str, status: int) -> None:
        key = (route, status)
        self._requests[key] = self._requests.get(key, 0) + 1

    def upstream_latency(self, seconds: float) -> None:
        # A loop over the bounds compiles to float comparisons, and most
        # answers stop at the first buckets; bisect costs 2k instructions.
        bucket = 0
        for bound in self._bounds:
            if seconds <= bound:
                break
            bucket += 1
        self._latency[bucket] += 1
        self._latency_sum += seconds

    def outcome(self, telemetry_type: str, outcome: BatchOutcome) -> None:
        self._tallies[telemetry_type].add(outcome)

    def fail_open(self, route: str) -> None:
        self._fail_open[route] = self._fail_open.get(route, 0) + 1

    def upstream_error(self, kind: str) -> None:
        self._upstream_errors[kind] += 1

    @property
    def requests(self) -> int:
        """Requests answered so far (tells whether anything changed)."""
        return sum(self._requests.values())

    def fold(self) -> Folded:
        """Every counter as labelled series."""
        records: dict[Labels, float] = {}
        results: dict[Labels, float] = {}
        for kind, tally in self._tallies.items():
            records[(kind,)] = tally.records
            for result, count in tally.results():
                results[(kind, result)] = count
        return {
            REQUESTS: {(route, str(code)): n for (route, code), n in self._requests.items()},
            RECORDS: records,
            POLICY_RECORDS: results,
            FAIL_OPEN: {(route,): n for route, n in self._fail_open.items()},
            UPSTREAM_ERRORS_FAMILY: {(kind,): n for kind, n in self._upstream_errors.items()},
            LATENCY + "_bucket": {
                (le,): n for le, n in zip(BUCKET_LABELS, self._latency, strict=True)
            },
            LATENCY + "_sum": {(): self._latency_sum},
        }


def merge(into: Folded, other: Folded) -> None:
    """Add `other`'s series to `into` (another worker's counters)."""
    for name, series in other.items():
        target = into.setdefault(name, {})
        for labels, value in series.items():
            target[labels] = target.get(labels, 0) + value
