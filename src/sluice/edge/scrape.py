"""What a scrape of ``/_metrics`` shows, as Prometheus families: the counters
of the whole worker group (:mod:`sluice.edge.metrics`, :mod:`sluice.edge.group`),
the answering worker's gauges, build info, and with ``policy_metrics`` the
per-policy counters."""

from __future__ import annotations

import platform
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.metrics_core import Metric

from sluice.edge import metrics as m
from sluice.edge.group import WORKER_RESTARTS
from sluice.policy.stats import PolicyStats

POLICY_HITS = "sluice_edge_policy_hits"
POLICY_MISSES = "sluice_edge_policy_misses"
POLICY_TRANSFORMS = "sluice_edge_policy_transforms"
TRANSFORM_STAGES = ("remove", "redact", "rename", "add")

COUNTERS: dict[str, tuple[str, tuple[str, ...]]] = {
    m.REQUESTS: ("HTTP requests answered, by route and status code", ("route", "code")),
    m.RECORDS: (
        "Records evaluated by policies (requests with policies for their signal), "
        "by telemetry type",
        ("telemetry_type",),
    ),
    m.POLICY_RECORDS: (
        "Records by policy result (dropped, kept, sampled, transformed: kept and changed "
        "by a transform, no_match, malformed), once per record",
        ("telemetry_type", "result"),
    ),
    m.FAIL_OPEN: (
        "Requests forwarded unevaluated (unreadable body, media type or encoding, or a "
        "policy failing at run time), by route",
        ("route",),
    ),
    m.UPSTREAM_ERRORS_FAMILY: (
        "Upstream requests without a usable answer (answered 504 for a timeout, else 502), by kind",
        ("kind",),
    ),
    m.PROVIDER_ERRORS: (
        "Failed policy loads and syncs, by provider (every failed attempt; the provider's "
        "last good policies stay active)",
        ("provider",),
    ),
    WORKER_RESTARTS: (
        "Workers replaced after exiting while Edge ran, by reason (killed: by a signal, "
        "such as the out-of-memory killer's SIGKILL; exited: by itself)",
        ("reason",),
    ),
}
"""Every counter family of :meth:`EdgeMetrics.fold`, and the worker group's
restarts (:mod:`sluice.edge.group`): help text and label names."""
POLICY_COUNTERS: dict[str, tuple[str, tuple[str, ...]]] = {
    POLICY_HITS: (
        "Records a policy matched and went its way (its match hits, as sent to policy servers)",
        ("policy_id",),
    ),
    POLICY_MISSES: (
        "Records a policy matched but another policy's drop decided (its match misses)",
        ("policy_id",),
    ),
    POLICY_TRANSFORMS: (
        "Transform steps applied (hit) or finding nothing to change (miss), by policy and stage",
        ("policy_id", "stage", "result"),
    ),
}
"""The per-policy families (at /_policies; on /_metrics with ``policy_metrics``)."""


def policy_counts(stats: PolicyStats) -> m.Folded:
    """A process's per-policy counters as folded series (policies that never
    matched are left out)."""
    hits: dict[m.Labels, float] = {}
    misses: dict[m.Labels, float] = {}
    transforms: dict[m.Labels, float] = {}
    for policy_id, counts in stats.totals().items():
        hits[(policy_id,)] = counts.hits
        misses[(policy_id,)] = counts.misses
        for stage, (hit, miss) in zip(TRANSFORM_STAGES, counts.transform, strict=True):
            if hit or miss:
                transforms[(policy_id, stage, "hit")] = hit
                transforms[(policy_id, stage, "miss")] = miss
    return {POLICY_HITS: hits, POLICY_MISSES: misses, POLICY_TRANSFORMS: transforms}


def _counters(
    counts: m.Folded, families: dict[str, tuple[str, tuple[str, ...]]]
) -> Iterator[Metric]:
    for name, (help_text, labels) in families.items():
        family = CounterMetricFamily(name, help_text, labels=labels)
        for values, value in sorted(counts.get(name, {}).items()):
            family.add_metric(list(values), value)
        yield family


def _latency(counts: m.Folded) -> Metric:
    per_bucket = counts.get(m.LATENCY + "_bucket", {})
    buckets: list[tuple[str, float]] = []
    total = 0.0
    for bound in m.BUCKET_LABELS:
        total += per_bucket.get((bound,), 0.0)
        buckets.append((bound, total))
    return HistogramMetricFamily(
        m.LATENCY,
        "Time from sending a request upstream to its complete answer (answered requests)",
        buckets=buckets,
        sum_value=counts.get(m.LATENCY + "_sum", {}).get((), 0.0),
    )


def build_info(version: str, distribution: str) -> Metric:
    family = GaugeMetricFamily(
        "sluice_edge_build_info",
        "Always 1: the version, distribution and Python that are running",
        labels=["version", "distribution", "python"],
    )
    family.add_metric([version, distribution, platform.python_version()], 1)
    return family


class EdgeCollector:
    """A prometheus_client collector over callables that read Edge's state at
    scrape time: the group's counters, the per-policy series when asked for
    (`policy_ids` gives every active policy, so each is present at 0), and
    the gauges."""

    def __init__(
        self,
        counts: Callable[[], m.Folded],
        gauges: Callable[[], Iterator[Metric]],
        policy_ids: Callable[[], list[str]] | None,
    ) -> None:
        self._counts = counts
        self._gauges = gauges
        self._policy_ids = policy_ids

    def collect(self) -> Iterator[Metric]:
        counts = self._counts()
        yield from _counters(counts, COUNTERS)
        yield _latency(counts)
        if self._policy_ids is not None:
            hits = counts.setdefault(POLICY_HITS, {})
            misses = counts.setdefault(POLICY_MISSES, {})
            for policy_id in self._policy_ids():
                hits.setdefault((policy_id,), 0)
                misses.setdefault((policy_id,), 0)
            yield from _counters(counts, POLICY_COUNTERS)
        yield from self._gauges()

    def describe(self) -> list[Any]:
        return []  # families are only known at scrape time
