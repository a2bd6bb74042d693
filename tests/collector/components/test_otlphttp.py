"""The otlphttp exporter against a real recording HTTP server."""

from __future__ import annotations

import asyncio
import json
import logging
import platform
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from sluice.collector import pdata
from sluice.collector.component import (
    BuildInfo,
    Component,
    ComponentID,
    ConsumerError,
    Exporter,
    Host,
    Settings,
)
from sluice.collector.components.exporters.otlphttp import FACTORY
from sluice.collector.components.exporters.otlphttp.config import OtlpHttpConfig
from sluice.collector.components.exporters.otlphttp.response import retry_after
from sluice.collector.configauth import AuthConfig
from sluice.collector.confmap.decode import Duration, Problems, decode
from sluice.collector.exporterhelper import QueueSettings, RetrySettings
from sluice.collector.rpc_status import encode_status
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
    traces,
)
from tests.edge.helpers import Recorded, Reply, Upstream

FAST_RETRY = RetrySettings(
    initial_interval=Duration(0.01),
    max_interval=Duration(0.02),
    max_elapsed_time=Duration(2.0),
)
LOG_ITEMS = "otelcol_exporter_sent_log_records_total"
LOG_FAILED = "otelcol_exporter_send_failed_log_records_total"
LOG_ENQUEUE_FAILED = "otelcol_exporter_enqueue_failed_log_records_total"


@pytest.fixture
def sink() -> Iterator[Upstream]:
    upstream = Upstream()
    yield upstream
    upstream.stop()


WAITED = QueueSettings(wait_for_result=True)
"""A queue whose ``consume`` returns once the batch is delivered, retries
included: retries stop when the exporter shuts down, as upstream's."""


def config(sink: Upstream, **changes: Any) -> OtlpHttpConfig:
    return replace(OtlpHttpConfig(endpoint=sink.url, retry_on_failure=FAST_RETRY), **changes)


def run(
    config: OtlpHttpConfig,
    body: Callable[[Exporter, Settings], Awaitable[None]],
    signals: frozenset[Signal] = frozenset(Signal),
    host: Host | None = None,
    component_id: str = "otlphttp",
) -> Settings:
    """Start an exporter, run `body` with it, shut it down; its settings."""
    exporter_settings = settings(component_id)

    async def main() -> None:
        exporter = FACTORY.create(exporter_settings, config, signals)
        await exporter.start(host or Host())
        try:
            await body(exporter, exporter_settings)
        finally:
            await exporter.shutdown()

    asyncio.run(main())
    return exporter_settings


def parsed_logs(record: Recorded) -> ExportLogsServiceRequest:
    return ExportLogsServiceRequest.FromString(record.decoded())


# -- config -----------------------------------------------------------------------


def test_minimal_config_takes_upstreams_defaults() -> None:
    config, problems = load_config(
        OtlpHttpConfig, TESTDATA / "otlphttp/config_minimal.yaml", "otlphttp"
    )
    assert problems == []
    assert (config.encoding, config.compression, config.timeout) == ("proto", "gzip", 30.0)
    assert config.retry_on_failure == RetrySettings()
    assert (config.retry_on_failure.initial_interval, config.retry_on_failure.max_interval) == (
        5.0,
        30.0,
    )
    assert config.retry_on_failure.max_elapsed_time == 300.0
    assert config.retry_on_failure.multiplier == 1.5
    assert config.retry_on_failure.randomization_factor == 0.5
    queue = config.sending_queue
    assert (queue.enabled, queue.num_consumers, queue.queue_size) == (True, 10, 1000)
    assert config.signal_url(Signal.LOG) == "https://otel.example.com:4318/v1/logs"
    assert config.signal_url(Signal.TRACE) == "https://otel.example.com:4318/v1/traces"


def test_full_config_decodes_every_key() -> None:
    config, problems = load_config(
        OtlpHttpConfig, TESTDATA / "otlphttp/config_full.yaml", "otlphttp/full"
    )
    assert problems == []
    assert config.signal_url(Signal.LOG) == "https://logs.example.com/ingest/logs"
    assert config.signal_url(Signal.METRIC) == "https://otel.example.com:4318/base/v1/metrics"
    assert config.headers == {"X-Scope-OrgID": "tenant-1"}
    assert (config.encoding, config.compression, config.timeout) == ("json", "zstd", 10.0)
    assert config.tls.server_name_override == "otel.internal"
    assert config.auth == AuthConfig("bearertokenauth")
    assert config.retry_on_failure.max_elapsed_time == 600.0
    assert config.sending_queue.sizer == "items"


def test_null_auth_and_cookies_sections_stay_unset() -> None:
    # confighttp's ClientConfig holds auth and cookies as pointers that
    # default to nil; mapstructure leaves a field as it is for a null
    problems = Problems()
    raw = {"endpoint": "https://otel.example.com:4318", "auth": None, "cookies": None}
    config = decode(OtlpHttpConfig, raw, "otlphttp", problems)
    assert problems.lines == []
    assert (config.auth, config.cookies) == (None, None)
    assert list(config.validate()) == []


def test_an_endpoint_is_required() -> None:
    _, problems = load_config(
        OtlpHttpConfig, TESTDATA / "otlphttp/config_no_endpoint.yaml", "otlphttp"
    )
    assert problems == ["at least one endpoint must be specified"]


def test_a_compression_that_is_not_text_names_configcompression_type() -> None:
    """``compression`` is a configcompression.Type (a string type read by
    UnmarshalText): mapstructure names that type."""
    problems = Problems()
    decode(OtlpHttpConfig, {"compression": 1, "endpoint": "localhost:4317"}, "", problems)
    assert problems.lines == [
        "compression: 'compression' expected type 'configcompression.Type', got "
        "unconvertible type 'int', value: '1'"
    ]


def test_invalid_values_are_each_named() -> None:
    _, problems = load_config(OtlpHttpConfig, TESTDATA / "otlphttp/config_invalid.yaml", "otlphttp")
    assert problems == [
        "endpoint: endpoint must be a valid URL (http:// or https://, with a host)",
        "encoding: invalid encoding type: xml",
        'compression: unsupported compression type "brotli"',
        "proxy_url: an HTTP proxy is not supported by Sluice's otlphttp exporter",
        # BackOffConfig.Validate names its first problem only (max_elapsed_time
        # 10s is also less than max_interval).
        "retry_on_failure: 'randomization_factor' must be within [0, 1]",
        "sending_queue: queue size must be positive",
        "sending_queue::storage: a persistent queue is not supported by Sluice; "
        "remove 'storage' (the queue is kept in memory)",
    ]


@pytest.mark.parametrize("encoding", ["", "invalid", "JSON"])
def test_an_unknown_encoding_is_upstreams_error(encoding: str) -> None:
    # otlphttpexporter config_test.go TestUnmarshalEncoding: only proto and json.
    problems = list(OtlpHttpConfig(endpoint="http://127.0.0.1:4318", encoding=encoding).validate())
    assert problems == [("encoding", f"invalid encoding type: {encoding}")]


