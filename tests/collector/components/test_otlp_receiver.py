"""The ``otlp`` receiver over real sockets: the OpenTelemetry SDK's OTLP
exporters (HTTP and gRPC), raw HTTP requests and a gRPC client, against a
receiver made by its factory and running on a uvloop loop in a background
thread, feeding capturing consumers."""

from __future__ import annotations

import asyncio
import gzip
import http.client
import json
import logging
import math
import socket
import ssl
import threading
import time
import zlib
from collections.abc import Callable, Coroutine, Iterator, Mapping
from pathlib import Path
from typing import Any

import cramjam
import grpc
import pytest
import uvloop
import yaml
import zstandard
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import (
    OTLPLogExporter as GrpcLogExporter,
)
from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import (
    OTLPMetricExporter as GrpcMetricExporter,
)
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
    OTLPSpanExporter as GrpcSpanExporter,
)
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
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
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from sluice.collector import pdata
from sluice.collector.component import (
    Component,
    ComponentID,
    Consumer,
    ConsumerError,
    Host,
    Kind,
    Settings,
    permanent,
    refused,
)
from sluice.collector.components.receivers.otlp import FACTORY
from sluice.collector.components.receivers.otlp.config import (
    KeepaliveConfig,
    OtlpReceiverConfig,
    url_path,
)
from sluice.collector.components.receivers.otlp.receiver import OtlpReceiver
from sluice.collector.configauth import AuthenticationError
from sluice.collector.configtls import TLSClientConfig, TLSServerConfig
from sluice.collector.confmap.decode import Problems, decode
from sluice.collector.internal.warning import exposes_every_interface
from sluice.collector.telemetry import ServiceTelemetry
from sluice.policy import Signal
from sluice.telemetry.otlp_raw import LeanLogsRequest, varint
from tests.collector.background import go_redirect, head_of
from tests.providers.test_tls import self_signed as providers_self_signed

TESTDATA = Path(__file__).parent / "testdata" / "otlp"
RESOURCE = Resource.create({"service.name": "checkout"})
TRACE_SERVICE = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
LOGS_SERVICE = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"


def load(name: str) -> OtlpReceiverConfig:
    """A testdata config, decoded as the service decodes it (no problems)."""
    problems = Problems()
    raw = yaml.safe_load((TESTDATA / name).read_text())
    config = decode(OtlpReceiverConfig, raw, "receivers::otlp", problems)
    assert not problems.lines
    return config


def problems_of(name: str) -> list[str]:
    problems = Problems()
    raw = yaml.safe_load((TESTDATA / name).read_text())
    config = decode(OtlpReceiverConfig, raw, "receivers::otlp", problems)
    return problems.lines + [f"{path}: {message}" for path, message in config.validate()]


# -- config ----------------------------------------------------------------------------------


def test_default_config_has_no_protocol() -> None:
    config = FACTORY.default_config()
    assert config.protocols.grpc is None and config.protocols.http is None
    assert FACTORY.stability == {"logs": "beta", "metrics": "stable", "traces": "stable"}
    assert FACTORY.module == "go.opentelemetry.io/collector/receiver/otlpreceiver"


def test_null_protocols_listen_with_upstream_defaults() -> None:
    config = load("config_default.yaml")
    grpc_config, http_config = config.protocols.grpc, config.protocols.http
    assert grpc_config is not None and http_config is not None
    assert grpc_config.endpoint == "localhost:4317"
    assert grpc_config.max_message_bytes == 4 << 20
    assert http_config.endpoint == "localhost:4318"
    assert http_config.max_body_bytes == 20 << 20
    assert (http_config.traces_url_path, http_config.metrics_url_path) == (
        "/v1/traces",
        "/v1/metrics",
    )
    assert http_config.logs_url_path == "/v1/logs"
    assert list(config.validate()) == []


def test_null_server_sections_stay_unset() -> None:
    # configgrpc's and confighttp's ServerConfig hold tls, cors, auth and
    # keepalive (and keepalive's parts) as pointers that default to nil, and
    # mapstructure leaves a field as it is for a null: plain text, no
    # authenticator (where a present section needs a certificate or an id)
    config = load("config_null_sections.yaml")
    grpc_config, http_config = config.protocols.grpc, config.protocols.http
    assert grpc_config is not None and http_config is not None
    assert (grpc_config.tls, grpc_config.auth, grpc_config.keepalive) == (None, None, None)
    assert (http_config.tls, http_config.cors, http_config.auth) == (None, None, None)
    assert list(config.validate()) == []
    grpc_config = load("config_null_keepalive_parts.yaml").protocols.grpc
    assert grpc_config is not None
    assert grpc_config.keepalive == KeepaliveConfig(None, None)


def test_no_protocol_is_an_error() -> None:
    assert problems_of("config_no_protocols.yaml") == [
        ": must specify at least one protocol when using the OTLP receiver"
    ]


def test_only_the_configured_protocol() -> None:
    assert load("config_only_grpc.yaml").protocols.http is None
    assert load("config_only_http.yaml").protocols.grpc is None


def test_every_upstream_key_is_accepted() -> None:
    config = load("config_full.yaml")
    assert list(config.validate()) == []
    assert config.protocols.grpc is not None and config.protocols.grpc.keepalive is not None
    assert config.protocols.grpc.max_message_bytes == 16 << 20
    assert config.protocols.http is not None and config.protocols.http.read_header_timeout == 10.0


def test_bad_values_are_reported_under_their_keys() -> None:
    assert problems_of("config_bad_values.yaml") == [
        "protocols::grpc::endpoint: address localhost: missing port in address",
        "protocols::grpc::max_recv_msg_size_mib: invalid max_recv_msg_size_mib value, "
        "must be between 1 and 8796093022207: -1",
        'protocols::grpc::tls::min_version: invalid TLS min_version: unsupported TLS version: "1.4"',
        'protocols::http::endpoint: address localhost:http: invalid port "http"',
        'protocols::http::compression_algorithms: unsupported compression algorithm "brotli"',
        "protocols::http::auth::authenticator: id must not be empty",
    ]
    assert problems_of("config_invalid_url_path.yaml") == [
        'protocols::http::logs_url_path: invalid HTTP URL path set for signal: parse "/v1/%zzlogs": '
        'invalid URL escape "%zz"'
    ]


@pytest.mark.parametrize(
    ("mib", "valid", "limit"),
    [
        (-1, False, 4 << 20),
        (0, True, 4 << 20),
        (2048, True, 2048 << 20),
        ((1 << 63) - 1, False, 4 << 20),  # configgrpc's TestGrpcServerValidate
        (1 << 43, False, 4 << 20),
        (1 << 44, True, 4 << 20),  # Go's product wraps to 0: the setting is not applied
    ],
)
def test_max_recv_msg_size_mib_is_computed_as_upstreams_int(
    mib: int, valid: bool, limit: int
) -> None:
    raw = {"protocols": {"grpc": {"max_recv_msg_size_mib": mib}}}
    config = decode(OtlpReceiverConfig, raw, "receivers::otlp", Problems())
    assert config.protocols.grpc is not None
    expected = (
        []
        if valid
        else [
            (
                "protocols::grpc::max_recv_msg_size_mib",
                f"invalid max_recv_msg_size_mib value, must be between 1 and 8796093022207: {mib}",
            )
        ]
    )
    assert list(config.validate()) == expected
    assert config.protocols.grpc.max_message_bytes == limit


@pytest.mark.parametrize(
    ("transport", "problem"),
    [
        # confignet.TransportType's UnmarshalText, then AddrConfig.Validate
        ("sctp", 'unsupported transport type "sctp"'),
        ("TCP", 'unsupported transport type "TCP"'),
        ("", 'invalid transport type ""'),
        # read by confignet, but no gRPC server listens on it here
        ("udp", 'unsupported transport "udp" (valid: tcp, tcp4, tcp6, unix)'),
    ],
)
def test_grpc_transport_names_are_read_as_confignet_reads_them(
    transport: str, problem: str
) -> None:
    raw = {"protocols": {"grpc": {"endpoint": "localhost:4317", "transport": transport}}}
    config = decode(OtlpReceiverConfig, raw, "receivers::otlp", Problems())
    assert list(config.validate()) == [("protocols::grpc::transport", problem)]


@pytest.mark.parametrize(
    ("written", "path"),
    [
        ("v1/logs", "/v1/logs"),
        ("/v1/x%20y", "/v1/x y"),
        ("/v1/logs?tenant=a#f", "/v1/logs"),
        ("http://collector:4318/custom/logs", "/custom/logs"),
        ("/a:b", "/a:b"),
    ],
)
def test_url_paths_are_read_as_go_reads_a_url(written: str, path: str) -> None:
    assert url_path(written) == path


@pytest.mark.parametrize(
    ("written", "problem"),
    [
        (":invalid", "missing protocol scheme"),
        ("1a:b/c", "first path segment in URL cannot contain colon"),
        ("/v1/\nlogs", "net/url: invalid control character in URL"),
    ],
)
def test_url_paths_go_refuses_are_refused(written: str, problem: str) -> None:
    with pytest.raises(ValueError) as raised:
        url_path(written)
    assert str(raised.value) == (
        f"invalid HTTP URL path set for signal: parse {json.dumps(written)}: {problem}"
    )


def test_unknown_protocol_key() -> None:
    assert problems_of("config_typo.yaml") == [
        "receivers::otlp::protocols: 'protocols' has invalid keys: htttp",
        ": must specify at least one protocol when using the OTLP receiver",
    ]


def test_response_header_values_are_secrets() -> None:
    """confighttp.ServerConfig's response_headers is a
    map[string]configopaque.String: its values are named so, and redacted."""
    problems = Problems()
    raw = {"protocols": {"http": {"response_headers": {"X-A": 1, "X-B": "b"}}}}
    config = decode(OtlpReceiverConfig, raw, "receivers::otlp", problems)
    assert problems.lines == [
        "receivers::otlp::protocols::http::response_headers::X-A: "
        "'protocols.http.response_headers[X-A]' expected type 'configopaque.String', "
        "got unconvertible type 'int', value: '[REDACTED]'"
    ]
    assert config.protocols.http is not None
    assert f"{config.protocols.http.response_headers['X-B']}" == "[REDACTED]"


# -- harness ---------------------------------------------------------------------------------


class Capture(Consumer):
    """Keeps what it is given, or raises `error` instead."""

    def __init__(self) -> None:
        self.received: list[Any] = []
        self.error: Exception | None = None

    async def consume(self, data: Any) -> None:
        if self.error is not None:
            raise self.error
        self.received.append(data)


class Running:
    """A receiver made by the factory, started on a uvloop loop in a thread."""

    def __init__(self, config: OtlpReceiverConfig, signals: frozenset[Signal], host: Host):
        self.telemetry = ServiceTelemetry()
        self.consumers = {signal: Capture() for signal in signals}
        settings = Settings(ComponentID("otlp"), Kind.RECEIVER, self.telemetry)
        receiver = FACTORY.create(settings, config, self.consumers)
        assert isinstance(receiver, OtlpReceiver)
        self.receiver = receiver
        self.loop = uvloop.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        try:
            self.call(receiver.start(host))
        except BaseException:
            self.stop()
            raise

    def call(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(10)

    def stop(self) -> None:
        self.call(self.receiver.shutdown())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()

    def received(self, signal: Signal) -> list[Any]:
        return self.consumers[signal].received

    def count(self, kind: str, items: str, transport: str) -> float:
        value = self.telemetry.registry.get_sample_value(
            f"otelcol_receiver_{kind}_{items}_total",
            {"receiver": "otlp", "transport": transport},
        )
        return value or 0.0

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.receiver.http_port}"

    @property
    def grpc_target(self) -> str:
        return f"127.0.0.1:{self.receiver.grpc_port}"


