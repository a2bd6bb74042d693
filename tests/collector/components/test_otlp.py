"""The otlp (gRPC) exporter against a real gRPC server."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import platform
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path

import grpc
import pytest
import uvloop
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)

from sluice.collector.component import (
    BuildInfo,
    Component,
    ComponentID,
    ConsumerError,
    Exporter,
    Host,
    Settings,
)
from sluice.collector.components.exporters.otlp import FACTORY
from sluice.collector.components.exporters.otlp.config import KeepaliveSettings, OtlpGrpcConfig
from sluice.collector.components.exporters.otlp.exporter import classify, dial_failure
from sluice.collector.configauth import AuthConfig
from sluice.collector.configtls import TLSClientConfig
from sluice.collector.confmap.decode import Duration, Problems, decode
from sluice.collector.exporterhelper import QueueSettings, RetrySettings
from sluice.collector.rpc_status import RETRY_INFO_TYPE, StatusMessage, encode_status
from sluice.policy import Signal
from tests.collector.components.batches import (
    TESTDATA,
    batch,
    counter,
    load_config,
    logs,
    own_fields,
    partial_successes,
    settings,
)
from tests.collector.components.grpc_sink import Answer, GrpcSink, answers
from tests.collector.helpers import free_port, run_cli

FAST_RETRY = RetrySettings(
    initial_interval=Duration(0.01), max_interval=Duration(0.02), max_elapsed_time=Duration(2.0)
)
INSECURE = TLSClientConfig(insecure=True)
WAITED = QueueSettings(wait_for_result=True)
"""A queue whose ``consume`` returns once the batch is delivered, retries
included: retries stop when the exporter shuts down, as upstream's."""
SENT = "otelcol_exporter_sent_log_records_total"
FAILED = "otelcol_exporter_send_failed_log_records_total"


@pytest.fixture
def sink() -> Iterator[GrpcSink]:
    with GrpcSink() as server:
        yield server


def config(sink: GrpcSink, **changes: object) -> OtlpGrpcConfig:
    base = OtlpGrpcConfig(endpoint=sink.endpoint, tls=INSECURE, retry_on_failure=FAST_RETRY)
    return replace(base, **changes)


def run(
    config: OtlpGrpcConfig,
    body: Callable[[Exporter], Awaitable[None]],
    loop_factory: Callable[[], asyncio.AbstractEventLoop] | None = None,
    host: Host | None = None,
) -> Settings:
    used = settings("otlp")

    async def main() -> None:
        exporter = FACTORY.create(used, config, frozenset(Signal))
        await exporter.start(host or Host())
        try:
            await body(exporter)
        finally:
            await exporter.shutdown()

    with asyncio.Runner(loop_factory=loop_factory) as runner:
        runner.run(main())
    return used


def consume_logs(items: int = 2) -> Callable[[Exporter], Awaitable[None]]:
    async def body(exporter: Exporter) -> None:
        await exporter.consumer(Signal.LOG).consume(logs(items))

    return body


# -- config -----------------------------------------------------------------------


def test_minimal_config_takes_upstreams_defaults() -> None:
    config, problems = load_config(
        OtlpGrpcConfig, TESTDATA / "otlpexporter/config_minimal.yaml", "otlp"
    )
    assert problems == []
    # v0.115's exporter: no keepalive, gRPC's default balancer (pick_first).
    assert (config.compression, config.timeout, config.balancer_name) == ("gzip", 5.0, "")
    assert config.keepalive is None
    assert config.uses_tls  # insecure is false by default
    assert config.sending_queue == QueueSettings()
    assert config.retry_on_failure == RetrySettings()


def test_an_empty_keepalive_section_pings_with_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "otlp.yaml"
    path.write_text("exporters:\n  otlp:\n    endpoint: localhost:4317\n    keepalive: {}\n")
    config, problems = load_config(OtlpGrpcConfig, path, "otlp")
    assert problems == []
    assert config.keepalive is not None
    assert (config.keepalive.time, config.keepalive.timeout) == (10.0, 10.0)


def test_null_keepalive_and_auth_sections_stay_unset(tmp_path: Path) -> None:
    # configgrpc's ClientConfig holds keepalive and auth as pointers, nil in
    # v0.115's exporter defaults; mapstructure leaves a field as it is for a
    # null: no pings, no authenticator (a present auth needs an id)
    path = tmp_path / "otlp.yaml"
    path.write_text(
        "exporters:\n  otlp:\n    endpoint: localhost:4317\n    keepalive:\n    auth:\n"
    )
    config, problems = load_config(OtlpGrpcConfig, path, "otlp")
    assert problems == []
    assert (config.keepalive, config.auth) == (None, None)


