"""The telemetry of upstream's ``pdata/testdata`` package (v0.115), which the
collector's component tests feed in (``GenerateLogs``, ``GenerateTraces``,
``GenerateMetricsAllTypes``...), built as OTLP request messages so that the
debug exporter's output can be compared with upstream's golden files."""

from __future__ import annotations

from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

START = 1_581_452_772_000_000_321  # 2020-02-11 20:26:12.000000321 UTC
EXEMPLAR = 1_581_452_773_000_000_123  # 20:26:13.000000123
END = 1_581_452_773_000_000_789  # 20:26:13.000000789
TRACE_ID = bytes.fromhex("0102030405060708090a0b0c0d0e0f10")
SPAN_ID = bytes.fromhex("1112131415161718")


def put_str(attributes: Any, key: str, value: str) -> None:
    attributes.add(key=key).value.string_value = value


def _resource(resource: Any) -> None:
    put_str(resource.attributes, "resource-attr", "resource-attr-val-1")


def generate_logs(count: int) -> ExportLogsServiceRequest:
    request = ExportLogsServiceRequest()
    resource = request.resource_logs.add()
    _resource(resource.resource)
    records = resource.scope_logs.add().log_records
    for i in range(count):
        record = records.add(
            time_unix_nano=END,
            dropped_attributes_count=1,
            severity_number=9,
            severity_text="Info",
        )
        if i % 2 == 0:
            record.span_id = bytes([1, 2, 4, 8]) + bytes(4)
            record.trace_id = bytes([8, 4, 2, 1]) + bytes(12)
            put_str(record.attributes, "app", "server")
            record.attributes.add(key="instance_num").value.int_value = 1
            record.body.string_value = "This is a log message"
        else:
            put_str(record.attributes, "customer", "acme")
            put_str(record.attributes, "env", "dev")
            record.body.string_value = "something happened"
    return request


def generate_traces(count: int) -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    resource = request.resource_spans.add()
    _resource(resource.resource)
    spans = resource.scope_spans.add().spans
    for i in range(count):
        span = spans.add(start_time_unix_nano=START, end_time_unix_nano=END)
        if i % 2 == 0:
            span.name = "operationA"
            span.dropped_attributes_count = 1
            span.trace_state = "ot=th:0"
            span.trace_id, span.span_id = TRACE_ID, SPAN_ID
            event = span.events.add(
                time_unix_nano=EXEMPLAR, name="event-with-attr", dropped_attributes_count=2
            )
            put_str(event.attributes, "span-event-attr", "span-event-attr-val")
            span.events.add(time_unix_nano=EXEMPLAR, name="event", dropped_attributes_count=2)
            span.dropped_events_count = 1
            span.status.code, span.status.message = 2, "status-cancelled"
        else:
            span.name = "operationB"
            link = span.links.add(dropped_attributes_count=4)
            put_str(link.attributes, "span-link-attr", "span-link-attr-val")
            span.links.add(dropped_attributes_count=4)
            span.dropped_links_count = 3
    return request


def _attributes(point: Any, *labels: int) -> None:
    for label in labels:
        put_str(point.attributes, f"label-{label}", f"label-value-{label}")


def _exemplar(point: Any) -> Any:
    exemplar = point.exemplars.add(trace_id=TRACE_ID, span_id=SPAN_ID, time_unix_nano=EXEMPLAR)
    put_str(exemplar.filtered_attributes, "exemplar-attachment", "exemplar-attachment-value")
    return exemplar


def _metric(metrics: Any, name: str, kind: str | None) -> Any:
    metric = metrics.add(name=name, unit="1")
    if kind == "sum":
        metric.sum.is_monotonic, metric.sum.aggregation_temporality = True, 2
    elif kind == "histogram":
        metric.histogram.aggregation_temporality = 2
    elif kind == "exponential_histogram":
        metric.exponential_histogram.aggregation_temporality = 1
    elif kind is not None:
        getattr(metric, kind).SetInParent()
    return metric


