"""The collector's own metrics as upstream's SDK hands them to an OTLP or
console exporter: read from the service's Prometheus registry
(:mod:`sluice.collector.telemetry`) and described as upstream's instruments
are (names without the Prometheus ``_total`` suffix and with their dots,
units, instrumentation scopes, integer or floating point values, attribute
keys such as ``otel.signal``), under the service's resource.

A family upstream has no instrument for (a test's) is exported as its
Prometheus type says, with floating point values, under the scope
:data:`OTHER_SCOPE`.

As the SDK, a series appears once it has data; with delta temporality a
synchronous instrument's series is left out of a collection when nothing
was added to it since the previous one (a 0 added to it cannot be told
apart here), and an observable counter's always reports its change.
Histogram points carry min and max, as the SDK's, when the histogram keeps
them (:class:`sluice.collector.telemetry.ExtremaHistogram`, as the batch
processor's does).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.metrics.v1 import metrics_pb2
from prometheus_client import CollectorRegistry
from prometheus_client.metrics_core import Metric

from sluice.collector.telemetry import Extrema

RECEIVER_SCOPE = "go.opentelemetry.io/collector/receiver/receiverhelper"
EXPORTER_SCOPE = "go.opentelemetry.io/collector/exporter/exporterhelper"
PROCESSOR_SCOPE = "go.opentelemetry.io/collector/processor/processorhelper"
BATCH_SCOPE = "go.opentelemetry.io/collector/processor/batchprocessor"
MEMORY_LIMITER_SCOPE = "go.opentelemetry.io/collector/processor/memorylimiterprocessor"
FILTER_SCOPE = "github.com/open-telemetry/opentelemetry-collector-contrib/processor/filterprocessor"
SERVICE_SCOPE = "go.opentelemetry.io/collector/service"
OTHER_SCOPE = "sluice"

COUNTER = "counter"
"""A synchronous counter (delta with the ``delta`` and ``lowmemory`` preferences)."""
HISTOGRAM = "histogram"
"""A synchronous histogram (delta as a counter)."""
OBSERVABLE_COUNTER = "observable_counter"
"""Delta with the ``delta`` preference only."""
UPDOWN = "observable_updown_counter"
"""A non-monotonic sum, always cumulative."""
GAUGE = "gauge"

_CUMULATIVE = metrics_pb2.AGGREGATION_TEMPORALITY_CUMULATIVE
_DELTA = metrics_pb2.AGGREGATION_TEMPORALITY_DELTA


@dataclass(frozen=True)
class Instrument:
    """One of upstream's instruments: how its Prometheus family is exported."""

    name: str
    unit: str
    scope: str
    kind: str
    integer: bool = True


