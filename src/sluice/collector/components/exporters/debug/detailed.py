"""``verbosity: detailed``: every field of every record, in upstream's text
format (``ResourceLog #0``, ``Resource attributes:``, ``     -> key:
Str(value)``, ``Span #0`` with its padded field names, data points by kind...)."""

from __future__ import annotations

import math
from typing import Any

from sluice.collector.internal.go_text import (
    METRIC_TYPES,
    SEVERITIES,
    SPAN_KINDS,
    STATUS_CODES,
    TEMPORALITIES,
    enum_name,
    float_f,
    hex_id,
    timestamp,
    typed,
)


class _Text:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def __str__(self) -> str:
        return "".join(line + "\n" for line in self.lines)

    def add(self, line: str) -> None:
        self.lines.append(line)

    def field(self, name: str, value: str) -> None:
        self.add(f"    {name:<15}: {value}")

    def attributes(self, header: str, attributes: Any) -> None:
        if not attributes:
            return
        self.add(f"{header}:")
        indent = header.split("->")[0] if "->" in header else ""
        for kv in attributes:
            self.add(f"{indent}     -> {kv.key}: {typed(kv.value)}")

    def container(self, kind: str, index: int, schema_url: str, resource: Any) -> None:
        self.add(f"{kind} #{index}")
        self.add(f"Resource SchemaURL: {schema_url}")
        self.attributes("Resource attributes", resource.attributes)

    def scope(self, kind: str, index: int, scoped: Any) -> None:
        self.add(f"{kind} #{index}")
        self.add(f"{kind} SchemaURL: {scoped.schema_url}")
        self.add(f"InstrumentationScope {scoped.scope.name} {scoped.scope.version}")
        self.attributes("InstrumentationScope attributes", scoped.scope.attributes)


def logs(request: Any) -> str:
    """`request`: a full ``ExportLogsServiceRequest``."""
    text = _Text()
    for i, resource in enumerate(request.resource_logs):
        text.container("ResourceLog", i, resource.schema_url, resource.resource)
        for j, scope in enumerate(resource.scope_logs):
            text.scope("ScopeLogs", j, scope)
            for k, record in enumerate(scope.log_records):
                text.add(f"LogRecord #{k}")
                text.add(f"ObservedTimestamp: {timestamp(record.observed_time_unix_nano)}")
                text.add(f"Timestamp: {timestamp(record.time_unix_nano)}")
                text.add(f"SeverityText: {record.severity_text}")
                severity = record.severity_number
                text.add(f"SeverityNumber: {enum_name(SEVERITIES, severity)}({severity})")
                text.add(f"Body: {typed(record.body)}")
                text.attributes("Attributes", record.attributes)
                text.add(f"Trace ID: {hex_id(record.trace_id)}")
                text.add(f"Span ID: {hex_id(record.span_id)}")
                text.add(f"Flags: {record.flags}")
    return str(text)


def traces(request: Any) -> str:
    text = _Text()
    for i, resource in enumerate(request.resource_spans):
        text.container("ResourceSpans", i, resource.schema_url, resource.resource)
        for j, scope in enumerate(resource.scope_spans):
            text.scope("ScopeSpans", j, scope)
            for k, span in enumerate(scope.spans):
                text.add(f"Span #{k}")
                text.field("Trace ID", hex_id(span.trace_id))
                text.field("Parent ID", hex_id(span.parent_span_id))
                text.field("ID", hex_id(span.span_id))
                text.field("Name", span.name)
                text.field("Kind", enum_name(SPAN_KINDS, span.kind))
                if span.trace_state:
                    text.field("TraceState", span.trace_state)
                text.field("Start time", timestamp(span.start_time_unix_nano))
                text.field("End time", timestamp(span.end_time_unix_nano))
                text.field("Status code", enum_name(STATUS_CODES, span.status.code))
                text.field("Status message", span.status.message)
                text.attributes("Attributes", span.attributes)
                _events(text, span.events)
                _links(text, span.links)
    return str(text)


def _events(text: _Text, events: Any) -> None:
    if not events:
        return
    text.add("Events:")
    for i, event in enumerate(events):
        text.add(f"SpanEvent #{i}")
        text.add(f"     -> Name: {event.name}")
        text.add(f"     -> Timestamp: {timestamp(event.time_unix_nano)}")
        text.add(f"     -> DroppedAttributesCount: {event.dropped_attributes_count}")
        text.attributes("     -> Attributes:", event.attributes)


def _links(text: _Text, links: Any) -> None:
    if not links:
        return
    text.add("Links:")
    for i, link in enumerate(links):
        text.add(f"SpanLink #{i}")
        text.add(f"     -> Trace ID: {hex_id(link.trace_id)}")
        text.add(f"     -> ID: {hex_id(link.span_id)}")
        text.add(f"     -> TraceState: {link.trace_state}")
        text.add(f"     -> DroppedAttributesCount: {link.dropped_attributes_count}")
        text.attributes("     -> Attributes:", link.attributes)