Start = Callable[..., Running]


@pytest.fixture
def start() -> Iterator[Start]:
    """``start(protocols, signals=..., host=...)``: a running receiver on free
    ports; stopped at teardown."""
    running: list[Running] = []

    def make(
        protocols: Mapping[str, Any] | None = None,
        signals: frozenset[Signal] = frozenset(Signal),
        host: Host | None = None,
    ) -> Running:
        problems = Problems()
        if protocols is None:
            protocols = {"grpc": {"endpoint": "127.0.0.1:0"}, "http": {"endpoint": "127.0.0.1:0"}}
        raw = {"protocols": protocols}
        config = decode(OtlpReceiverConfig, raw, "receivers::otlp", problems)
        assert not problems.lines and not list(config.validate())
        receiver = Running(config, signals, host or Host())
        running.append(receiver)
        return receiver

    yield make
    for receiver in running:
        receiver.stop()


def post(
    url: str,
    body: bytes,
    content_type: str | None = "application/x-protobuf",
    *,
    method: str = "POST",
    headers: Mapping[str, str] | None = None,
    context: ssl.SSLContext | None = None,
) -> tuple[int, dict[str, str], bytes]:
    """One request on a fresh connection: (status, headers lowercased, body)."""
    scheme, _, rest = url.partition("://")
    address, _, path = rest.partition("/")
    host, _, port = address.rpartition(":")
    connection: http.client.HTTPConnection
    if scheme == "https":
        connection = http.client.HTTPSConnection(host, int(port), timeout=5, context=context)
    else:
        connection = http.client.HTTPConnection(host, int(port), timeout=5)
    sent = dict(headers or {})
    if content_type is not None:
        sent["Content-Type"] = content_type
    try:
        connection.request(method, "/" + path, body=body, headers=sent)
        response = connection.getresponse()
        return (
            response.status,
            {k.lower(): v for k, v in response.getheaders()},
            response.read(),
        )
    finally:
        connection.close()


def traces_request(spans: int = 2) -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    scope = request.resource_spans.add().scope_spans.add()
    for i in range(spans):
        span = scope.spans.add(name=f"GET /{i}", kind=2)
        span.trace_id = bytes(range(16))
        span.span_id = (i + 1).to_bytes(8, "big")
    return request


TRACES_JSON = {
    "resourceSpans": [
        {
            "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "web"}}]},
            "scopeSpans": [
                {
                    "spans": [
                        {
                            "traceId": "5b8efff798038103d269b633813fc60c",
                            "spanId": "eee19b7ec3c1b174",
                            "name": "GET /pay",
                            "kind": 2,
                            "startTimeUnixNano": "1544712660000000000",
                        }
                    ]
                }
            ],
        }
    ]
}


# -- SDK exporters ---------------------------------------------------------------------------


def sdk_spans() -> list[Any]:
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=RESOURCE)
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("checkout")
    for name in ("GET /pay", "GET /refund", "SELECT orders"):
        with tracer.start_as_current_span(name):
            pass
    provider.shutdown()
    return list(memory.get_finished_spans())


def sdk_logs() -> list[Any]:
    memory = InMemoryLogRecordExporter()
    provider = LoggerProvider(resource=RESOURCE)
    provider.add_log_record_processor(SimpleLogRecordProcessor(memory))
    logger = provider.get_logger("checkout")
    for i, body in enumerate(["payment accepted", "refund issued"]):
        logger.emit(body=body, severity_text="INFO", attributes={"i": i})
    provider.shutdown()
    return list(memory.get_finished_logs())


def sdk_metrics() -> Any:
    reader = InMemoryMetricReader()
    provider = MeterProvider(resource=RESOURCE, metric_readers=[reader])
    counter = provider.get_meter("checkout").create_counter("payments")
    counter.add(1, {"currency": "EUR"})
    counter.add(2, {"currency": "USD"})
    data = reader.get_metrics_data()
    provider.shutdown()
    return data


def span_names(requests: list[Any]) -> list[str]:
    return [
        span.name
        for request in requests
        for resource in request.resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
    ]


def export_sdk_data(spans: Any, logs: Any, metrics: Any) -> None:
    """Three spans, two log records and two metric points through the exporters."""
    try:
        assert spans.export(sdk_spans()) == SpanExportResult.SUCCESS
        assert logs.export(sdk_logs()) == LogRecordExportResult.SUCCESS
        assert metrics.export(sdk_metrics()) == MetricExportResult.SUCCESS
    finally:
        for exporter in (spans, logs, metrics):
            exporter.shutdown()


def assert_sdk_data_received(receiver: Running, transport: str) -> None:
    assert span_names(receiver.received(Signal.TRACE)) == [
        "GET /pay",
        "GET /refund",
        "SELECT orders",
    ]
    [lean] = receiver.received(Signal.LOG)
    assert isinstance(lean, LeanLogsRequest)
    bodies = [
        r.body.string_value
        for rl in pdata.full_logs(lean).resource_logs
        for sl in rl.scope_logs
        for r in sl.log_records
    ]
    assert bodies == ["payment accepted", "refund issued"]
    [metrics_request] = receiver.received(Signal.METRIC)
    assert pdata.item_count(Signal.METRIC, metrics_request) == 2
    assert receiver.count("accepted", "spans", transport) == 3
    assert receiver.count("accepted", "log_records", transport) == 2
    assert receiver.count("accepted", "metric_points", transport) == 2
    other = "grpc" if transport == "http" else "http"
    assert receiver.count("accepted", "spans", other) == 0


@pytest.mark.parametrize("compression", [Compression.NoCompression, Compression.Gzip])
def test_sdk_http_exporters(start: Start, compression: Compression) -> None:
    receiver = start()
    export_sdk_data(
        OTLPSpanExporter(f"{receiver.http}/v1/traces", compression=compression, timeout=5),
        OTLPLogExporter(f"{receiver.http}/v1/logs", compression=compression, timeout=5),
        OTLPMetricExporter(f"{receiver.http}/v1/metrics", compression=compression, timeout=5),
    )
    assert_sdk_data_received(receiver, "http")


def test_sdk_grpc_exporters(start: Start) -> None:
    receiver = start()
    target = receiver.grpc_target
    export_sdk_data(
        GrpcSpanExporter(target, insecure=True, timeout=5),
        GrpcLogExporter(target, insecure=True, timeout=5),
        GrpcMetricExporter(target, insecure=True, timeout=5, compression=grpc.Compression.Gzip),
    )
    assert_sdk_data_received(receiver, "grpc")


# -- OTLP/HTTP, raw --------------------------------------------------------------------------


def test_json_in_json_out(start: Start) -> None:
    receiver = start({"http": {"endpoint": "127.0.0.1:0"}})
    status, headers, body = post(
        f"{receiver.http}/v1/traces",
        json.dumps(TRACES_JSON).encode(),
        "application/json; charset=utf-8",
    )
    assert (status, headers["content-type"], body) == (
        200,
        "application/json",
        b'{"partialSuccess":{}}',
    )
    [request] = receiver.received(Signal.TRACE)
    assert isinstance(request, ExportTraceServiceRequest)
    span = request.resource_spans[0].scope_spans[0].spans[0]
    assert span.trace_id.hex() == "5b8efff798038103d269b633813fc60c"
    assert (span.span_id.hex(), span.kind, span.start_time_unix_nano) == (
        "eee19b7ec3c1b174",
        2,
        1544712660000000000,
    )


def test_protobuf_answer_is_an_export_response(start: Start) -> None:
    receiver = start({"http": {"endpoint": "127.0.0.1:0"}})
    status, headers, body = post(f"{receiver.http}/v1/traces", traces_request().SerializeToString())
    assert (status, headers["content-type"]) == (200, "application/x-protobuf")
    assert ExportTraceServiceResponse.FromString(body).HasField("partial_success")
    assert span_names(receiver.received(Signal.TRACE)) == ["GET /0", "GET /1"]


@pytest.mark.parametrize(
    ("encoding", "compress"),
    [
        ("gzip", gzip.compress),
        ("zstd", zstandard.ZstdCompressor().compress),
        ("deflate", zlib.compress),
        ("zlib", zlib.compress),
    ],
)
def test_compressed_bodies(start: Start, encoding: str, compress: Callable[[bytes], bytes]) -> None:
    receiver = start({"http": {"endpoint": "127.0.0.1:0"}})
    body = compress(traces_request(5).SerializeToString())
    status, _, _ = post(f"{receiver.http}/v1/traces", body, headers={"Content-Encoding": encoding})
    assert status == 200
    assert len(span_names(receiver.received(Signal.TRACE))) == 5