def test_a_negative_timeout_is_invalid(tmp_path: Path) -> None:
    # otlpexporter's invalid_configs.yaml invalid_timeout (exporterhelper's TimeoutConfig).
    path = tmp_path / "otlp.yaml"
    path.write_text("exporters:\n  otlp:\n    endpoint: example.com:443\n    timeout: -5s\n")
    _, problems = load_config(OtlpGrpcConfig, path, "otlp")
    assert problems == ["'timeout' must be non-negative"]


@pytest.mark.parametrize(
    ("batcher", "problem"),
    [
        ("{min_size_items: -1}", "min_size_items must be greater than or equal to zero"),
        (
            "{flush_timeout: 0s, max_size_items: -1}",
            "max_size_items must be greater than or equal to zero",
        ),
        (
            "{max_size_items: 20000, min_size_items: 20001}",
            "max_size_items must be greater than or equal to min_size_items",
        ),
        ("{flush_timeout: 0s}", "timeout must be greater than zero"),
    ],
)
def test_batcher_values_are_checked_even_when_off(
    tmp_path: Path, batcher: str, problem: str
) -> None:
    # exporterbatcher's TestConfig_Validate; upstream validates the section enabled or not.
    path = tmp_path / "otlp.yaml"
    path.write_text(f"exporters:\n  otlp:\n    endpoint: example.com:443\n    batcher: {batcher}\n")
    _, problems = load_config(OtlpGrpcConfig, path, "otlp")
    assert problems == [f"batcher: {problem}"]


def test_tls_versions_grpcio_uses_are_accepted() -> None:
    tls = TLSClientConfig(ca_file="/etc/ssl/ca.pem", min_version="1.2", max_version="1.3")
    assert list(OtlpGrpcConfig(endpoint="example.com:443", tls=tls).validate()) == []
    other = replace(tls, min_version="1.3")
    assert list(OtlpGrpcConfig(endpoint="example.com:443", tls=other).validate()) == [
        (
            "tls",
            "min_version and max_version are not supported by Sluice's gRPC exporter "
            "beyond what grpcio does (min_version 1.2, max_version 1.3)",
        )
    ]


def test_full_config_decodes_every_key() -> None:
    config, problems = load_config(
        OtlpGrpcConfig, TESTDATA / "otlpexporter/config_full.yaml", "otlp/full"
    )
    assert problems == []
    assert config.target == "otelcol.example.com:4317"
    assert config.headers == {"x-tenant": "a"}
    assert config.keepalive is not None and config.keepalive.permit_without_stream
    assert config.tls.cert_file == "/etc/ssl/client.pem"
    assert config.sending_queue.num_consumers == 4
    assert config.retry_on_failure.max_elapsed_time == 60.0


def test_any_header_name_loads_as_upstream() -> None:
    # Upstream's own testdata/config.yaml sets "can you have a . here?".
    config, problems = load_config(
        OtlpGrpcConfig, TESTDATA / "otlpexporter/config_any_header_name.yaml", "otlp"
    )
    assert problems == []
    assert config.headers["can you have a . here?"] == "F0000000-0000-0000-0000-000000000000"


def test_insecure_with_an_http_prefix_is_plaintext() -> None:
    config, problems = load_config(
        OtlpGrpcConfig, TESTDATA / "otlpexporter/config_insecure.yaml", "otlp"
    )
    assert problems == []
    assert config.target == "localhost:4317" and not config.uses_tls
    assert replace(config, endpoint="https://localhost:4317").uses_tls


@pytest.mark.parametrize(
    ("endpoint", "target"),
    [
        ("dns://authority/backend.example.com:4317", "dns://authority/backend.example.com:4317"),
        ("dns:///backend.example.com:4317", "dns:///backend.example.com:4317"),
        ("http://backend.example.com:4317", "backend.example.com:4317"),
        ("https://backend.example.com:4317", "backend.example.com:4317"),
    ],
)
def test_a_dns_endpoint_is_dialled_as_written(endpoint: str, target: str) -> None:
    # otlpexporter's TestValidDNSEndpoint: valid; configgrpc strips only
    # http(s):// before dialling, so gRPC's DNS resolver gets the authority.
    config = OtlpGrpcConfig(endpoint=endpoint)
    assert list(config.validate()) == []
    assert config.target == target