def _numbers(metrics: Any, name: str, kind: str, double: bool) -> None:
    points = getattr(_metric(metrics, name, kind), kind).data_points
    first = points.add(start_time_unix_nano=START, time_unix_nano=END)
    second = points.add(start_time_unix_nano=START, time_unix_nano=END)
    if double:
        _attributes(first, 1, 2)
        _attributes(second, 1, 3)
        first.as_double, second.as_double = 1.23, 4.56
    else:
        _attributes(first, 1)
        _attributes(second, 2)
        first.as_int, second.as_int = 123, 456


def _histogram(metrics: Any) -> None:
    points = _metric(metrics, "histogram", "histogram").histogram.data_points
    first = points.add(start_time_unix_nano=START, time_unix_nano=END, count=1, sum=15)
    _attributes(first, 1, 3)
    second = points.add(
        start_time_unix_nano=START, time_unix_nano=END, count=1, sum=15, min=15, max=15
    )
    _attributes(second, 2)
    second.bucket_counts.extend([0, 1])
    _exemplar(second).as_double = 15
    second.explicit_bounds.append(1)


def _exponential_histogram(metrics: Any) -> None:
    metric = _metric(metrics, "exponential-histogram", "exponential_histogram")
    points = metric.exponential_histogram.data_points
    first = points.add(
        start_time_unix_nano=START, time_unix_nano=END, count=5, sum=0.15, zero_count=1, scale=1
    )
    _attributes(first, 1, 3)
    first.positive.offset, first.negative.offset = 1, -1
    first.positive.bucket_counts.extend([1, 1])
    first.negative.bucket_counts.extend([1, 1])
    second = points.add(
        start_time_unix_nano=START,
        time_unix_nano=END,
        count=3,
        sum=1.25,
        min=0,
        max=1,
        zero_count=1,
        scale=-1,
    )
    _attributes(second, 2)
    second.positive.offset = -1
    second.positive.bucket_counts.extend([1, 1])
    _exemplar(second).as_int = 15


def _summary(metrics: Any) -> None:
    points = _metric(metrics, "summary", "summary").summary.data_points
    first = points.add(start_time_unix_nano=START, time_unix_nano=END, count=1, sum=15)
    _attributes(first, 1, 3)
    second = points.add(start_time_unix_nano=START, time_unix_nano=END, count=1, sum=15)
    _attributes(second, 2)
    second.quantile_values.add(quantile=0.01, value=15)


_KINDS = [
    lambda ms: _numbers(ms, "gauge-int", "gauge", double=False),
    lambda ms: _numbers(ms, "gauge-double", "gauge", double=True),
    lambda ms: _numbers(ms, "sum-int", "sum", double=False),
    lambda ms: _numbers(ms, "sum-double", "sum", double=True),
    _histogram,
    _exponential_histogram,
    _summary,
]


def _one_empty_scope() -> tuple[ExportMetricsServiceRequest, Any]:
    request = ExportMetricsServiceRequest()
    resource = request.resource_metrics.add()
    _resource(resource.resource)
    return request, resource.scope_metrics.add().metrics


def generate_metrics(count: int) -> ExportMetricsServiceRequest:
    request, metrics = _one_empty_scope()
    for i in range(count):
        _KINDS[i % len(_KINDS)](metrics)
    return request


def generate_metrics_all_types() -> ExportMetricsServiceRequest:
    return generate_metrics(len(_KINDS))


def generate_metrics_metric_type_invalid() -> ExportMetricsServiceRequest:
    request, metrics = _one_empty_scope()
    _metric(metrics, "sum-int", None)
    return request


def generate_metrics_all_types_empty() -> ExportMetricsServiceRequest:
    request, metrics = _one_empty_scope()
    for name, kind in [
        ("gauge-double", "gauge"),
        ("gauge-int", "gauge"),
        ("sum-double", "sum"),
        ("sum-int", "sum"),
        ("histogram", "histogram"),
        ("summary", "summary"),
    ]:
        getattr(_metric(metrics, name, kind), kind).data_points.add()
    return request
