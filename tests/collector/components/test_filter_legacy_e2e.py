"""The ``filter`` processor's legacy include/exclude in a running
``sluice-collector``: the OpenTelemetry SDK sends logs and spans over gRPC;
the recording OTLP/HTTP sink receives exactly the records and spans upstream
would keep, and the filtered counters count the rest."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from opentelemetry._logs import SeverityNumber
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from tests.collector.helpers import CollectorProcess, free_ports, metric_value
from tests.edge.helpers import Upstream

RESOURCE = Resource.create({"service.name": "checkout", "deployment.environment": "prod"})


def config(upstream: Upstream) -> tuple[dict[str, Any], dict[str, int]]:
    grpc, metrics = free_ports(2)
    return {
        "receivers": {"otlp": {"protocols": {"grpc": {"endpoint": f"127.0.0.1:{grpc}"}}}},
        "processors": {
            "filter/logs": {
                "logs": {
                    # Keep INFO and above (and records without a severity) of
                    # prod, then drop health checks that carry a probe attribute.
                    "include": {
                        "match_type": "strict",
                        "resource_attributes": [{"key": "deployment.environment", "value": "prod"}],
                        "severity_number": {"min": "info", "match_undefined": True},
                    },
                    "exclude": {
                        "match_type": "regexp",
                        "bodies": ["^GET /health"],
                        "record_attributes": [{"key": "probe"}],
                    },
                }
            },
            "filter/spans": {
                "spans": {
                    "exclude": {"match_type": "regexp", "span_names": ["^GET /health"]},
                }
            },
        },
        "exporters": {"otlphttp": {"endpoint": upstream.url, "compression": "none"}},
        "service": {
            "telemetry": {"metrics": {"address": f"127.0.0.1:{metrics}"}},
            "pipelines": {
                "logs": {
                    "receivers": ["otlp"],
                    "processors": ["filter/logs"],
                    "exporters": ["otlphttp"],
                },
                "traces": {
                    "receivers": ["otlp"],
                    "processors": ["filter/spans"],
                    "exporters": ["otlphttp"],
                },
            },
        },
    }, {"grpc": grpc, "metrics": metrics}


def send(port: int) -> None:
    """One batch of logs and one of spans (the SDK's batch processors)."""
    logs = LoggerProvider(resource=RESOURCE)
    logs.add_log_record_processor(
        BatchLogRecordProcessor(OTLPLogExporter(endpoint=f"127.0.0.1:{port}", insecure=True))
    )
    logger = logs.get_logger("e2e")
    for body, severity, attributes in (
        ("order placed", SeverityNumber.INFO, {}),
        ("cache warm", SeverityNumber.DEBUG, {}),
        ("GET /healthz", SeverityNumber.INFO, {"probe": "k8s"}),
        ("GET /health page viewed", SeverityNumber.INFO, {}),
        ("payment failed", SeverityNumber.ERROR, {"probe": "k8s"}),
        ("no severity", SeverityNumber.UNSPECIFIED, {}),
    ):
        logger.emit(body=body, severity_number=severity, attributes=attributes)
    logs.shutdown()
    traces = TracerProvider(resource=RESOURCE)
    traces.add_span_processor(
        BatchSpanProcessor(OTLPSpanExporter(endpoint=f"127.0.0.1:{port}", insecure=True))
    )
    tracer = traces.get_tracer("e2e")
    for name in ("GET /healthz", "GET /cart", "GET /health"):
        with tracer.start_as_current_span(name):
            pass
    traces.shutdown()


def test_legacy_include_exclude_in_a_running_collector(tmp_path: Path, upstream: Upstream) -> None:
    settings, ports = config(upstream)
    collector = CollectorProcess(tmp_path, settings).wait_ready()
    try:
        send(ports["grpc"])
        upstream.wait_for(1, 15, "/v1/logs")
        upstream.wait_for(1, 15, "/v1/traces")
        time.sleep(0.3)
        logs = [
            ExportLogsServiceRequest.FromString(r.decoded()) for r in upstream.received("/v1/logs")
        ]
        assert [
            (record.body.string_value, record.severity_number)
            for request in logs
            for rl in request.resource_logs
            for sl in rl.scope_logs
            for record in sl.log_records
        ] == [
            ("order placed", 9),
            ("GET /health page viewed", 9),
            ("payment failed", 17),
            ("no severity", 0),
        ]
        traces = [
            ExportTraceServiceRequest.FromString(r.decoded())
            for r in upstream.received("/v1/traces")
        ]
        assert [
            span.name
            for request in traces
            for rs in request.resource_spans
            for ss in rs.scope_spans
            for span in ss.spans
        ] == ["GET /cart"]
        exposition = collector.metrics(ports["metrics"])
        assert [
            metric_value(
                exposition,
                f"otelcol_processor_filter_{items}_filtered_total",
                filter=f"filter/{name}",
            )
            for items, name in (("logs", "logs"), ("spans", "spans"))
        ] == [2, 2]
    finally:
        assert collector.terminate() == 0
