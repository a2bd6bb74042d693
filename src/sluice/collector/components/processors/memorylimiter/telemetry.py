"""The ``memory_limiter`` processor's own metrics, with upstream's names,
shared by every memory limiter of the service and labelled by ``processor``:
items let through (``otelcol_processor_accepted_<items>``) and items refused
(``otelcol_processor_refused_<items>``). Upstream marks them deprecated
since v0.110 but still emits them. Each series appears when first added to
(upstream adds to accepted or to refused, never 0 to the other)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter

from sluice.collector.component import Settings
from sluice.collector.telemetry import ITEMS, Series
from sluice.policy import Signal


class MemoryLimiterTelemetry:
    SHARED_KEY = "memory_limiter_telemetry"

    def __init__(self, registry: CollectorRegistry):
        def family(kind: str, signal: Signal, what: str) -> Counter:
            return Counter(
                f"otelcol_processor_{kind}_{ITEMS[signal]}",
                f"Number of {ITEMS[signal].replace('_', ' ')} {what} the next component in the"
                " pipeline."
                " [deprecated since v0.110.0]",
                ["processor"],
                registry=registry,
            )

        self.accepted = {s: family("accepted", s, "successfully pushed into") for s in Signal}
        self.refused = {s: family("refused", s, "that were rejected by") for s in Signal}

    @classmethod
    def of(cls, settings: Settings) -> MemoryLimiterTelemetry:
        return settings.service_wide(cls.SHARED_KEY, cls)

    def series(self, processor_id: str, signal: Signal) -> tuple[Series, Series]:
        """The (accepted, refused) counters of one processor for `signal`."""
        return Series(self.accepted[signal], processor_id), Series(
            self.refused[signal], processor_id
        )