@pytest.mark.parametrize(
    ("endpoint", "problem"),
    [
        ("[::1]", "address [::1]: missing port in address"),
        ("[::1]4317", "address [::1]4317: missing port in address"),
        ("[::1:4317", "address [::1:4317: missing ']' in address"),
        ("a]b:4317", "address a]b:4317: unexpected ']' in address"),
        ("localhost:99999999999999999999", 'invalid port "99999999999999999999"'),
        ("localhost:\uff14\uff13", 'invalid port "\uff14\uff13"'),
        ("localhost:", 'invalid port ""'),
        ("localhost:+4317", None),
        ("[::1]:4317", None),
        (":4317", None),
    ],
)
def test_the_endpoint_is_checked_as_gos_split_host_port_and_atoi(
    endpoint: str, problem: str | None
) -> None:
    """otlpexporter's Validate: net.SplitHostPort's error as it is, then
    strconv.Atoi on the port (a sign is taken, as Atoi takes it)."""
    problems = [message for _, message in OtlpGrpcConfig(endpoint=endpoint).validate()]
    assert problems == ([problem] if problem else [])


def test_an_endpoint_is_required() -> None:
    _, problems = load_config(
        OtlpGrpcConfig, TESTDATA / "otlpexporter/config_no_endpoint.yaml", "otlp"
    )
    assert problems == ['requires a non-empty "endpoint"']


def test_a_compression_that_is_not_text_names_configcompression_type() -> None:
    """``compression`` is a configcompression.Type (a string type read by
    UnmarshalText): mapstructure names that type."""
    problems = Problems()
    decode(OtlpGrpcConfig, {"compression": 1, "endpoint": "localhost:4317"}, "", problems)
    assert problems.lines == [
        "compression: 'compression' expected type 'configcompression.Type', got "
        "unconvertible type 'int', value: '1'"
    ]


def test_invalid_values_are_each_named() -> None:
    _, problems = load_config(OtlpGrpcConfig, TESTDATA / "otlpexporter/config_invalid.yaml", "otlp")
    assert problems == [
        "endpoint: address localhost: missing port in address",
        'compression: unsupported compression type "bad"',
        "balancer_name: invalid balancer_name: least_request",
        "tls::insecure_skip_verify: not supported by Sluice's gRPC exporter (grpcio always "
        "verifies the server); give the server's CA in ca_file",
        "batcher::enabled: not supported by Sluice; use the batch processor",
        "sending_queue: number of queue consumers must be positive",
    ]


@pytest.mark.parametrize("compression", ["zlib", "deflate", "lz4"])
def test_a_compression_grpc_does_not_register_fails_the_start(
    tmp_path: Path, compression: str
) -> None:
    """configcompression takes every name it knows when the config loads;
    configgrpc's ToClientConn knows gzip, snappy and zstd only, so the
    others fail the exporter's start (configgrpc_test TestGRPCClientSettingsError)."""
    path = tmp_path / "collector.yaml"
    path.write_text(
        "receivers:\n  otlp:\n    protocols:\n      http:\n"
        f"        endpoint: 127.0.0.1:{free_port()}\n"
        "exporters:\n  otlp:\n    endpoint: 127.0.0.1:4317\n"
        f"    compression: {compression}\n    tls:\n      insecure: true\n"
        "service:\n  telemetry:\n    metrics:\n      level: none\n"
        "  pipelines:\n    logs:\n      receivers: [otlp]\n      exporters: [otlp]\n"
    )
    valid = run_cli("validate", "--config", str(path))
    assert (valid.returncode, valid.stdout) == (0, "config is valid\n"), valid.stderr
    started = run_cli("--config", str(path))
    assert started.returncode == 1, started.stderr
    refused = f'unsupported compression type \\"{compression}\\"'  # as logfmt quotes it
    assert f"cannot start pipelines: {refused}" in started.stderr
    assert "Failed to start component" in started.stderr


# -- sending -----------------------------------------------------------------------


@pytest.mark.parametrize("compression", ["gzip", "none"])
def test_every_signal_is_sent_to_its_service(sink: GrpcSink, compression: str) -> None:
    async def body(exporter: Exporter) -> None:
        for signal in Signal:
            await exporter.consumer(signal).consume(batch(signal))

    used = run(config(sink, compression=compression, headers={"X-Tenant": "a"}), body)
    calls = sink.wait_for(3)
    assert sorted(call.signal for call in calls) == ["logs", "metrics", "traces"]
    by_signal = {call.signal: call for call in calls}
    assert by_signal["logs"].body == batch(Signal.LOG).SerializeToString()
    metrics = ExportMetricsServiceRequest.FromString(by_signal["metrics"].body)
    assert metrics == batch(Signal.METRIC)
    assert by_signal["traces"].metadata["x-tenant"] == "a"
    assert by_signal["traces"].metadata["user-agent"].startswith("Sluice Collector/")
    assert counter(used, SENT, exporter="otlp") == 3
    assert counter(used, "otelcol_exporter_sent_spans_total", exporter="otlp") == 3