def _instruments() -> dict[str, Instrument]:
    """Upstream's instruments (its components' ``metadata.yaml``), by the
    Prometheus family name Sluice's registry gives each."""
    items = (("log_records", "{records}"), ("metric_points", "{datapoints}"), ("spans", "{spans}"))
    found: dict[str, Instrument] = {}

    def add(name: str, unit: str, scope: str, kind: str, integer: bool = True) -> None:
        found[name.replace(".", "_")] = Instrument(name, unit, scope, kind, integer)

    for item, unit in items:
        for kind in ("accepted", "refused"):
            add(f"otelcol_receiver_{kind}_{item}", unit, RECEIVER_SCOPE, COUNTER)
            add(f"otelcol_processor_{kind}_{item}", unit, MEMORY_LIMITER_SCOPE, COUNTER)
        for kind in ("sent", "send_failed", "enqueue_failed"):
            add(f"otelcol_exporter_{kind}_{item}", unit, EXPORTER_SCOPE, COUNTER)
    for signal in ("logs", "datapoints", "spans"):
        add(f"otelcol_processor_filter_{signal}.filtered", "1", FILTER_SCOPE, COUNTER)
    add("otelcol_exporter_queue_size", "{batches}", EXPORTER_SCOPE, GAUGE)
    add("otelcol_exporter_queue_capacity", "{batches}", EXPORTER_SCOPE, GAUGE)
    for direction in ("incoming", "outgoing"):
        add(f"otelcol_processor_{direction}_items", "{items}", PROCESSOR_SCOPE, COUNTER)
    add("otelcol_processor_batch_batch_size_trigger_send", "{times}", BATCH_SCOPE, COUNTER)
    add("otelcol_processor_batch_timeout_trigger_send", "{times}", BATCH_SCOPE, COUNTER)
    add("otelcol_processor_batch_batch_send_size", "{units}", BATCH_SCOPE, HISTOGRAM)
    add("otelcol_processor_batch_metadata_cardinality", "{combinations}", BATCH_SCOPE, UPDOWN)
    add("otelcol_process_uptime", "s", SERVICE_SCOPE, OBSERVABLE_COUNTER, integer=False)
    add("otelcol_process_cpu_seconds", "s", SERVICE_SCOPE, OBSERVABLE_COUNTER, integer=False)
    add("otelcol_process_memory_rss", "By", SERVICE_SCOPE, GAUGE)
    add("otelcol_process_runtime_heap_alloc_bytes", "By", SERVICE_SCOPE, GAUGE)
    add("otelcol_process_runtime_total_alloc_bytes", "By", SERVICE_SCOPE, OBSERVABLE_COUNTER)
    add("otelcol_process_runtime_total_sys_memory_bytes", "By", SERVICE_SCOPE, GAUGE)
    return found


INSTRUMENTS = _instruments()
ATTRIBUTE_KEYS = {"otel_signal": "otel.signal"}
"""Attribute keys whose Prometheus label name is not the key itself."""


def _is_delta(kind: str, preference: str) -> bool:
    if preference == "delta":
        return kind in (COUNTER, HISTOGRAM, OBSERVABLE_COUNTER)
    if preference == "lowmemory":
        return kind in (COUNTER, HISTOGRAM)
    return False


def _attributes(labels: Mapping[str, str]) -> list[KeyValue]:
    return [
        KeyValue(key=ATTRIBUTE_KEYS.get(k, k), value=AnyValue(string_value=v))
        for k, v in sorted(labels.items())
    ]


def _fallback(family: Metric) -> Instrument | None:
    kinds = {"counter": COUNTER, "gauge": GAUGE, "histogram": HISTOGRAM}
    kind = kinds.get(family.type)
    return None if kind is None else Instrument(family.name, "", OTHER_SCOPE, kind, False)


_SeriesKey = tuple[str, tuple[tuple[str, str], ...]]