def test_any_header_name_loads_as_upstream() -> None:
    # Upstream's own testdata/config.yaml sets "can you have a . here?".
    config, problems = load_config(
        OtlpHttpConfig, TESTDATA / "otlphttp/config_any_header_name.yaml", "otlphttp"
    )
    assert problems == []
    assert config.headers["can you have a . here?"] == "F0000000-0000-0000-0000-000000000000"


def test_disabled_queue_and_retry_are_not_validated() -> None:
    config, problems = load_config(
        OtlpHttpConfig, TESTDATA / "otlphttp/config_queue_disabled.yaml", "otlp_http"
    )
    assert problems == []
    assert not config.sending_queue.enabled and not config.retry_on_failure.enabled


def test_factory_is_also_spelled_otlp_http() -> None:
    assert FACTORY.component_type == "otlphttp"
    assert FACTORY.aliases == ("otlp_http",)
    assert FACTORY.stability == {"logs": "beta", "metrics": "stable", "traces": "stable"}


def test_a_signal_without_an_endpoint_cannot_be_created() -> None:
    only_traces = OtlpHttpConfig(traces_endpoint="http://127.0.0.1:1/t")
    with pytest.raises(ValueError, match="either endpoint or logs_endpoint must be specified"):
        FACTORY.create(settings("otlphttp"), only_traces, frozenset({Signal.LOG}))


# -- what goes on the wire ----------------------------------------------------------


@pytest.mark.parametrize("encoding", ["proto", "json"])
@pytest.mark.parametrize("compression", ["gzip", "zstd", "deflate", "snappy", "lz4", "none"])
def test_every_encoding_and_compression(sink: Upstream, encoding: str, compression: str) -> None:
    sent = logs(5)

    async def body(exporter: Exporter, _: Settings) -> None:
        await exporter.consumer(Signal.LOG).consume(sent)

    run(config(sink, encoding=encoding, compression=compression), body)
    (request,) = sink.wait_for(1)
    assert request.method == "POST" and request.path == "/v1/logs"
    expected_encoding = None if compression == "none" else compression
    assert request.header("Content-Encoding") == expected_encoding
    if encoding == "proto":
        assert request.header("Content-Type") == "application/x-protobuf"
        assert request.decoded() == sent.SerializeToString()
    else:
        assert request.header("Content-Type") == "application/json"
        document = json.loads(request.decoded())
        records = document["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
        assert [r["body"]["stringValue"] for r in records] == [f"hello {i}" for i in range(5)]
        assert records[0]["traceId"] == "08040201000000000000000000000000"
        assert records[0]["spanId"] == "0102040800000000"


def test_json_writes_empty_fields_as_pdata_writes_them(sink: Upstream) -> None:
    """pdata's JSON writer (gogo jsonpb over its non-nullable fields) writes
    the resource, the scope, a span's ids and status, a log record's ids and
    body and an attribute's value even when they are empty (pdata ptrace
    json_test.go tracesJSON: ``{"traceId":"","spanId":"","parentSpanId":"",
    "name":"testSpan2","status":{}}``); an id of zeros is an empty one."""
    spans = ExportTraceServiceRequest()
    span = spans.resource_spans.add().scope_spans.add().spans.add(name="testSpan2")
    span.links.add(trace_id=bytes(16), span_id=bytes(8))
    records = ExportLogsServiceRequest()
    record = records.resource_logs.add().scope_logs.add().log_records.add(time_unix_nano=1)
    record.attributes.add(key="k")

    async def body(exporter: Exporter, _: Settings) -> None:
        await exporter.consumer(Signal.TRACE).consume(spans)
        await exporter.consumer(Signal.LOG).consume(records)

    run(config(sink, encoding="json"), body)
    by_path = {r.path: json.loads(r.decoded()) for r in sink.wait_for(2)}
    ids = {"traceId": "", "spanId": ""}
    link = {**ids}
    written_span = {**ids, "parentSpanId": "", "name": "testSpan2", "status": {}, "links": [link]}
    assert by_path["/v1/traces"] == {
        "resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": [written_span]}]}]
    }
    written_record = {
        "timeUnixNano": "1",
        "body": {},
        "attributes": [{"key": "k", "value": {}}],
        **ids,
    }
    assert by_path["/v1/logs"] == {
        "resourceLogs": [
            {"resource": {}, "scopeLogs": [{"scope": {}, "logRecords": [written_record]}]}
        ]
    }


def test_each_signal_goes_to_its_path_and_overrides_win(sink: Upstream) -> None:
    other = Upstream()
    try:
        traces_url = f"{other.url}/custom/traces?tenant=a"

        async def body(exporter: Exporter, _: Settings) -> None:
            for signal in Signal:
                await exporter.consumer(signal).consume(batch(signal))

        run(config(sink, endpoint=sink.url + "/", traces_endpoint=traces_url), body)
        paths = sorted(r.path for r in sink.wait_for(2))
        assert paths == ["/v1/logs", "/v1/metrics"]
        (trace_request,) = other.wait_for(1)
        assert trace_request.target == "/custom/traces?tenant=a"
        assert ExportTraceServiceRequest.FromString(trace_request.decoded()) == batch(Signal.TRACE)
    finally:
        other.stop()


def test_configured_headers_and_user_agent_are_sent(sink: Upstream) -> None:
    async def body(exporter: Exporter, _: Settings) -> None:
        await exporter.consumer(Signal.LOG).consume(logs(1))

    run(config(sink, headers={"X-Scope-OrgID": "tenant-1", "Authorization": "Bearer t"}), body)
    (request,) = sink.wait_for(1)
    assert request.header("X-Scope-OrgID") == "tenant-1"
    assert request.header("Authorization") == "Bearer t"
    user_agent = request.header("User-Agent") or ""
    assert user_agent.startswith("Sluice Collector/")
    # Upstream's "(<GOOS>/<GOARCH>)": Go's names, such as linux/amd64, not x86_64.
    system, _, arch = user_agent.rpartition(" (")[2].rstrip(")").partition("/")
    assert system == platform.system().lower()
    assert arch in {"amd64", "arm64", "386", "arm", "ppc64le", "s390x", "riscv64"}, user_agent


def test_the_user_agent_names_the_running_distribution(sink: Upstream) -> None:
    """Upstream's User-Agent is ``<description>/<version> (<GOOS>/<GOARCH>)``
    of the collector's BuildInfo (otlphttpexporter otlp_test.go TestUserAgent:
    "Collector/1.2.3test")."""

    async def body(exporter: Exporter, _: Settings) -> None:
        await exporter.consumer(Signal.LOG).consume(logs(1))

    distribution = Host(BuildInfo("mycol", "Collector", "1.2.3test"))
    run(config(sink), body, host=distribution)
    (request,) = sink.wait_for(1)
    agent = request.header("User-Agent") or ""
    prefix = f"Collector/1.2.3test ({platform.system().lower()}/"
    assert agent.startswith(prefix) and agent.endswith(")"), agent
    assert "/" not in agent[len(prefix) : -1], agent


