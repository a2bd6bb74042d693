"""The ``batch`` processor's own metrics, with upstream's names, shared by
every batch processor of the service (``settings.shared``), labelled by
``processor``: why batches left, how many items each held, and how many
combinations of metadata values are being batched."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge

from sluice.collector.component import Settings
from sluice.collector.telemetry import ExtremaHistogram

SEND_SIZE_BUCKETS = (
    *(10, 25, 50, 75, 100, 250, 500, 750, 1000),
    *range(2000, 10001, 1000),
    *(20000, 30000, 50000, 100000),
)
"""Upstream's ``processor_batch_batch_send_size`` bucket boundaries."""


class BatchTelemetry:
    SHARED_KEY = "batch"

    def __init__(self, registry: CollectorRegistry):
        self.size_trigger = Counter(
            "otelcol_processor_batch_batch_size_trigger_send",
            "Number of times the batch was sent due to a size trigger",
            ["processor"],
            registry=registry,
        )
        self.timeout_trigger = Counter(
            "otelcol_processor_batch_timeout_trigger_send",
            "Number of times the batch was sent due to a timeout trigger",
            ["processor"],
            registry=registry,
        )
        self.send_size = ExtremaHistogram(
            "otelcol_processor_batch_batch_send_size",
            "Number of units in the batch",
            ["processor"],
            buckets=SEND_SIZE_BUCKETS,
            registry=registry,
        )
        self.cardinality = Gauge(
            "otelcol_processor_batch_metadata_cardinality",
            "Number of distinct metadata value combinations being processed",
            ["processor"],
            registry=registry,
        )
        self.combinations: dict[str, list[Callable[[], int]]] = {}
        """Per processor id, how each of its instances (one per pipeline) counts."""

    @classmethod
    def of(cls, settings: Settings) -> BatchTelemetry:
        return settings.service_wide(cls.SHARED_KEY, cls)

    def instance(self, processor_id: str, combinations: Callable[[], int]) -> BatchSeries:
        """The series of one processor instance; `combinations` is read at
        scrape time and summed over the instances sharing the id."""
        counting = self.combinations.setdefault(processor_id, [])
        counting.append(combinations)
        self.cardinality.labels(processor_id).set_function(lambda: sum(f() for f in counting))
        return BatchSeries(self, processor_id)


class BatchSeries:
    """What one processor instance records per batch sent. As upstream's
    instruments, a trigger counter or the size histogram has no series until
    its first value (the cardinality is always there)."""

    def __init__(self, telemetry: BatchTelemetry, processor_id: str):
        self.telemetry = telemetry
        self.processor_id = processor_id

    def sent(self, items: int, by_timeout: bool) -> None:
        telemetry = self.telemetry
        trigger = telemetry.timeout_trigger if by_timeout else telemetry.size_trigger
        trigger.labels(self.processor_id).inc()
        telemetry.send_size.labels(self.processor_id).observe(items)