def test_the_user_agent_names_the_running_distribution(sink: GrpcSink) -> None:
    """otlp.go: "<BuildInfo.Description>/<BuildInfo.Version> (<GOOS>/<GOARCH>)"
    (otlp_test: a Description "Collector" and Version "1.2.3test" send
    "Collector/1.2.3test"); grpc appends its own name after it."""
    host = Host(BuildInfo(command="otelcol", description="Collector", version="1.2.3test"))
    run(config(sink), consume_logs(1), host=host)
    (call,) = sink.wait_for(1)
    system = platform.system().lower()
    arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
    assert call.metadata["user-agent"].startswith(f"Collector/1.2.3test ({system}/{arch}) ")


@pytest.mark.parametrize("compression", ["zstd", "snappy"])
def test_zstd_and_snappy_are_sent_as_gzip_with_a_warning(
    sink: GrpcSink, compression: str, caplog: pytest.LogCaptureFixture
) -> None:
    # grpcio's server, like its client, has no zstd or snappy: what arrives was gzip.
    used = run(config(sink, compression=compression), consume_logs(1))
    [call] = sink.wait_for(1)
    assert call.body == logs(1).SerializeToString()
    assert counter(used, SENT, exporter="otlp") == 1
    assert f"compression {compression} is not available" in caplog.text
    assert "sending gzip" in caplog.text


def test_a_keepalive_past_a_c_int_is_served(sink: GrpcSink) -> None:
    # Go takes 720h; in milliseconds it overflows grpcio's C int arguments.
    long = KeepaliveSettings(time=Duration(720 * 3600), timeout=Duration(720 * 3600))
    used = run(config(sink, keepalive=long), consume_logs(2))
    assert len(sink.wait_for(1)) == 1
    assert counter(used, SENT, exporter="otlp") == 2


def test_a_dns_target_is_resolved_by_grpc(sink: GrpcSink) -> None:
    used = run(config(sink, endpoint=f"dns:///{sink.endpoint}"), consume_logs(2))
    assert len(sink.wait_for(1)) == 1
    assert counter(used, SENT, exporter="otlp") == 2


def test_unavailable_then_ok_is_delivered(sink: GrpcSink) -> None:
    sink.respond = answers(Answer(grpc.StatusCode.UNAVAILABLE, "busy"), Answer())
    used = run(config(sink, sending_queue=WAITED), consume_logs(2))
    calls = sink.wait_for(2)
    assert len(calls) == 2 and calls[0].body == calls[1].body
    assert counter(used, SENT, exporter="otlp") == 2
    assert counter(used, FAILED, exporter="otlp") == 0


def test_retry_info_sets_the_least_wait(sink: GrpcSink) -> None:
    sink.respond = answers(
        Answer(grpc.StatusCode.RESOURCE_EXHAUSTED, "slow down", retry_delay=0.4), Answer()
    )
    used = run(config(sink, sending_queue=WAITED), consume_logs())
    first, second = sink.wait_for(2)
    assert 0.38 <= second.received_at - first.received_at < 1.0
    assert counter(used, SENT, exporter="otlp") == 2


def test_resource_exhausted_with_a_retry_info_of_no_delay_is_retried(sink: GrpcSink) -> None:
    # Upstream retries RESOURCE_EXHAUSTED whenever a RetryInfo is attached,
    # with its own backoff when the RetryInfo names no delay.
    status = StatusMessage(code=8, message="quota")
    status.details.add(type_url=RETRY_INFO_TYPE, value=b"")
    sink.respond = answers(
        Answer(
            grpc.StatusCode.RESOURCE_EXHAUSTED, "quota", status_details=status.SerializeToString()
        ),
        Answer(),
    )
    used = run(config(sink, sending_queue=WAITED), consume_logs())
    calls = sink.wait_for(2)
    assert len(calls) == 2 and calls[0].body == calls[1].body
    assert counter(used, SENT, exporter="otlp") == 2
    assert counter(used, FAILED, exporter="otlp") == 0


def test_resource_exhausted_without_retry_info_is_permanent(
    sink: GrpcSink, caplog: pytest.LogCaptureFixture
) -> None:
    sink.respond = Answer(grpc.StatusCode.RESOURCE_EXHAUSTED, "quota")
    with caplog.at_level(logging.ERROR):
        used = run(config(sink), consume_logs(3))
    assert len(sink.wait_for(1)) == 1
    assert counter(used, FAILED, exporter="otlp") == 3
    ((_, fields),) = export_failures(caplog)
    assert fields["error"] == (
        "not retryable error: Permanent error: rpc error: code = ResourceExhausted desc = quota"
    )


def test_status_codes_are_named_as_grpc_go_names_them() -> None:
    """grpc-go spells CANCELLED ``Canceled``: capitalising the name's parts
    gave ``Cancelled``."""
    assert str(classify("CANCELLED", "gone", None)) == "rpc error: code = Canceled desc = gone"
    assert str(classify("DEADLINE_EXCEEDED", "slow", None)).startswith(
        "rpc error: code = DeadlineExceeded desc"
    )