def crc32c(data: bytes) -> int:
    """CRC-32C, bit by bit (the receiver's is table driven)."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 * (crc & 1))
    return crc ^ 0xFFFFFFFF


def snappy_chunk(kind: int, content: bytes, block: bytes | None = None) -> bytes:
    """One chunk of the Snappy framing format: `block` (compressed) or `content` stored."""
    crc = crc32c(content)
    masked = (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF
    payload = masked.to_bytes(4, "little") + (content if block is None else block)
    return bytes([kind]) + len(payload).to_bytes(3, "little") + payload


def snappy_literal_block(content: bytes) -> bytes:
    """A Snappy block holding `content` as one literal (up to 64 KiB)."""
    return (
        varint(len(content)) + bytes([61 << 2]) + (len(content) - 1).to_bytes(2, "little") + content
    )


SNAPPY_STREAM = b"\xff\x06\x00\x00sNaPpY"


def test_snappy_bodies_are_decoded(start: Start) -> None:
    # Upstream decodes Content-Encoding: snappy as the Snappy framing format.
    receiver = start({"http": {"endpoint": "127.0.0.1:0"}})
    raw = traces_request(5).SerializeToString()
    half = len(raw) // 2
    body = (
        SNAPPY_STREAM
        + snappy_chunk(0x00, raw[:half], snappy_literal_block(raw[:half]))
        + b"\xfe\x02\x00\x00\x00\x00"  # padding
        + snappy_chunk(0x01, raw[half:])
    )
    status, _, _ = post(f"{receiver.http}/v1/traces", body, headers={"Content-Encoding": "snappy"})
    assert status == 200
    assert len(span_names(receiver.received(Signal.TRACE))) == 5
    assert crc32c(b"123456789") == 0xE3069283  # this test's own CRC-32C


@pytest.mark.parametrize(
    "body",
    [
        snappy_chunk(0x01, b"no stream identifier"),
        # A checksum mismatch (the content, {}, would be a valid empty request).
        SNAPPY_STREAM + b"\x01\x06\x00\x00\x00\x00\x00\x00{}",
        SNAPPY_STREAM + b"\x00\x05\x00\x00\x00\x00\x00\x00\x05",  # block shorter than declared
        SNAPPY_STREAM + b"\x02\x00\x00\x00",  # reserved unskippable chunk
    ],
    ids=["no-stream-identifier", "checksum", "short-block", "reserved-chunk"],
)
def test_corrupt_snappy_is_400(start: Start, body: bytes) -> None:
    receiver = start({"http": {"endpoint": "127.0.0.1:0"}})
    status, _, answer = post(
        f"{receiver.http}/v1/traces",
        body,
        "application/json",
        headers={"Content-Encoding": "snappy"},
    )
    assert status == 400 and json.loads(answer)["code"] == 3
    assert receiver.received(Signal.TRACE) == []


_XXH_PRIMES = (2654435761, 2246822519, 3266489917, 668265263, 374761393)


def _rotl32(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (32 - bits))) & 0xFFFFFFFF


def xxh32(data: bytes) -> int:
    """xxHash32 (seed 0), the checksum LZ4 frames carry: these tests build
    their frames by hand, apart from the library that decodes them."""
    p1, p2, p3, p4, p5 = _XXH_PRIMES
    mask, size, at = 0xFFFFFFFF, len(data), 0
    if size >= 16:
        lanes = [(p1 + p2) & mask, p2, 0, (-p1) & mask]
        while at <= size - 16:
            for k in range(4):
                word = int.from_bytes(data[at + 4 * k : at + 4 * k + 4], "little")
                lanes[k] = _rotl32((lanes[k] + word * p2) & mask, 13) * p1 & mask
            at += 16
        digest = (
            sum(_rotl32(lane, bits) for lane, bits in zip(lanes, (1, 7, 12, 18), strict=True))
            & mask
        )
    else:
        digest = p5
    digest = (digest + size) & mask
    while at + 4 <= size:
        word = int.from_bytes(data[at : at + 4], "little")
        digest = _rotl32((digest + word * p3) & mask, 17) * p4 & mask
        at += 4
    while at < size:
        digest = _rotl32((digest + data[at] * p5) & mask, 11) * p1 & mask
        at += 1
    digest = (digest ^ digest >> 15) * p2 & mask
    digest = (digest ^ digest >> 13) * p3 & mask
    return digest ^ digest >> 16


def lz4_frame(first: bytes, second: bytes) -> bytes:
    """An LZ4 frame with a content checksum: `first` as a compressed block of
    literals, `second` as a stored block."""
    descriptor = bytes([0x64, 0x40])  # version 1, independent blocks, content checksum; 64 KiB
    header = descriptor + bytes([xxh32(descriptor) >> 8 & 0xFF])
    extra, lengths = len(first) - 15, b""
    while extra >= 255:
        lengths += b"\xff"
        extra -= 255
    block = b"\xf0" + lengths + bytes([extra]) + first
    content = first + second
    return (
        (0x184D2204).to_bytes(4, "little")
        + header
        + len(block).to_bytes(4, "little")
        + block
        + (len(second) | 1 << 31).to_bytes(4, "little")
        + second
        + bytes(4)  # end mark
        + xxh32(content).to_bytes(4, "little")
    )


def test_lz4_bodies_are_decoded(start: Start) -> None:
    # Upstream decodes Content-Encoding: lz4 as LZ4 frames.
    assert [xxh32(text) for text in (b"", b"a", b"abc")] == [
        0x02CC5D05,
        0x550D7456,
        0x32D153FF,
    ]
    assert xxh32(b"Nobody inspects the spammish repetition") == 0xE2293B2F
    receiver = start({"http": {"endpoint": "127.0.0.1:0"}})
    raw = traces_request(5).SerializeToString()
    skippable = (0x184D2A51).to_bytes(4, "little") + (3).to_bytes(4, "little") + b"pad"
    body = skippable + lz4_frame(raw[:300], raw[300:])
    status, _, _ = post(f"{receiver.http}/v1/traces", body, headers={"Content-Encoding": "lz4"})
    assert status == 200
    assert len(span_names(receiver.received(Signal.TRACE))) == 5


@pytest.mark.parametrize("encoding", ["snappy", "lz4"])
def test_framed_bodies_from_an_encoder_are_decoded_within_the_limit(
    start: Start, encoding: str
) -> None:
    """Bodies as an encoder makes them (back references, several chunks or
    blocks, two frames in a row), and a bomb: what inflates past
    max_request_body_size is upstream's 400, however small it came."""
    receiver = start({"http": {"endpoint": "127.0.0.1:0", "max_request_body_size": 1 << 20}})
    codec = getattr(cramjam, encoding)
    raw = traces_request(2000).SerializeToString()  # several 64 KiB chunks, much repeated
    half = len(raw) // 2
    body = bytes(codec.compress(raw[:half])) + bytes(codec.compress(raw[half:]))
    assert len(body) < len(raw) // 4
    status, _, _ = post(f"{receiver.http}/v1/traces", body, headers={"Content-Encoding": encoding})
    assert status == 200
    assert len(span_names(receiver.received(Signal.TRACE))) == 2000
    bomb = bytes(codec.compress(bytes(2 << 20)))
    assert len(bomb) < 1 << 17
    status, _, answer = post(
        f"{receiver.http}/v1/traces", bomb, headers={"Content-Encoding": encoding}
    )
    assert status == 400
    assert status_of(answer, "application/x-protobuf") == {
        "code": 3,
        "message": "http: request body too large",
    }


VALID_LZ4 = lz4_frame(b" " * 20, b"{}")


@pytest.mark.parametrize(
    "body",
    [
        b"not lz4 at all",
        # Each would otherwise decode to a valid empty request.
        VALID_LZ4[:-1] + bytes([VALID_LZ4[-1] ^ 0xFF]),  # content checksum mismatch
        VALID_LZ4[:6] + bytes([VALID_LZ4[6] ^ 0xFF]) + VALID_LZ4[7:],  # header checksum
        VALID_LZ4[:-8],  # no end mark
    ],
    ids=["not-lz4", "content-checksum", "header-checksum", "no-end-mark"],
)
def test_corrupt_lz4_is_400(start: Start, body: bytes) -> None:
    receiver = start({"http": {"endpoint": "127.0.0.1:0"}})
    status, _, answer = post(
        f"{receiver.http}/v1/traces", body, "application/json", headers={"Content-Encoding": "lz4"}
    )
    assert status == 400 and json.loads(answer)["code"] == 3
    assert receiver.received(Signal.TRACE) == []


def status_of(body: bytes, content_type: str) -> dict[str, Any]:
    """A google.rpc.Status body as {code, message}."""
    if content_type == "application/json":
        document: dict[str, Any] = json.loads(body)
        return document
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    schema = descriptor_pb2.FileDescriptorProto(name="test_status.proto", package="test.rpc")
    message = schema.message_type.add(name="Status")
    message.field.add(name="code", number=1, type=5, label=1)
    message.field.add(name="message", number=2, type=9, label=1)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(schema)
    status = message_factory.GetMessageClass(pool.FindMessageTypeByName("test.rpc.Status"))()
    status.ParseFromString(body)
    return {"code": status.code, "message": status.message}


@pytest.mark.parametrize("content_type", ["application/json", "application/x-protobuf"])
def test_bad_data_is_400_with_a_status(start: Start, content_type: str) -> None:
    receiver = start({"http": {"endpoint": "127.0.0.1:0"}})
    status, headers, body = post(f"{receiver.http}/v1/logs", b"\xff{not otlp", content_type)
    assert (status, headers["content-type"]) == (400, content_type)
    problem = status_of(body, content_type)
    assert problem["code"] == 3
    assert problem["message"]
    assert receiver.received(Signal.LOG) == []


@pytest.mark.parametrize(
    ("body", "status"),
    [
        (b"null", 200),
        (b"{}garbage", 200),
        (b"\xef\xbb\xbf{}", 400),
        ("{}".encode("utf-16"), 400),
        (b'{"extra":NaN}', 400),
        # A double past the largest one (jsoniter's ParseFloat: ErrRange).
        (b'{"resourceSpans":[{"resource":{"attributes":[{"value":{"doubleValue":1e999}}]}}]}', 400),
        (
            b'{"resourceSpans":[{"resource":{"attributes":[{"value":{"doubleValue":1%s}}]}}]}'
            % (b"0" * 400),
            400,
        ),
    ],
)
def test_a_json_body_is_read_as_pdata_reads_it(start: Start, body: bytes, status: int) -> None:
    # pdata's jsoniter reader: null is an empty request, nothing after the
    # first value is read, and a byte order mark or NaN is not JSON.
    receiver = start({"http": {"endpoint": "127.0.0.1:0"}})
    answer, headers, _ = post(f"{receiver.http}/v1/traces", body, "application/json")
    assert (answer, headers["content-type"]) == (status, "application/json")


def test_a_key_given_again_counts_as_pdata_counts_it(start: Start) -> None:
    # jsoniter's ReadObjectCB calls pdata back for every key: lists given
    # twice are appended to, a message given twice (resource, body, status,
    # a key's value) is read into the first, a scalar or a oneof's choice
    # (arrayValue, sum) keeps the last.
    receiver = start({"http": {"endpoint": "127.0.0.1:0"}})
    span = (
        b'{"name":"a","name":"b","attributes":[{"key":"k1"}],"attributes":[{"key":"k2"}],'
        b'"status":{"code":2},"status":{"message":"m"},"traceState":"x","traceState":null}'
    )
    resource = (
        b'{"attributes":[{"key":"r1","value":{"stringValue":"v"},"value":{}}]},'
        b'"resource":{"attributes":[{"key":"r2","value":{"arrayValue":{"values":[{}]},'
        b'"arrayValue":{"values":[]}}}],"droppedAttributesCount":3}'
    )
    body = (
        b'{"resourceSpans":[{"resource":%s,"scopeSpans":[{"spans":[%s]}]}],'
        b'"resourceSpans":[{"schemaUrl":"second"}]}' % (resource, span)
    )
    status, _, _ = post(f"{receiver.http}/v1/traces", body, "application/json")
    assert status == 200
    [request] = receiver.received(Signal.TRACE)
    first, second = request.resource_spans
    assert second.schema_url == "second"
    attributes = first.resource.attributes
    assert [a.key for a in attributes] == ["r1", "r2"]
    assert attributes[0].value.string_value == "v"
    assert list(attributes[1].value.array_value.values) == []
    assert first.resource.dropped_attributes_count == 3
    [read] = first.scope_spans[0].spans
    assert (read.name, read.trace_state) == ("b", "")
    assert [a.key for a in read.attributes] == ["k1", "k2"]
    assert (read.status.code, read.status.message) == (2, "m")

    metric = (
        b'{"name":"m","sum":{"dataPoints":[{"asInt":"1"}]},'
        b'"sum":{"dataPoints":[{"asInt":"2"}],"isMonotonic":true}}'
    )
    body = b'{"resourceMetrics":[{"scopeMetrics":[{"metrics":[%s]}]}]}' % metric
    status, _, _ = post(f"{receiver.http}/v1/metrics", body, "application/json")
    assert status == 200
    [request] = receiver.received(Signal.METRIC)
    total = request.resource_metrics[0].scope_metrics[0].metrics[0].sum
    assert total.is_monotonic and [p.as_int for p in total.data_points] == [2]


def test_negative_zero_is_read_as_jsoniter_reads_it(start: Start) -> None:
    # jsoniter reads the sign, then the number: -0 is a double's -0.0 and a
    # signed integer's (or an enum's) 0; readUint64 refuses the sign.
    receiver = start({"http": {"endpoint": "127.0.0.1:0"}})
    point = b'{"asDouble":-0,"timeUnixNano":"1"}'
    buckets = b'{"offset":-0,"bucketCounts":[1]}'
    metrics = (
        b'{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"gauge":{"dataPoints":[%s]}},'
        b'{"exponentialHistogram":{"aggregationTemporality":-0,"dataPoints":'
        b'[{"count":"1","positive":%s}]}}]}]}]}' % (point, buckets)
    )
    status, _, _ = post(f"{receiver.http}/v1/metrics", metrics, "application/json")
    assert status == 200
    [request] = receiver.received(Signal.METRIC)
    gauge, exponential = request.resource_metrics[0].scope_metrics[0].metrics
    value = gauge.gauge.data_points[0].as_double
    assert value == 0 and math.copysign(1, value) == -1
    assert exponential.exponential_histogram.data_points[0].positive.offset == 0

    spans = b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"startTimeUnixNano":-0}]}]}]}'
    status, _, body = post(f"{receiver.http}/v1/traces", spans, "application/json")
    assert status == 400 and json.loads(body)["code"] == 3
    assert receiver.received(Signal.TRACE) == []


