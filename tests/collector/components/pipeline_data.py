"""What processor tests feed and collect: small OTLP requests of each signal,
a consumer that records what reaches it, and component settings."""

from __future__ import annotations

from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from sluice.collector import pdata
from sluice.collector.component import ComponentID, Consumer, ConsumerError, Kind, Settings
from sluice.collector.telemetry import ServiceTelemetry
from sluice.policy import Signal


class Sink(Consumer):
    """Records every request; raises `error` instead when it is set."""

    def __init__(self, error: ConsumerError | None = None):
        self.received: list[Any] = []
        self.error = error

    async def consume(self, data: Any) -> None:
        if self.error is not None:
            raise self.error
        self.received.append(data)

    def items(self, signal: Signal) -> list[int]:
        return [pdata.item_count(signal, data) for data in self.received]


def settings(
    component: str,
    shared: dict[str, Any] | None = None,
    telemetry: ServiceTelemetry | None = None,
    pipeline: str = "logs",
) -> Settings:
    return Settings(
        ComponentID.parse(component),
        Kind.PROCESSOR,
        telemetry or ServiceTelemetry(),
        pipeline,
        {} if shared is None else shared,
    )


def logs(*bodies: tuple[str, str], resources: int = 1, service: str = "checkout") -> Any:
    """Lean logs: `resources` resources, each with one scope holding one
    record per (severity_text, body)."""
    request = ExportLogsServiceRequest()
    for r in range(resources):
        resource = request.resource_logs.add(schema_url=f"https://schema/{r}")
        attribute = resource.resource.attributes.add(key="service.name")
        attribute.value.string_value = service
        scope = resource.scope_logs.add()
        scope.scope.name = "app.logger"
        for severity, body in bodies:
            record = scope.log_records.add(severity_text=severity)
            record.body.string_value = body
    return pdata.lean_logs(request)


def log_bodies(lean: Any) -> list[str]:
    full = pdata.full_logs(lean)
    return [
        record.body.string_value
        for resource in full.resource_logs
        for scope in resource.scope_logs
        for record in scope.log_records
    ]


def metrics(*names: str, points: int = 1) -> ExportMetricsServiceRequest:
    """One resource and scope; a monotonic sum per name with `points` points."""
    request = ExportMetricsServiceRequest()
    scope = request.resource_metrics.add().scope_metrics.add()
    scope.scope.name = "meter"
    for name in names:
        metric = scope.metrics.add(name=name, unit="1")
        metric.sum.is_monotonic = True
        metric.sum.aggregation_temporality = 2
        for value in range(points):
            metric.sum.data_points.add(as_int=value)
    return request


def traces(*names: str) -> ExportTraceServiceRequest:
    """One resource and scope; one span per name."""
    request = ExportTraceServiceRequest()
    scope = request.resource_spans.add().scope_spans.add()
    scope.scope.name = "tracer"
    for index, name in enumerate(names):
        scope.spans.add(name=name, trace_id=bytes([index + 1]) * 16, span_id=bytes([index + 1]) * 8)
    return request
