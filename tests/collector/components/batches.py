"""Batches of each signal, exporter settings and counter readings for the
exporter tests."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
import yaml
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from sluice.collector import pdata
from sluice.collector.component import ComponentID, Kind, Settings
from sluice.collector.confmap.decode import Problems, decode
from sluice.collector.telemetry import ServiceTelemetry
from sluice.policy import Signal

TESTDATA = Path(__file__).parent / "testdata"


def logs(count: int, body: str = "hello") -> Any:
    """Lean logs: one resource (service.name=web), one scope, `count` records."""
    full = ExportLogsServiceRequest()
    resource = full.resource_logs.add()
    attribute = resource.resource.attributes.add(key="service.name")
    attribute.value.string_value = "web"
    scope = resource.scope_logs.add()
    for i in range(count):
        record = scope.log_records.add(severity_text="INFO", severity_number=9)
        record.body.string_value = f"{body} {i}"
        record.time_unix_nano = 1_581_452_773_000_000_789
        record.trace_id = bytes.fromhex("08040201000000000000000000000000")
        record.span_id = bytes.fromhex("0102040800000000")
        record.attributes.add(key="app").value.string_value = "server"
        record.attributes.add(key="instance_num").value.int_value = i
    return pdata.lean_logs(full)


def metrics(points: int) -> ExportMetricsServiceRequest:
    """One gauge with `points` int data points."""
    request = ExportMetricsServiceRequest()
    metric = request.resource_metrics.add().scope_metrics.add().metrics.add(name="gauge-int")
    for i in range(points):
        point = metric.gauge.data_points.add(as_int=i)
        point.attributes.add(key="label-1").value.string_value = f"value-{i}"
    return request


def traces(spans: int) -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    scope = request.resource_spans.add().scope_spans.add()
    for i in range(spans):
        span = scope.spans.add(name=f"operation{i}")
        span.trace_id = bytes.fromhex("0102030405060708090a0b0c0d0e0f10")
        span.span_id = bytes.fromhex("1112131415161718")
    return request


BATCHES = {Signal.LOG: logs(3), Signal.METRIC: metrics(3), Signal.TRACE: traces(3)}


def batch(signal: Signal, items: int = 3) -> Any:
    return {Signal.LOG: logs, Signal.METRIC: metrics, Signal.TRACE: traces}[signal](items)


def settings(component_id: str) -> Settings:
    return Settings(ComponentID.parse(component_id), Kind.EXPORTER, ServiceTelemetry())


def counter(settings: Settings, family: str, **labels: str) -> float:
    """A sample of the settings' registry (0 when it was never set)."""
    value = settings.telemetry.registry.get_sample_value(family, labels)
    return value or 0.0


def load_config(config_type: type[Any], path: Path, component: str) -> tuple[Any, list[str]]:
    """`exporters.<component>` of a testdata YAML file, decoded and validated:
    the config and every problem (decode and validate) as ``path: message``."""
    raw = yaml.safe_load(path.read_text())["exporters"][component]
    problems = Problems()
    config = decode(config_type, raw, "", problems)
    for key, message in config.validate():
        problems.add(key, message)
    return config, problems.lines


COMPONENT_FIELDS = ("kind", "data_type", "name")
"""What the exporter's logger adds to every entry, as upstream's."""


def own_fields(record: logging.LogRecord) -> dict[str, Any]:
    """The entry's own fields: without those its exporter's logger adds."""
    fields = getattr(record, "fields", {})
    return {key: value for key, value in fields.items() if key not in COMPONENT_FIELDS}


def partial_successes(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    """The fields of each ``Partial success response`` warning logged."""
    return [
        own_fields(record)
        for record in caplog.records
        if record.getMessage() == "Partial success response"
    ]
