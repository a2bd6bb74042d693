"""A real ``sluice-collector`` whose exporters send without a queue: the
server's answer reaches the OTLP sender as upstream passes it on, its
status code kept (upstream's receiver answers a status error with that
status, and exporters report a server's answer as one)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from sluice.collector.rpc_status import parse_status
from tests.collector.components.grpc_sink import Answer, GrpcSink
from tests.collector.helpers import CollectorProcess, free_ports
from tests.edge.helpers import Reply, Upstream, http_request

LOGS_EXPORT = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"


def logs_request() -> bytes:
    request = ExportLogsServiceRequest()
    request.resource_logs.add().scope_logs.add().log_records.add().body.string_value = "hello"
    return bytes(request.SerializeToString())


@pytest.fixture
def collector(tmp_path: Path) -> Iterator[tuple[dict[str, int], Upstream, GrpcSink]]:
    upstream, sink = Upstream(), GrpcSink()
    http, grpc_http, metrics = free_ports(3)
    without_queue: dict[str, Any] = {
        "sending_queue": {"enabled": False},
        "retry_on_failure": {"enabled": False},
    }
    config = {
        "receivers": {
            "otlp/http": {"protocols": {"http": {"endpoint": f"127.0.0.1:{http}"}}},
            "otlp/grpc": {"protocols": {"http": {"endpoint": f"127.0.0.1:{grpc_http}"}}},
        },
        "exporters": {
            "otlphttp": {"endpoint": upstream.url, "compression": "none", **without_queue},
            "otlp": {"endpoint": sink.endpoint, "tls": {"insecure": True}, **without_queue},
        },
        "service": {
            "telemetry": {"metrics": {"address": f"127.0.0.1:{metrics}"}},
            "pipelines": {
                "logs/http": {"receivers": ["otlp/http"], "exporters": ["otlphttp"]},
                "logs/grpc": {"receivers": ["otlp/grpc"], "exporters": ["otlp"]},
            },
        },
    }
    process = CollectorProcess(tmp_path, config)
    try:
        process.wait_ready()
        yield {"http": http, "grpc": grpc_http}, upstream, sink
    finally:
        process.terminate()
        upstream.stop()
        sink.server.stop(0)


def post(port: int) -> tuple[int, dict[str, Any]]:
    answer = http_request(
        port, "POST", "/v1/logs", logs_request(), {"Content-Type": "application/x-protobuf"}, 10
    )
    assert answer.header("Content-Type") == "application/x-protobuf"
    status = parse_status(answer.body)
    assert status is not None
    return answer.status, {"code": status.code, "message": status.message}


@pytest.mark.parametrize(
    ("downstream", "answered", "code"),
    [(400, 400, 3), (404, 404, 12), (429, 429, 8), (500, 500, 2), (503, 503, 14)],
)
def test_an_http_servers_answer_reaches_the_sender(
    collector: tuple[dict[str, int], Upstream, GrpcSink], downstream: int, answered: int, code: int
) -> None:
    ports, upstream, _ = collector
    upstream.respond = Reply(downstream, json.dumps({"message": "no"}).encode())
    status, problem = post(ports["http"])
    assert (status, problem["code"]) == (answered, code), problem
    assert f"responded with HTTP Status Code {downstream}" in problem["message"]


@pytest.mark.parametrize(
    ("downstream", "answered", "code"),
    [
        (grpc.StatusCode.INVALID_ARGUMENT, 400, 3),
        (grpc.StatusCode.PERMISSION_DENIED, 403, 7),
        (grpc.StatusCode.NOT_FOUND, 500, 5),
        (grpc.StatusCode.UNAVAILABLE, 503, 14),
    ],
)
def test_a_grpc_servers_status_reaches_the_sender(
    collector: tuple[dict[str, int], Upstream, GrpcSink],
    downstream: grpc.StatusCode,
    answered: int,
    code: int,
) -> None:
    ports, _, sink = collector
    sink.respond = Answer(downstream, "no")
    status, problem = post(ports["grpc"])
    assert (status, problem["code"]) == (answered, code), problem
    assert problem["message"].endswith("desc = no"), problem
