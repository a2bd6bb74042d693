"""``sluice-collector`` end to end: the OpenTelemetry SDK's OTLP exporters
(gRPC and HTTP) send to a real collector process, which exports to real
sinks written in the tests (OTLP/HTTP and OTLP/gRPC), record by record."""

from __future__ import annotations

import json
import random
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml
from google.rpc.status_pb2 import Status
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GrpcLogs
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpans
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as HttpLogs
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tests.collector.components.grpc_sink import GrpcSink
from tests.collector.helpers import READY, CollectorProcess, free_ports, metric_value
from tests.conformance.servers import policy_server
from tests.edge.helpers import EdgeProcess, Reply, Upstream, http_request, policies, write_json

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
)
RESOURCE = Resource.create({"service.name": "checkout"})


@pytest.fixture
def grpc_sink() -> Iterator[GrpcSink]:
    with GrpcSink() as sink:
        yield sink


def _policy_file(tmp_path: Path) -> str:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "policies.json"
    write_json(path, POLICIES)
    return str(path)


def collector_config(
    tmp_path: Path,
    exporters: dict[str, Any],
    processors: list[str] | None = None,
    batch: dict[str, Any] | None = None,
    extra_processors: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], int, int, int]:
    grpc_port, http_port, metrics_port = free_ports(3)
    chain = processors if processors is not None else ["policy", "batch"]
    config = {
        "receivers": {
            "otlp": {
                "protocols": {
                    "grpc": {"endpoint": f"127.0.0.1:{grpc_port}"},
                    "http": {"endpoint": f"127.0.0.1:{http_port}"},
                }
            }
        },
        "processors": {
            "policy": {
                "providers": [{"type": "file", "id": "local", "path": _policy_file(tmp_path)}]
            },
            "batch": batch or {"timeout": "100ms"},
            **(extra_processors or {}),
        },
        "exporters": exporters,
        "service": {
            "telemetry": {"metrics": {"address": f"127.0.0.1:{metrics_port}"}},
            "pipelines": {
                signal: {"receivers": ["otlp"], "processors": chain, "exporters": list(exporters)}
                for signal in ("logs", "metrics", "traces")
            },
        },
    }
    return config, grpc_port, http_port, metrics_port


def _emit_logs(exporter: Any, bodies: list[str]) -> None:
    provider = LoggerProvider(resource=RESOURCE)
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    logger = provider.get_logger("e2e")
    for body in bodies:
        logger.emit(body=body, attributes={"http.route": "/cart"})
    provider.shutdown()


def _seen_by(upstream: Upstream, http_port: int, expected: dict[str, list[str]]) -> None:
    """Send one log record to the collector's receiver and check the
    ``seen.by`` attribute values each named exporter path got."""
    _emit_logs(HttpLogs(endpoint=f"http://127.0.0.1:{http_port}/v1/logs"), ["order shipped"])
    for name, seen in expected.items():
        [sent] = upstream.wait_for(1, path_prefix=f"/{name}/")
        [record] = [
            record
            for resource in ExportLogsServiceRequest.FromString(sent.decoded()).resource_logs
            for scope in resource.scope_logs
            for record in scope.log_records
        ]
        assert [a.value.string_value for a in record.attributes if a.key == "seen.by"] == seen


def _bodies(requests: list[Any]) -> list[str]:
    return [
        record.body.string_value
        for request in requests
        for resource in request.resource_logs
        for scope in resource.scope_logs
        for record in scope.log_records
    ]


def _logs_at(upstream: Upstream, count: int) -> list[str]:
    deadline = time.monotonic() + 15
    while True:
        requests = [
            ExportLogsServiceRequest.FromString(r.decoded()) for r in upstream.received("/v1/logs")
        ]
        bodies = _bodies(requests)
        if len(bodies) >= count or time.monotonic() > deadline:
            return bodies
        time.sleep(0.02)


