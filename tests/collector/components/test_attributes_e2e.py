"""The ``attributes`` and ``resource`` processors in a running
``sluice-collector``: the OpenTelemetry SDK sends logs (HTTP), spans (gRPC)
and metrics (HTTP), the collector exports to a recording OTLP/HTTP sink, and
every record that arrives is checked."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any

from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import SpanKind

from sluice.collector import pdata
from sluice.collector.component import SIGNAL_NAMES
from sluice.policy import Signal
from tests.collector.components.attribute_data import shown
from tests.collector.helpers import CollectorProcess, free_ports
from tests.edge.helpers import Upstream

RESOURCE = Resource.create({"service.name": "checkout", "host.name": "box-1"})
MESSAGES = {
    Signal.LOG: ExportLogsServiceRequest,
    Signal.TRACE: ExportTraceServiceRequest,
    Signal.METRIC: ExportMetricsServiceRequest,
}


def _config(upstream: Upstream) -> tuple[dict[str, Any], int, int]:
    grpc_port, http_port = free_ports(2)
    processors = {
        "attributes/logs": {
            "include": {"match_type": "regexp", "log_bodies": ["^AUTH"]},
            "actions": [
                {"key": "password", "value": "obfuscated", "action": "update"},
                {"key": "token", "action": "delete"},
                {"key": "user.email", "action": "hash"},
            ],
        },
        "attributes/traces": {
            "include": {"match_type": "strict", "span_kinds": ["SPAN_KIND_SERVER"]},
            "actions": [
                {"key": "http.url", "pattern": "^https?://(?P<host>[^/]+)", "action": "extract"},
                {"key": "http.status_code", "action": "convert", "converted_type": "int"},
            ],
        },
        "attributes/metrics": {
            "include": {"match_type": "regexp", "metric_names": ["^http\\."]},
            "actions": [
                {"key": "user.id", "action": "delete"},
                {"key": "tier", "value": "gold", "action": "insert"},
            ],
        },
        "resource": {
            "attributes": [
                {"key": "deployment.environment", "value": "e2e", "action": "upsert"},
                {"key": "host.name", "action": "delete"},
            ]
        },
    }
    config = {
        "receivers": {
            "otlp": {
                "protocols": {
                    "grpc": {"endpoint": f"127.0.0.1:{grpc_port}"},
                    "http": {"endpoint": f"127.0.0.1:{http_port}"},
                }
            }
        },
        "processors": processors,
        "exporters": {"otlphttp": {"endpoint": upstream.url}},
        "service": {
            "telemetry": {"metrics": {"level": "none"}},
            "pipelines": {
                signal: {
                    "receivers": ["otlp"],
                    "processors": [f"attributes/{signal}", "resource"],
                    "exporters": ["otlphttp"],
                }
                for signal in ("logs", "metrics", "traces")
            },
        },
    }
    return config, grpc_port, http_port


def _send(grpc_port: int, http_port: int) -> None:
    logs = LoggerProvider(resource=RESOURCE)
    logs.add_log_record_processor(
        SimpleLogRecordProcessor(OTLPLogExporter(endpoint=f"http://127.0.0.1:{http_port}/v1/logs"))
    )
    logger = logs.get_logger("e2e")
    secrets = {"password": "s3cr3t", "token": "t0k", "user.email": "a@b.c"}
    logger.emit(body="AUTH login", attributes=secrets)
    logger.emit(body="GET /cart", attributes=secrets)
    logs.shutdown()

    tracer_provider = TracerProvider(resource=RESOURCE)
    tracer_provider.add_span_processor(
        SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"127.0.0.1:{grpc_port}", insecure=True))
    )
    tracer = tracer_provider.get_tracer("e2e")
    url = {"http.url": "https://shop.example.com/cart", "http.status_code": "200"}
    for name, kind in (("GET /cart", SpanKind.SERVER), ("fetch", SpanKind.CLIENT)):
        tracer.start_span(name, kind=kind, attributes=url).end()
    tracer_provider.shutdown()

    reader = PeriodicExportingMetricReader(
        OTLPMetricExporter(endpoint=f"http://127.0.0.1:{http_port}/v1/metrics"),
        export_interval_millis=60_000,
    )
    meters = MeterProvider(resource=RESOURCE, metric_readers=[reader])
    meter = meters.get_meter("e2e")
    requests = meter.create_counter("http.requests")
    requests.add(1, {"route": "/cart", "user.id": "42"})
    requests.add(2, {"route": "/pay", "user.id": "7"})
    meter.create_counter("cpu.ticks").add(5, {"user.id": "42"})
    meters.shutdown()


def _received(upstream: Upstream, signal: Signal, items: int) -> list[Any]:
    """The resources of `signal` that arrived once `items` items did."""
    path = f"/v1/{SIGNAL_NAMES[signal]}"
    deadline = time.monotonic() + 15
    while True:
        resources = [
            resource
            for record in upstream.received(path)
            for resource in getattr(
                MESSAGES[signal].FromString(record.decoded()), pdata.RESOURCES[signal]
            )
        ]
        if len(_items(signal, resources)) >= items or time.monotonic() > deadline:
            return resources
        time.sleep(0.02)


def _items(signal: Signal, resources: list[Any]) -> list[Any]:
    """The log records, spans or metrics of `resources`."""
    return [
        item
        for resource in resources
        for scope in getattr(resource, pdata.SCOPES[signal])
        for item in getattr(scope, pdata.RECORDS[signal])
    ]


def _resource_ok(resource: Any) -> None:
    attributes = dict(shown(resource.resource.attributes))
    assert attributes["deployment.environment"] == "Str(e2e)"
    assert attributes["service.name"] == "Str(checkout)"
    assert "host.name" not in attributes


def test_sdk_logs_spans_and_metrics_through_attributes_and_resource(
    tmp_path: Path, upstream: Upstream
) -> None:
    config, grpc_port, http_port = _config(upstream)
    collector = CollectorProcess(tmp_path, config).wait_ready()
    try:
        _send(grpc_port, http_port)

        logs = _received(upstream, Signal.LOG, 2)
        for resource in logs:
            _resource_ok(resource)
        records = {r.body.string_value: shown(r.attributes) for r in _items(Signal.LOG, logs)}
        digest = hashlib.sha256(b"a@b.c").hexdigest()
        assert records == {
            "AUTH login": [
                ("password", "Str(obfuscated)"),
                ("user.email", f"Str({digest})"),
            ],
            "GET /cart": [
                ("password", "Str(s3cr3t)"),
                ("token", "Str(t0k)"),
                ("user.email", "Str(a@b.c)"),
            ],
        }

        traces = _received(upstream, Signal.TRACE, 2)
        for resource in traces:
            _resource_ok(resource)
        spans = {s.name: shown(s.attributes) for s in _items(Signal.TRACE, traces)}
        assert spans == {
            "GET /cart": [
                ("http.url", "Str(https://shop.example.com/cart)"),
                ("http.status_code", "Int(200)"),
                ("host", "Str(shop.example.com)"),
            ],
            "fetch": [
                ("http.url", "Str(https://shop.example.com/cart)"),
                ("http.status_code", "Str(200)"),
            ],
        }

        metrics = _received(upstream, Signal.METRIC, 2)
        for resource in metrics:
            _resource_ok(resource)
        points = {
            (m.name, p.as_int): shown(p.attributes)
            for m in _items(Signal.METRIC, metrics)
            for p in m.sum.data_points
        }
        assert points == {
            ("http.requests", 1): [("route", "Str(/cart)"), ("tier", "Str(gold)")],
            ("http.requests", 2): [("route", "Str(/pay)"), ("tier", "Str(gold)")],
            ("cpu.ticks", 5): [("user.id", "Str(42)")],
        }
    finally:
        assert collector.terminate() == 0, collector.stderr()
