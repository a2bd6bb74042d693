"""The OpenTelemetry Python SDK's OTLP/HTTP exporters talking to Edge.

Each batch is also sent straight to the upstream (no Edge) as the reference
of what the SDK sends; what Edge forwarded must equal that reference minus
the records the policies drop.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import (
    InMemoryLogRecordExporter,
    LogRecordExportResult,
    SimpleLogRecordProcessor,
)
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader, MetricExportResult
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExportResult,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from tests.edge.helpers import EdgeLauncher, EdgeProcess, Recorded, Upstream, policies

POLICIES = policies(
    {
        "id": "drop-health-logs",
        "name": "drop health logs",
        "log": {"match": [{"log_field": "body", "contains": "health"}], "keep": "none"},
    },
    {
        "id": "drop-health-spans",
        "name": "drop health spans",
        "trace": {
            "match": [{"trace_field": "name", "regex": "^GET /health"}],
            "keep": {"percentage": 0},
        },
    },
    {
        "id": "drop-runtime-metrics",
        "name": "drop runtime metrics",
        "metric": {"match": [{"metric_field": "name", "starts_with": "runtime."}], "keep": False},
    },
)
RESOURCE = Resource.create({"service.name": "checkout", "deployment.environment": "test"})
COMPRESSIONS = [Compression.NoCompression, Compression.Gzip, Compression.Deflate]


@pytest.fixture
def edge(start_edge: EdgeLauncher) -> EdgeProcess:
    return start_edge(POLICIES)


def decode(recorded: Recorded, message: Any) -> Any:
    out = message()
    out.ParseFromString(recorded.decoded())
    return out


def reference(
    upstream: Upstream, send: Callable[[str], Any], path: str, message: Any
) -> tuple[Any, Recorded]:
    """What the SDK sends for `path` when it talks to the upstream directly."""
    before = len(upstream.received())
    send(f"{upstream.url}{path}")
    got = upstream.received()[before:]
    assert len(got) == 1, got
    return decode(got[0], message), got[0]


def through_edge(
    upstream: Upstream, edge: EdgeProcess, send: Callable[[str], Any], path: str
) -> tuple[Any, list[Recorded]]:
    before = len(upstream.received())
    result = send(f"http://127.0.0.1:{edge.port}{path}")
    return result, upstream.received()[before:]


def prune(
    request: Any, drop: Callable[[Any], bool], resources: str, scopes: str, records: str
) -> None:
    """Remove the records `drop` picks, then the scopes and resources left empty
    (what Edge forwards), on any export request given its field names."""
    for resource in list(getattr(request, resources)):
        for scope in list(getattr(resource, scopes)):
            kept = [r for r in getattr(scope, records) if not drop(r)]
            del getattr(scope, records)[:]
            getattr(scope, records).extend(kept)
            if not getattr(scope, records):
                getattr(resource, scopes).remove(scope)
        if not getattr(resource, scopes):
            getattr(request, resources).remove(resource)


def log_bodies(request: ExportLogsServiceRequest) -> list[str]:
    return [
        r.body.string_value
        for rl in request.resource_logs
        for sl in rl.scope_logs
        for r in sl.log_records
    ]


def sdk_logs(bodies: list[str]) -> list[Any]:
    memory = InMemoryLogRecordExporter()
    provider = LoggerProvider(resource=RESOURCE)
    provider.add_log_record_processor(SimpleLogRecordProcessor(memory))
    logger = provider.get_logger("checkout.http", "1.2.3")
    other = provider.get_logger("checkout.db")
    for i, body in enumerate(bodies):
        (other if i % 3 == 2 else logger).emit(
            body=body,
            severity_text="INFO" if i % 2 else "WARN",
            attributes={"i": i, "http.route": "/health" if "health" in body else "/pay"},
        )
    provider.shutdown()
    return list(memory.get_finished_logs())


@pytest.mark.parametrize("compression", COMPRESSIONS, ids=lambda c: c.value)
def test_log_exporter_through_edge(
    edge: EdgeProcess, upstream: Upstream, compression: Compression
) -> None:
    records = sdk_logs(
        ["GET /health 200", "payment accepted", "healthcheck ok", "refund issued", "db health", "x"]
    )

    def send(endpoint: str) -> Any:
        exporter = OTLPLogExporter(endpoint=endpoint, compression=compression, timeout=10)
        try:
            return exporter.export(records)
        finally:
            exporter.shutdown()

    expected, direct = reference(upstream, send, "/v1/logs", ExportLogsServiceRequest)
    prune(
        expected,
        lambda r: "health" in r.body.string_value,
        "resource_logs",
        "scope_logs",
        "log_records",
    )
    result, forwarded = through_edge(upstream, edge, send, "/v1/logs")
    assert result == LogRecordExportResult.SUCCESS
    assert len(forwarded) == 1
    [got] = forwarded
    assert got.path == "/v1/logs"
    assert got.header("Content-Type") == "application/x-protobuf"
    assert got.header("Content-Encoding") == direct.header("Content-Encoding")
    assert got.header("User-Agent") == direct.header("User-Agent")
    actual = decode(got, ExportLogsServiceRequest)
    assert log_bodies(actual) == ["payment accepted", "refund issued", "x"]
    assert actual == expected


def test_log_exporter_everything_dropped(edge: EdgeProcess, upstream: Upstream) -> None:
    records = sdk_logs(["health 1", "health 2", "healthy"])
    exporter = OTLPLogExporter(
        endpoint=f"http://127.0.0.1:{edge.port}/v1/logs", compression=Compression.Gzip, timeout=10
    )
    assert exporter.export(records) == LogRecordExportResult.SUCCESS
    exporter.shutdown()
    assert upstream.received() == []


def test_log_exporter_nothing_dropped_is_byte_identical(
    edge: EdgeProcess, upstream: Upstream
) -> None:
    records = sdk_logs(["a", "b", "c"])

    def send(endpoint: str) -> Any:
        exporter = OTLPLogExporter(endpoint=endpoint, compression=Compression.Gzip, timeout=10)
        try:
            return exporter.export(records)
        finally:
            exporter.shutdown()

    _, direct = reference(upstream, send, "/v1/logs", ExportLogsServiceRequest)
    result, [got] = through_edge(upstream, edge, send, "/v1/logs")
    assert result == LogRecordExportResult.SUCCESS
    assert gzip.decompress(got.body) == gzip.decompress(direct.body)
    assert got.header("Content-Encoding") == "gzip"


def sdk_spans() -> list[Any]:
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=RESOURCE)
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("checkout.http", "1.2.3")
    for name in ["GET /health", "POST /pay", "GET /healthz", "GET /cart"]:
        with tracer.start_as_current_span(name, kind=SpanKind.SERVER) as span:
            span.set_attribute("http.method", name.split()[0])
            with tracer.start_as_current_span(f"db {name}", kind=SpanKind.CLIENT):
                pass
    provider.shutdown()
    return list(memory.get_finished_spans())


@pytest.mark.parametrize("compression", COMPRESSIONS, ids=lambda c: c.value)
def test_span_exporter_through_edge(
    edge: EdgeProcess, upstream: Upstream, compression: Compression
) -> None:
    spans = sdk_spans()

    def send(endpoint: str) -> Any:
        exporter = OTLPSpanExporter(endpoint=endpoint, compression=compression, timeout=10)
        try:
            return exporter.export(spans)
        finally:
            exporter.shutdown()

    expected, direct = reference(upstream, send, "/v1/traces", ExportTraceServiceRequest)
    prune(
        expected,
        lambda s: s.name.startswith("GET /health"),
        "resource_spans",
        "scope_spans",
        "spans",
    )
    result, [got] = through_edge(upstream, edge, send, "/v1/traces")
    assert result == SpanExportResult.SUCCESS
    assert got.header("Content-Encoding") == direct.header("Content-Encoding")
    actual = decode(got, ExportTraceServiceRequest)
    names = sorted(
        s.name for rs in actual.resource_spans for ss in rs.scope_spans for s in ss.spans
    )
    assert names == [
        "GET /cart",
        "POST /pay",
        "db GET /cart",
        "db GET /health",
        "db GET /healthz",
        "db POST /pay",
    ]
    assert actual == expected


def test_batch_span_processor_flush_through_edge(edge: EdgeProcess, upstream: Upstream) -> None:
    exporter = OTLPSpanExporter(
        endpoint=f"http://127.0.0.1:{edge.port}/v1/traces", compression=Compression.Gzip, timeout=10
    )
    provider = TracerProvider(resource=RESOURCE)
    provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=60_000))
    tracer = provider.get_tracer("batch")
    for i in range(20):
        with tracer.start_as_current_span("GET /health" if i % 2 else f"work {i}"):
            pass
    assert provider.force_flush(10_000)
    provider.shutdown()
    got = upstream.received("/v1/traces")
    assert got and all(r.header("Content-Encoding") == "gzip" for r in got)
    names = sorted(
        s.name
        for r in got
        for rs in decode(r, ExportTraceServiceRequest).resource_spans
        for ss in rs.scope_spans
        for s in ss.spans
    )
    assert names == sorted(f"work {i}" for i in range(0, 20, 2))


def sdk_metrics() -> Any:
    reader = InMemoryMetricReader()
    provider = MeterProvider(resource=RESOURCE, metric_readers=[reader])
    meter = provider.get_meter("checkout.metrics", "1.0")
    meter.create_counter("app.requests").add(5, {"route": "/pay"})
    meter.create_counter("runtime.gc.count").add(3)
    meter.create_histogram("app.latency", unit="ms").record(12.5, {"route": "/pay"})
    meter.create_up_down_counter("runtime.heap.objects").add(-2)
    meter.create_up_down_counter("app.inflight").add(1)
    data = reader.get_metrics_data()
    provider.shutdown()
    return data


@pytest.mark.parametrize("compression", COMPRESSIONS, ids=lambda c: c.value)
def test_metric_exporter_through_edge(
    edge: EdgeProcess, upstream: Upstream, compression: Compression
) -> None:
    data = sdk_metrics()

    def send(endpoint: str) -> Any:
        exporter = OTLPMetricExporter(endpoint=endpoint, compression=compression, timeout=10)
        try:
            return exporter.export(data)
        finally:
            exporter.shutdown()

    expected, direct = reference(upstream, send, "/v1/metrics", ExportMetricsServiceRequest)
    prune(
        expected,
        lambda m: m.name.startswith("runtime."),
        "resource_metrics",
        "scope_metrics",
        "metrics",
    )
    result, [got] = through_edge(upstream, edge, send, "/v1/metrics")
    assert result == MetricExportResult.SUCCESS
    assert got.header("Content-Encoding") == direct.header("Content-Encoding")
    actual = decode(got, ExportMetricsServiceRequest)
    names = sorted(
        m.name for rm in actual.resource_metrics for sm in rm.scope_metrics for m in sm.metrics
    )
    assert names == ["app.inflight", "app.latency", "app.requests"]
    assert actual == expected


def test_metric_exporter_everything_dropped(edge: EdgeProcess, upstream: Upstream) -> None:
    reader = InMemoryMetricReader()
    provider = MeterProvider(resource=RESOURCE, metric_readers=[reader])
    provider.get_meter("m").create_counter("runtime.only").add(1)
    data = reader.get_metrics_data()
    provider.shutdown()
    exporter = OTLPMetricExporter(endpoint=f"http://127.0.0.1:{edge.port}/v1/metrics", timeout=10)
    assert exporter.export(data) == MetricExportResult.SUCCESS
    exporter.shutdown()
    assert upstream.received() == []