def test_a_retry_info_delay_reads_as_upstreams_throttle_error() -> None:
    """Upstream wraps a retryable status carrying a RetryInfo delay in
    exporterhelper's throttle error; without a delay, or on a permanent
    status, the status is the error alone."""
    trailers = [("grpc-status-details-bin", encode_status(8, "quota", retry_delay=1.5))]
    assert str(classify("RESOURCE_EXHAUSTED", "quota", trailers)) == (
        "Throttle (1.5s), error: rpc error: code = ResourceExhausted desc = quota"
    )
    trailers = [("grpc-status-details-bin", encode_status(14, "busy", retry_delay=0.25))]
    assert str(classify("UNAVAILABLE", "busy", trailers)) == (
        "Throttle (250ms), error: rpc error: code = Unavailable desc = busy"
    )
    trailers = [("grpc-status-details-bin", encode_status(8, "quota", retry_delay=0))]
    assert str(classify("RESOURCE_EXHAUSTED", "quota", trailers)) == (
        "rpc error: code = ResourceExhausted desc = quota"
    )
    trailers = [("grpc-status-details-bin", encode_status(3, "bad", retry_delay=2))]
    assert str(classify("INVALID_ARGUMENT", "bad", trailers)) == (
        "rpc error: code = InvalidArgument desc = bad"
    )


@pytest.mark.parametrize(
    ("headers", "why"),
    [
        (
            {"can you have a . here?": "x"},
            'header key "can you have a . here?" contains illegal characters not in [0-9a-z-_.]',
        ),
        (
            {"X-Team": "équipe"},
            'header key "x-team" contains value with non-printable ASCII characters',
        ),
        ({"x-evil": "a\r\nb"}, 'header key "x-evil" contains value with non-printable ASCII'),
        ({"": "x"}, "there is an empty key in the header"),
    ],
    ids=["name", "non-ascii-value", "control-value", "empty-name"],
)
def test_metadata_grpc_go_refuses_fails_every_export(
    sink: GrpcSink, headers: dict[str, str], why: str
) -> None:
    """Upstream loads the config; grpc-go then refuses each call before
    sending (Internal, so permanent)."""

    async def body(exporter: Exporter) -> None:
        with pytest.raises(ConsumerError) as rejected:
            await exporter.consumer(Signal.LOG).consume(logs(1))
        assert not rejected.value.retryable
        assert f"rpc error: code = Internal desc = {why}" in str(rejected.value)

    run(config(sink, headers=headers, sending_queue=QueueSettings(enabled=False)), body)
    assert sink.calls == []


def test_header_values_are_secrets_that_go_out_as_written(sink: GrpcSink) -> None:
    """configgrpc.ClientConfig's headers are configopaque.String: a value
    that is not text names that type, decoded values print as [REDACTED],
    and the call's metadata carries them unchanged."""
    problems = Problems()
    decode(OtlpGrpcConfig, {"endpoint": sink.endpoint, "headers": {"a": [1]}}, "", problems)
    assert problems.lines == [
        "headers::a: 'headers[a]' expected type 'configopaque.String', got unconvertible "
        "type '[]interface {}', value: '[REDACTED]'"
    ]
    raw = {"x-tenant": "tenant-1", "x-data-bin": "raw"}
    decoded = decode(OtlpGrpcConfig, {"endpoint": sink.endpoint, "headers": raw}, "", problems)
    assert {str(v) for v in decoded.headers.values()} == {"[REDACTED]"}
    assert "tenant-1" not in repr(decoded)
    run(replace(decoded, tls=INSECURE, retry_on_failure=FAST_RETRY), consume_logs(1))
    (call,) = sink.wait_for(1)
    assert call.metadata["x-tenant"] == "tenant-1"
    assert call.metadata["x-data-bin"] == b"raw"


def test_reserved_metadata_is_not_sent_and_binary_values_are_bytes(sink: GrpcSink) -> None:
    """grpc-go drops headers it writes itself (user-agent, content-type, te,
    grpc-timeout, ...) and sends a "-bin" key's value as its bytes."""
    headers = {"User-Agent": "mine", "content-type": "text/plain", "x-data-bin": "raw"}
    run(config(sink, headers=headers), consume_logs(1))
    (call,) = sink.wait_for(1)
    assert call.metadata["user-agent"].startswith("Sluice Collector/")
    assert call.metadata.get("content-type") != "text/plain"
    assert call.metadata["x-data-bin"] == b"raw"


def export_failures(caplog: pytest.LogCaptureFixture) -> list[tuple[str, dict[str, object]]]:
    """The message and fields of each error logged."""
    return [
        (record.getMessage(), own_fields(record))
        for record in caplog.records
        if record.levelno == logging.ERROR
    ]