def test_header_values_are_secrets_that_go_out_as_written(sink: Upstream) -> None:
    """confighttp.ClientConfig's headers are configopaque.String: a value
    that is not text names that type, decoded values print as [REDACTED],
    and the request carries them unchanged (Host included)."""
    problems = Problems()
    decode(OtlpHttpConfig, {"endpoint": sink.url, "headers": {"a": 1}}, "", problems)
    assert problems.lines == [
        "headers::a: 'headers[a]' expected type 'configopaque.String', got unconvertible "
        "type 'int', value: '[REDACTED]'"
    ]
    raw = {"X-Scope-OrgID": "tenant-1", "Host": "ingest.example.com"}
    decoded = decode(OtlpHttpConfig, {"endpoint": sink.url, "headers": raw}, "", problems)
    assert {str(v) for v in decoded.headers.values()} == {"[REDACTED]"}
    assert "tenant-1" not in repr(decoded)

    async def body(exporter: Exporter, _: Settings) -> None:
        await exporter.consumer(Signal.LOG).consume(logs(1))

    run(replace(decoded, retry_on_failure=FAST_RETRY), body)
    (request,) = sink.wait_for(1)
    assert request.header("X-Scope-OrgID") == "tenant-1"
    assert request.all("Host") == ["ingest.example.com"]


def test_a_configured_header_replaces_the_exporters_own(sink: Upstream) -> None:
    # Upstream sets configured headers over its own, names compared as Go
    # canonicalizes them: one User-Agent and one Content-Type are sent.
    async def body(exporter: Exporter, _: Settings) -> None:
        await exporter.consumer(Signal.LOG).consume(logs(1))

    headers = {"user-agent": "shipper/2.0", "content-type": "application/x-protobuf"}
    run(config(sink, encoding="json", headers=headers), body)
    (request,) = sink.wait_for(1)
    assert request.all("User-Agent") == ["shipper/2.0"]
    assert request.all("Content-Type") == ["application/x-protobuf"]


@pytest.mark.parametrize(("name", "replaced"), [("Host", True), ("host", False)])
def test_a_host_header_written_host_replaces_the_requests_host(
    sink: Upstream, name: str, replaced: bool
) -> None:
    """Upstream sets the request's Host from a header configured as exactly
    "Host" (a map key); any other spelling is a header Go does not send."""

    async def body(exporter: Exporter, _: Settings) -> None:
        await exporter.consumer(Signal.LOG).consume(logs(1))

    run(config(sink, headers={name: "ingest.example.com"}), body)
    (request,) = sink.wait_for(1)
    expected = "ingest.example.com" if replaced else sink.url.removeprefix("http://")
    assert request.all("Host") == [expected]


class TokenAuth(Component):
    """A client authenticator extension: a fresh token per request."""

    def __init__(self) -> None:
        self.issued = 0

    def request_headers(self) -> Mapping[str, str]:
        self.issued += 1
        return {"Authorization": f"Bearer token-{self.issued}"}


def test_the_authenticator_signs_every_attempt(sink: Upstream) -> None:
    host = Host()
    host.extensions[ComponentID("bearertokenauth")] = TokenAuth()
    sink.respond = iter_replies(Reply(503), Reply(200))

    async def body(exporter: Exporter, _: Settings) -> None:
        await exporter.consumer(Signal.LOG).consume(logs(1))

    run(config(sink, auth=AuthConfig("bearertokenauth"), sending_queue=WAITED), body, host=host)
    requests = sink.wait_for(2)
    assert [r.header("Authorization") for r in requests] == ["Bearer token-1", "Bearer token-2"]


def test_the_authenticators_header_replaces_a_configured_one(sink: Upstream) -> None:
    # Upstream's auth round tripper runs after the headers one and sets its
    # header over a configured one of the same (canonical) name: one is sent.
    host = Host()
    host.extensions[ComponentID("bearertokenauth")] = TokenAuth()

    async def body(exporter: Exporter, _: Settings) -> None:
        await exporter.consumer(Signal.LOG).consume(logs(1))

    headers = {"authorization": "Basic c3RhdGlj", "X-Tenant": "a"}
    run(config(sink, headers=headers, auth=AuthConfig("bearertokenauth")), body, host=host)
    (request,) = sink.wait_for(1)
    assert request.all("Authorization") == ["Bearer token-1"]
    assert request.header("X-Tenant") == "a"


def test_credentials_in_the_url_are_sent_as_basic_auth(sink: Upstream) -> None:
    """Go's client sends a URL's userinfo (unescaped) as Basic
    authorization when the request has none; a configured Authorization
    header, or the authenticator's, replaces it (their round trippers run
    after), and the Host is the URL's without the userinfo."""
    host = Host()
    host.extensions[ComponentID("bearertokenauth")] = TokenAuth()

    async def body(exporter: Exporter, _: Settings) -> None:
        await exporter.consumer(Signal.LOG).consume(logs(1))

    with_userinfo = sink.url.replace("http://", "http://alice:s%40cret@")
    run(config(sink, endpoint=with_userinfo), body)
    run(config(sink, endpoint=sink.url.replace("http://", "http://bob@")), body)
    configured = {"Authorization": "Basic c3RhdGlj"}
    run(config(sink, endpoint=with_userinfo, headers=configured), body)
    run(config(sink, endpoint=with_userinfo, auth=AuthConfig("bearertokenauth")), body, host=host)
    requests = sink.wait_for(4)
    assert [r.all("Authorization") for r in requests] == [
        ["Basic YWxpY2U6c0BjcmV0"],  # alice:s@cret
        ["Basic Ym9iOg=="],  # bob:
        ["Basic c3RhdGlj"],
        ["Bearer token-1"],
    ]
    assert {r.header("Host") for r in requests} == {sink.url.removeprefix("http://")}


def test_a_failed_request_names_its_url_without_the_password(sink: Upstream) -> None:
    """Go's client error (url.Error) names the URL with the password
    redacted (stripPassword: the unescaped username, then ``:***@``); a
    username alone stays."""
    with_password = sink.url.replace("http://", "http://al%69ce:s%40cret@")
    error = str(refusal(sink, Reply(200, delay=0.5), endpoint=with_password, timeout=Duration(0.1)))
    redacted = sink.url.replace("http://", "http://alice:***@")
    assert error.startswith(f'failed to make an HTTP request: Post "{redacted}/v1/logs": ')
    assert "cret" not in error
    with_user = sink.url.replace("http://", "http://bob@")
    error = str(refusal(sink, Reply(200, delay=0.5), endpoint=with_user, timeout=Duration(0.1)))
    assert error.startswith(f'failed to make an HTTP request: Post "{with_user}/v1/logs": ')


def test_a_missing_authenticator_fails_the_start(sink: Upstream) -> None:
    exporter = FACTORY.create(
        settings("otlphttp"), config(sink, auth=AuthConfig("oauth2client")), frozenset(Signal)
    )
    with pytest.raises(ValueError, match='authenticator "oauth2client": authenticator not found'):
        asyncio.run(exporter.start(Host()))


# -- failures and retries ------------------------------------------------------------


