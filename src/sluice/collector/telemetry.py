"""The collector's own metrics, with upstream's names and labels, in one
Prometheus registry per service (served by :mod:`sluice.collector.selfmetrics`).

Components take their pre-labelled series once, at creation, so the data path
only calls ``inc`` on a child: a few increments per batch, never per record.
As upstream's SDK, which reports a series only once something was added to
it, a component's series appear on its first operation for their signal:
none are listed before traffic.
"""

from __future__ import annotations

import math
import uuid
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import cast

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
)
from prometheus_client.metrics_core import Metric

from sluice.collector.procmetrics import ProcessMetrics
from sluice.policy import Signal

ITEMS = {Signal.LOG: "log_records", Signal.METRIC: "metric_points", Signal.TRACE: "spans"}
"""Upstream's per-signal item names in metric names."""
_SIGNAL_LABEL = {Signal.LOG: "logs", Signal.METRIC: "metrics", Signal.TRACE: "traces"}
_SENT_ITEMS = {Signal.LOG: "log record", Signal.METRIC: "metric points", Signal.TRACE: "spans"}
ALPHA = " [alpha]"
"""Upstream's descriptions end with their metric's stability."""


def resource(command: str, version: str, configured: Mapping[str, str | None]) -> dict[str, str]:
    """The service's resource attributes, as upstream's service makes them:
    `configured` (``service::telemetry::resource``) with ``service.name``
    (the command), ``service.instance.id`` (a new random UUID) and
    ``service.version`` added unless configured; a null value leaves its
    attribute out."""
    defaults = {
        "service.name": command,
        "service.instance.id": str(uuid.uuid4()),
        "service.version": version,
    }
    merged = {**defaults, **configured}
    return {k: v for k, v in merged.items() if v is not None}


class Series:
    """One labelled series of a counter family, created on its first
    :meth:`inc`. Its `partners` are created (at 0) with it: upstream adds
    to both series of a pair when an operation ends, 0 included (accepted
    and refused, sent and send_failed, incoming and outgoing)."""

    __slots__ = ("_child", "_family", "_labels", "partners")

    def __init__(self, family: Counter, *labels: str):
        self._family = family
        self._labels = labels
        self._child: Counter | None = None
        self.partners: tuple[Series, ...] = ()

    def _created(self) -> Counter:
        if self._child is None:
            self._child = self._family.labels(*self._labels)
        return self._child

    def inc(self, amount: float = 1) -> None:
        child = self._child
        if child is None:
            child = self._created()
            for partner in self.partners:
                partner._created()
        child.inc(amount)


def _paired(ok: dict[Signal, Series], failed: dict[Signal, Series]) -> None:
    for signal in Signal:
        ok[signal].partners = (failed[signal],)
        failed[signal].partners = (ok[signal],)


@dataclass(frozen=True)
class ReceiverMetrics:
    """``otelcol_receiver_{accepted,refused}_<items>_total{receiver,transport}``."""

    accepted: dict[Signal, Series]
    refused: dict[Signal, Series]


@dataclass(frozen=True)
class ProcessorMetrics:
    """``otelcol_processor_{incoming,outgoing}_items_total{processor,otel_signal}``."""

    incoming: Series
    outgoing: Series


@dataclass(frozen=True)
class ExporterMetrics:
    """``otelcol_exporter_{sent,send_failed,enqueue_failed}_<items>_total{exporter}``."""

    sent: dict[Signal, Series]
    send_failed: dict[Signal, Series]
    enqueue_failed: dict[Signal, Series]


class Extrema:
    """The least and greatest value a histogram series observed: since it
    began, and since each delta reader's previous collection."""

    def __init__(self) -> None:
        self.low = math.inf
        self.high = -math.inf
        self._since: weakref.WeakKeyDictionary[object, list[float]] = weakref.WeakKeyDictionary()

    def add(self, value: float) -> None:
        self.low = min(self.low, value)
        self.high = max(self.high, value)
        for since in self._since.values():
            since[0] = min(since[0], value)
            since[1] = max(since[1], value)

    def overall(self) -> tuple[float, float] | None:
        return None if self.low > self.high else (self.low, self.high)

    def take(self, reader: object) -> tuple[float, float] | None:
        """Those since `reader`'s previous take (since the series began at
        its first), and start again for it."""
        since = self._since.get(reader)
        found = self.overall() if since is None else (since[0], since[1])
        self._since[reader] = [math.inf, -math.inf]
        return None if found is None or found[0] > found[1] else found