def test_a_bad_id_is_400_naming_it_as_upstream(start: Start) -> None:
    # pdata's log reader reports "readLog.traceId: parse trace_id:<error>".
    receiver = start({"http": {"endpoint": "127.0.0.1:0"}})
    record = b'{"body":{},"traceId":"--"}'
    body = b'{"resourceLogs":[{"scopeLogs":[{"logRecords":[%s]}]}]}' % record
    status, headers, answer = post(f"{receiver.http}/v1/logs", body, "application/json")
    assert (status, headers["content-type"]) == (400, "application/json")
    problem = json.loads(answer)
    assert problem["code"] == 3
    assert problem["message"].startswith("readLog.traceId: parse trace_id:invalid length for ID")
    assert receiver.received(Signal.LOG) == []


def test_corrupt_compression_is_400(start: Start) -> None:
    receiver = start({"http": {"endpoint": "127.0.0.1:0"}})
    status, _, body = post(
        f"{receiver.http}/v1/traces",
        b"not gzip",
        "application/json",
        headers={"Content-Encoding": "gzip"},
    )
    assert status == 400 and json.loads(body)["code"] == 3


@pytest.mark.parametrize(
    ("encoding", "body", "message"),
    [
        # upstream's TestOTLPReceiverInvalidContentEncoding
        ("gzip", b'{"key": "value"}', "gzip: invalid header"),
        ("zstd", b'{"key": "value"}', "invalid input: magic number mismatch"),
        # Go's readers on what is not their format, or is cut short
        ("gzip", b"", "EOF"),
        ("gzip", b"\x1f\x8b\x08", "unexpected EOF"),
        ("gzip", gzip.compress(b"{}")[:-3], "unexpected EOF"),
        ("gzip", gzip.compress(b"{}")[:-8] + bytes(8), "gzip: invalid checksum"),
        ("deflate", b"{}", "zlib: invalid header"),
        ("deflate", zlib.compress(b"{}", wbits=-15), "zlib: invalid header"),
        ("zlib", zlib.compress(b"{}")[:-1], "unexpected EOF"),
        ("zlib", zlib.compress(b"{}")[:-4] + bytes(4), "zlib: invalid checksum"),
        ("zstd", b"(\xb5", "unexpected EOF"),
    ],
    ids=[
        "gzip-header",
        "zstd-magic",
        "gzip-empty",
        "gzip-short-header",
        "gzip-truncated",
        "gzip-checksum",
        "deflate-not-zlib",
        "deflate-raw",
        "zlib-truncated",
        "zlib-checksum",
        "zstd-short-magic",
    ],
)
@pytest.mark.parametrize("content_type", ["application/json", "application/x-protobuf"])
def test_corrupt_bodies_get_gos_errors(
    start: Start, encoding: str, body: bytes, message: str, content_type: str
) -> None:
    receiver = start({"http": {"endpoint": "127.0.0.1:0"}})
    status, headers, answer = post(
        f"{receiver.http}/v1/traces", body, content_type, headers={"Content-Encoding": encoding}
    )
    assert (status, headers["content-type"]) == (400, content_type)
    assert status_of(answer, content_type) == {"code": 3, "message": message}
    assert receiver.received(Signal.TRACE) == []


def test_a_header_that_does_not_read_is_answered_before_the_path(start: Start) -> None:
    # Upstream's decompressor opens gzip and zlib readers before its mux runs.
    receiver = start({"http": {"endpoint": "127.0.0.1:0"}})
    status, _, answer = post(
        f"{receiver.http}/v1/other",
        b"plain",
        "application/json",
        headers={"Content-Encoding": "gzip"},
    )
    assert (status, json.loads(answer)) == (400, {"code": 3, "message": "unexpected EOF"})
    # An empty zstd stream is no content, as Go's reader reads it.
    status, _, _ = post(f"{receiver.http}/v1/traces", b"", headers={"Content-Encoding": "zstd"})
    assert status == 200


def test_unsupported_encoding(start: Start) -> None:
    receiver = start({"http": {"endpoint": "127.0.0.1:0"}})
    status, _, body = post(
        f"{receiver.http}/v1/traces", b"{}", "application/json", headers={"Content-Encoding": "br"}
    )
    assert (status, json.loads(body)) == (
        400,
        {"code": 3, "message": "unsupported Content-Encoding: br"},
    )
    # No Content-Type: the Status is JSON, upstream's fallback format.
    status, headers, body = post(
        f"{receiver.http}/v1/traces", b"{}", None, headers={"Content-Encoding": "br"}
    )
    assert (status, headers["content-type"], json.loads(body)["code"]) == (
        400,
        "application/json",
        3,
    )
    # Upstream's literal answer when the error cannot be written in the request's format.
    status, headers, body = post(
        f"{receiver.http}/v1/traces", b"x", "text/plain", headers={"Content-Encoding": "br"}
    )
    assert (status, headers["content-type"]) == (500, "application/json")
    assert json.loads(body) == {"code": 13, "message": "failed to marshal error message"}


@pytest.mark.parametrize("encoding", ["GZIP", "identity", "x-gzip"])
def test_content_encoding_is_matched_as_written(start: Start, encoding: str) -> None:
    # Upstream looks the header's value up as written: only the exact names
    # in compression_algorithms are accepted.
    receiver = start({"http": {"endpoint": "127.0.0.1:0"}})
    body = traces_request(2).SerializeToString()
    if encoding != "identity":
        body = gzip.compress(body)
    status, headers, answer = post(
        f"{receiver.http}/v1/traces", body, headers={"Content-Encoding": encoding}
    )
    assert (status, headers["content-type"]) == (400, "application/x-protobuf")
    assert status_of(answer, "application/x-protobuf") == {
        "code": 3,
        "message": f"unsupported Content-Encoding: {encoding}",
    }
    assert receiver.received(Signal.TRACE) == []


def test_unknown_media_type_is_415(start: Start) -> None:
    receiver = start({"http": {"endpoint": "127.0.0.1:0"}})
    status, headers, body = post(f"{receiver.http}/v1/traces", b"{}", "text/plain")
    assert (status, headers["content-type"]) == (415, "text/plain")
    assert (
        body == b"415 unsupported media type, supported: [application/json, application/x-protobuf]"
    )
    assert post(f"{receiver.http}/v1/traces", b"{}", None)[0] == 415


def test_content_type_is_parsed_as_go_parses_a_media_type(start: Start) -> None:
    # Upstream reads the media type with Go's mime.ParseMediaType: parameters
    # that do not parse (or repeat with another value) make it no media type.
    receiver = start({"http": {"endpoint": "127.0.0.1:0"}})
    accepted = [
        "APPLICATION/JSON",
        "application/json;",
        " application/json ; charset = utf-8 ",
        'application/json; charset="utf-8"; q=""',
        "application/json; a=1; a=1",
    ]
    refused = [
        "application/json; charset",
        "application/json; charset=",
        "application/json;;",
        "application/json; a=1; a=2",
        "application/json; charset=utf 8",
        'application/json; charset="utf-8',
        "application/json x",
    ]
    for content_type in accepted:
        status, _, _ = post(f"{receiver.http}/v1/traces", b"{}", content_type)
        assert status == 200, content_type
    for content_type in refused:
        status, headers, _ = post(f"{receiver.http}/v1/traces", b"{}", content_type)
        assert (status, headers["content-type"]) == (415, "text/plain"), content_type
    # An error answered in the request's format falls back to upstream's literal answer.
    status, headers, body = post(
        f"{receiver.http}/v1/traces",
        b"{}",
        "application/json; charset",
        headers={"Content-Encoding": "br"},
    )
    assert (status, json.loads(body)) == (
        500,
        {"code": 13, "message": "failed to marshal error message"},
    )


@pytest.mark.parametrize("method", ["GET", "FOO"])
def test_only_post_is_allowed(start: Start, method: str) -> None:
    """Any other method, one HTTP does not define too (Go's server takes
    any token), is the handler's 405."""
    receiver = start({"http": {"endpoint": "127.0.0.1:0"}})
    status, headers, body = post(f"{receiver.http}/v1/traces", b"", method=method)
    assert (status, headers["allow"], body) == (
        405,
        "POST",
        b"405 method not allowed, supported: [POST]",
    )


def test_unknown_path_and_unused_signal_are_404(start: Start) -> None:
    receiver = start({"http": {"endpoint": "127.0.0.1:0"}}, signals=frozenset({Signal.TRACE}))
    for path in ("/v1/logs", "/v1/other"):
        status, headers, body = post(f"{receiver.http}{path}", b"")
        assert (status, body) == (404, b"404 page not found\n")
        # Go's http.NotFound, which upstream's mux answers with.
        assert (headers["content-type"], headers["x-content-type-options"]) == (
            "text/plain; charset=utf-8",
            "nosniff",
        )


def test_a_path_that_is_not_clean_is_redirected_to_the_clean_one(start: Start) -> None:
    # Upstream's Go ServeMux answers a path with empty, "." or ".." segments
    # with 301 to the cleaned path (query kept), whether or not it is served.
    receiver = start({"http": {"endpoint": "127.0.0.1:0"}})
    for path, location in [
        ("//v1/traces", "/v1/traces"),
        ("/v1/./traces?tenant=a", "/v1/traces?tenant=a"),
        ("/v1/logs/../traces/", "/v1/traces/"),
        ("/other//x", "/other/x"),
    ]:
        status, headers, body = post(f"{receiver.http}{path}", b"{}", "application/json")
        assert (status, headers["location"], body) == (301, location, b""), path
        assert "content-type" not in headers
    status, headers, body = post(f"{receiver.http}//v1/traces", b"", None, method="GET")
    assert (status, headers["location"], headers["content-type"], body) == go_redirect("/v1/traces")
    assert receiver.received(Signal.TRACE) == []


def test_body_past_the_limit_is_400(start: Start) -> None:
    # Upstream reads bodies through Go's MaxBytesReader and answers its
    # error, as sent or decompressed, with 400 and a Status in the request's format.
    receiver = start(
        {
            "http": {
                "endpoint": "127.0.0.1:0",
                "max_request_body_size": 4096,
                "response_headers": {"X-Served-By": "otlp"},
            }
        }
    )
    too_large = {"code": 3, "message": "http: request body too large"}
    body = gzip.compress(traces_request(400).SerializeToString())
    assert len(body) < 4096
    status, headers, answer = post(
        f"{receiver.http}/v1/traces", body, headers={"Content-Encoding": "gzip"}
    )
    assert (status, headers["content-type"]) == (400, "application/x-protobuf")
    assert status_of(answer, "application/x-protobuf") == too_large
    raw = traces_request(400).SerializeToString()
    status, headers, answer = post(f"{receiver.http}/v1/traces", raw)
    assert (status, headers["content-type"], headers["x-served-by"]) == (
        400,
        "application/x-protobuf",
        "otlp",
    )
    assert status_of(answer, "application/x-protobuf") == too_large
    status, headers, answer = post(
        f"{receiver.http}/v1/traces", json.dumps(TRACES_JSON).encode() * 40, "application/json"
    )
    assert (status, headers["content-type"], json.loads(answer)) == (
        400,
        "application/json",
        too_large,
    )
    # The checks made before the body is read still come first.
    assert post(f"{receiver.http}/v1/other", raw)[0] == 404
    assert post(f"{receiver.http}/v1/traces", raw, "text/plain")[0] == 415
    assert receiver.received(Signal.TRACE) == []


