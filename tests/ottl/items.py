"""The items the OTTL tests evaluate conditions on: one of each context,
built as the pipeline holds them (log records as lean wire bytes, spans and
metrics as messages), and a one-condition evaluator."""

from __future__ import annotations

import math
from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from sluice.collector import pdata
from sluice.ottl import (
    DATAPOINT,
    LOG,
    METRIC,
    SPAN,
    SPAN_EVENT,
    ConditionFailed,
    ConditionSequence,
    Context,
    DataPointItem,
    LogItem,
    MetricItem,
    SpanEventItem,
    SpanItem,
)

BODY = "GET /api/users 200 password=hunter2"
TRACE_ID = bytes(range(1, 17))
SPAN_ID = bytes(range(1, 9))


def set_any(target: AnyValue, value: Any) -> None:
    """Write a Python value into an AnyValue (dict: kvlist, list: array,
    None: left empty)."""
    if value is None:
        return
    if isinstance(value, bool):
        target.bool_value = value
    elif isinstance(value, int):
        target.int_value = value
    elif isinstance(value, float):
        target.double_value = value
    elif isinstance(value, str):
        target.string_value = value
    elif isinstance(value, bytes):
        target.bytes_value = value
    elif isinstance(value, dict):
        target.kvlist_value.SetInParent()
        for key, item in value.items():
            set_any(target.kvlist_value.values.add(key=key).value, item)
    else:
        target.array_value.SetInParent()
        for item in value:
            set_any(target.array_value.values.add(), item)


def add_attributes(kvs: Any, attributes: list[tuple[str, Any]]) -> None:
    for key, value in attributes:
        set_any(kvs.add(key=key).value, value)


LOG_ATTRIBUTES: list[tuple[str, Any]] = [
    ("http.method", "GET"),
    ("http.status_code", 200),
    ("duration", 12.5),
    ("sampled", True),
    ("payload", b"\x01\x02"),
    ("empty_bytes", b""),
    ("nested", {"a": {"b": "deep"}, "n": 1}),
    ("list", ["x", 2, 3.5]),
    ("empty", None),
    ("dup", "one"),
    ("dup", "two"),
    ("unicode", "héllo"),
    ("html", {"k": "<a&b>"}),
]
"""Attributes of the standard log record (13 entries: "dup" is written twice)."""

_NO_BODY = object()


def log_request(body: Any = BODY, **fields: Any) -> ExportLogsServiceRequest:
    """One resource, scope and record: the standard log record, with `body`
    (any Python value; ``NO_BODY`` for none) and `fields` overridden."""
    request = ExportLogsServiceRequest()
    resource = request.resource_logs.add(schema_url="https://schema/0")
    add_attributes(
        resource.resource.attributes,
        [("service.name", "checkout"), ("host.name", "web-1"), ("count", 3)],
    )
    scope = resource.scope_logs.add()
    scope.scope.name = "app.logger"
    scope.scope.version = "1.2.0"
    add_attributes(scope.scope.attributes, [("lib", "otel")])
    record = scope.log_records.add(
        time_unix_nano=1_700_000_000_000_000_000,
        severity_number=9,
        severity_text="INFO",
        trace_id=TRACE_ID,
        span_id=SPAN_ID,
        flags=1,
        dropped_attributes_count=2,
        event_name="login",
    )
    if body is not _NO_BODY:
        record.body.SetInParent()
        set_any(record.body, body)
    add_attributes(record.attributes, LOG_ATTRIBUTES)
    for name, value in fields.items():
        setattr(record, name, value)
    return request


NO_BODY = _NO_BODY


def log_item(body: Any = BODY) -> LogItem:
    lean = pdata.lean_logs(log_request(body))
    item = LogItem()
    item.rc = lean.resource_logs[0]
    item.sc = item.rc.scope_logs[0]
    item.reset(item.sc.log_records[0])
    return item


def trace_request() -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    resource = request.resource_spans.add()
    add_attributes(
        resource.resource.attributes, [("service.name", "checkout"), ("host.name", "web-1")]
    )
    scope = resource.scope_spans.add()
    scope.scope.name = "tracer"
    span = scope.spans.add(
        name="GET /users",
        kind=2,
        trace_id=TRACE_ID,
        span_id=SPAN_ID,
        trace_state="a=1,b=2",
        start_time_unix_nano=100,
        end_time_unix_nano=250,
    )
    span.status.code = 2
    span.status.message = "boom"
    add_attributes(span.attributes, [("http.route", "/users"), ("retries", 3)])
    event = span.events.add(name="grpc.call", time_unix_nano=5)
    add_attributes(event.attributes, [("grpc", True), ("code", 14)])
    span.links.add(trace_id=TRACE_ID, span_id=SPAN_ID)
    return request


def span_item() -> SpanItem:
    request = trace_request()
    item = SpanItem()
    item.rc = request.resource_spans[0]
    item.sc = item.rc.scope_spans[0]
    item.span = item.sc.spans[0]
    return item


def span_event_item() -> SpanEventItem:
    span = span_item()
    item = SpanEventItem()
    item.rc, item.sc, item.span = span.rc, span.sc, span.span
    item.event = span.span.events[0]
    return item


def metric_request() -> ExportMetricsServiceRequest:
    request = ExportMetricsServiceRequest()
    resource = request.resource_metrics.add()
    add_attributes(resource.resource.attributes, [("service.name", "checkout")])
    scope = resource.scope_metrics.add()
    scope.scope.name = "meter"
    metric = scope.metrics.add(name="http.requests", description="reqs", unit="1")
    metric.sum.is_monotonic = True
    metric.sum.aggregation_temporality = 2
    add_attributes(metric.sum.data_points.add(as_int=4).attributes, [("method", "GET")])
    add_attributes(
        metric.sum.data_points.add(as_int=7).attributes, [("method", "POST"), ("code", 500)]
    )
    gauge = scope.metrics.add(name="cpu", unit="%")
    gauge.gauge.data_points.add(as_double=0.5)
    scope.metrics.add(name="empty")
    histogram = scope.metrics.add(name="latency", unit="ms")
    histogram.histogram.aggregation_temporality = 1
    histogram.histogram.data_points.add(
        count=10, sum=2.5, bucket_counts=[1, 4, 5], explicit_bounds=[1.0, 10.0]
    )
    return request


def metric_item(index: int = 0) -> MetricItem:
    """The metric at `index`: 0 a monotonic sum with points GET=4 and
    POST=7 (code 500), 1 a gauge, 2 an empty metric, 3 a histogram."""
    request = metric_request()
    item = MetricItem()
    item.rc = request.resource_metrics[0]
    item.sc = item.rc.scope_metrics[0]
    item.metric = item.sc.metrics[index]
    item.kind = item.metric.WhichOneof("data")
    return item


def datapoint_item(index: int = 0, point: int = 0) -> DataPointItem:
    metric = metric_item(index)
    item = DataPointItem()
    item.rc, item.sc, item.metric, item.kind = metric.rc, metric.sc, metric.metric, metric.kind
    assert item.kind is not None
    item.point = getattr(item.metric, item.kind).data_points[point]
    return item


CONTEXTS: dict[str, Context] = {
    "log": LOG,
    "span": SPAN,
    "spanevent": SPAN_EVENT,
    "metric": METRIC,
    "datapoint": DATAPOINT,
}


def evaluate(context: Context, condition: str, item: Any) -> bool | str:
    """True/False, or "error" when the condition fails on the item."""
    sequence = ConditionSequence(context, [condition])
    try:
        return sequence.matches(item)
    except ConditionFailed:
        return "error"


NAN = math.nan