def iter_replies(*replies: Reply) -> Callable[[Recorded], Reply]:
    """Answer with `replies` in turn, then with the last one."""
    queue = list(replies)

    def respond(_: Recorded) -> Reply:
        return queue.pop(0) if len(queue) > 1 else queue[0]

    return respond


def sent_until_delivered(sink: Upstream, records: int, attempts: int) -> None:
    """Export `records` log records, which the sink's replies make take
    `attempts` sends of the same body before the batch counts as delivered."""
    sent = logs(records)

    async def body(exporter: Exporter, _: Settings) -> None:
        await exporter.consumer(Signal.LOG).consume(sent)

    used = run(config(sink, sending_queue=WAITED), body)
    requests = sink.wait_for(attempts)
    assert len(requests) == attempts
    assert all(parsed_logs(r) == pdata.full_logs(sent) for r in requests)
    assert counter(used, LOG_ITEMS, exporter="otlphttp") == records
    assert counter(used, LOG_FAILED, exporter="otlphttp") == 0


def test_503_then_200_is_retried_and_delivered_once(sink: Upstream) -> None:
    sink.respond = iter_replies(Reply(503), Reply(503), Reply(200))
    sent_until_delivered(sink, records=4, attempts=3)


def test_retry_after_sets_the_least_wait(sink: Upstream) -> None:
    sink.respond = iter_replies(Reply(429, headers=[("Retry-After", "1")]), Reply(200))

    async def body(exporter: Exporter, _: Settings) -> None:
        await exporter.consumer(Signal.LOG).consume(logs(1))

    run(config(sink, sending_queue=WAITED), body)
    first, second = sink.wait_for(2)
    assert 0.95 <= second.received_at - first.received_at < 1.5


def test_retry_after_past_max_elapsed_time_is_still_waited_for(sink: Upstream) -> None:
    # Upstream decides "no more retries left" on its backoff delay alone,
    # then waits the longer Retry-After: the batch is sent again.
    sink.respond = iter_replies(Reply(503, headers=[("Retry-After", "1")]), Reply(200))
    retry = RetrySettings(
        initial_interval=Duration(0.01),
        max_interval=Duration(0.02),
        max_elapsed_time=Duration(0.5),
    )

    async def body(exporter: Exporter, _: Settings) -> None:
        await exporter.consumer(Signal.LOG).consume(logs(2))

    used = run(
        config(sink, retry_on_failure=retry, sending_queue=QueueSettings(enabled=False)), body
    )
    assert len(sink.wait_for(2)) == 2
    assert counter(used, LOG_ITEMS, exporter="otlphttp") == 2
    assert counter(used, LOG_FAILED, exporter="otlphttp") == 0


def test_retry_after_is_read_as_whole_seconds_only() -> None:
    # Upstream reads it with strconv.Atoi: an HTTP date is no delay.
    assert [retry_after(v) for v in ("3", "+3", "-3", "007")] == [3, 3, -3, 7]
    assert retry_after("Wed, 21 Oct 2015 07:28:05 GMT") == 0
    assert [retry_after(v) for v in ("1.5", "soon", "", "²", "9" * 30)] == [0] * 5


def test_400_is_not_retried_and_counted_as_failed(
    sink: Upstream, caplog: pytest.LogCaptureFixture
) -> None:
    status = encode_status(3, "bad record")
    sink.respond = Reply(400, status, content_type="application/x-protobuf")

    async def body(exporter: Exporter, _: Settings) -> None:
        await exporter.consumer(Signal.LOG).consume(logs(2))

    with caplog.at_level(logging.ERROR):
        used = run(config(sink), body)
    assert len(sink.wait_for(1)) == 1
    time.sleep(0.05)
    assert len(sink.received()) == 1
    assert counter(used, LOG_FAILED, exporter="otlphttp") == 2
    assert counter(used, LOG_ITEMS, exporter="otlphttp") == 0
    (record,) = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert record.getMessage() == "Exporting failed. Dropping data."
    fields = getattr(record, "fields", {})
    assert fields["dropped_items"] == 2
    assert fields["error"].startswith("not retryable error")
    assert "responded with HTTP Status Code 400, Message=bad record" in fields["error"]


def refusal(sink: Upstream, reply: Reply, **changes: Any) -> ConsumerError:
    """The error of one batch the sink answers with `reply`, with neither
    retries nor a queue (the exporter's own error, as its caller gets it);
    `changes` to the config."""
    sink.respond = reply
    refused: list[ConsumerError] = []

    async def body(exporter: Exporter, _: Settings) -> None:
        with pytest.raises(ConsumerError) as raised:
            await exporter.consumer(Signal.LOG).consume(logs(1))
        refused.append(raised.value)

    retry_off = RetrySettings(enabled=False)
    queue_off = QueueSettings(enabled=False)
    run(config(sink, retry_on_failure=retry_off, sending_queue=queue_off, **changes), body)
    return refused[0]


@pytest.mark.parametrize(
    ("status", "retryable", "code"),
    [
        (400, False, "InvalidArgument"),
        (401, False, "Unauthenticated"),
        (403, False, "PermissionDenied"),
        (404, False, "Unimplemented"),
        (413, False, "Unknown"),
        (500, False, "Unknown"),
        (429, True, "ResourceExhausted"),
        (502, True, "Unavailable"),
        (503, True, "Unavailable"),
        (504, True, "Unavailable"),
    ],
)
def test_a_failure_reads_as_upstreams_grpc_status_error(
    sink: Upstream, status: int, retryable: bool, code: str
) -> None:
    """Upstream turns a non-2xx answer into a gRPC status error (the code its
    httphelper maps the HTTP status to), made permanent unless retryable, in
    which case it is a throttle error with the server's delay (otlphttpexporter
    otlp_test.go TestErrorResponses)."""
    error = refusal(sink, Reply(status, encode_status(3, "Bad field"), content_type=None))
    url = f"{sink.url}/v1/logs"
    expected = (
        f"rpc error: code = {code} desc = error exporting items, request to {url} "
        f"responded with HTTP Status Code {status}, Message=Bad field, Details=[]"
    )
    wrapper = "Throttle (0s), error" if retryable else "Permanent error"
    assert error.retryable is retryable
    assert str(error) == f"{wrapper}: {expected}"


@pytest.mark.parametrize(
    ("answer", "read"),
    [
        (Reply(400, b"", content_type=None), ", Message=, Details=[]"),
        (
            Reply(400, encode_status(3, "Bad field"), content_type="text/plain"),
            ", Message=Bad field, Details=[]",
        ),
        (Reply(400, b'{"code":3,"message":"Bad field"}'), ""),
        (Reply(400, b"bad", content_type="text/plain"), ""),
        (Reply(503, encode_status(3, "a" * (64 * 1024 + 1)), content_type=None), ""),
    ],
    ids=["empty", "status-any-type", "json", "text", "over-64KiB"],
)
def test_the_error_reads_the_body_as_a_protobuf_status_only(
    sink: Upstream, answer: Reply, read: str
) -> None:
    """Upstream reads the body of a 4xx/5xx answer as a protobuf Status
    whatever its Content-Type (an empty body is an empty Status), and adds
    nothing when it is not one (otlp_test.go "Bad response payload")."""
    error = str(refusal(sink, answer))
    tail = error.partition(f"HTTP Status Code {answer.status}")[2]
    assert tail == read