def raw_exchange(
    receiver: Running, raw: bytes, half_close: bool = False
) -> tuple[str, dict[str, str], bytes, tuple[str, int]]:
    """Send `raw` on a fresh connection (then half-close it, if asked) and
    read until the receiver closes: (status line, headers lowercased, body,
    the client's address)."""
    with socket.create_connection(("127.0.0.1", receiver.receiver.http_port), timeout=5) as sock:
        sock.sendall(raw)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
        client = sock.getsockname()
    return (*head_of(received), client)


@pytest.mark.parametrize("content_type", ["application/json", "application/x-protobuf"])
@pytest.mark.parametrize(
    ("framing", "sent", "message"),
    [
        ("Content-Length: 100", b"0123456789", "unexpected EOF"),
        ("Transfer-Encoding: chunked", b"a\r\n0123456789\r\n", "unexpected EOF"),
        ("Transfer-Encoding: chunked", b"3\r\nabcXY\r\n0\r\n\r\n", "malformed chunked encoding"),
        ("Transfer-Encoding: chunked", b"zz\r\nabc\r\n0\r\n\r\n", "invalid byte in chunk length"),
        (
            "Transfer-Encoding: chunked",
            b"1ffffffffffffffff\r\nabc\r\n",
            "http chunk length too large",
        ),
    ],
)
def test_a_body_that_cannot_be_read_is_400_with_the_read_error(
    start: Start, content_type: str, framing: str, sent: bytes, message: str
) -> None:
    """Upstream's handler reads the body itself (readAndCloseBody): when Go's
    read fails (the client stops short, a chunk is malformed) it answers 400
    with a Status holding the read's error, and the connection is not reused."""
    receiver = start({"http": {"endpoint": "127.0.0.1:0"}})
    head = (
        f"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: {content_type}\r\n{framing}\r\n\r\n"
    )
    status, headers, body, _ = raw_exchange(receiver, head.encode() + sent, half_close=True)
    assert (status, headers["content-type"]) == ("HTTP/1.1 400 Bad Request", content_type)
    assert status_of(body, content_type) == {"code": 3, "message": message}
    assert headers["connection"] == "close"
    # The checks made before the body is read still come first.
    head = head.replace(content_type, "text/plain")
    status, _, body, _ = raw_exchange(receiver, head.encode() + sent, half_close=True)
    assert status == "HTTP/1.1 415 Unsupported Media Type"
    assert receiver.received(Signal.TRACE) == []


