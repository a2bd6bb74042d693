"""A real OTLP/gRPC server for the exporter tests: generic handlers for the
three ``Export`` methods that record each request (raw bytes and metadata)
and answer as scripted (OK, or an error status with optional RetryInfo)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent import futures
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import grpc

from sluice.collector.rpc_status import encode_status

SERVICES = {
    "opentelemetry.proto.collector.logs.v1.LogsService": "logs",
    "opentelemetry.proto.collector.metrics.v1.MetricsService": "metrics",
    "opentelemetry.proto.collector.trace.v1.TraceService": "traces",
}


@dataclass
class Call:
    signal: str
    body: bytes
    metadata: dict[str, str]
    received_at: float
    metadata_lines: list[tuple[str, str]] = field(default_factory=list)
    """Every metadata entry in the order received (`metadata` keeps a key's last)."""


@dataclass
class Answer:
    """OK (`code` None, an empty response) or an error status."""

    code: grpc.StatusCode | None = None
    details: str = ""
    retry_delay: float | None = None
    status_details: bytes | None = None
    """A ``grpc-status-details-bin`` trailer as it is (instead of one made from `retry_delay`)."""
    response: bytes = b""
    delay: float = 0.0


@dataclass
class GrpcSink:
    """Records calls on 127.0.0.1:<free port>; `respond` decides each answer."""

    cert_folder: Path | None = None
    calls: list[Call] = field(default_factory=list)
    respond: Answer | Callable[[Call], Answer] = field(default_factory=Answer)

    def __post_init__(self) -> None:
        self._lock = threading.Condition()
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        for service, signal in SERVICES.items():
            handler = grpc.unary_unary_rpc_method_handler(self._handler(signal))
            self.server.add_generic_rpc_handlers(
                (grpc.method_handlers_generic_handler(service, {"Export": handler}),)
            )
        if self.cert_folder is None:
            self.port = self.server.add_insecure_port("127.0.0.1:0")
        else:
            from tests.providers.test_tls import self_signed

            self.ca_file, key_file = self_signed(self.cert_folder)
            credentials = grpc.ssl_server_credentials(
                [(key_file.read_bytes(), self.ca_file.read_bytes())]
            )
            self.port = self.server.add_secure_port("127.0.0.1:0", credentials)
        self.endpoint = f"127.0.0.1:{self.port}"
        self.server.start()

    def _handler(self, signal: str) -> Callable[[bytes, Any], bytes]:
        def export(body: bytes, context: Any) -> bytes:
            call = Call(
                signal,
                body,
                {m.key: m.value for m in context.invocation_metadata()},
                time.monotonic(),
                [(m.key, m.value) for m in context.invocation_metadata()],
            )
            with self._lock:
                self.calls.append(call)
                self._lock.notify_all()
                respond = self.respond
            answer = respond(call) if callable(respond) else respond
            if answer.delay:
                time.sleep(answer.delay)
            if answer.code is None:
                return answer.response
            status = answer.status_details
            if status is None and answer.retry_delay is not None:
                status = encode_status(answer.code.value[0], answer.details, answer.retry_delay)
            if status is not None:
                context.set_trailing_metadata((("grpc-status-details-bin", status),))
            context.abort(answer.code, answer.details)
            raise AssertionError("abort returns only by raising")

        return export

    def wait_for(self, count: int, timeout: float = 5.0) -> list[Call]:
        deadline = time.monotonic() + timeout
        with self._lock:
            while len(self.calls) < count and time.monotonic() < deadline:
                self._lock.wait(0.05)
            return list(self.calls)

    def __enter__(self) -> GrpcSink:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.server.stop(None)


def answers(*scripted: Answer) -> Callable[[Call], Answer]:
    """Answer with `scripted` in turn, then with the last one."""
    queue = list(scripted)

    def respond(_: Call) -> Answer:
        return queue.pop(0) if len(queue) > 1 else queue[0]

    return respond