def test_sdk_grpc_and_http_through_policy_batch_otlphttp(
    tmp_path: Path, upstream: Upstream
) -> None:
    exporters = {"otlphttp": {"endpoint": upstream.url, "compression": "gzip"}}
    config, grpc_port, http_port, metrics_port = collector_config(tmp_path, exporters)
    collector = CollectorProcess(tmp_path, config).wait_ready()
    try:
        _emit_logs(
            GrpcLogs(endpoint=f"127.0.0.1:{grpc_port}", insecure=True),
            ["checkout ok", "GET /health", "payment failed"],
        )
        _emit_logs(
            HttpLogs(endpoint=f"http://127.0.0.1:{http_port}/v1/logs"),
            ["health probe", "cart updated"],
        )
        bodies = _logs_at(upstream, 3)
        assert sorted(bodies) == ["cart updated", "checkout ok", "payment failed"]
        sent = upstream.received("/v1/logs")
        assert all(r.header("Content-Encoding") == "gzip" for r in sent)
        assert all(r.header("Content-Type") == "application/x-protobuf" for r in sent)
        exposition = collector.metrics(metrics_port)
        assert (
            metric_value(
                exposition, "otelcol_receiver_accepted_log_records_total", transport="grpc"
            )
            == 3
        )
        assert (
            metric_value(
                exposition, "otelcol_receiver_accepted_log_records_total", transport="http"
            )
            == 2
        )
        assert (
            metric_value(
                exposition,
                "otelcol_processor_policy_records_total",
                telemetry_type="logs",
                result="dropped",
            )
            == 2
        )
        assert (
            metric_value(
                exposition,
                "otelcol_processor_incoming_items_total",
                processor="policy",
                otel_signal="logs",
            )
            == 5
        )
        assert (
            metric_value(
                exposition,
                "otelcol_processor_outgoing_items_total",
                processor="policy",
                otel_signal="logs",
            )
            == 3
        )
        # Upstream's batch processor is not built on processorhelper, so it
        # has its own metrics but no incoming or outgoing item counts.
        assert metric_value(exposition, "otelcol_processor_batch_batch_send_size_sum") == 3
        assert 'processor="batch"' not in "".join(
            line
            for line in exposition.splitlines()
            if line.startswith(("otelcol_processor_incoming_items", "otelcol_processor_outgoing"))
        )
        assert metric_value(exposition, "otelcol_exporter_sent_log_records_total") == 3
    finally:
        assert collector.terminate() == 0, collector.stderr()