def test_read_timeout_mid_body_is_400_with_go_s_timeout_error(start: Start) -> None:
    """A body still arriving when ``read_timeout`` expires: Go's read fails
    with the connection's *net.OpError, which upstream answers with 400."""
    receiver = start({"http": {"endpoint": "127.0.0.1:0", "read_timeout": "300ms"}})
    head = (
        b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: 100\r\n\r\n{"
    )
    status, headers, body, client = raw_exchange(receiver, head)
    port = receiver.receiver.http_port
    expected = f"read tcp 127.0.0.1:{port}->127.0.0.1:{client[1]}: i/o timeout"
    assert (status, headers["content-type"]) == ("HTTP/1.1 400 Bad Request", "application/json")
    assert json.loads(body) == {"code": 3, "message": expected}


def test_custom_url_paths(start: Start) -> None:
    receiver = start(yaml.safe_load((TESTDATA / "config_url_paths.yaml").read_text())["protocols"])
    body = traces_request().SerializeToString()
    assert post(f"{receiver.http}/custom/traces", body)[0] == 200
    assert (
        post(f"{receiver.http}/custom/metrics", ExportMetricsServiceRequest().SerializeToString())[
            0
        ]
        == 200
    )
    assert (
        post(f"{receiver.http}/custom/logs", ExportLogsServiceRequest().SerializeToString())[0]
        == 200
    )
    assert post(f"{receiver.http}/v1/traces", body)[0] == 404
    assert len(receiver.received(Signal.TRACE)) == 1


def test_response_headers(start: Start) -> None:
    receiver = start(
        {"http": {"endpoint": "127.0.0.1:0", "response_headers": {"X-Served-By": "sluice"}}}
    )
    _, headers, _ = post(f"{receiver.http}/v1/traces", traces_request().SerializeToString())
    assert headers["x-served-by"] == "sluice"


# -- CORS ------------------------------------------------------------------------------------


def test_cors_preflight_and_actual_request(start: Start) -> None:
    cors = yaml.safe_load((TESTDATA / "config_cors.yaml").read_text())["protocols"]
    receiver = start(cors)
    preflight = {
        "Origin": "https://a.test.example.com",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type,x-custom",
    }
    status, headers, body = post(
        f"{receiver.http}/v1/traces", b"", None, method="OPTIONS", headers=preflight
    )
    assert (status, body) == (204, b"")
    assert headers["access-control-allow-origin"] == "https://a.test.example.com"
    assert headers["access-control-allow-methods"] == "POST"
    assert headers["access-control-allow-headers"] == "content-type,x-custom"
    assert headers["access-control-allow-credentials"] == "true"
    assert headers["access-control-max-age"] == "7200"
    assert (
        headers["vary"] == "Origin, Access-Control-Request-Method, Access-Control-Request-Headers"
    )

    refused_origin = dict(preflight, Origin="https://evil.example.com")
    status, headers, _ = post(
        f"{receiver.http}/v1/traces", b"", None, method="OPTIONS", headers=refused_origin
    )
    assert status == 204 and "access-control-allow-origin" not in headers
    refused_header = dict(preflight, **{"Access-Control-Request-Headers": "x-other"})
    status, headers, _ = post(
        f"{receiver.http}/v1/traces", b"", None, method="OPTIONS", headers=refused_header
    )
    assert status == 204 and "access-control-allow-origin" not in headers

    status, headers, _ = post(
        f"{receiver.http}/v1/traces",
        json.dumps(TRACES_JSON).encode(),
        "application/json",
        headers={"Origin": "https://app.example.com"},
    )
    assert status == 200
    assert headers["access-control-allow-origin"] == "https://app.example.com"
    assert headers["vary"] == "Origin"


def test_cors_preflight_request_headers_are_read_as_rs_cors_reads_them(start: Start) -> None:
    # Upstream's rs/cors v1.11 takes the lowercase, sorted, comma-separated
    # list the Fetch standard defines (at most one space or tab around a
    # name, a few empty elements, over one or more header lines), and any
    # preflight asking for OPTIONS.
    receiver = start(yaml.safe_load((TESTDATA / "config_cors.yaml").read_text())["protocols"])

    def preflight(method: str, *asked: str) -> dict[str, str] | None:
        connection = http.client.HTTPConnection("127.0.0.1", receiver.receiver.http_port, timeout=5)
        try:
            connection.putrequest("OPTIONS", "/v1/traces")
            connection.putheader("Origin", "https://app.example.com")
            connection.putheader("Access-Control-Request-Method", method)
            for value in asked:
                connection.putheader("Access-Control-Request-Headers", value)
            connection.endheaders()
            response = connection.getresponse()
            response.read()
            assert response.status == 204
            if response.getheader("Access-Control-Allow-Origin") is None:
                return None
            return {
                "methods": response.getheader("Access-Control-Allow-Methods", ""),
                "headers": response.getheader("Access-Control-Allow-Headers", ""),
            }
        finally:
            connection.close()

    for asked in ("content-type, x-custom", "content-type,,x-custom", " content-type ", ""):
        assert preflight("POST", asked) is not None, asked
    for asked in (
        "x-custom,content-type",
        "Content-Type",
        "content-type,content-type",
        "content-type,  x-custom",
    ):
        assert preflight("POST", asked) is None, asked
    assert preflight("POST", "content-type", "x-custom") == {
        "methods": "POST",
        "headers": "content-type, x-custom",
    }
    assert preflight("POST", "x-custom", "content-type") is None
    assert preflight("OPTIONS") == {"methods": "OPTIONS", "headers": ""}
    assert preflight("PUT") is None


def test_without_cors_options_is_405(start: Start) -> None:
    receiver = start({"http": {"endpoint": "127.0.0.1:0"}})
    preflight = {"Origin": "https://app.example.com", "Access-Control-Request-Method": "POST"}
    status, headers, _ = post(
        f"{receiver.http}/v1/traces", b"", None, method="OPTIONS", headers=preflight
    )
    assert status == 405 and "access-control-allow-origin" not in headers


# -- back-pressure ---------------------------------------------------------------------------


def test_retryable_refusal_is_503_with_retry_after(start: Start) -> None:
    receiver = start()
    receiver.consumers[Signal.TRACE].error = refused("sending queue is full", retry_after=2.5)
    status, headers, body = post(
        f"{receiver.http}/v1/traces", json.dumps(TRACES_JSON).encode(), "application/json"
    )
    assert (status, headers["retry-after"]) == (503, "3")
    assert json.loads(body) == {"code": 14, "message": "sending queue is full"}
    assert receiver.count("refused", "spans", "http") == 1
    assert receiver.count("accepted", "spans", "http") == 0

    with grpc.insecure_channel(receiver.grpc_target) as channel:
        export = channel.unary_unary(TRACE_SERVICE)
        with pytest.raises(grpc.RpcError) as raised:
            export(traces_request(3).SerializeToString(), timeout=5)
    assert raised.value.code() == grpc.StatusCode.UNAVAILABLE
    assert raised.value.details() == "sending queue is full"
    assert receiver.count("refused", "spans", "grpc") == 3


def test_a_throttled_refusal_is_429_with_retry_after(start: Start) -> None:
    """COLLECTOR.md section 2: the receiver answers back-pressure with 503 or
    429 and ``Retry-After``. A backend's 429 with ``Retry-After: 7`` reaches
    the receiver through an exporter without a queue as RESOURCE_EXHAUSTED
    with that delay (upstream's status passed on): 429, ``Retry-After: 7``."""
    receiver = start()
    receiver.consumers[Signal.TRACE].error = ConsumerError(
        "Throttle (7s), error: rpc error: code = ResourceExhausted desc = too many requests",
        retryable=True,
        retry_after=7.0,
        code=8,
    )
    status, headers, body = post(
        f"{receiver.http}/v1/traces", json.dumps(TRACES_JSON).encode(), "application/json"
    )
    assert (status, headers.get("retry-after")) == (429, "7")
    assert json.loads(body)["code"] == 8
    with grpc.insecure_channel(receiver.grpc_target) as channel:
        export = channel.unary_unary(TRACE_SERVICE)
        with pytest.raises(grpc.RpcError) as raised:
            export(traces_request().SerializeToString(), timeout=5)
    assert raised.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_permanent_refusal_is_500_internal(start: Start) -> None:
    # Upstream answers a permanent pipeline error with INTERNAL: 500 over HTTP.
    receiver = start()
    receiver.consumers[Signal.TRACE].error = permanent("span names are not allowed")
    status, headers, body = post(f"{receiver.http}/v1/traces", traces_request().SerializeToString())
    assert status == 500 and "retry-after" not in headers
    assert status_of(body, "application/x-protobuf") == {
        "code": 13,
        "message": "span names are not allowed",
    }
    with grpc.insecure_channel(receiver.grpc_target) as channel:
        export = channel.unary_unary(TRACE_SERVICE)
        with pytest.raises(grpc.RpcError) as raised:
            export(traces_request().SerializeToString(), timeout=5)
    assert raised.value.code() == grpc.StatusCode.INTERNAL
    assert raised.value.details() == "span names are not allowed"
    assert receiver.count("refused", "spans", "grpc") == 2


def test_a_failing_consumer_is_a_retryable_refusal(start: Start) -> None:
    receiver = start({"http": {"endpoint": "127.0.0.1:0"}})
    receiver.consumers[Signal.TRACE].error = RuntimeError("bug")
    status, _, body = post(f"{receiver.http}/v1/traces", traces_request().SerializeToString())
    assert status == 503
    assert status_of(body, "application/x-protobuf") == {"code": 14, "message": "bug"}


def test_json_status_escapes_text_as_go_does(start: Start) -> None:
    # Upstream writes a JSON Status with gogo's jsonpb, whose strings go
    # through Go's encoding/json: HTML characters and line and paragraph
    # separators are escaped.
    receiver = start({"http": {"endpoint": "127.0.0.1:0"}})
    receiver.consumers[Signal.TRACE].error = refused("queue <full> & \u2028\u2029 \x08\x7f")
    status, _, body = post(
        f"{receiver.http}/v1/traces", json.dumps(TRACES_JSON).encode(), "application/json"
    )
    assert (status, body) == (
        503,
        b'{"code":14,"message":"queue \\u003cfull\\u003e \\u0026 \\u2028\\u2029 \\b\x7f"}',
    )
    status, _, body = post(
        f"{receiver.http}/v1/traces",
        b"{}",
        "application/json",
        headers={"Content-Encoding": "<br>"},
    )
    assert (status, body) == (
        400,
        b'{"code":3,"message":"unsupported Content-Encoding: \\u003cbr\\u003e"}',
    )


def test_empty_request_is_accepted_without_the_pipeline(start: Start) -> None:
    receiver = start({"http": {"endpoint": "127.0.0.1:0"}})
    receiver.consumers[Signal.TRACE].error = refused("never called")
    assert post(f"{receiver.http}/v1/traces", b"")[0] == 200
    assert receiver.count("refused", "spans", "http") == 0


# -- protobuf, read as pdata reads it ---------------------------------------------------------


def field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def deprecated_scopes_request(signal: Signal, with_current: bool = False) -> bytes:
    """An export request whose one resource holds its scope in field 1000
    (``instrumentation_library_*``, what senders before OTLP 0.19 wrote),
    and a second scope in the current field when `with_current`."""
    record = {
        Signal.TRACE: field(5, b"old span"),
        Signal.LOG: field(5, field(1, b"old log")),
        Signal.METRIC: field(1, b"old metric") + field(5, field(1, b"")),
    }[signal]
    resource = field(1, field(1, field(1, b"service.name") + field(2, field(1, b"web"))))
    resource += field(1000, field(1, field(1, b"lib")) + field(2, record))
    if with_current:
        resource += field(2, field(2, record.replace(b"old", b"new")))
    return field(1, resource)


PATHS = {Signal.TRACE: "/v1/traces", Signal.LOG: "/v1/logs", Signal.METRIC: "/v1/metrics"}


@pytest.mark.parametrize("signal", list(Signal))
def test_deprecated_scopes_are_read_into_the_current_field(start: Start, signal: Signal) -> None:
    # pdata's otlp.Migrate*: a resource with no scopes takes those of the
    # deprecated field, over HTTP and gRPC; the deprecated field is dropped.
    receiver = start()
    wire = deprecated_scopes_request(signal)
    assert post(receiver.http + PATHS[signal], wire)[0] == 200
    with grpc.insecure_channel(receiver.grpc_target) as channel:
        service = pdata_service(signal)
        assert channel.unary_unary(service)(wire, timeout=5) == b"\x0a\x00"
    for request in receiver.received(signal):
        full = pdata.MESSAGE_TYPES[signal].FromString(request.SerializeToString())
        (resource,) = getattr(full, pdata.RESOURCES[signal])
        (scope,) = getattr(resource, pdata.SCOPES[signal])
        assert scope.scope.name == "lib" and len(getattr(scope, pdata.RECORDS[signal])) == 1
        assert b"\xc2\x3e" not in request.SerializeToString()
    assert len(receiver.received(signal)) == 2


@pytest.mark.parametrize("signal", list(Signal))
def test_deprecated_scopes_beside_current_ones_are_dropped(start: Start, signal: Signal) -> None:
    receiver = start({"http": {"endpoint": "127.0.0.1:0"}})
    assert post(receiver.http + PATHS[signal], deprecated_scopes_request(signal, True))[0] == 200
    (request,) = receiver.received(signal)
    (resource,) = getattr(request, pdata.RESOURCES[signal])
    (scope,) = getattr(resource, pdata.SCOPES[signal])
    assert scope.scope.name == "" and b"old" not in request.SerializeToString()


def test_a_deprecated_scope_that_does_not_decode_is_refused(start: Start) -> None:
    receiver = start({"http": {"endpoint": "127.0.0.1:0"}})
    wire = field(1, field(1000, b"\xff\xff"))
    assert post(f"{receiver.http}/v1/traces", wire)[0] == 400
    assert receiver.received(Signal.TRACE) == []


def in_a_request(record: bytes, deprecated: bool = False) -> bytes:
    """A request of one resource with one scope holding `record`."""
    return field(1, field(1000 if deprecated else 2, field(2, record)))


def exemplar_in(metric_field: int, point_field: int, exemplar: bytes) -> bytes:
    return field(metric_field, field(1, field(point_field, exemplar)))


TRACE_ID_LENGTH = "unmarshal: invalid TraceID length"
SPAN_ID_LENGTH = "unmarshal: invalid SpanID length"


def assert_refused_as_pdata(start: Start, signal: Signal, wire: bytes, message: str) -> None:
    """`wire` is refused with pdata's `message`: 400 with a Status over HTTP,
    INTERNAL over gRPC (grpc-go's unmarshalling error), and nothing exported."""
    receiver = start()
    status, _, body = post(receiver.http + PATHS[signal], wire)
    assert (status, status_of(body, "application/x-protobuf")) == (
        400,
        {"code": 3, "message": message},
    )
    with (
        grpc.insecure_channel(receiver.grpc_target) as channel,
        pytest.raises(grpc.RpcError) as raised,
    ):
        channel.unary_unary(pdata_service(signal))(wire, timeout=5)
    assert (raised.value.code(), raised.value.details()) == (
        grpc.StatusCode.INTERNAL,
        f"grpc: error unmarshalling request: {message}",
    )
    assert receiver.received(signal) == []


@pytest.mark.parametrize(
    ("signal", "wire", "message"),
    [
        (Signal.TRACE, in_a_request(field(1, bytes(15))), TRACE_ID_LENGTH),
        (Signal.TRACE, in_a_request(field(1, bytes(16)) + field(2, bytes(9))), SPAN_ID_LENGTH),
        (Signal.TRACE, in_a_request(field(4, b"\x01")), SPAN_ID_LENGTH),
        (Signal.TRACE, in_a_request(field(13, field(1, bytes(32)))), TRACE_ID_LENGTH),
        (Signal.TRACE, in_a_request(field(13, field(2, bytes(4)))), SPAN_ID_LENGTH),
        (Signal.TRACE, in_a_request(field(1, bytes(17)), deprecated=True), TRACE_ID_LENGTH),
        (Signal.LOG, in_a_request(field(9, bytes(8))), TRACE_ID_LENGTH),
        (Signal.LOG, in_a_request(field(10, bytes(16))), SPAN_ID_LENGTH),
        (Signal.METRIC, in_a_request(exemplar_in(5, 5, field(5, bytes(3)))), TRACE_ID_LENGTH),
        (Signal.METRIC, in_a_request(exemplar_in(7, 5, field(4, bytes(3)))), SPAN_ID_LENGTH),
        (Signal.METRIC, in_a_request(exemplar_in(9, 8, field(4, bytes(3)))), SPAN_ID_LENGTH),
        (Signal.METRIC, in_a_request(exemplar_in(10, 11, field(5, bytes(3)))), TRACE_ID_LENGTH),
    ],
    ids=[
        "span-trace",
        "span-span",
        "span-parent",
        "link-trace",
        "link-span",
        "deprecated-scope",
        "log-trace",
        "log-span",
        "gauge-exemplar",
        "sum-exemplar",
        "histogram-exemplar",
        "exponential-exemplar",
    ],
)
def test_an_id_of_the_wrong_length_is_refused_as_pdata_refuses_it(
    start: Start, signal: Signal, wire: bytes, message: str
) -> None:
    # pdata's ids are fixed-size arrays (data.TraceID/SpanID Unmarshal).
    assert_refused_as_pdata(start, signal, wire, message)


@pytest.mark.parametrize(
    ("signal", "wire", "message"),
    [
        # A known field of another wire type: Python's protobuf kept it as unknown.
        (Signal.TRACE, in_a_request(b"\x28\x01"), "proto: wrong wireType = 0 for field Name"),
        (Signal.TRACE, field(1, b"\x18\x00"), "proto: wrong wireType = 0 for field SchemaUrl"),
        (
            Signal.METRIC,
            in_a_request(field(7, b"\x09" + bytes(8))),
            "proto: wrong wireType = 1 for field DataPoints",
        ),
        # Inside a log record (kept as bytes, which nothing read).
        (Signal.LOG, in_a_request(field(5, b"\x0a\x05ab")), "unexpected EOF"),
        (
            Signal.LOG,
            in_a_request(field(6, field(2, b"\x19\x01"))),
            "proto: wrong wireType = 1 for field IntValue",
        ),
        # Cut short, overlong and impossible: gogo's own words.
        (Signal.TRACE, b"\x0a\x05\x01", "unexpected EOF"),
        (Signal.TRACE, b"\x0a" + b"\x80" * 10 + b"\x01", "proto: integer overflow"),
        (
            Signal.TRACE,
            b"\x0a" + b"\xff" * 9 + b"\x01",
            "proto: negative length found during unmarshaling",
        ),
        (Signal.LOG, b"\x00", "proto: ExportLogsServiceRequest: illegal tag 0 (wire type 0)"),
        (
            Signal.TRACE,
            b"\x0c",
            "proto: ExportTraceServiceRequest: wiretype end group for non-group",
        ),
        (Signal.METRIC, b"\x17", "proto: illegal wireType 7"),
    ],
    ids=[
        "span-name",
        "schema-url",
        "data-points",
        "log-record-cut",
        "log-attribute",
        "cut",
        "overflow",
        "negative-length",
        "tag-zero",
        "end-group",
        "wire-type-7",
    ],
)
def test_a_request_pdata_does_not_read_is_refused_in_its_words(
    start: Start, signal: Signal, wire: bytes, message: str
) -> None:
    # pdata's gogoproto Unmarshal methods (pdata/internal/data/protogen).
    assert_refused_as_pdata(start, signal, wire, message)


def test_unknown_fields_are_stepped_over(start: Start) -> None:
    receiver = start({"http": {"endpoint": "127.0.0.1:0"}})
    unknown = b"\xa8\x06\x01" + field(101, b"x") + b"\xab\x06\xac\x06"  # 101: varint, bytes, group
    span = field(5, b"GET /") + unknown
    assert (
        post(f"{receiver.http}/v1/traces", field(1, unknown + field(2, field(2, span))))[0] == 200
    )
    [request] = receiver.received(Signal.TRACE)
    assert span_names([request]) == ["GET /"]


def test_empty_and_full_length_ids_are_taken(start: Start) -> None:
    receiver = start({"http": {"endpoint": "127.0.0.1:0"}})
    span = field(1, b"") + field(2, bytes(8)) + field(4, b"") + field(13, field(1, bytes(16)))
    log = field(9, bytes(16)) + field(10, b"")
    assert post(f"{receiver.http}/v1/traces", in_a_request(span))[0] == 200
    assert post(f"{receiver.http}/v1/logs", in_a_request(log))[0] == 200
    assert len(receiver.received(Signal.TRACE)) == len(receiver.received(Signal.LOG)) == 1


def pdata_service(signal: Signal) -> str:
    kind = {Signal.TRACE: "trace", Signal.LOG: "logs", Signal.METRIC: "metrics"}[signal]
    name = {Signal.TRACE: "Trace", Signal.LOG: "Logs", Signal.METRIC: "Metrics"}[signal]
    return f"/opentelemetry.proto.collector.{kind}.v1.{name}Service/Export"


# -- gRPC ------------------------------------------------------------------------------------


def test_grpc_unused_signal_is_unimplemented(start: Start) -> None:
    receiver = start({"grpc": {"endpoint": "127.0.0.1:0"}}, signals=frozenset({Signal.TRACE}))
    with grpc.insecure_channel(receiver.grpc_target) as channel:
        export = channel.unary_unary(LOGS_SERVICE)
        with pytest.raises(grpc.RpcError) as raised:
            export(b"", timeout=5)
        # grpc-go's words for a service or a method it does not serve.
        assert (raised.value.code(), raised.value.details()) == (
            grpc.StatusCode.UNIMPLEMENTED,
            "unknown service opentelemetry.proto.collector.logs.v1.LogsService",
        )
        other = channel.unary_unary(TRACE_SERVICE.replace("/Export", "/Other"))
        with pytest.raises(grpc.RpcError) as raised:
            other(b"", timeout=5)
        assert (raised.value.code(), raised.value.details()) == (
            grpc.StatusCode.UNIMPLEMENTED,
            "unknown method Other for service opentelemetry.proto.collector.trace.v1.TraceService",
        )
        streaming = channel.stream_stream(LOGS_SERVICE)
        with pytest.raises(grpc.RpcError) as raised:
            list(streaming(iter([b"", b""]), timeout=5))
        assert raised.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_grpc_malformed_request_is_internal(start: Start) -> None:
    # Go's gRPC server answers a request it cannot unmarshal with INTERNAL.
    receiver = start({"grpc": {"endpoint": "127.0.0.1:0"}})
    with grpc.insecure_channel(receiver.grpc_target) as channel:
        export = channel.unary_unary(TRACE_SERVICE)
        with pytest.raises(grpc.RpcError) as raised:
            export(b"\xff\xff\xff", timeout=5)
    assert raised.value.code() == grpc.StatusCode.INTERNAL
    assert (raised.value.details() or "").startswith("grpc: error unmarshalling request: ")
    assert receiver.received(Signal.TRACE) == []


def test_grpc_max_message_size(start: Start) -> None:
    receiver = start({"grpc": {"endpoint": "127.0.0.1:0", "max_recv_msg_size_mib": 1}})
    big = ExportTraceServiceRequest()
    big.resource_spans.add().scope_spans.add().spans.add(name="x" * (1 << 20))
    with grpc.insecure_channel(receiver.grpc_target) as channel:
        export = channel.unary_unary(TRACE_SERVICE)
        with pytest.raises(grpc.RpcError) as raised:
            export(big.SerializeToString(), timeout=5)
        assert raised.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert export(traces_request().SerializeToString(), timeout=5) == b"\x0a\x00"
    assert receiver.count("accepted", "spans", "grpc") == 2


def test_grpc_settings_past_a_c_int_are_served(start: Start) -> None:
    # Go takes these (an int, a uint32, durations); grpcio's channel
    # arguments are C ints, which they overflow.
    receiver = start(
        {
            "grpc": {
                "endpoint": "127.0.0.1:0",
                "max_recv_msg_size_mib": 4096,
                "max_concurrent_streams": 4294967295,
                "keepalive": {
                    "server_parameters": {"max_connection_age": "720h", "time": "720h"},
                    "enforcement_policy": {"min_time": "720h"},
                },
            }
        }
    )
    with grpc.insecure_channel(receiver.grpc_target) as channel:
        export = channel.unary_unary(TRACE_SERVICE)
        assert export(traces_request().SerializeToString(), timeout=5) == b"\x0a\x00"
    assert receiver.count("accepted", "spans", "grpc") == 2


@pytest.mark.parametrize(
    ("endpoint", "warned"),
    [
        ("0.0.0.0:0", True),
        ("[::]:0", True),
        (":0", True),
        ("127.0.0.1:0", False),
        ("localhost:0", False),
    ],
)
def test_grpc_on_every_interface_is_warned_about(
    start: Start, caplog: pytest.LogCaptureFixture, endpoint: str, warned: bool
) -> None:
    """configgrpc's ToServer logs upstream's warning for an unspecified host
    (configgrpc_test TestGRPCServerWarning; not for a unix socket)."""
    start({"grpc": {"endpoint": endpoint}})
    warnings = [
        (record.getMessage(), getattr(record, "fields", None))
        for record in caplog.records
        if record.levelno == logging.WARNING
    ]
    expected = (
        "Using the 0.0.0.0 address exposes this server to every network interface, "
        "which may facilitate Denial of Service attacks.",
        {
            "documentation": "https://github.com/open-telemetry/opentelemetry-collector/blob/"
            "main/docs/security-best-practices.md#safeguards-against-denial-of-service-attacks"
        },
    )
    assert warnings == ([expected] if warned else [])


def test_grpc_start_is_logged_with_its_endpoint(
    start: Start, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    """Upstream logs 'Starting GRPC server' with an endpoint field, after
    its warning, just before it listens."""
    caplog.set_level(logging.INFO)
    start({"grpc": {"endpoint": "0.0.0.0:0"}})
    path = str(tmp_path / "otlp.sock")
    start({"grpc": {"endpoint": path, "transport": "unix"}})
    logged = [
        (record.levelname, record.getMessage(), getattr(record, "fields", None))
        for record in caplog.records
        if record.name.startswith("sluice.collector")
    ]
    assert [(level, fields) for level, message, fields in logged if "GRPC" in message] == [
        ("INFO", {"endpoint": "0.0.0.0:0"}),
        ("INFO", {"endpoint": path}),
    ]
    assert [message for _, message, _ in logged][:2] == [
        "Using the 0.0.0.0 address exposes this server to every network interface, "
        "which may facilitate Denial of Service attacks.",
        "Starting GRPC server",
    ]


def test_http_start_is_logged_with_its_endpoint_after_the_warning(
    start: Start, caplog: pytest.LogCaptureFixture
) -> None:
    """confighttp's ToServer logs the unspecified-host warning, then the
    receiver logs 'Starting HTTP server' with an endpoint field (otlpreceiver
    otlp.go startHTTPServer)."""
    caplog.set_level(logging.INFO)
    start({"http": {"endpoint": "0.0.0.0:0"}})
    start({"http": {"endpoint": "127.0.0.1:0"}})
    logged = [
        (record.levelname, record.getMessage(), getattr(record, "fields", None))
        for record in caplog.records
        if record.name.startswith("sluice.collector")
    ]
    assert [entry for entry in logged if "HTTP" in entry[1]] == [
        ("INFO", "Starting HTTP server", {"endpoint": "0.0.0.0:0"}),
        ("INFO", "Starting HTTP server", {"endpoint": "127.0.0.1:0"}),
    ]
    assert [message for _, message, _ in logged][:2] == [
        "Using the 0.0.0.0 address exposes this server to every network interface, "
        "which may facilitate Denial of Service attacks.",
        "Starting HTTP server",
    ]
    assert [m for _, m, _ in logged].count(logged[0][1]) == 1


@pytest.mark.parametrize(
    ("endpoint", "warned"),
    [
        # config/internal warning_test.go TestShouldWarn
        ("0.0.0.0:0", True),
        (":0", True),
        (":+0", True),
        (":-0", True),
        (":", True),
        ("127.0.0.1:0", False),
        ("localhost:0", False),
        ("localhost::0", False),
        # net.ParseIP's unspecified addresses; a zone or a port name is not read
        ("[::]:4317", True),
        ("[0:0::0]:4317", True),
        ("[::ffff:0.0.0.0]:4317", True),
        ("[::%eth0]:4317", False),
        (":otlp", False),
        ("", False),
    ],
)
def test_unspecified_hosts_are_judged_as_upstream_judges_them(endpoint: str, warned: bool) -> None:
    assert exposes_every_interface(endpoint) is warned


def test_grpc_metadata_up_to_grpc_gos_header_limit_is_taken(start: Start) -> None:
    """grpc-go's server takes a call's headers up to 16 MiB (its default
    MaxHeaderListSize, which configgrpc leaves alone): large credentials or
    many keys pass. gRPC core refused more than 8 KiB (some calls) or
    16 KiB (every call) with RESOURCE_EXHAUSTED."""
    receiver = start({"grpc": {"endpoint": "127.0.0.1:0", "include_metadata": True}})
    unlimited = [("grpc.max_metadata_size", 1 << 25), ("grpc.absolute_max_metadata_size", 1 << 25)]
    with grpc.insecure_channel(receiver.grpc_target, options=unlimited) as channel:
        export = channel.unary_unary(TRACE_SERVICE)
        for size in (12 << 10, 1 << 20, 15 << 20):
            token = "t" * size
            for _ in range(3):
                metadata = [("x-token", token)]
                answer = export(
                    traces_request(1).SerializeToString(), metadata=metadata, timeout=10
                )
                assert answer == b"\x0a\x00"
        with pytest.raises(grpc.RpcError):
            export(traces_request(1).SerializeToString(), metadata=[("x-token", "t" * (17 << 20))])
    assert receiver.count("accepted", "spans", "grpc") == 9


def test_http_only_does_not_listen_on_grpc(start: Start) -> None:
    receiver = start({"http": {"endpoint": "127.0.0.1:0"}})
    assert receiver.receiver.grpc_port == 0 and receiver.receiver.http_port > 0


def test_a_port_in_use_fails_start_and_closes_the_other_protocol() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        problems = Problems()
        raw = {
            "protocols": {
                "grpc": {"endpoint": "127.0.0.1:0"},
                "http": {"endpoint": f"127.0.0.1:{port}"},
            }
        }
        config = decode(OtlpReceiverConfig, raw, "receivers::otlp", problems)
        # Go's net.Listen words, as upstream's receiver returns them.
        busy = f"^listen tcp 127.0.0.1:{port}: bind: address already in use$"
        with pytest.raises(OSError, match=busy):
            Running(config, frozenset(Signal), Host())


def test_a_grpc_port_in_use_is_named_in_gos_words() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        raw = {"protocols": {"grpc": {"endpoint": f"127.0.0.1:{port}"}}}
        config = decode(OtlpReceiverConfig, raw, "receivers::otlp", Problems())
        busy = f"^listen tcp 127.0.0.1:{port}: bind: address already in use$"
        with pytest.raises(OSError, match=busy):
            Running(config, frozenset(Signal), Host())


def test_a_grpc_port_another_receiver_serves_is_in_use() -> None:
    """grpcio shares ports (SO_REUSEPORT) unless told not to; Go does not,
    so a second collector on the same port fails to start, as upstream's."""
    first = Running(
        decode(
            OtlpReceiverConfig,
            {"protocols": {"grpc": {"endpoint": "127.0.0.1:0"}}},
            "r",
            Problems(),
        ),
        frozenset(Signal),
        Host(),
    )
    try:
        port = first.receiver.grpc_port
        raw = {"protocols": {"grpc": {"endpoint": f"127.0.0.1:{port}"}}}
        config = decode(OtlpReceiverConfig, raw, "receivers::otlp", Problems())
        busy = f"^listen tcp 127.0.0.1:{port}: bind: address already in use$"
        with pytest.raises(OSError, match=busy):
            Running(config, frozenset(Signal), Host())
    finally:
        first.stop()


def test_a_unix_socket_path_that_exists_is_in_use(tmp_path: Path) -> None:
    """As Go's net.Listen("unix", path), which upstream's receiver uses: a
    path already there (a running collector's socket, or one left behind)
    is in use; gRPC core would unlink it and take the path over. The
    socket is removed when the receiver stops."""
    path = str(tmp_path / "otlp.sock")
    raw = {"protocols": {"grpc": {"endpoint": path, "transport": "unix"}}}
    config = decode(OtlpReceiverConfig, raw, "receivers::otlp", Problems())
    busy = f"^listen unix {path}: bind: address already in use$"
    first = Running(config, frozenset(Signal), Host())
    try:
        with pytest.raises(OSError, match=busy):
            Running(config, frozenset(Signal), Host())
        with grpc.insecure_channel(f"unix:{path}") as channel:
            export = channel.unary_unary(TRACE_SERVICE)
            assert export(traces_request().SerializeToString(), timeout=5) == b"\x0a\x00"
        assert len(first.received(Signal.TRACE)) == 1
    finally:
        first.stop()
    assert not Path(path).exists()
    left_behind = socket.socket(socket.AF_UNIX)
    left_behind.bind(path)
    left_behind.close()
    with pytest.raises(OSError, match=busy):
        Running(config, frozenset(Signal), Host())
    assert Path(path).exists()


# -- auth ------------------------------------------------------------------------------------


class TokenAuth(Component):
    """A server authenticator extension accepting one bearer token."""

    async def authenticate(self, headers: Mapping[str, str]) -> None:
        if headers.get("authorization") != "Bearer s3cret":
            raise AuthenticationError("missing or wrong bearer token")


def test_authenticator(start: Start) -> None:
    host = Host()
    host.extensions[ComponentID("bearertokenauth")] = TokenAuth()
    auth = {"authenticator": "bearertokenauth"}
    receiver = start(
        {
            "http": {"endpoint": "127.0.0.1:0", "auth": auth},
            "grpc": {"endpoint": "127.0.0.1:0", "auth": auth},
        },
        host=host,
    )
    body = traces_request().SerializeToString()
    # v0.115's confighttp authInterceptor: Go's http.Error with the status
    # text, whatever the request's format (the reason stays in the log).
    for content_type in ("application/x-protobuf", "application/json", None, "text/plain"):
        status, headers, answer = post(f"{receiver.http}/v1/traces", body, content_type)
        assert (status, answer) == (401, b"Unauthorized\n")
        assert headers["content-type"] == "text/plain; charset=utf-8"
        assert headers["x-content-type-options"] == "nosniff"
    assert (
        post(f"{receiver.http}/v1/traces", body, headers={"Authorization": "Bearer s3cret"})[0]
        == 200
    )
    with grpc.insecure_channel(receiver.grpc_target) as channel:
        export = channel.unary_unary(TRACE_SERVICE)
        with pytest.raises(grpc.RpcError) as raised:
            export(body, timeout=5)
        assert raised.value.code() == grpc.StatusCode.UNAUTHENTICATED
        export(body, timeout=5, metadata=[("authorization", "Bearer s3cret")])
    assert len(receiver.received(Signal.TRACE)) == 2


def test_the_authenticator_sees_the_first_value_of_each_key(start: Start) -> None:
    # Upstream's authenticators read the first value of a header or metadata
    # key (bearertokenauth's auth[0], basicauth's authHeaders[0]).
    host = Host()
    host.extensions[ComponentID("bearertokenauth")] = TokenAuth()
    auth = {"authenticator": "bearertokenauth"}
    receiver = start({"grpc": {"endpoint": "127.0.0.1:0", "auth": auth}}, host=host)
    body = traces_request().SerializeToString()
    with grpc.insecure_channel(receiver.grpc_target) as channel:
        export = channel.unary_unary(TRACE_SERVICE)
        export(
            body, timeout=5, metadata=[("authorization", "Bearer s3cret"), ("authorization", "x")]
        )
        with pytest.raises(grpc.RpcError) as raised:
            export(
                body,
                timeout=5,
                metadata=[("authorization", "x"), ("authorization", "Bearer s3cret")],
            )
        assert raised.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert len(receiver.received(Signal.TRACE)) == 1


def test_grpc_request_is_decoded_before_it_is_authenticated(start: Start) -> None:
    # grpc-go's generated handler decodes the request before the server's
    # interceptors (upstream's authenticator among them) run.
    host = Host()
    host.extensions[ComponentID("bearertokenauth")] = TokenAuth()
    auth = {"authenticator": "bearertokenauth"}
    receiver = start({"grpc": {"endpoint": "127.0.0.1:0", "auth": auth}}, host=host)
    with grpc.insecure_channel(receiver.grpc_target) as channel:
        export = channel.unary_unary(TRACE_SERVICE)
        with pytest.raises(grpc.RpcError) as raised:
            export(b"\xff\xff\xff", timeout=5)
        assert raised.value.code() == grpc.StatusCode.INTERNAL
        assert (raised.value.details() or "").startswith("grpc: error unmarshalling request: ")
        with pytest.raises(grpc.RpcError) as raised:
            export(traces_request().SerializeToString(), timeout=5)
        assert raised.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert receiver.received(Signal.TRACE) == []


def test_missing_authenticator_fails_start(start: Start) -> None:
    with pytest.raises(
        ValueError, match='failed to resolve authenticator "basicauth": authenticator not found'
    ):
        start({"http": {"endpoint": "127.0.0.1:0", "auth": {"authenticator": "basicauth"}}})


# -- TLS -------------------------------------------------------------------------------------


def self_signed(directory: Path, name: str) -> tuple[Path, Path]:
    """A certificate for localhost and 127.0.0.1, and its key, in `directory`/`name`."""
    folder = directory / name
    folder.mkdir()
    return providers_self_signed(folder)


def test_tls_on_both_protocols(start: Start, tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path, "server")
    tls = {"cert_file": str(cert), "key_file": str(key)}
    receiver = start(
        {
            "http": {"endpoint": "127.0.0.1:0", "tls": tls},
            "grpc": {"endpoint": "127.0.0.1:0", "tls": tls},
        }
    )
    context = TLSClientConfig(ca_file=str(cert)).ssl_context()
    url = f"https://127.0.0.1:{receiver.receiver.http_port}/v1/traces"
    assert post(url, traces_request().SerializeToString(), context=context)[0] == 200
    with pytest.raises(ssl.SSLError):
        post(url, b"", context=ssl.create_default_context())  # not trusted

    credentials = grpc.ssl_channel_credentials(cert.read_bytes())
    spans = GrpcSpanExporter(receiver.grpc_target, credentials=credentials, timeout=5)
    try:
        assert spans.export(sdk_spans()) == SpanExportResult.SUCCESS
    finally:
        spans.shutdown()
    assert receiver.count("accepted", "spans", "http") == 2
    assert receiver.count("accepted", "spans", "grpc") == 3


def test_client_certificates_required_with_client_ca(start: Start, tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path, "server")
    client_cert, client_key = self_signed(tmp_path, "client")
    tls = {"cert_file": str(cert), "key_file": str(key), "client_ca_file": str(client_cert)}
    receiver = start({"http": {"endpoint": "127.0.0.1:0", "tls": tls}})
    url = f"https://127.0.0.1:{receiver.receiver.http_port}/v1/traces"
    context = ssl.create_default_context(cafile=str(cert))
    context.load_cert_chain(client_cert, client_key)
    assert post(url, traces_request().SerializeToString(), context=context)[0] == 200
    without = ssl.create_default_context(cafile=str(cert))
    with pytest.raises((ssl.SSLError, ConnectionError)):
        post(url, traces_request().SerializeToString(), context=without)


def test_missing_certificate_fails_start(start: Start, tmp_path: Path) -> None:
    tls = {"cert_file": str(tmp_path / "none.crt"), "key_file": str(tmp_path / "none.key")}
    with pytest.raises(ValueError, match="failed to load TLS cert and key"):
        start({"http": {"endpoint": "127.0.0.1:0", "tls": tls}})


def test_tls_settings_are_validated() -> None:
    problems = Problems()
    raw = {"min_version": "1.3", "max_version": "1.2", "cipher_suites": ["TLS_FAST"]}
    tls = decode(TLSServerConfig, raw, "tls", problems)
    assert list(tls.validate()) == [
        ("", "invalid TLS configuration: min_version cannot be greater than max_version"),
        ("cipher_suites", 'invalid TLS cipher suite: "TLS_FAST"'),
        ("", "a server needs a certificate: set cert_file and key_file"),
    ]
    assert TLSClientConfig(insecure=True).ssl_context() is None


def replace_certificate(cert: Path, key: Path, name: str) -> Path:
    """Write a new certificate over `cert` and `key`; returns a copy of it."""
    new_cert, new_key = self_signed(cert.parent, name)
    cert.write_bytes(new_cert.read_bytes())
    key.write_bytes(new_key.read_bytes())
    return new_cert


def test_certificate_reload(start: Start, tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path, "server")
    first = tmp_path / "first.crt"
    first.write_bytes(cert.read_bytes())
    tls = {"cert_file": str(cert), "key_file": str(key), "reload_interval": "50ms"}
    receiver = start(
        {
            "http": {"endpoint": "127.0.0.1:0", "tls": tls},
            "grpc": {"endpoint": "127.0.0.1:0", "tls": tls},
        }
    )
    url = f"https://127.0.0.1:{receiver.receiver.http_port}/v1/traces"
    body = traces_request().SerializeToString()

    def trusting(certificate: Path) -> ssl.SSLContext:
        context = TLSClientConfig(ca_file=str(certificate)).ssl_context()
        assert context is not None
        return context

    def grpc_export(certificate: Path) -> bytes:
        credentials = grpc.ssl_channel_credentials(certificate.read_bytes())
        with grpc.secure_channel(receiver.grpc_target, credentials) as channel:
            answer: bytes = channel.unary_unary(TRACE_SERVICE)(body, timeout=5)
            return answer

    assert post(url, body, context=trusting(first))[0] == 200
    assert grpc_export(first) == b"\x0a\x00"
    second = replace_certificate(cert, key, "renewed")
    deadline = time.monotonic() + 3
    while True:
        try:
            assert post(url, body, context=trusting(second))[0] == 200
            assert grpc_export(second) == b"\x0a\x00"
            break
        except (ssl.SSLError, grpc.RpcError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    with pytest.raises(ssl.SSLError):
        post(url, body, context=trusting(first))