INVALID = "rpc error: code = InvalidArgument desc = bad data"


@pytest.mark.parametrize(
    ("queue", "retry", "logged"),
    [
        (
            QueueSettings(),
            FAST_RETRY,
            (
                "Exporting failed. Dropping data.",
                {"error": f"not retryable error: Permanent error: {INVALID}", "dropped_items": 2},
            ),
        ),
        (
            QueueSettings(),
            RetrySettings(enabled=False),
            (
                "Exporting failed. Dropping data. Try enabling retry_on_failure config option "
                "to retry on retryable errors.",
                {"error": f"Permanent error: {INVALID}", "dropped_items": 2},
            ),
        ),
        (
            QueueSettings(enabled=False),
            FAST_RETRY,
            (
                "Exporting failed. Rejecting data. Try enabling sending_queue to survive "
                "temporary failures.",
                {"error": f"not retryable error: Permanent error: {INVALID}", "rejected_items": 2},
            ),
        ),
        (
            QueueSettings(enabled=False),
            RetrySettings(enabled=False),
            (
                "Exporting failed. Rejecting data. Try enabling retry_on_failure config option "
                "to retry on retryable errors. Try enabling sending_queue to survive temporary "
                "failures.",
                {"error": f"Permanent error: {INVALID}", "rejected_items": 2},
            ),
        ),
    ],
    ids=["queue", "queue-no-retry", "no-queue", "neither"],
)
def test_a_lost_batch_is_logged_as_upstreams_exporterhelper_logs_it(
    sink: GrpcSink,
    caplog: pytest.LogCaptureFixture,
    queue: QueueSettings,
    retry: RetrySettings,
    logged: tuple[str, dict[str, object]],
) -> None:
    """queue_sender.go's "Dropping data." (a queued batch) and
    base_exporter.go's "Rejecting data." (handed back to the caller), each
    with the hints for the sections turned off, and the fields error and
    dropped_items / rejected_items."""
    sink.respond = Answer(grpc.StatusCode.INVALID_ARGUMENT, "bad data")

    async def body(exporter: Exporter) -> None:
        with contextlib.suppress(ConsumerError):
            await exporter.consumer(Signal.LOG).consume(logs(2))

    with caplog.at_level(logging.ERROR):
        run(config(sink, sending_queue=queue, retry_on_failure=retry), body)
    assert export_failures(caplog) == [logged]


def test_a_full_queue_is_logged_as_a_rejection(
    sink: GrpcSink, caplog: pytest.LogCaptureFixture
) -> None:
    """base_exporter.go logs the queue's ErrQueueIsFull as "Rejecting data."
    (queue_sender_test TestQueuedRetry_RejectOnFull)."""
    sink.respond = Answer(delay=0.3)

    async def body(exporter: Exporter) -> None:
        consumer = exporter.consumer(Signal.LOG)
        await consumer.consume(logs(1))
        await asyncio.sleep(0.05)
        await consumer.consume(logs(1))
        with pytest.raises(ConsumerError, match=r"^sending queue is full$"):
            await consumer.consume(logs(3))

    queue = QueueSettings(num_consumers=1, queue_size=1)
    with caplog.at_level(logging.ERROR):
        run(config(sink, sending_queue=queue), body)
    assert export_failures(caplog) == [
        (
            "Exporting failed. Rejecting data.",
            {"error": "sending queue is full", "rejected_items": 3},
        )
    ]


def test_at_shutdown_retries_stop_and_each_queued_batch_is_tried_once(
    sink: GrpcSink, caplog: pytest.LogCaptureFixture
) -> None:
    """base_exporter.go shuts the retry sender down first: a batch waiting
    for its retry fails at once (experr's "interrupted due to shutdown"),
    and the queue drains with one attempt per batch."""
    sink.respond = Answer(grpc.StatusCode.UNAVAILABLE, "busy")
    retry = RetrySettings(initial_interval=Duration(0.5), randomization_factor=0.0)
    queue = QueueSettings(num_consumers=1)
    used = settings("otlp")

    async def main() -> float:
        exporter = FACTORY.create(
            used, config(sink, retry_on_failure=retry, sending_queue=queue), frozenset(Signal)
        )
        await exporter.start(Host())
        for _ in range(3):
            await exporter.consumer(Signal.LOG).consume(logs(2))
        sink.wait_for(1)
        loop = asyncio.get_running_loop()
        started = loop.time()
        await exporter.shutdown(timeout=5.0)  # type: ignore[call-arg]
        return loop.time() - started

    with caplog.at_level(logging.ERROR):
        took = asyncio.run(main())
    assert took < 0.4
    assert len(sink.calls) == 3
    assert counter(used, FAILED, exporter="otlp") == 6
    unavailable = "rpc error: code = Unavailable desc = busy"
    assert (
        export_failures(caplog)
        == [
            (
                "Exporting failed. Dropping data.",
                {"error": f"interrupted due to shutdown: {unavailable}", "dropped_items": 2},
            )
        ]
        * 3
    )