@pytest.mark.parametrize(
    ("status", "retry_after", "delay"),
    [
        (503, "30", "30s"),
        (429, "90", "1m30s"),
        (502, "30", "0s"),
        (504, "30", "0s"),
        (503, "Wed, 21 Oct 2099 07:28:00 GMT", "0s"),
    ],
)
def test_a_throttle_error_names_the_servers_delay(
    sink: Upstream, status: int, retry_after: str, delay: str
) -> None:
    """Only 429 and 503 read Retry-After, as upstream ("503-Retry-After")."""
    error = refusal(sink, Reply(status, headers=[("Retry-After", retry_after)]))
    assert str(error).startswith(f"Throttle ({delay}), error: rpc error: code = ")


def test_retries_end_after_max_elapsed_time(sink: Upstream) -> None:
    sink.respond = Reply(503)
    retry = replace(FAST_RETRY, max_elapsed_time=Duration(0.2))

    async def body(exporter: Exporter, _: Settings) -> None:
        await exporter.consumer(Signal.LOG).consume(logs(3))
        await asyncio.sleep(0.4)

    used = run(config(sink, retry_on_failure=retry), body)
    assert 3 <= len(sink.received()) <= 25
    assert counter(used, LOG_FAILED, exporter="otlphttp") == 3


def refuses_a_record(
    retryable: bool, message: str | None = None
) -> Callable[[Exporter, Settings], Awaitable[None]]:
    """A `run` body: one log record, which the exporter (without a queue)
    refuses to its caller, retryably or not, with `message` in the error."""

    async def body(exporter: Exporter, _: Settings) -> None:
        with pytest.raises(ConsumerError) as refused:
            await exporter.consumer(Signal.LOG).consume(logs(1))
        assert refused.value.retryable is retryable
        if message is not None:
            assert message in str(refused.value)

    return body


def test_a_connection_refused_is_retried(sink: Upstream) -> None:
    dead = Upstream()
    dead.stop()
    retry = replace(FAST_RETRY, max_elapsed_time=Duration(0.1))
    queue_off = QueueSettings(enabled=False)

    # Upstream wraps Go's client error, 'Post "<url>": <why>'.
    wording = f'no more retries left: failed to make an HTTP request: Post "{dead.url}/v1/logs": '
    run(
        config(sink, endpoint=dead.url, retry_on_failure=retry, sending_queue=queue_off),
        refuses_a_record(True, wording),
    )


def test_a_connection_refused_reads_as_gos_dial_error(sink: Upstream) -> None:
    """Go's dialer names the address it dialled and the system's error
    (``dial tcp 127.0.0.1:9009: connect: connection refused``), as
    upstream's log shows it in the retry's error field."""
    dead = Upstream()
    dead.stop()
    error = str(refusal(sink, Reply(200), endpoint=dead.url))
    assert error == (
        f'failed to make an HTTP request: Post "{dead.url}/v1/logs": '
        f"dial tcp 127.0.0.1:{dead.port}: connect: connection refused"
    )


def test_a_name_that_does_not_resolve_reads_as_gos_lookup_error(sink: Upstream) -> None:
    error = str(refusal(sink, Reply(200), endpoint="http://nosuchhost.invalid:4318"))
    assert error == (
        'failed to make an HTTP request: Post "http://nosuchhost.invalid:4318/v1/logs": '
        "dial tcp: lookup nosuchhost.invalid: no such host"
    )


def test_without_the_queue_a_permanent_failure_reaches_the_caller(sink: Upstream) -> None:
    sink.respond = Reply(400)

    used = run(config(sink, sending_queue=QueueSettings(enabled=False)), refuses_a_record(False))
    assert counter(used, LOG_FAILED, exporter="otlphttp") == 1


@pytest.mark.parametrize("status", [307, 308])
def test_307_and_308_resend_the_post_where_they_point(sink: Upstream, status: int) -> None:
    elsewhere = Upstream()
    try:
        moved = f"{elsewhere.url}/moved/v1/logs?tenant=a"
        sink.respond = Reply(status, headers=[("Location", moved)])
        sent = logs(3)
        host = Host()
        host.extensions[ComponentID("bearertokenauth")] = TokenAuth()

        async def body(exporter: Exporter, _: Settings) -> None:
            await exporter.consumer(Signal.LOG).consume(sent)

        cfg = config(sink, headers={"X-Tenant": "a"}, auth=AuthConfig("bearertokenauth"))
        used = run(cfg, body, host=host)
        (first,) = sink.wait_for(1)
        (second,) = elsewhere.wait_for(1)
    finally:
        elsewhere.stop()
    assert second.method == "POST"
    assert second.target == "/moved/v1/logs?tenant=a"
    assert second.body == first.body
    assert parsed_logs(second) == pdata.full_logs(sent)
    for name in ("Content-Type", "Content-Encoding", "X-Tenant"):
        assert second.header(name) == first.header(name) is not None
    assert second.header("Authorization") == "Bearer token-1"
    assert counter(used, LOG_ITEMS, exporter="otlphttp") == 3
    assert counter(used, LOG_FAILED, exporter="otlphttp") == 0


def test_a_relative_location_is_resolved_against_the_url_that_answered(sink: Upstream) -> None:
    sink.respond = iter_replies(
        Reply(308, headers=[("Location", "v2/logs")]),
        Reply(307, headers=[("Location", "../moved")]),
        Reply(200),
    )

    async def body(exporter: Exporter, _: Settings) -> None:
        await exporter.consumer(Signal.LOG).consume(logs(1))

    used = run(config(sink), body)
    assert [r.target for r in sink.wait_for(3)] == ["/v1/logs", "/v1/v2/logs", "/v1/moved"]
    assert counter(used, LOG_ITEMS, exporter="otlphttp") == 1


def test_a_redirect_loop_is_a_retryable_failure_after_10_redirects(sink: Upstream) -> None:
    sink.respond = Reply(307, headers=[("Location", "/v1/logs")])
    retry = RetrySettings(enabled=False)

    # Go's client names the Location it would have followed next.
    wording = 'failed to make an HTTP request: Post "/v1/logs": stopped after 10 redirects'
    run(
        config(sink, retry_on_failure=retry, sending_queue=QueueSettings(enabled=False)),
        refuses_a_record(True, wording),
    )
    assert len(sink.wait_for(11)) == 11
    time.sleep(0.05)
    assert len(sink.received()) == 11


def test_a_redirect_loop_names_the_location_as_sent(sink: Upstream) -> None:
    """Go's client sets the url.Error of a redirect it does not follow to
    the Location as the server wrote it: a password there is not stripped."""
    location = sink.url.replace("http://", "http://alice:s%40cret@") + "/v1/logs"
    sink.respond = Reply(307, headers=[("Location", location)])
    retry = RetrySettings(enabled=False)

    wording = f'failed to make an HTTP request: Post "{location}": stopped after 10 redirects'
    run(
        config(sink, retry_on_failure=retry, sending_queue=QueueSettings(enabled=False)),
        refuses_a_record(True, wording),
    )
    assert len(sink.wait_for(11)) == 11


