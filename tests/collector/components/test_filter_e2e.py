"""The ``filter`` processor in a running ``sluice-collector``: the
OpenTelemetry SDK's exporters send logs (gRPC), metrics (HTTP) and traces
(gRPC); the recording OTLP/HTTP sink receives exactly what the conditions
keep, record by record, with emptied containers pruned and metrics whose
points were all dropped removed. A second pipeline in ``propagate`` mode
refuses a batch its condition fails on (HTTP 400 naming the condition)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from opentelemetry._logs import SeverityNumber
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
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

from tests.collector.helpers import CollectorProcess, free_ports, metric_value
from tests.edge.helpers import Upstream, http_request
from tests.ottl.items import add_attributes

RESOURCE = Resource.create({"service.name": "checkout"})


def config(upstream: Upstream) -> tuple[dict[str, Any], dict[str, int]]:
    grpc, http, strict, metrics = free_ports(4)
    ports = {"grpc": grpc, "http": http, "strict": strict, "metrics": metrics}
    pipeline = {"receivers": ["otlp"], "processors": ["filter/main"], "exporters": ["otlphttp"]}
    return {
        "receivers": {
            "otlp": {
                "protocols": {
                    "grpc": {"endpoint": f"127.0.0.1:{grpc}"},
                    "http": {"endpoint": f"127.0.0.1:{http}"},
                }
            },
            "otlp/strict": {"protocols": {"http": {"endpoint": f"127.0.0.1:{strict}"}}},
        },
        "processors": {
            "filter/main": {
                "error_mode": "ignore",
                "logs": {
                    "log_record": [
                        'IsMatch(body, "health")',
                        "severity_number < SEVERITY_NUMBER_INFO",
                        'Len(attributes["payload"]) > 4',
                    ]
                },
                "metrics": {
                    "metric": ['name == "process.runtime.gc"'],
                    "datapoint": ['attributes["currency"] == "JPY"'],
                },
                "traces": {
                    "span": ['name == "GET /healthz"'],
                    "spanevent": ['IsMatch(name, "^debug")'],
                },
            },
            "filter/strict": {"logs": {"log_record": ['Len(attributes["payload"]) > 4']}},
        },
        "exporters": {"otlphttp": {"endpoint": upstream.url, "compression": "none"}},
        "service": {
            "telemetry": {"metrics": {"address": f"127.0.0.1:{metrics}"}},
            "pipelines": {
                "logs": pipeline,
                "metrics": pipeline,
                "traces": pipeline,
                "logs/strict": {
                    "receivers": ["otlp/strict"],
                    "processors": ["filter/strict"],
                    "exporters": ["otlphttp"],
                },
            },
        },
    }, ports


def received(upstream: Upstream, path: str, message: Any, count: int) -> list[Any]:
    """The requests the sink got on `path` once it has `count` of them (and
    a moment later, so that one too many would show)."""
    upstream.wait_for(count, 15, path)
    time.sleep(0.3)
    return [message.FromString(r.decoded()) for r in upstream.received(path)]


LEN_ERROR = (
    "target arg must be of type string, []any, map[string]any, pcommon.Map, pcommon.Slice, "
    "pcommon.Value (of type String, Map, Slice) or a supported slice type from the plog, "
    "pmetric or ptrace packages"
)


def post_logs(port: int, records: list[tuple[str, str | None]]) -> Any:
    """OTLP/JSON to the strict receiver: one record per (body, payload)."""
    request = ExportLogsServiceRequest()
    resource = request.resource_logs.add()
    add_attributes(resource.resource.attributes, [("service.name", "strict")])
    scope = resource.scope_logs.add()
    for body, payload in records:
        record = scope.log_records.add()
        record.body.string_value = body
        if payload is not None:
            add_attributes(record.attributes, [("payload", payload)])
    body = json_format.MessageToJson(request).encode()
    return http_request(port, "POST", "/v1/logs", body, {"Content-Type": "application/json"}, 5)


def send_logs(port: int) -> None:
    provider = LoggerProvider(resource=RESOURCE)
    exporter = OTLPLogExporter(endpoint=f"127.0.0.1:{port}", insecure=True, timeout=5)
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    logger = provider.get_logger("e2e")
    for body, severity, payload in (
        ("checkout ok", SeverityNumber.INFO, "ab"),
        ("GET /health", SeverityNumber.INFO, "ab"),
        ("cache warm", SeverityNumber.DEBUG, "ab"),
        ("big payload", SeverityNumber.WARN, "abcdef"),
        ("payment failed", SeverityNumber.ERROR, 5),  # Len(int) fails: ignored
    ):
        logger.emit(body=body, severity_number=severity, attributes={"payload": payload})
    provider.shutdown()


def send_metrics(port: int) -> None:
    exporter = OTLPMetricExporter(f"http://127.0.0.1:{port}/v1/metrics", timeout=5)
    reader = PeriodicExportingMetricReader(exporter, export_interval_millis=3_600_000)
    provider = MeterProvider(resource=RESOURCE, metric_readers=[reader])
    meter = provider.get_meter("e2e")
    payments = meter.create_counter("payments")
    for currency, amount in (("EUR", 1), ("USD", 2), ("JPY", 3)):
        payments.add(amount, {"currency": currency})
    meter.create_counter("yen.only").add(4, {"currency": "JPY"})
    meter.create_counter("process.runtime.gc").add(5)
    provider.shutdown()  # exports once


def send_traces(port: int) -> None:
    provider = TracerProvider(resource=RESOURCE)
    exporter = OTLPSpanExporter(endpoint=f"127.0.0.1:{port}", insecure=True, timeout=5)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("e2e")
    with tracer.start_as_current_span("GET /healthz"):
        pass
    with tracer.start_as_current_span("GET /cart") as span:
        span.add_event("debug.cache")
        span.add_event("db.query")
    provider.shutdown()


def test_filter_in_a_running_collector(tmp_path: Path, upstream: Upstream) -> None:
    settings, ports = config(upstream)
    collector = CollectorProcess(tmp_path, settings).wait_ready()
    try:
        send_logs(ports["grpc"])
        send_metrics(ports["http"])
        send_traces(ports["grpc"])

        # The SDK exports each record alone: a request whose records were all
        # dropped is not passed on.
        log_requests = received(upstream, "/v1/logs", ExportLogsServiceRequest, 2)
        bodies = [
            (r.body.string_value, r.severity_number)
            for request in log_requests
            for rl in request.resource_logs
            for sl in rl.scope_logs
            for r in sl.log_records
        ]
        assert bodies == [("checkout ok", 9), ("payment failed", 17)]

        (metrics,) = received(upstream, "/v1/metrics", ExportMetricsServiceRequest, 1)
        points = {
            m.name: sorted(p.attributes[0].value.string_value for p in m.sum.data_points)
            for rm in metrics.resource_metrics
            for sm in rm.scope_metrics
            for m in sm.metrics
        }
        assert points == {"payments": ["EUR", "USD"]}  # yen.only lost its point: removed

        traces = received(upstream, "/v1/traces", ExportTraceServiceRequest, 1)
        spans = [
            (s.name, [e.name for e in s.events])
            for request in traces
            for rs in request.resource_spans
            for ss in rs.scope_spans
            for s in ss.spans
        ]
        assert spans == [("GET /cart", ["db.query"])]

        collector.wait_log(r"failed to eval condition 'Len\(attributes.*payload.*> 4' on 1 item")
        exposition = collector.metrics(ports["metrics"])
        counters = {
            items: metric_value(
                exposition, f"otelcol_processor_filter_{items}_filtered_total", filter="filter/main"
            )
            for items in ("logs", "datapoints", "spans")
        }
        assert counters == {"logs": 3, "datapoints": 3, "spans": 1}

        # propagate: a record the condition fails on refuses the whole batch.
        answer = post_logs(ports["strict"], [("small", "ab"), ("big", "abcdef")])
        assert answer.status == 200, answer
        answer = post_logs(ports["strict"], [("small", "ab"), ("no payload", None)])
        assert answer.status == 500, answer
        assert json.loads(answer.body) == {
            "code": 13,
            "message": 'failed to eval condition: Len(attributes["payload"]) > 4, ' + LEN_ERROR,
        }
        strict = [
            r.body.string_value
            for request in received(upstream, "/v1/logs", ExportLogsServiceRequest, 3)
            for rl in request.resource_logs
            if rl.resource.attributes[0].value.string_value == "strict"
            for sl in rl.scope_logs
            for r in sl.log_records
        ]
        assert strict == ["small"]
    finally:
        assert collector.terminate() == 0
