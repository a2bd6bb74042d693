"""The ``batch`` processor's own metrics, with upstream's names, shared by
every batch processor of the service (``settings.shared``), labelled by
``processor``: why batches left, how many items each held, and how many
combinations of metadata values are being batched."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from sluice.collector.component import Settings

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
        self.send_size = Histogram(
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
        return BatchSeries(
            self.size_trigger.labels(processor_id),
            self.timeout_trigger.labels(processor_id),
            self.send_size.labels(processor_id),
        )


class BatchSeries:
    """What one processor instance records per batch sent."""

    def __init__(self, size_trigger: Counter, timeout_trigger: Counter, send_size: Histogram):
        self.size_trigger = size_trigger
        self.timeout_trigger = timeout_trigger
        self.send_size = send_size

    def sent(self, items: int, by_timeout: bool) -> None:
        (self.timeout_trigger if by_timeout else self.size_trigger).inc()
        self.send_size.observe(items)