@pytest.mark.parametrize(
    ("status", "location", "why"),
    [
        (301, "/elsewhere", "Location=/elsewhere (only 307 and 308 redirects are followed)"),
        (303, "/elsewhere", "Location=/elsewhere (only 307 and 308 redirects are followed)"),
        (307, "ftp://example/x", "Location=ftp://example/x (not an http or https URL)"),
        (308, "", "HTTP Status Code 308"),
    ],
)
def test_a_redirect_that_is_not_followed_is_permanent(
    sink: Upstream, status: int, location: str, why: str
) -> None:
    sink.respond = Reply(status, headers=[("Location", location)] if location else [])

    used = run(
        config(sink, sending_queue=QueueSettings(enabled=False)), refuses_a_record(False, why)
    )
    assert len(sink.received()) == 1
    assert counter(used, LOG_FAILED, exporter="otlphttp") == 1


def test_a_timeout_is_a_retryable_failure(sink: Upstream) -> None:
    sink.respond = iter_replies(Reply(200, delay=0.5), Reply(200))

    async def body(exporter: Exporter, _: Settings) -> None:
        await exporter.consumer(Signal.LOG).consume(logs(1))

    used = run(
        config(sink, timeout=Duration(0.1), sending_queue=QueueSettings(enabled=False)), body
    )
    assert len(sink.wait_for(2)) == 2
    assert counter(used, LOG_ITEMS, exporter="otlphttp") == 1


@pytest.mark.parametrize(
    ("headers", "why"),
    [
        ({"can you have a . here?": "x"}, 'invalid header field name "can you have a . here?"'),
        ({"x-evil": "a\r\nX-Injected: 1"}, 'invalid header field value for "X-Evil"'),
        ({"Host": "a b"}, "http: invalid Host header"),
    ],
    ids=["name", "value", "host"],
)
def test_a_header_go_cannot_send_fails_every_request(
    sink: Upstream, headers: dict[str, str], why: str
) -> None:
    """Upstream loads the config; Go's client then refuses each request
    (retryable, nothing is sent)."""
    error = refusal(sink, Reply(200), headers=headers)
    assert error.retryable
    assert str(error).startswith(f'failed to make an HTTP request: Post "{sink.url}/v1/logs": ')
    assert str(error).endswith(why)
    assert sink.received() == []


def test_a_header_value_is_sent_as_utf8(sink: Upstream) -> None:
    async def body(exporter: Exporter, _: Settings) -> None:
        await exporter.consumer(Signal.LOG).consume(logs(1))

    run(config(sink, headers={"X-Team": "équipe 日本"}), body)
    (request,) = sink.wait_for(1)
    assert (request.header("X-Team") or "").encode("latin-1").decode("utf-8") == "équipe 日本"


def test_a_negative_timeout_loads_and_means_no_timeout(sink: Upstream, tmp_path: Path) -> None:
    """otlphttp's timeout is confighttp's http.Client.Timeout, which nothing
    validates; Go's client sets a deadline only for a timeout above 0."""
    path = tmp_path / "otlphttp.yaml"
    path.write_text(f"exporters:\n  otlphttp:\n    endpoint: {sink.url}\n    timeout: -5s\n")
    loaded, problems = load_config(OtlpHttpConfig, path, "otlphttp")
    assert problems == []
    assert loaded.timeout == -5.0
    sink.respond = iter_replies(Reply(200, delay=0.3))

    async def body(exporter: Exporter, _: Settings) -> None:
        await exporter.consumer(Signal.LOG).consume(logs(1))

    used = run(replace(loaded, sending_queue=QueueSettings(enabled=False)), body)
    assert len(sink.wait_for(1)) == 1
    assert counter(used, LOG_ITEMS, exporter="otlphttp") == 1


def test_a_timeout_reads_as_gos_client_timeout(sink: Upstream) -> None:
    error = str(refusal(sink, Reply(200, delay=0.5), timeout=Duration(0.1)))
    assert error == (
        f'failed to make an HTTP request: Post "{sink.url}/v1/logs": '
        "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
    )


def test_each_attempt_is_logged_at_debug_level(
    sink: Upstream, caplog: pytest.LogCaptureFixture
) -> None:
    """Upstream logs "Preparing to make HTTP request" with the URL before
    every request it makes (otlphttpexporter otlp.go export)."""
    sink.respond = iter_replies(Reply(503), Reply(200))

    async def body(exporter: Exporter, _: Settings) -> None:
        await exporter.consumer(Signal.LOG).consume(logs(1))

    with caplog.at_level(logging.DEBUG):
        run(config(sink, sending_queue=WAITED), body)
    preparing = [
        own_fields(record)
        for record in caplog.records
        if record.getMessage() == "Preparing to make HTTP request"
    ]
    assert preparing == [{"url": f"{sink.url}/v1/logs"}] * 2
    assert {r.levelno for r in caplog.records if "Preparing" in r.getMessage()} == {logging.DEBUG}


def test_entries_carry_the_exporter_loggers_fields_first(
    sink: Upstream, caplog: pytest.LogCaptureFixture
) -> None:
    """Upstream's exporter logger adds kind, data_type and name to every
    entry, before the entry's own fields (service/internal/components
    loggers.go ExporterLogger): a retry reads {"kind": "exporter",
    "data_type": "traces", "name": "otlphttp/a", "error": ..., "interval": ...}."""
    sink.respond = iter_replies(Reply(503), Reply(200))

    async def body(exporter: Exporter, _: Settings) -> None:
        await exporter.consumer(Signal.TRACE).consume(traces(1))

    with caplog.at_level(logging.DEBUG):
        run(config(sink, sending_queue=WAITED), body, component_id="otlphttp/a")
    entries = {
        record.getMessage(): list(getattr(record, "fields", {}))
        for record in caplog.records
        if record.name.startswith("sluice.collector.exporter.")
    }
    component = ["kind", "data_type", "name"]
    assert entries == {
        "Preparing to make HTTP request": [*component, "url"],
        "Exporting failed. Will retry the request after interval.": [
            *component,
            "error",
            "interval",
        ],
    }
    (retry,) = [r for r in caplog.records if "Will retry" in r.getMessage()]
    assert [getattr(retry, "fields", {})[key] for key in component] == [
        "exporter",
        "traces",
        "otlphttp/a",
    ]


def test_partial_success_is_logged(sink: Upstream, caplog: pytest.LogCaptureFixture) -> None:
    answer = ExportLogsServiceResponse()
    answer.partial_success.rejected_log_records = 2
    answer.partial_success.error_message = "too old"
    sink.respond = Reply(200, answer.SerializeToString(), content_type="application/x-protobuf")

    async def body(exporter: Exporter, _: Settings) -> None:
        await exporter.consumer(Signal.LOG).consume(logs(3))

    with caplog.at_level(logging.WARNING):
        used = run(config(sink), body)
    assert partial_successes(caplog) == [{"message": "too old", "dropped_log_records": 2}]
    assert counter(used, LOG_ITEMS, exporter="otlphttp") == 3