def test_the_queue_capacity_is_labelled_with_the_exporter_alone(sink: GrpcSink) -> None:
    """queue_sender.go: otelcol_exporter_queue_size has the exporter and
    data_type attributes, otelcol_exporter_queue_capacity the exporter's only."""
    used = run(config(sink, sending_queue=QueueSettings(queue_size=7)), consume_logs(1))
    assert counter(used, "otelcol_exporter_queue_capacity", exporter="otlp") == 7
    size = used.telemetry.registry.get_sample_value(
        "otelcol_exporter_queue_size", {"exporter": "otlp", "data_type": "logs"}
    )
    assert size == 0


def test_invalid_argument_reaches_the_caller_without_the_queue(sink: GrpcSink) -> None:
    sink.respond = Answer(grpc.StatusCode.INVALID_ARGUMENT, "bad data")

    async def body(exporter: Exporter) -> None:
        with pytest.raises(ConsumerError, match="InvalidArgument desc = bad data") as rejected:
            await exporter.consumer(Signal.LOG).consume(logs(1))
        assert not rejected.value.retryable

    run(config(sink, sending_queue=QueueSettings(enabled=False)), body)
    assert len(sink.calls) == 1


def test_the_deadline_is_the_timeout(sink: GrpcSink) -> None:
    sink.respond = answers(Answer(delay=0.5), Answer())
    used = run(
        config(sink, timeout=Duration(0.1), sending_queue=QueueSettings(enabled=False)),
        consume_logs(1),
    )
    assert len(sink.wait_for(2)) == 2
    assert counter(used, SENT, exporter="otlp") == 1


def one_failure(sink: GrpcSink, **changes: object) -> ConsumerError:
    """What one export of a log record fails with, sent once (no retry, no
    queue) by an exporter configured with `changes`."""
    errors: list[ConsumerError] = []

    async def body(exporter: Exporter) -> None:
        with pytest.raises(ConsumerError) as failed:
            await exporter.consumer(Signal.LOG).consume(logs(1))
        errors.append(failed.value)

    once = dict(
        retry_on_failure=RetrySettings(enabled=False), sending_queue=QueueSettings(enabled=False)
    )
    run(config(sink, **once, **changes), body)
    (error,) = errors
    return error