class ExtremaHistogram(Histogram):
    """A histogram whose series also keep their :class:`Extrema`, as the
    SDK's explicit bucket histograms do (Prometheus shows none); each
    collected family has them in ``extrema``, by its series's sorted
    label pairs."""

    def _metric_init(self) -> None:
        super()._metric_init()
        self.extrema = Extrema()

    def observe(self, amount: float, exemplar: dict[str, str] | None = None) -> None:
        super().observe(amount, exemplar)
        self.extrema.add(amount)

    def collect(self) -> Iterable[Metric]:
        collected = super().collect()
        children = self._metrics.items() if self._labelnames else [((), self)]
        extrema = {
            tuple(sorted(zip(self._labelnames, values, strict=True))): cast(
                ExtremaHistogram, child
            ).extrema
            for values, child in children
        }
        for metric in collected:
            metric.extrema = extrema  # type: ignore[attr-defined]
        return collected


class ServiceTelemetry:
    """The service's metric registry and the families every component shares."""

    def __init__(self) -> None:
        disable_created_metrics()  # type: ignore[no-untyped-call]  # upstream has no *_created series
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        r.register(ProcessMetrics())
        self._receiver = {
            (kind, s): Counter(
                f"otelcol_receiver_{kind}_{ITEMS[s]}",
                f"Number of {ITEMS[s].replace('_', ' ')} "
                + (
                    "successfully pushed into the pipeline."
                    if kind == "accepted"
                    else "that could not be pushed into the pipeline."
                )
                + ALPHA,
                ["receiver", "transport"],
                registry=r,
            )
            for kind in ("accepted", "refused")
            for s in Signal
        }
        self._exporter = {
            (kind, s): Counter(
                f"otelcol_exporter_{kind}_{ITEMS[s]}",
                {
                    # Upstream's words, "log record" singular for sent logs included.
                    "sent": f"Number of {_SENT_ITEMS[s]} successfully sent to destination.",
                    "send_failed": f"Number of {ITEMS[s].replace('_', ' ')} in failed attempts to send to destination.",
                    "enqueue_failed": f"Number of {ITEMS[s].replace('_', ' ')} failed to be added to the sending queue.",
                }[kind]
                + ALPHA,
                ["exporter"],
                registry=r,
            )
            for kind in ("sent", "send_failed", "enqueue_failed")
            for s in Signal
        }
        self._incoming = Counter(
            "otelcol_processor_incoming_items",
            "Number of items passed to the processor." + ALPHA,
            ["processor", "otel_signal"],
            registry=r,
        )
        self._outgoing = Counter(
            "otelcol_processor_outgoing_items",
            "Number of items emitted from the processor." + ALPHA,
            ["processor", "otel_signal"],
            registry=r,
        )
        self._queue_size = Gauge(
            "otelcol_exporter_queue_size",
            "Current size of the retry queue (in batches)",
            ["exporter", "data_type"],
            registry=r,
        )
        self._queue_capacity = Gauge(
            "otelcol_exporter_queue_capacity",
            "Fixed capacity of the retry queue (in batches)",
            ["exporter"],
            registry=r,
        )

    def items_received(self) -> int:
        """Items every receiver took or refused so far (the heap trimmer
        watches it for traffic)."""
        total = 0.0
        for family in self._receiver.values():
            for metric in family.collect():
                total += sum(
                    sample.value for sample in metric.samples if sample.name.endswith("_total")
                )
        return int(total)

    def receiver(self, receiver_id: str, transport: str) -> ReceiverMetrics:
        def series(kind: str) -> dict[Signal, Series]:
            return {s: Series(self._receiver[kind, s], receiver_id, transport) for s in Signal}

        metrics = ReceiverMetrics(series("accepted"), series("refused"))
        _paired(metrics.accepted, metrics.refused)
        return metrics

    def processor(self, processor_id: str, signal: Signal) -> ProcessorMetrics:
        label = _SIGNAL_LABEL[signal]
        incoming = Series(self._incoming, processor_id, label)
        outgoing = Series(self._outgoing, processor_id, label)
        incoming.partners, outgoing.partners = (outgoing,), (incoming,)
        return ProcessorMetrics(incoming, outgoing)

    def exporter(self, exporter_id: str) -> ExporterMetrics:
        def series(kind: str) -> dict[Signal, Series]:
            return {s: Series(self._exporter[kind, s], exporter_id) for s in Signal}

        metrics = ExporterMetrics(series("sent"), series("send_failed"), series("enqueue_failed"))
        _paired(metrics.sent, metrics.send_failed)
        return metrics

    def queue(
        self, exporter_id: str, signal: Signal, size: Callable[[], float], capacity: int
    ) -> None:
        """Report an exporter queue's length (read at scrape time) and
        capacity; as upstream, the capacity is labelled with the exporter
        only (its signals' queues share the configured size)."""
        self._queue_size.labels(exporter_id, _SIGNAL_LABEL[signal]).set_function(size)
        self._queue_capacity.labels(exporter_id).set(capacity)
