"""Edge's local routes (EDGE.md section 2), answered without the upstream:

- ``/_health`` (liveness): 200 while the process serves; ``status`` is
  ``degraded``, with the reasons, while a provider has not loaded yet or its
  latest attempt failed (Edge then serves the last policies it had).
- ``/_ready`` (readiness): 503 until every provider has loaded once, then 200
  for good: a provider failing later leaves the last good set active.
- ``/_policies``: per-policy hits, misses, transform counts and compile
  errors, as JSON, for the whole worker group.
- ``/_metrics``: Prometheus text (:mod:`sluice.edge.scrape`).

Probes are cheap: a few attribute reads per provider, no locks.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from sluice import __version__
from sluice.edge.config import EdgeConfig
from sluice.edge.group import WorkerGroup, no_restarts
from sluice.edge.metrics import PROVIDER_ERRORS, TELEMETRY_TYPES, EdgeMetrics, Folded, merge
from sluice.edge.scrape import (
    POLICY_HITS,
    POLICY_MISSES,
    POLICY_TRANSFORMS,
    EdgeCollector,
    build_info,
    policy_counts,
)
from sluice.policy import Signal
from sluice.providers import PolicyRegistry, Provider
from sluice.transport.http_message import Request, Response
from sluice.transport.prometheus import metrics_response


def _json(status: int, doc: Any) -> Response:
    return Response(status, json.dumps(doc).encode())


class EdgeStatus:
    """The answers of the local routes, read from the running state."""

    def __init__(
        self,
        config: EdgeConfig,
        registry: PolicyRegistry,
        providers: list[Provider],
        metrics: EdgeMetrics,
        distribution: str,
        group: WorkerGroup | None = None,
    ) -> None:
        self.config = config
        self.registry = registry
        self.providers = providers
        self.counters = metrics
        self.distribution = distribution
        self.group = group
        self._prometheus = CollectorRegistry(auto_describe=False)
        self._prometheus.register(
            EdgeCollector(
                self.counts,
                self._gauges,
                self._policy_ids if config.policy_metrics else None,
            )
        )

    # -- counts --------------------------------------------------------------------

    def local_counts(self) -> Folded:
        """This process's counters, per-policy ones included."""
        counts = self.counters.fold()
        counts.update(policy_counts(self.registry.runtime.stats))
        counts[PROVIDER_ERRORS] = {(p.config.id,): p.errors for p in self.providers}
        return counts

    def counts(self) -> Folded:
        """The counters a scrape shows: this process's, or the whole group's
        as every worker last published them, those of exited workers and the
        restarts included (see :mod:`sluice.edge.group`). Every series is
        there, at 0 until counted."""
        local = self.local_counts()
        counts = no_restarts()
        if self.group is None:
            merge(counts, local)
            return counts
        merge(counts, {name: dict.fromkeys(series, 0.0) for name, series in local.items()})
        for published in self.group.published():
            merge(counts, published)
        return counts

    def workers(self) -> int:
        """Workers serving: as the parent last recorded, and at least this one."""
        serving = self.group.serving() if self.group is not None else None
        return self.config.workers if serving is None else max(serving, 1)

    def _policy_ids(self) -> list[str]:
        return [p.id for p in self.registry.snapshot.policies]

    # -- health and readiness -----------------------------------------------------

    def degraded(self) -> list[str]:
        """Why the policies are not what the config asks for (empty: they are)."""
        reasons = []
        for provider in self.providers:
            name, error = provider.config.id, provider.last_error
            if not provider.loaded.is_set():
                reasons.append(
                    f"provider {name} has not loaded yet"
                    + (f": {error}" if error else "")
                    + "; data passes unfiltered by its policies"
                )
            elif error:
                reasons.append(
                    f"provider {name} is failing: {error}; its last good policies stay active"
                )
        return reasons

    def health(self, request: Request) -> Response:
        snapshot = self.registry.snapshot
        reasons = self.degraded()
        return _json(
            200,
            {
                "status": "degraded" if reasons else "ok",
                "reasons": reasons,
                "distribution": self.distribution,
                "version": __version__,
                "policies": {TELEMETRY_TYPES[s]: snapshot.count(s) for s in Signal},
                "policy_errors": len(snapshot.errors),
                "providers": [
                    {
                        "id": p.config.id,
                        "type": p.config.type,
                        "loaded": p.loaded.is_set(),
                        "failures": p.failures,
                        "last_error": p.last_error,
                    }
                    for p in self.providers
                ],
            },
        )

    def ready(self, request: Request) -> Response:
        waiting = [p.config.id for p in self.providers if not p.loaded.is_set()]
        if waiting:
            return _json(503, {"status": "loading", "waiting_for": waiting})
        return _json(200, {"status": "ready"})

    # -- policies and metrics ------------------------------------------------------

    def policies(self, request: Request) -> Response:
        counts = self.counts()
        hits, misses = counts.get(POLICY_HITS, {}), counts.get(POLICY_MISSES, {})
        transforms: dict[str, dict[str, dict[str, int]]] = {}
        for (policy_id, stage, result), value in counts.get(POLICY_TRANSFORMS, {}).items():
            stages = transforms.setdefault(policy_id, {})
            key = "hits" if result == "hit" else "misses"
            stages.setdefault(stage, {"hits": 0, "misses": 0})[key] = int(value)
        owner = {
            policy.id: provider.config.id
            for provider in self.providers
            for policy in self.registry.owned_by(provider.config.id)
        }
        listed = []
        for policy in sorted(self.registry.snapshot.policies, key=lambda p: p.id):
            assert policy.signal is not None
            listed.append(
                {
                    "id": policy.id,
                    "name": policy.name,
                    "telemetry_type": TELEMETRY_TYPES[policy.signal],
                    "provider": owner.get(policy.id, ""),
                    "hits": int(hits.get((policy.id,), 0)),
                    "misses": int(misses.get((policy.id,), 0)),
                    "transforms": transforms.get(policy.id, {}),
                    "errors": list(policy.errors),
                }
            )
        return _json(200, {"workers": self.workers(), "policies": listed})

    def metrics(self, request: Request) -> Response:
        return metrics_response(self._prometheus, request)

    def _gauges(self) -> Iterator[Metric]:
        yield build_info(__version__, self.distribution)
        workers = GaugeMetricFamily(
            "sluice_edge_workers",
            "Worker processes serving on the port; counters are their sum, gauges the "
            "answering worker's",
        )
        workers.add_metric([], self.workers())
        yield workers
        snapshot = self.registry.snapshot
        loaded = GaugeMetricFamily(
            "sluice_edge_policies_loaded",
            "Active policies, by telemetry type",
            labels=["telemetry_type"],
        )
        for signal in Signal:
            loaded.add_metric([TELEMETRY_TYPES[signal]], snapshot.count(signal))
        yield loaded
        yield GaugeMetricFamily(
            "sluice_edge_policy_errors",
            "Enabled policies that failed to compile (inert; see /_policies)",
            value=len(snapshot.errors),
        )
        provider_loaded = GaugeMetricFamily(
            "sluice_edge_provider_loaded",
            "1 once a provider has delivered policies",
            labels=["provider"],
        )
        failures = GaugeMetricFamily(
            "sluice_edge_provider_consecutive_failures",
            "Failed attempts of a provider since its last success",
            labels=["provider"],
        )
        for provider in self.providers:
            provider_loaded.add_metric([provider.config.id], int(provider.loaded.is_set()))
            failures.add_metric([provider.config.id], provider.failures)
        yield provider_loaded
        yield failures
