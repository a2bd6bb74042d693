"""The data that flows between components: one OTLP export request message
per call, decoded once at the receiver and encoded once at the exporter.

- logs: :data:`~sluice.telemetry.otlp_raw.LeanLogsRequest`, wire-identical to
  ``ExportLogsServiceRequest`` with each log record kept as its wire bytes
  (the policy processor reads them as Edge does; kept records leave byte for
  byte). A component that edits record fields converts with
  :func:`full_logs` / :func:`lean_logs`.
- metrics: ``ExportMetricsServiceRequest``; traces: ``ExportTraceServiceRequest``.

Items are what upstream counts: log records, metric data points, spans.
"""

from __future__ import annotations

from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from sluice.policy import Signal
from sluice.telemetry.otlp_raw import LeanLogsRequest

MESSAGE_TYPES: dict[Signal, Any] = {
    Signal.LOG: LeanLogsRequest,
    Signal.METRIC: ExportMetricsServiceRequest,
    Signal.TRACE: ExportTraceServiceRequest,
}
RESOURCES = {
    Signal.LOG: "resource_logs",
    Signal.METRIC: "resource_metrics",
    Signal.TRACE: "resource_spans",
}
SCOPES = {Signal.LOG: "scope_logs", Signal.METRIC: "scope_metrics", Signal.TRACE: "scope_spans"}
RECORDS = {Signal.LOG: "log_records", Signal.METRIC: "metrics", Signal.TRACE: "spans"}
POINT_KINDS = ("gauge", "sum", "histogram", "exponential_histogram", "summary")


def new(signal: Signal) -> Any:
    """An empty request of the signal."""
    return MESSAGE_TYPES[signal]()


def parse(signal: Signal, wire: bytes) -> Any:
    """A protobuf export request (raises ``google.protobuf.message.DecodeError``)."""
    message = MESSAGE_TYPES[signal]()
    message.ParseFromString(wire)
    return message


def copy(data: Any) -> Any:
    """A deep copy (for a fan-out consumer that edits its data)."""
    duplicate = type(data)()
    duplicate.CopyFrom(data)
    return duplicate


def metric_points(metric: Any) -> int:
    """How many data points a metric holds."""
    kind = metric.WhichOneof("data")
    return len(getattr(metric, kind).data_points) if kind else 0


def item_count(signal: Signal, data: Any) -> int:
    """Log records, metric data points or spans in a request."""
    if signal is Signal.METRIC:
        return sum(
            metric_points(metric)
            for resource in data.resource_metrics
            for scope in resource.scope_metrics
            for metric in scope.metrics
        )
    records = RECORDS[signal]
    return sum(
        len(getattr(scope, records))
        for resource in getattr(data, RESOURCES[signal])
        for scope in getattr(resource, SCOPES[signal])
    )


def merge(signal: Signal, into: Any, data: Any) -> None:
    """Append `data`'s resources to `into` (copies them)."""
    getattr(into, RESOURCES[signal]).extend(getattr(data, RESOURCES[signal]))


def full_logs(lean: Any) -> ExportLogsServiceRequest:
    """Lean logs as a full ``ExportLogsServiceRequest`` (for field edits)."""
    full: ExportLogsServiceRequest = ExportLogsServiceRequest.FromString(lean.SerializeToString())
    return full


def lean_logs(full: ExportLogsServiceRequest) -> Any:
    return LeanLogsRequest.FromString(full.SerializeToString())