@pytest.mark.parametrize(
    ("answer", "warning"),
    [
        (b'{"partialSuccess":{"rejectedLogRecords":"2","errorMessage":"too old"}}', True),
        (b'{"partial_success":{"rejected_log_records":2,"error_message":"too old"}}', True),
        (b'{"partialSuccess":{"rejectedLogRecords":2,"errorMessage":"too old"}} trailing', True),
        (b'{"partialSuccess":{"rejectedLogRecords":"+2","errorMessage":"too old"}}', True),
        (b'{"partialSuccess":{"rejectedLogRecords":2,"errorMessage":"too old","x":[1]}}', True),
        (b"null", False),
        (b"{}", False),
        (b'{"partialSuccess":null}', False),
        (b'{"partialSuccess":{"errorMessage":null}}', False),
    ],
    ids=[
        "json-names",
        "proto-names",
        "trailing-bytes",
        "signed-text",
        "unknown-key",
        "null",
        "empty",
        "null-partial-success",
        "null-message",
    ],
)
def test_a_json_partial_success_is_read_as_upstream_reads_it(
    sink: Upstream, caplog: pytest.LogCaptureFixture, answer: bytes, warning: bool
) -> None:
    """Either spelling of the keys; a null document is an empty answer, and
    bytes after the document are ignored: none of them is sent again."""
    sink.respond = Reply(200, answer, content_type="application/json")

    async def body(exporter: Exporter, _: Settings) -> None:
        await exporter.consumer(Signal.LOG).consume(logs(3))

    with caplog.at_level(logging.WARNING):
        used = run(config(sink), body)
    logged = [{"message": "too old", "dropped_log_records": 2}] if warning else []
    assert partial_successes(caplog) == logged
    assert len(sink.requests) == 1
    assert counter(used, LOG_ITEMS, exporter="otlphttp") == 3


@pytest.mark.parametrize(
    "answer",
    [
        b'{"partialSuccess":{"rejectedLogRecords":null}}',
        b'{"partialSuccess":{"rejectedLogRecords":1.5}}',
        b'{"partialSuccess":{"rejectedLogRecords":true}}',
        b'{"partialSuccess":{"rejectedLogRecords":" 2"}}',
        b'{"partialSuccess":{"rejectedLogRecords":"1_000"}}',
        b'{"partialSuccess":{"rejectedLogRecords":9223372036854775808}}',
        b'{"partialSuccess":{"errorMessage":5}}',
        b'{"partialSuccess":[]}',
        b'{"partialSuccess":""}',
        b"[]",
    ],
    ids=[
        "null-count",
        "fraction",
        "bool-count",
        "spaced-text",
        "underscored-text",
        "past-int64",
        "number-message",
        "list",
        "text",
        "not-an-object",
    ],
)
def test_a_json_partial_success_of_another_shape_is_upstreams_parse_error(
    sink: Upstream, answer: bytes
) -> None:
    """pdata reads the count as an int64 number or decimal text (its
    ReadInt64), the message as text or null, each object as an object or
    null; anything else is a parse error, retryable (plogotlp response.go
    unmarshalJsoniter, pdata/internal/json number.go ReadInt64)."""
    error = refusal(sink, Reply(200, answer, content_type="application/json"))
    assert error.retryable
    assert str(error).startswith("error parsing json response: "), str(error)


@pytest.mark.parametrize(
    "content_type", ["application/x-protobuf", "application/json"], ids=["protobuf", "json"]
)
def test_an_unparsable_2xx_body_is_retried(sink: Upstream, content_type: str) -> None:
    # Upstream returns "error parsing <kind> response" for such a body, an
    # error that is not permanent: the batch is sent again.
    sink.respond = iter_replies(Reply(200, b"\xff{", content_type=content_type), Reply(200))
    sent_until_delivered(sink, records=2, attempts=2)


@pytest.mark.parametrize(
    ("content_type", "kind"), [("application/x-protobuf", "protobuf"), ("application/json", "json")]
)
def test_an_unparsable_2xx_body_reads_as_upstreams_error(
    sink: Upstream, content_type: str, kind: str
) -> None:
    """Upstream's text is ``error parsing <kind> response: <why>``, retryable
    (otlp_test.go TestPartialSuccessInvalidBody: "error parsing protobuf
    response:")."""
    error = refusal(sink, Reply(200, b"\xff{", content_type=content_type))
    assert error.retryable
    assert str(error).startswith(f"error parsing {kind} response: "), str(error)


def test_a_2xx_body_of_another_content_type_is_not_read(sink: Upstream) -> None:
    # Upstream reads the body only when Content-Type is exactly one of the two.
    sink.respond = Reply(200, b"\xff{", content_type="application/json; charset=utf-8")

    async def body(exporter: Exporter, _: Settings) -> None:
        await exporter.consumer(Signal.LOG).consume(logs(2))

    used = run(config(sink, sending_queue=QueueSettings(enabled=False)), body)
    assert len(sink.requests) == 1
    assert counter(used, LOG_ITEMS, exporter="otlphttp") == 2


# -- the queue -----------------------------------------------------------------------


def test_a_full_queue_refuses_with_a_retryable_error(sink: Upstream) -> None:
    sink.respond = Reply(200, delay=0.3)
    queue = QueueSettings(num_consumers=1, queue_size=1)

    async def body(exporter: Exporter, _: Settings) -> None:
        consumer = exporter.consumer(Signal.LOG)
        await consumer.consume(logs(1))  # taken by the only sender
        await asyncio.sleep(0.05)
        await consumer.consume(logs(1))  # waits in the queue
        with pytest.raises(ConsumerError) as refused:
            await consumer.consume(logs(7))
        assert refused.value.retryable and refused.value.retry_after
        # Upstream's ErrQueueIsFull: the message an OTLP sender gets.
        assert str(refused.value) == "sending queue is full"

    used = run(config(sink, sending_queue=queue), body)
    assert counter(used, LOG_ENQUEUE_FAILED, exporter="otlphttp") == 7
    assert counter(used, LOG_ITEMS, exporter="otlphttp") == 2
    assert len(sink.received()) == 2


def test_queue_metrics_report_size_and_capacity(sink: Upstream) -> None:
    sink.respond = Reply(200, delay=0.3)

    async def body(exporter: Exporter, used: Settings) -> None:
        consumer = exporter.consumer(Signal.TRACE)
        for _ in range(3):
            await consumer.consume(traces(1))
        await asyncio.sleep(0.05)
        size = counter(used, "otelcol_exporter_queue_size", exporter="q", data_type="traces")
        assert size == 2  # one is being sent

    queue = QueueSettings(num_consumers=1, queue_size=5)
    used = run(config(sink, sending_queue=queue), body, component_id="q")
    assert counter(used, "otelcol_exporter_queue_capacity", exporter="q") == 5