def metrics(request: Any) -> str:
    text = _Text()
    for i, resource in enumerate(request.resource_metrics):
        text.container("ResourceMetrics", i, resource.schema_url, resource.resource)
        for j, scope in enumerate(resource.scope_metrics):
            text.scope("ScopeMetrics", j, scope)
            for k, metric in enumerate(scope.metrics):
                text.add(f"Metric #{k}")
                kind = metric.WhichOneof("data")
                text.add("Descriptor:")
                text.add(f"     -> Name: {metric.name}")
                text.add(f"     -> Description: {metric.description}")
                text.add(f"     -> Unit: {metric.unit}")
                text.add(f"     -> DataType: {METRIC_TYPES.get(kind, '')}")
                _points(text, kind, getattr(metric, kind) if kind else None)
    return str(text)


def _points(text: _Text, kind: str | None, data: Any) -> None:
    if kind is None:
        return
    if kind == "sum":
        text.add(f"     -> IsMonotonic: {'true' if data.is_monotonic else 'false'}")
    if kind in ("sum", "histogram", "exponential_histogram"):
        temporality = enum_name(TEMPORALITIES, data.aggregation_temporality)
        text.add(f"     -> AggregationTemporality: {temporality}")
    label = {
        "gauge": "NumberDataPoints",
        "sum": "NumberDataPoints",
        "histogram": "HistogramDataPoints",
        "exponential_histogram": "ExponentialHistogramDataPoints",
        "summary": "SummaryDataPoints",
    }[kind]
    for i, point in enumerate(data.data_points):
        text.add(f"{label} #{i}")
        text.attributes("Data point attributes", point.attributes)
        text.add(f"StartTimestamp: {timestamp(point.start_time_unix_nano)}")
        text.add(f"Timestamp: {timestamp(point.time_unix_nano)}")
        if kind in ("gauge", "sum"):
            _number(text, "Value: ", point)
        else:
            text.add(f"Count: {point.count}")
        if kind == "summary":
            text.add(f"Sum: {float_f(point.sum)}")
            for q, quantile in enumerate(point.quantile_values):
                text.add(
                    f"QuantileValue #{q}: Quantile {float_f(quantile.quantile)}, "
                    f"Value {float_f(quantile.value)}"
                )
            continue
        if kind != "gauge" and kind != "sum":
            for field in ("sum", "min", "max"):
                if point.HasField(field):
                    text.add(f"{field.capitalize()}: {float_f(getattr(point, field))}")
        if kind == "histogram":
            for b, bound in enumerate(point.explicit_bounds):
                text.add(f"ExplicitBounds #{b}: {float_f(bound)}")
            for b, count in enumerate(point.bucket_counts):
                text.add(f"Buckets #{b}, Count: {count}")
        elif kind == "exponential_histogram":
            _exponential_buckets(text, point)
        _exemplars(text, point.exemplars)


def _number(text: _Text, prefix: str, point: Any) -> None:
    kind = point.WhichOneof("value")
    if kind == "as_int":
        text.add(f"{prefix}{point.as_int}")
    elif kind == "as_double":
        text.add(f"{prefix}{float_f(point.as_double)}")


def _exponential_buckets(text: _Text, point: Any) -> None:
    factor = math.ldexp(math.log(2), -point.scale)
    negative = point.negative.bucket_counts
    for i in range(len(negative)):
        position = len(negative) - i - 1
        index = point.negative.offset + position
        lower, upper = _bucket_bounds(index, factor)
        text.add(f"Bucket [{float_f(-upper)}, {float_f(-lower)}), Count: {negative[position]}")
    if point.zero_count:
        text.add(f"Bucket [0, 0], Count: {point.zero_count}")
    for position, count in enumerate(point.positive.bucket_counts):
        lower, upper = _bucket_bounds(point.positive.offset + position, factor)
        text.add(f"Bucket ({float_f(lower)}, {float_f(upper)}], Count: {count}")


def _bucket_bounds(index: int, factor: float) -> tuple[float, float]:
    def bound(i: int) -> float:
        try:
            return math.exp(i * factor)
        except OverflowError:
            return math.inf

    return bound(index), bound(index + 1)


def _exemplars(text: _Text, exemplars: Any) -> None:
    if not exemplars:
        return
    text.add("Exemplars:")
    for i, exemplar in enumerate(exemplars):
        text.add(f"Exemplar #{i}")
        text.add(f"     -> Trace ID: {hex_id(exemplar.trace_id)}")
        text.add(f"     -> Span ID: {hex_id(exemplar.span_id)}")
        text.add(f"     -> Timestamp: {timestamp(exemplar.time_unix_nano)}")
        _number(text, "     -> Value: ", exemplar)
        text.attributes("     -> FilteredAttributes", exemplar.filtered_attributes)