class MetricsView:
    """Reads `registry` into OTLP requests under `resource`, with the
    temporality `preference` (``cumulative``, ``delta``, ``lowmemory``)."""

    def __init__(
        self,
        registry: CollectorRegistry,
        resource: Mapping[str, str],
        preference: str = "cumulative",
    ):
        self.registry = registry
        self.resource = dict(resource)
        self.preference = preference
        self.started_ns = time.time_ns()
        self._previous_ns = self.started_ns
        self._last: dict[_SeriesKey, Any] = {}
        """Each delta series's cumulative value(s) at the previous collection."""

    def collect(self) -> ExportMetricsServiceRequest:
        """One collection: every family with data, grouped by scope."""
        now = time.time_ns()
        request = ExportMetricsServiceRequest()
        resource_metrics = request.resource_metrics.add()
        resource_metrics.resource.attributes.extend(
            KeyValue(key=k, value=AnyValue(string_value=v)) for k, v in self.resource.items()
        )
        scopes: dict[str, Any] = {}
        for family in self.registry.collect():
            instrument = INSTRUMENTS.get(family.name) or _fallback(family)
            if instrument is None or not family.samples:
                continue
            metric = metrics_pb2.Metric(
                name=instrument.name, description=family.documentation, unit=instrument.unit
            )
            if not self._fill(metric, instrument, family, now):
                continue
            scope = scopes.get(instrument.scope)
            if scope is None:
                scope = scopes[instrument.scope] = resource_metrics.scope_metrics.add()
                scope.scope.name = instrument.scope
            scope.metrics.append(metric)
        self._previous_ns = now
        return request

    def _fill(self, metric: Any, instrument: Instrument, collected: Metric, now: int) -> bool:
        """Add the points of the Prometheus family `collected` to `metric`;
        False when it has none."""
        delta = _is_delta(instrument.kind, self.preference)
        start = self._previous_ns if delta else self.started_ns
        family, samples = collected.name, collected.samples
        if instrument.kind == HISTOGRAM:
            extrema = getattr(collected, "extrema", {})
            return self._fill_histogram(metric, instrument, samples, extrema, now, start, delta)
        if instrument.kind == GAUGE:
            points = metric.gauge.data_points
        else:
            metric.sum.aggregation_temporality = _DELTA if delta else _CUMULATIVE
            metric.sum.is_monotonic = instrument.kind != UPDOWN
            points = metric.sum.data_points
        counted = instrument.kind in (COUNTER, OBSERVABLE_COUNTER)
        for sample in samples:
            if sample.name != (f"{family}_total" if counted else family):
                continue
            value = sample.value
            if delta:
                key = (instrument.name, tuple(sorted(sample.labels.items())))
                before = self._last.get(key)
                self._last[key] = value
                if before is not None and value == before and instrument.kind == COUNTER:
                    continue  # nothing added since the previous collection
                value -= before or 0.0
            point = points.add(start_time_unix_nano=start, time_unix_nano=now)
            point.attributes.extend(_attributes(sample.labels))
            if instrument.integer:
                point.as_int = int(value)
            else:
                point.as_double = float(value)
        return len(points) > 0

    def _fill_histogram(
        self,
        metric: Any,
        instrument: Instrument,
        samples: Iterable[Any],
        extrema: Mapping[tuple[tuple[str, str], ...], Extrema],
        now: int,
        start: int,
        delta: bool,
    ) -> bool:
        """`extrema`: each series's, when the family keeps them
        (:class:`sluice.collector.telemetry.ExtremaHistogram`)."""
        series: dict[tuple[tuple[str, str], ...], dict[str, Any]] = {}
        for sample in samples:
            labels = tuple(sorted((k, v) for k, v in sample.labels.items() if k != "le"))
            found = series.setdefault(labels, {"buckets": [], "count": 0.0, "sum": 0.0})
            if sample.name.endswith("_bucket"):
                found["buckets"].append((float(sample.labels["le"]), sample.value))
            elif sample.name.endswith("_count"):
                found["count"] = sample.value
            elif sample.name.endswith("_sum"):
                found["sum"] = sample.value
        metric.histogram.aggregation_temporality = _DELTA if delta else _CUMULATIVE
        for labels, found in series.items():
            buckets = sorted(found["buckets"])
            cumulative = [count for _, count in buckets]
            counts = [c - p for c, p in zip(cumulative, [0.0, *cumulative[:-1]], strict=True)]
            total, amount = found["count"], found["sum"]
            if delta:
                key = (instrument.name, labels)
                before = self._last.get(key)
                self._last[key] = (counts, total, amount)
                if before is not None:
                    if before[1] == total:
                        continue
                    counts = [c - b for c, b in zip(counts, before[0], strict=True)]
                    total, amount = total - before[1], amount - before[2]
            point = metric.histogram.data_points.add(
                start_time_unix_nano=start,
                time_unix_nano=now,
                count=int(total),
                sum=amount,
                explicit_bounds=[b for b, _ in buckets if not math.isinf(b)],
                bucket_counts=[int(c) for c in counts],
            )
            point.attributes.extend(_attributes(dict(labels)))
            kept = extrema.get(labels)
            bounds = None if kept is None else kept.take(self) if delta else kept.overall()
            if bounds is not None:
                point.min, point.max = bounds
        return len(metric.histogram.data_points) > 0