def test_otlp_json_in_and_the_answer_in_the_request_format(
    tmp_path: Path, upstream: Upstream
) -> None:
    exporters = {
        "otlphttp": {
            "endpoint": upstream.url,
            "encoding": "json",
            "compression": "none",
            "headers": {"X-Api-Key": "${env:SLUICE_TEST_KEY}", "X-Flag": "${SLUICE_TEST_FLAG}"},
        }
    }
    config, _, http_port, _ = collector_config(tmp_path, exporters, processors=["policy"])
    env = {"SLUICE_TEST_KEY": "0755", "SLUICE_TEST_FLAG": "on"}
    collector = CollectorProcess(tmp_path, config, env=env).wait_ready()
    try:
        doc = {
            "resourceLogs": [
                {
                    "resource": {
                        "attributes": [{"key": "service.name", "value": {"stringValue": "web"}}]
                    },
                    "scopeLogs": [
                        {
                            "logRecords": [
                                {
                                    "body": {"stringValue": "GET /health ok"},
                                    "traceId": "5b8efff798038103d269b633813fc60c",
                                },
                                {
                                    "body": {"stringValue": "order placed"},
                                    "traceId": "5b8efff798038103d269b633813fc60c",
                                    "severityNumber": 9,
                                },
                            ]
                        }
                    ],
                }
            ]
        }
        answer = http_request(
            http_port,
            "POST",
            "/v1/logs",
            json.dumps(doc).encode(),
            {"Content-Type": "application/json"},
            10.0,
        )
        assert answer.status == 200, answer
        assert answer.header("Content-Type") == "application/json"
        assert isinstance(json.loads(answer.body), dict)
        [forwarded] = upstream.wait_for(1, path_prefix="/v1/logs")
        assert forwarded.header("Content-Type") == "application/json"
        # Whole-value references reach text fields as written (not 493, not True).
        assert (forwarded.header("X-Api-Key"), forwarded.header("X-Flag")) == ("0755", "on")
        sent = json.loads(forwarded.body)
        [record] = sent["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
        assert record["body"] == {"stringValue": "order placed"}
        assert record["traceId"] == "5b8efff798038103d269b633813fc60c"
        bad = http_request(
            http_port, "POST", "/v1/logs", b"{not json", {"Content-Type": "application/json"}, 10.0
        )
        assert bad.status == 400
        assert "message" in json.loads(bad.body)
        unknown = http_request(
            http_port, "POST", "/v1/logs", b"x", {"Content-Type": "text/plain"}, 10.0
        )
        assert unknown.status == 415
    finally:
        assert collector.terminate() == 0, collector.stderr()


def test_sdk_spans_over_grpc_to_a_grpc_sink(tmp_path: Path, grpc_sink: GrpcSink) -> None:
    exporters = {
        "otlp": {
            "endpoint": grpc_sink.endpoint,
            "tls": {"insecure": True},
            "headers": {"x-tenant": "blue"},
        }
    }
    config, grpc_port, _, _ = collector_config(tmp_path, exporters)
    collector = CollectorProcess(tmp_path, config).wait_ready()
    try:
        provider = TracerProvider(resource=RESOURCE)
        provider.add_span_processor(
            SimpleSpanProcessor(GrpcSpans(endpoint=f"127.0.0.1:{grpc_port}", insecure=True))
        )
        tracer = provider.get_tracer("e2e")
        for name in ("GET /cart", "GET /health", "POST /checkout"):
            with tracer.start_as_current_span(name):
                pass
        provider.shutdown()
        deadline = time.monotonic() + 15
        names: list[str] = []
        while len(names) < 2 and time.monotonic() < deadline:
            calls = grpc_sink.wait_for(len(grpc_sink.calls) + 1, timeout=0.5)
            names = [
                span.name
                for call in calls
                for rs in ExportTraceServiceRequest.FromString(call.body).resource_spans
                for ss in rs.scope_spans
                for span in ss.spans
            ]
        assert sorted(names) == ["GET /cart", "POST /checkout"]
        assert calls[0].metadata.get("x-tenant") == "blue"
    finally:
        assert collector.terminate() == 0, collector.stderr()


@pytest.mark.parametrize("processors", [[], ["batch"]], ids=["no-batch", "batch"])
def test_a_full_queue_refuses_and_the_sdk_retries_until_every_record_arrives(
    tmp_path: Path, upstream: Upstream, processors: list[str]
) -> None:
    """The sink holds its answers; the queue (1 batch, 1 consumer) fills; the
    receiver answers 503 (the queue refuses, or the batch processor holds a
    refused batch) and the SDK retries until the sink lets go: 2 s after the
    first request reached it (counted from then, not from the test's start,
    which a slow start of the collector on a busy host could use up)."""
    release: list[float] = []

    def slow(record: Any) -> Reply:
        if not release:
            release.append(time.monotonic() + 2.0)
        return Reply(200, b"", delay=max(release[0] - time.monotonic(), 0.0))

    upstream.respond = slow
    exporters = {
        "otlphttp": {
            "endpoint": upstream.url,
            "sending_queue": {"num_consumers": 1, "queue_size": 1},
            "retry_on_failure": {"initial_interval": "50ms"},
        }
    }
    config, _, http_port, metrics_port = collector_config(
        tmp_path, exporters, processors=processors, batch={"timeout": "0s"}
    )
    collector = CollectorProcess(tmp_path, config).wait_ready()
    try:
        bodies = [f"record {i}" for i in range(6)]
        _emit_logs(HttpLogs(endpoint=f"http://127.0.0.1:{http_port}/v1/logs", timeout=30), bodies)
        assert sorted(_logs_at(upstream, 6)) == sorted(bodies)
        exposition = collector.metrics(metrics_port)
        assert metric_value(exposition, "otelcol_exporter_enqueue_failed_log_records_total") > 0
        assert metric_value(exposition, "otelcol_receiver_refused_log_records_total") > 0
    finally:
        assert collector.terminate() == 0, collector.stderr()


def test_a_refusing_memory_limiter_answers_retryable_errors(
    tmp_path: Path, upstream: Upstream
) -> None:
    exporters = {"otlphttp": {"endpoint": upstream.url}}
    limiter = {"memory_limiter": {"check_interval": "100ms", "limit_mib": 2}}
    config, grpc_port, http_port, metrics_port = collector_config(
        tmp_path, exporters, processors=["memory_limiter", "policy"], extra_processors=limiter
    )
    collector = CollectorProcess(tmp_path, config).wait_ready()
    try:
        answer = http_request(
            http_port,
            "POST",
            "/v1/logs",
            _one_log(),
            {"Content-Type": "application/x-protobuf"},
            10.0,
        )
        assert answer.status in (429, 503), answer
        assert answer.header("Retry-After") is not None
        channel = grpc.insecure_channel(f"127.0.0.1:{grpc_port}")
        export = channel.unary_unary(
            "/opentelemetry.proto.collector.logs.v1.LogsService/Export",
            request_serializer=lambda b: b,
            response_deserializer=lambda b: b,
        )
        with pytest.raises(grpc.RpcError) as refused:
            export(_one_log(), timeout=10)
        assert refused.value.code() in (
            grpc.StatusCode.UNAVAILABLE,
            grpc.StatusCode.RESOURCE_EXHAUSTED,
        )
        channel.close()
        assert upstream.received() == []
        exposition = collector.metrics(metrics_port)
        assert metric_value(exposition, "otelcol_receiver_refused_log_records_total") == 2
    finally:
        assert collector.terminate() == 0, collector.stderr()


@pytest.mark.parametrize("transport", ["http", "grpc"])
def test_a_memory_limiter_refuses_until_memory_is_freed_and_the_sdk_retries_until_every_record_arrives(
    tmp_path: Path, upstream: Upstream, transport: str
) -> None:
    """Real memory pressure: the sink refuses (503) while the test fills the
    exporter's queue with 1 MiB requests until the resident size crosses the
    soft limit and the receiver answers 503. The SDK's records are refused
    too and retried; once the sink lets the queue drain, the limiter gives
    the freed memory back, accepts again, and every SDK record arrives."""
    released = threading.Event()
    upstream.respond = lambda record: (
        Reply(200) if released.is_set() else Reply(503, headers=[("Retry-After", "1")])
    )
    grpc_port, http_port, metrics_port = free_ports(3)
    # About 55 MiB resident at start; each queued 1 MiB request adds about 1 MiB.
    soft_mib, spike_mib = 120, 40
    config = {
        "receivers": {
            "otlp": {
                "protocols": {
                    "grpc": {"endpoint": f"127.0.0.1:{grpc_port}"},
                    "http": {"endpoint": f"127.0.0.1:{http_port}"},
                }
            }
        },
        "processors": {
            "memory_limiter": {
                "check_interval": "100ms",
                "limit_mib": soft_mib + spike_mib,
                "spike_limit_mib": spike_mib,
            }
        },
        "exporters": {
            "otlphttp": {
                "endpoint": upstream.url,
                "sending_queue": {"num_consumers": 1, "queue_size": 1000},
                "retry_on_failure": {"initial_interval": "100ms", "max_interval": "200ms"},
            }
        },
        "service": {
            "telemetry": {"metrics": {"address": f"127.0.0.1:{metrics_port}"}},
            "pipelines": {
                "logs": {
                    "receivers": ["otlp"],
                    "processors": ["memory_limiter"],
                    "exporters": ["otlphttp"],
                }
            },
        },
    }
    collector = CollectorProcess(tmp_path, config).wait_ready()
    try:
        filler = _filler_request()
        for _ in range(soft_mib * 2):
            answer = http_request(
                http_port,
                "POST",
                "/v1/logs",
                filler,
                {"Content-Type": "application/x-protobuf"},
                10.0,
            )
            if answer.status != 200:
                break
        assert answer.status == 503 and answer.header("Retry-After") is not None, answer
        collector.wait_log("above soft limit. Refusing data")

        def refused() -> float:
            exposition = collector.metrics(metrics_port)
            return metric_value(exposition, "otelcol_receiver_refused_log_records_total")

        refused_before = refused()
        exporter = (
            HttpLogs(endpoint=f"http://127.0.0.1:{http_port}/v1/logs", timeout=60)
            if transport == "http"
            else GrpcLogs(endpoint=f"127.0.0.1:{grpc_port}", insecure=True, timeout=60)
        )
        bodies = [f"sdk record {i}" for i in range(3)]
        sender = threading.Thread(target=_emit_logs, args=(exporter, bodies))
        sender.start()
        deadline = time.monotonic() + 15
        while refused() == refused_before:  # the SDK's first try was refused
            assert time.monotonic() < deadline, collector.stderr()
            time.sleep(0.05)
        released.set()
        sender.join(60)
        assert not sender.is_alive()
        collector.wait_log("Resuming normal operation")
        deadline = time.monotonic() + 15
        while True:
            requests = [
                ExportLogsServiceRequest.FromString(r.decoded())
                for r in upstream.received("/v1/logs")
            ]
            arrived = [b for b in _bodies(requests) if b.startswith("sdk record")]
            if len(arrived) >= len(bodies) or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert sorted(arrived) == bodies
    finally:
        released.set()
        assert collector.terminate() == 0, collector.stderr()


def _filler_request() -> bytes:
    """About 1 MiB of log records with incompressible bodies."""
    rng = random.Random(13)
    request = ExportLogsServiceRequest()
    records = request.resource_logs.add().scope_logs.add().log_records
    for _ in range(1000):
        records.add().body.string_value = rng.randbytes(500).hex()
    return bytes(request.SerializeToString())


def _one_log() -> bytes:
    request = ExportLogsServiceRequest()
    request.resource_logs.add().scope_logs.add().log_records.add().body.string_value = "hello"
    return bytes(request.SerializeToString())


def test_sigterm_flushes_the_batch(tmp_path: Path, upstream: Upstream) -> None:
    exporters = {"otlphttp": {"endpoint": upstream.url}}
    config, _, http_port, _ = collector_config(tmp_path, exporters, batch={"timeout": "60s"})
    collector = CollectorProcess(tmp_path, config).wait_ready()
    answers: list[int] = []

    def send() -> None:
        answer = http_request(
            http_port,
            "POST",
            "/v1/logs",
            _one_log(),
            {"Content-Type": "application/x-protobuf"},
            30.0,
        )
        answers.append(answer.status)

    sender = threading.Thread(target=send)
    sender.start()
    time.sleep(0.5)
    assert upstream.received() == []  # held by the batch (60 s timeout)
    assert collector.terminate() == 0, collector.stderr()
    sender.join(10)
    assert _logs_at(upstream, 1) == ["hello"]
    assert answers == [200]


def test_sigterm_stops_a_pipeline_before_the_pipelines_its_connector_feeds(
    tmp_path: Path, upstream: Upstream
) -> None:
    """Upstream's graph stops components in topological order: the batch of
    ``logs/in`` flushes into the ``forward`` connector while the batch of
    ``logs/out`` still runs, which holds it with its own record and sends
    both in one request when it stops."""
    (http_port,) = free_ports(1)
    config = {
        "receivers": {"otlp": {"protocols": {"http": {"endpoint": f"127.0.0.1:{http_port}"}}}},
        "processors": {"batch": {"timeout": "60s"}, "batch/out": {"timeout": "60s"}},
        "exporters": {"otlphttp": {"endpoint": upstream.url}},
        "connectors": {"forward": {}},
        "service": {
            "telemetry": {"metrics": {"level": "none"}},
            "pipelines": {
                "logs/in": {
                    "receivers": ["otlp"],
                    "processors": ["batch"],
                    "exporters": ["forward"],
                },
                "logs/out": {
                    "receivers": ["forward", "otlp"],
                    "processors": ["batch/out"],
                    "exporters": ["otlphttp"],
                },
            },
        },
    }
    collector = CollectorProcess(tmp_path, config).wait_ready()
    answer = http_request(
        http_port, "POST", "/v1/logs", _one_log(), {"Content-Type": "application/x-protobuf"}
    )
    assert answer.status == 200
    time.sleep(0.2)
    assert upstream.received() == []  # held by both batches (60 s timeout)
    assert collector.terminate() == 0, collector.stderr()
    requests = [ExportLogsServiceRequest.FromString(r.decoded()) for r in upstream.received()]
    assert [_bodies([request]) for request in requests] == [["hello", "hello"]]


def test_sighup_reloads_the_config_and_a_config_that_does_not_load_changes_nothing(
    tmp_path: Path, upstream: Upstream
) -> None:
    """As upstream's collector: SIGHUP reads the config again and restarts the
    service on it. A broken edit is logged, naming the file and the key, and
    the running config stays (upstream would exit)."""
    exporters = {"otlphttp": {"endpoint": upstream.url}}
    config, grpc_port, http_port, _ = collector_config(tmp_path, exporters)
    collector = CollectorProcess(tmp_path, config).wait_ready()
    try:
        _emit_logs(HttpLogs(endpoint=f"http://127.0.0.1:{http_port}/v1/logs"), ["health 1", "a"])
        assert _logs_at(upstream, 1) == ["a"]
        for pipeline in config["service"]["pipelines"].values():
            pipeline["processors"] = ["batch"]  # the policy processor goes
        collector.config_path.write_text(yaml.safe_dump(config))
        collector.process.send_signal(signal.SIGHUP)
        collector.wait_log(
            r"(?s)signal=hangup.*Config updated, restart service.*Everything is ready"
        )
        _emit_logs(GrpcLogs(endpoint=f"127.0.0.1:{grpc_port}", insecure=True), ["health 2", "b"])
        assert sorted(_logs_at(upstream, 3)) == ["a", "b", "health 2"]

        config["processors"]["batch"]["send_batch_sizee"] = 10
        collector.config_path.write_text(yaml.safe_dump(config))
        collector.process.send_signal(signal.SIGHUP)
        failed = collector.wait_log(r"config reload: (.*)\n(?:.*\n)*.*config reload failed")
        assert str(collector.config_path) in failed[1] and "send_batch_sizee" in failed[1]
        _emit_logs(HttpLogs(endpoint=f"http://127.0.0.1:{http_port}/v1/logs"), ["health 3"])
        assert sorted(_logs_at(upstream, 4)) == ["a", "b", "health 2", "health 3"]
        assert collector.stderr().count(READY) == 2
    finally:
        assert collector.terminate() == 0, collector.stderr()


def test_collector_in_front_of_edge(tmp_path: Path, upstream: Upstream) -> None:
    edge_policies = policies(
        {
            "id": "drop-debug",
            "name": "drop debug",
            "log": {"match": [{"log_field": "body", "starts_with": "debug"}], "keep": "none"},
        }
    )
    edge = EdgeProcess(
        tmp_path / "edge", {"upstream_url": upstream.url}, edge_policies
    ).wait_ready()
    try:
        exporters = {"otlphttp": {"endpoint": f"http://127.0.0.1:{edge.port}"}}
        config, _, http_port, _ = collector_config(tmp_path / "collector", exporters)
        collector = CollectorProcess(tmp_path / "collector", config).wait_ready()
        try:
            _emit_logs(
                HttpLogs(endpoint=f"http://127.0.0.1:{http_port}/v1/logs"),
                ["debug: cache warm", "GET /health", "order shipped"],
            )
            assert _logs_at(upstream, 1) == ["order shipped"]
        finally:
            assert collector.terminate() == 0, collector.stderr()
    finally:
        assert edge.terminate() == 0, edge.stderr()


def test_policies_synced_over_grpc_with_a_bearer_token_from_the_environment(
    tmp_path: Path, upstream: Upstream
) -> None:
    """COLLECTOR.md: a grpc provider whose Authorization header takes its
    token from ``${env:...}``; a policy server that requires the token
    serves the policies the collector filters with."""
    served = tmp_path / "served.json"
    write_json(served, POLICIES)
    with policy_server(served, "--token", "20240607") as server:
        exporters = {"otlphttp": {"endpoint": upstream.url}}
        config, _, http_port, metrics_port = collector_config(tmp_path, exporters)
        config["processors"]["policy"]["providers"] = [
            {
                "type": "grpc",
                "id": "control-plane",
                "url": server.grpc_target,
                "headers": [{"name": "Authorization", "value": "Bearer ${env:POLICY_TOKEN}"}],
            }
        ]
        collector = CollectorProcess(tmp_path, config, env={"POLICY_TOKEN": "20240607"})
        try:
            collector.wait_ready()
            _emit_logs(
                HttpLogs(endpoint=f"http://127.0.0.1:{http_port}/v1/logs"),
                ["GET /health", "order shipped"],
            )
            assert _logs_at(upstream, 1) == ["order shipped"]
            dropped = metric_value(
                collector.metrics(metrics_port),
                "otelcol_processor_policy_records_total",
                telemetry_type="logs",
                result="dropped",
            )
            assert dropped == 1
        finally:
            assert collector.terminate() == 0, collector.stderr()


def test_an_edit_late_in_one_pipeline_never_reaches_another_fed_by_the_same_receiver(
    tmp_path: Path, upstream: Upstream
) -> None:
    """Upstream's capabilities node: a pipeline mutates data when any of its
    processors does (not only its first), so the receiver's fan-out gives
    each such pipeline data of its own."""
    (http_port,) = free_ports(1)
    config = {
        "receivers": {"otlp": {"protocols": {"http": {"endpoint": f"127.0.0.1:{http_port}"}}}},
        "processors": {
            "memory_limiter": {"check_interval": "1s", "limit_mib": 100_000},
            "attributes/a": {"actions": [{"key": "seen.by", "value": "a", "action": "insert"}]},
            "attributes/b": {"actions": [{"key": "seen.by", "value": "b", "action": "insert"}]},
        },
        "exporters": {
            f"otlphttp/{name}": {"logs_endpoint": f"{upstream.url}/{name}/v1/logs"}
            for name in ("a", "b")
        },
        "service": {
            "telemetry": {"metrics": {"level": "none"}},
            "pipelines": {
                "logs/a": {
                    "receivers": ["otlp"],
                    "processors": ["memory_limiter", "attributes/a"],
                    "exporters": ["otlphttp/a"],
                },
                "logs/b": {
                    "receivers": ["otlp"],
                    "processors": ["attributes/b"],
                    "exporters": ["otlphttp/b"],
                },
            },
        },
    }
    collector = CollectorProcess(tmp_path, config).wait_ready()
    try:
        _seen_by(upstream, http_port, {"a": ["a"], "b": ["b"]})
    finally:
        assert collector.terminate() == 0, collector.stderr()


def test_a_receiver_feeding_pipelines_that_refuse_answers_as_upstreams_fanout_combines(
    tmp_path: Path,
) -> None:
    """One pipeline refuses for good (a batch processor past its
    metadata_cardinality_limit) and one for now (an exporter cannot
    connect): upstream's fan-out joins the errors, those of pipelines that
    edit data first, and the joined error is permanent since one of them is,
    so the receiver answers INTERNAL (HTTP 500), not UNAVAILABLE."""
    http_port, closed_port = free_ports(2)
    config = {
        "receivers": {
            "otlp": {
                "protocols": {
                    "http": {"endpoint": f"127.0.0.1:{http_port}", "include_metadata": True}
                }
            }
        },
        "processors": {"batch": {"metadata_keys": ["tenant"], "metadata_cardinality_limit": 1}},
        "exporters": {
            "otlphttp": {
                "endpoint": f"http://127.0.0.1:{closed_port}",
                "sending_queue": {"enabled": False},
                "retry_on_failure": {"enabled": False},
            }
        },
        "service": {
            "telemetry": {"metrics": {"level": "none"}},
            "pipelines": {
                "logs/down": {"receivers": ["otlp"], "exporters": ["otlphttp"]},
                "logs/batched": {
                    "receivers": ["otlp"],
                    "processors": ["batch"],
                    "exporters": ["otlphttp"],
                },
            },
        },
    }
    collector = CollectorProcess(tmp_path, config).wait_ready()
    try:
        answers = []
        for tenant in ("a", "b"):
            headers = {"Content-Type": "application/x-protobuf", "tenant": tenant}
            answers.append(
                http_request(http_port, "POST", "/v1/logs", _one_log(), headers, timeout=10)
            )
        assert answers[0].status == 503, answers[0]  # the batch took it, the exporter did not
        assert answers[1].status == 500, answers[1]
        status = Status.FromString(answers[1].body)
        assert status.code == 13
        batched, _, down = status.message.partition("; ")
        assert batched == "Permanent error: too many batcher metadata-value combinations"
        assert down.startswith("failed to make an HTTP request: Post ")
    finally:
        assert collector.terminate() == 0, collector.stderr()


def test_an_edit_behind_a_forward_connector_never_reaches_the_exporters_beside_it(
    tmp_path: Path, upstream: Upstream
) -> None:
    """Upstream's forward connector has the capabilities of the pipelines it
    feeds: when they edit data, the fan-out before it hands it a copy, and
    the exporters beside it (whose queue sends later) keep the original."""
    (http_port,) = free_ports(1)
    config = {
        "receivers": {"otlp": {"protocols": {"http": {"endpoint": f"127.0.0.1:{http_port}"}}}},
        "processors": {
            "attributes": {"actions": [{"key": "seen.by", "value": "out", "action": "insert"}]}
        },
        "exporters": {
            f"otlphttp/{name}": {"logs_endpoint": f"{upstream.url}/{name}/v1/logs"}
            for name in ("in", "out")
        },
        "connectors": {"forward": {}},
        "service": {
            "telemetry": {"metrics": {"level": "none"}},
            "pipelines": {
                "logs/in": {"receivers": ["otlp"], "exporters": ["otlphttp/in", "forward"]},
                "logs/out": {
                    "receivers": ["forward"],
                    "processors": ["attributes"],
                    "exporters": ["otlphttp/out"],
                },
            },
        },
    }
    collector = CollectorProcess(tmp_path, config).wait_ready()
    try:
        _seen_by(upstream, http_port, {"in": [], "out": ["out"]})
    finally:
        assert collector.terminate() == 0, collector.stderr()


def test_a_pipeline_whose_exporters_all_edit_gets_data_of_its_own(
    tmp_path: Path, upstream: Upstream
) -> None:
    """Upstream's capabilities node counts the pipeline's fan-out to its
    exporters too: a pipeline whose only exporter is a connector to an
    editing pipeline edits data, even when its own processors only read,
    so the receiver gives the other pipelines it feeds the original."""
    (http_port,) = free_ports(1)
    config = {
        "receivers": {"otlp": {"protocols": {"http": {"endpoint": f"127.0.0.1:{http_port}"}}}},
        "processors": {
            "memory_limiter": {"check_interval": "1s", "limit_mib": 100_000},
            "attributes": {"actions": [{"key": "seen.by", "value": "out", "action": "insert"}]},
        },
        "exporters": {
            f"otlphttp/{name}": {"logs_endpoint": f"{upstream.url}/{name}/v1/logs"}
            for name in ("other", "out")
        },
        "connectors": {"forward": {}},
        "service": {
            "telemetry": {"metrics": {"level": "none"}},
            "pipelines": {
                "logs/in": {
                    "receivers": ["otlp"],
                    "processors": ["memory_limiter"],
                    "exporters": ["forward"],
                },
                "logs/out": {
                    "receivers": ["forward"],
                    "processors": ["attributes"],
                    "exporters": ["otlphttp/out"],
                },
                "logs/other": {"receivers": ["otlp"], "exporters": ["otlphttp/other"]},
            },
        },
    }
    collector = CollectorProcess(tmp_path, config).wait_ready()
    try:
        _seen_by(upstream, http_port, {"other": [], "out": ["out"]})
    finally:
        assert collector.terminate() == 0, collector.stderr()