def test_shutdown_drains_the_queue(sink: Upstream) -> None:
    sink.respond = Reply(200, delay=0.02)
    queue = QueueSettings(num_consumers=2, queue_size=100)

    async def body(exporter: Exporter, _: Settings) -> None:
        for i in range(20):
            await exporter.consumer(Signal.LOG).consume(logs(1, body=f"batch{i}"))

    used = run(config(sink, sending_queue=queue), body)
    assert len(sink.received()) == 20
    assert counter(used, LOG_ITEMS, exporter="otlphttp") == 20


def shut_down_within(
    sink: Upstream, timeout: float, batches: int, component_id: str = "otlphttp"
) -> tuple[Settings, float]:
    """Queue `batches` batches of 2 log records for one sender, then shut down
    with `timeout`: the settings and how long shutdown took."""
    queue = QueueSettings(num_consumers=1, queue_size=100)
    exporter_settings = settings(component_id)

    async def main() -> float:
        exporter = FACTORY.create(
            exporter_settings, config(sink, sending_queue=queue), frozenset(Signal)
        )
        await exporter.start(Host())
        for _ in range(batches):
            await exporter.consumer(Signal.LOG).consume(logs(2))
        started = time.monotonic()
        await exporter.shutdown(timeout=timeout)  # type: ignore[call-arg]
        return time.monotonic() - started

    return exporter_settings, asyncio.run(main())


def test_at_shutdown_no_retry_waits_past_the_deadline(sink: Upstream) -> None:
    sink.respond = Reply(503, headers=[("Retry-After", "30")])
    used, took = shut_down_within(sink, timeout=2.0, batches=5)
    assert took < 0.5
    assert len(sink.received()) == 5
    assert counter(used, LOG_FAILED, exporter="otlphttp") == 10


def test_what_is_queued_at_the_shutdown_deadline_is_counted_and_logged(
    sink: Upstream, caplog: pytest.LogCaptureFixture
) -> None:
    sink.respond = Reply(200, delay=0.5)
    with caplog.at_level(logging.ERROR):
        used, took = shut_down_within(sink, timeout=0.2, batches=5)
    assert took < 0.45
    assert counter(used, LOG_FAILED, exporter="otlphttp") == 10
    assert counter(used, LOG_ITEMS, exporter="otlphttp") == 0
    dropped = [
        own_fields(r)
        for r in caplog.records
        if r.getMessage() == "Exporting failed. Dropping data."
    ]
    assert {"error": "shutdown deadline passed while sending", "dropped_items": 2} in dropped
    assert {"error": "4 batches still queued at the shutdown deadline", "dropped_items": 8} in (
        dropped
    )


def test_after_shutdown_data_is_refused(sink: Upstream) -> None:
    exporter_settings = settings("otlphttp")

    async def main() -> None:
        exporter = FACTORY.create(exporter_settings, config(sink), frozenset(Signal))
        await exporter.start(Host())
        await exporter.shutdown()
        with pytest.raises(ConsumerError, match="shutting down") as refused:
            await exporter.consumer(Signal.LOG).consume(logs(1))
        assert refused.value.retryable

    asyncio.run(main())


def test_wait_for_result_returns_the_outcome(sink: Upstream) -> None:
    sink.respond = Reply(400)
    queue = QueueSettings(wait_for_result=True)

    async def body(exporter: Exporter, _: Settings) -> None:
        with pytest.raises(ConsumerError, match="HTTP Status Code 400"):
            await exporter.consumer(Signal.LOG).consume(logs(1))

    run(config(sink, sending_queue=queue), body)


def test_block_on_overflow_waits_for_room(sink: Upstream) -> None:
    sink.respond = Reply(200, delay=0.1)
    queue = QueueSettings(num_consumers=1, queue_size=1, block_on_overflow=True)

    async def body(exporter: Exporter, _: Settings) -> None:
        for _ in range(4):
            await exporter.consumer(Signal.LOG).consume(logs(1))

    used = run(config(sink, sending_queue=queue), body)
    assert counter(used, LOG_ENQUEUE_FAILED, exporter="otlphttp") == 0
    assert len(sink.received()) == 4


def test_items_sizer_counts_items(sink: Upstream) -> None:
    sink.respond = Reply(200, delay=0.2)
    queue = QueueSettings(num_consumers=1, queue_size=5, sizer="items")

    async def body(exporter: Exporter, _: Settings) -> None:
        consumer = exporter.consumer(Signal.LOG)
        await consumer.consume(logs(1))
        await asyncio.sleep(0.05)
        await consumer.consume(logs(4))
        with pytest.raises(ConsumerError, match="full"):
            await consumer.consume(logs(2))
        # A batch larger than the whole queue does not fit either: upstream's
        # bounded queue answers ErrQueueIsFull, which the receiver makes a 503.
        with pytest.raises(ConsumerError, match=r"^sending queue is full$") as too_big:
            await consumer.consume(logs(6))
        assert too_big.value.retryable

    used = run(config(sink, sending_queue=queue), body)
    assert counter(used, LOG_ENQUEUE_FAILED, exporter="otlphttp") == 8


def test_a_batch_larger_than_a_blocking_queue_is_refused_as_a_full_queue(sink: Upstream) -> None:
    queue = QueueSettings(num_consumers=1, queue_size=5, sizer="items", block_on_overflow=True)

    async def body(exporter: Exporter, _: Settings) -> None:
        with pytest.raises(ConsumerError, match=r"^sending queue is full$") as too_big:
            await asyncio.wait_for(exporter.consumer(Signal.LOG).consume(logs(6)), 5)
        assert too_big.value.retryable

    run(config(sink, sending_queue=queue), body)


@pytest.mark.parametrize("given", ["ca_file", "ca_pem"])
def test_tls_with_the_servers_ca(tmp_path: Path, given: str) -> None:
    from tests.collector.components.tls_sink import TlsUpstream

    with TlsUpstream(tmp_path) as secure:
        if given == "ca_file":
            tls = replace(OtlpHttpConfig().tls, ca_file=str(secure.ca_file))
        else:
            tls = replace(OtlpHttpConfig().tls, ca_pem=secure.ca_file.read_text())

        async def body(exporter: Exporter, _: Settings) -> None:
            await exporter.consumer(Signal.LOG).consume(logs(1))

        used = run(OtlpHttpConfig(endpoint=secure.url, tls=tls, retry_on_failure=FAST_RETRY), body)
        assert len(secure.upstream.wait_for(1)) == 1
        assert counter(used, LOG_ITEMS, exporter="otlphttp") == 1


def test_a_cancelled_shutdown_still_counts_what_was_queued(sink: Upstream) -> None:
    sink.respond = Reply(200, delay=0.5)
    queue = QueueSettings(num_consumers=1, queue_size=100)
    used = settings("otlphttp")

    async def main() -> None:
        exporter = FACTORY.create(used, config(sink, sending_queue=queue), frozenset(Signal))
        await exporter.start(Host())
        for _ in range(3):
            await exporter.consumer(Signal.LOG).consume(logs(2))
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(exporter.shutdown(), 0.1)

    asyncio.run(main())
    assert counter(used, LOG_FAILED, exporter="otlphttp") == 6