def test_a_call_past_its_deadline_reads_as_grpc_gos_context_error(sink: GrpcSink) -> None:
    """grpc-go ends a call whose context deadline (the exporter's timeout)
    passes with status.FromContextError: DeadlineExceeded, 'context
    deadline exceeded'; a server's own DEADLINE_EXCEEDED keeps its text."""
    sink.respond = Answer(delay=0.5)
    errors = [one_failure(sink, timeout=Duration(0.1))]
    sink.respond = Answer(grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded")
    errors.append(one_failure(sink))
    assert [str(error) for error in errors] == [
        "rpc error: code = DeadlineExceeded desc = context deadline exceeded",
        "rpc error: code = DeadlineExceeded desc = Deadline Exceeded",
    ]
    assert all(error.retryable for error in errors)


def test_a_connection_refused_reads_as_grpc_gos_dial_error(sink: GrpcSink) -> None:
    """grpc-go fails a call on a channel that cannot connect with its
    transport's error around Go's dialer's (upstream's log shows
    'connection error: desc = "transport: Error while dialing: dial tcp
    127.0.0.1:4317: connect: connection refused"')."""
    port = sink.port
    sink.server.stop(None)
    error = one_failure(sink, endpoint=f"127.0.0.1:{port}")
    assert str(error) == (
        "rpc error: code = Unavailable desc = connection error: desc = "
        f'"transport: Error while dialing: dial tcp 127.0.0.1:{port}: connect: connection refused"'
    )
    assert error.retryable


@pytest.mark.parametrize(
    ("details", "worded"),
    [
        (
            "failed to connect to all addresses; last error: UNKNOWN: ipv6:%5B::1%5D:4317: "
            "Failed to connect to remote host: Connection refused",
            'connection error: desc = "transport: Error while dialing: '
            'dial tcp [::1]:4317: connect: connection refused"',
        ),
        (
            "failed to connect to all addresses; last error: UNKNOWN: ipv4:10.0.0.1:4317: "
            "Failed to connect to remote host: No route to host",
            'connection error: desc = "transport: Error while dialing: '
            'dial tcp 10.0.0.1:4317: connect: no route to host"',
        ),
        ("busy", "busy"),
    ],
)
def test_grpcios_connect_failures_are_worded_as_grpc_gos(details: str, worded: str) -> None:
    assert dial_failure(details) == worded


def test_partial_success_is_logged(sink: GrpcSink, caplog: pytest.LogCaptureFixture) -> None:
    response = ExportLogsServiceResponse()
    response.partial_success.rejected_log_records = 1
    sink.respond = Answer(response=response.SerializeToString())
    with caplog.at_level(logging.WARNING):
        run(config(sink), consume_logs())
    # Upstream's message, its zap fields as the record's fields.
    assert partial_successes(caplog) == [{"message": "", "dropped_log_records": 1}]


def test_works_on_uvloop(sink: GrpcSink) -> None:
    sink.respond = answers(Answer(grpc.StatusCode.UNAVAILABLE, "busy"), Answer())
    used = run(
        config(sink, sending_queue=WAITED), consume_logs(4), loop_factory=uvloop.new_event_loop
    )
    assert len(sink.wait_for(2)) == 2
    assert counter(used, SENT, exporter="otlp") == 4


def test_tls_with_the_servers_ca(tmp_path: Path) -> None:
    with GrpcSink(cert_folder=tmp_path) as secure:
        tls = TLSClientConfig(ca_file=str(secure.ca_file))
        used = run(config(secure, endpoint=f"localhost:{secure.port}", tls=tls), consume_logs(1))
        (call,) = secure.wait_for(1)
        assert call.body == logs(1).SerializeToString()
        assert counter(used, SENT, exporter="otlp") == 1


class Signer(Component):
    """A client authenticator; `secret` as basicauth's and bearertokenauth's are."""

    def __init__(self, secret: bool) -> None:
        self.requires_transport_security = secret

    def request_headers(self) -> Mapping[str, str]:
        return {"Authorization": "Bearer t0ken"}


def test_credentials_that_require_tls_refuse_a_plaintext_channel(sink: GrpcSink) -> None:
    host = Host()
    host.extensions[ComponentID("bearertokenauth")] = Signer(secret=True)
    host.extensions[ComponentID("headers")] = Signer(secret=False)
    exporter = FACTORY.create(
        settings("otlp"), config(sink, auth=AuthConfig("bearertokenauth")), frozenset(Signal)
    )
    with pytest.raises(ValueError) as refused:
        asyncio.run(exporter.start(host))
    assert str(refused.value) == (
        "grpc: the credentials require transport level security "
        "(use grpc.WithTransportCredentials() to set)"
    )

    async def signed(exporter: Exporter) -> None:
        await exporter.start(host)
        await exporter.consumer(Signal.LOG).consume(logs(1))
        await exporter.shutdown()

    exporter = FACTORY.create(
        settings("otlp"), config(sink, auth=AuthConfig("headers")), frozenset(Signal)
    )
    asyncio.run(signed(exporter))
    (call,) = sink.wait_for(1)
    assert call.metadata["authorization"] == "Bearer t0ken"


def test_the_authenticators_metadata_goes_before_the_configured(sink: GrpcSink) -> None:
    # grpc-go writes the per-RPC credentials' metadata before the call's own
    # (upstream's `headers`): a server reading a key's first value gets the
    # authenticator's.
    host = Host()
    host.extensions[ComponentID("headers")] = Signer(secret=False)

    async def signed(exporter: Exporter) -> None:
        await exporter.start(host)
        await exporter.consumer(Signal.LOG).consume(logs(1))
        await exporter.shutdown()

    cfg = config(sink, headers={"Authorization": "Basic c3RhdGlj"}, auth=AuthConfig("headers"))
    asyncio.run(signed(FACTORY.create(settings("otlp"), cfg, frozenset(Signal))))
    (call,) = sink.wait_for(1)
    sent = [value for key, value in call.metadata_lines if key == "authorization"]
    assert sent == ["Bearer t0ken", "Basic c3RhdGlj"]


def test_a_server_only_extension_is_not_a_client_authenticator(sink: GrpcSink) -> None:
    host = Host()
    host.extensions[ComponentID("basicauth", "server")] = Component()
    exporter = FACTORY.create(
        settings("otlp"), config(sink, auth=AuthConfig("basicauth/server")), frozenset(Signal)
    )
    with pytest.raises(
        ValueError, match=r"^requested authenticator is not a gRPC client authenticator$"
    ):
        asyncio.run(exporter.start(host))


def test_plaintext_client_cannot_reach_a_tls_server(tmp_path: Path) -> None:
    with GrpcSink(cert_folder=tmp_path) as secure:
        retry = replace(FAST_RETRY, max_elapsed_time=Duration(0.2))
        used = run(config(secure, retry_on_failure=retry), consume_logs(1))
        assert counter(used, FAILED, exporter="otlp") == 1
