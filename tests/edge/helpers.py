"""Real processes and a real upstream for the Edge tests.

* :class:`Upstream`: a stdlib ``ThreadingHTTPServer`` (HTTP/1.1, keep-alive,
  Content-Length answers) that records every request and answers as scripted.
* :class:`EdgeProcess`: ``sluice-edge CONFIG.json`` as a subprocess, its
  port parsed from the "listening on" log line, stopped with SIGTERM.
* Small OTLP builders/readers and raw HTTP helpers.
"""

from __future__ import annotations

import gzip
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import cramjam
import zstandard
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from prometheus_client.parser import text_string_to_metric_families

BIN = Path(sys.executable).parent
LISTENING = re.compile(r"listening on \S+:(\d+)")
WORKER_LISTENING = re.compile(r"pid=(\d+) logger=sluice.edge msg=\"[^\"]*listening")
START_TIMEOUT = 30.0

# -- the upstream -------------------------------------------------------------------


@dataclass
class Recorded:
    """One request the upstream received."""

    method: str
    target: str
    """Path and ?query exactly as on the request line."""
    headers: list[tuple[str, str]]
    body: bytes
    client: tuple[str, int]
    received_at: float = 0.0

    @property
    def path(self) -> str:
        return self.target.partition("?")[0]

    @property
    def query(self) -> str:
        return self.target.partition("?")[2]

    def header(self, name: str) -> str | None:
        values = self.all(name)
        return values[0] if values else None

    def all(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k.lower() == name.lower()]

    def decoded(self) -> bytes:
        """The body with its Content-Encoding undone."""
        return decompress(self.header("Content-Encoding") or "", self.body)


@dataclass
class Reply:
    """How the upstream answers one request."""

    status: int = 200
    body: bytes = b""
    headers: Sequence[tuple[str, str]] = ()
    content_type: str | None = "application/json"
    delay: float = 0.0
    close: bool = False
    """Close the connection without answering."""
    chunked: bool = False
    """Answer with Transfer-Encoding: chunked instead of Content-Length."""
    truncate: bool = False
    """Promise more body than is sent, then close (a response cut short)."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    wbufsize = 1 << 16  # one write per answer (no Nagle/delayed-ACK stalls)
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def handle_expect_100(self) -> bool:
        """Send the interim ``100 Continue`` at once, as real servers do."""
        answer = super().handle_expect_100()
        self.wfile.flush()
        return answer

    def _body(self) -> bytes:
        if (self.headers.get("Transfer-Encoding") or "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _handle(self) -> None:
        record = Recorded(
            self.command,
            self.path,
            list(self.headers.items()),
            self._body(),
            self.client_address,
            time.monotonic(),
        )
        reply = self.server.owner.accept(record)
        if reply.delay:
            time.sleep(reply.delay)
        if reply.close:
            self.close_connection = True
            return
        try:
            self.send_response(reply.status)
            for name, value in reply.headers:
                self.send_header(name, value)
            if reply.content_type is not None:
                self.send_header("Content-Type", reply.content_type)
            if reply.chunked:
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                if self.command != "HEAD":
                    half = len(reply.body) // 2
                    for part in (reply.body[:half], reply.body[half:]):
                        if part:
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                    self.wfile.write(b"0\r\n\r\n")
            elif reply.truncate:
                self.send_header("Content-Length", str(len(reply.body) + 100))
                self.end_headers()
                self.wfile.write(reply.body)
                self.close_connection = True
            else:
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(reply.body)
            self.wfile.flush()
        except OSError:  # Edge gave up on us (timeout): nothing to answer
            self.close_connection = True

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _handle


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256
    owner: Upstream

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client (Edge) closing on us is not a test failure


class Upstream:
    """A recording, scriptable upstream on 127.0.0.1:<free port>."""

    def __init__(self, base_path: str = "") -> None:
        self.requests: list[Recorded] = []
        self.respond: Reply | Callable[[Recorded], Reply] = Reply()
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}{base_path}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def accept(self, record: Recorded) -> Reply:
        with self._changed:
            self.requests.append(record)
            self._changed.notify_all()
            respond = self.respond
        return respond(record) if callable(respond) else respond

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.respond = Reply()

    def received(self, path_prefix: str = "") -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if r.target.startswith(path_prefix)]

    def wait_for(self, count: int, timeout: float = 10.0, path_prefix: str = "") -> list[Recorded]:
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                got = [r for r in self.requests if r.target.startswith(path_prefix)]
                if len(got) >= count or time.monotonic() >= deadline:
                    return got
                self._changed.wait(0.05)

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


# -- raw HTTP ------------------------------------------------------------------------


@dataclass
class Answer:
    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        for key, value in self.headers:
            if key.lower() == name.lower():
                return value
        return None

    def json(self) -> Any:
        return json.loads(self.body)


def http_request(
    port: int,
    method: str,
    target: str,
    body: bytes | None = None,
    headers: dict[str, str] | Iterable[tuple[str, str]] = (),
    timeout: float = 30.0,
    host: str = "127.0.0.1",
) -> Answer:
    """One request on a fresh connection (http.client; Host is set by it unless given)."""
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        items = list(headers.items()) if isinstance(headers, dict) else list(headers)
        skip_host = any(k.lower() == "host" for k, _ in items)
        conn.putrequest(method, target, skip_host=skip_host, skip_accept_encoding=True)
        for name, value in items:
            conn.putheader(name, value)
        if body is not None and not any(k.lower() == "content-length" for k, _ in items):
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        return Answer(response.status, response.getheaders(), response.read())
    finally:
        conn.close()


def read_responses(sock: socket.socket, count: int, timeout: float = 30.0) -> list[Answer]:
    """Parse `count` Content-Length-framed HTTP/1.1 responses off a raw socket."""
    sock.settimeout(timeout)
    buffer = b""
    out: list[Answer] = []
    while len(out) < count:
        while b"\r\n\r\n" not in buffer:
            chunk = sock.recv(65536)
            if not chunk:
                raise ConnectionError(f"closed after {len(out)} responses: {buffer!r}")
            buffer += chunk
        head, _, buffer = buffer.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ")[1])
        headers = [tuple(line.split(": ", 1)) for line in lines[1:]]
        length = next((int(v) for k, v in headers if k.lower() == "content-length"), 0)
        while len(buffer) < length:
            chunk = sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed mid-body")
            buffer += chunk
        out.append(Answer(status, headers, buffer[:length]))  # type: ignore[arg-type]
        buffer = buffer[length:]
    return out


def raw_exchange(port: int, data: bytes, timeout: float = 30.0) -> bytes:
    """Send raw bytes, read until the server closes (or the timeout)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        chunks = []
        try:
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
        except (TimeoutError, ConnectionResetError):
            pass
        return b"".join(chunks)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- Edge processes -------------------------------------------------------------------


class EdgeProcess:
    """One ``sluice-edge`` (or ``sluice-edge-datadog``) process."""

    def __init__(
        self,
        workdir: Path,
        config: dict[str, Any],
        policies: dict[str, Any] | None = None,
        program: str = "sluice-edge",
        env: dict[str, str] | None = None,
    ) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.workdir = workdir
        self.policy_path = workdir / "policies.json"
        config = dict(config)
        if policies is not None:
            write_json(self.policy_path, policies)
            config.setdefault(
                "policy_providers",
                [
                    {
                        "type": "file",
                        "id": "local",
                        "path": "policies.json",
                        "poll_interval_secs": 0.2,
                    }
                ],
            )
        config.setdefault("listen_port", 0)
        self.config_path = workdir / "config.json"
        write_json(self.config_path, config)
        self.stderr_path = workdir / "edge.stderr"
        self._stderr = self.stderr_path.open("wb")
        self.process = subprocess.Popen(
            [str(BIN / program), str(self.config_path)],
            stdout=subprocess.DEVNULL,
            stderr=self._stderr,
            env={**os.environ, **(env or {})},
        )
        self.port = config["listen_port"]
        address = config.get("listen_address", "127.0.0.1")
        self.host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(address, address)

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def wait_ready(self, loaded: bool = True) -> EdgeProcess:
        """Wait for the log line (port), then for /_health (and loaded providers)."""
        deadline = time.monotonic() + START_TIMEOUT
        while not self.port:
            found = LISTENING.search(self.stderr())
            if found:
                self.port = int(found.group(1))
                break
            self._still_starting(deadline, "did not log its port")
        while True:
            try:
                health = self.health()
                if not loaded or all(p["loaded"] for p in health["providers"]):
                    return self
            except (OSError, http.client.HTTPException, ValueError):
                pass
            self._still_starting(deadline, "not ready")

    def _still_starting(self, deadline: float, late: str) -> None:
        """Raise if Edge exited or the deadline passed; else pause before polling again."""
        if self.process.poll() is not None:
            raise RuntimeError(f"edge exited {self.process.returncode}: {self.stderr()}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"edge {late}: {self.stderr()}")
        time.sleep(0.02)

    def request(
        self,
        method: str,
        target: str,
        body: bytes | None = None,
        headers: dict[str, str] | Iterable[tuple[str, str]] = (),
        timeout: float = 30.0,
    ) -> Answer:
        return http_request(self.port, method, target, body, headers, timeout, self.host)

    def post(self, target: str, body: bytes, content_type: str, **headers: str) -> Answer:
        extra = {k.replace("_", "-"): v for k, v in headers.items()}
        return self.request("POST", target, body, {"Content-Type": content_type, **extra})

    def health(self) -> Any:
        answer = self.request("GET", "/_health", timeout=5)
        assert answer.status == 200, answer
        return answer.json()

    def metrics(self) -> str:
        return self.request("GET", "/_metrics", timeout=5).body.decode()

    def terminate(self, timeout: float = 20.0) -> int:
        """SIGTERM and wait; the exit code (killed: -9 after the timeout)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._stderr.close()
        return self.process.returncode


def listening_pids(stderr: str) -> list[int]:
    """The pids of the processes that logged "listening" (the workers), in order."""
    return [int(pid) for pid in WORKER_LISTENING.findall(stderr)]


def wait_until(check: Callable[[], bool], edge: EdgeProcess, timeout: float = 10.0) -> None:
    """Poll `check` until it holds; fail with Edge's log after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, edge.stderr()
        time.sleep(0.05)


class EdgeLauncher:
    """Starts Edges in a folder; :meth:`stop_all` SIGTERMs them and reports
    any that did not exit 0."""

    def __init__(self, root: Path, upstream: Upstream | None) -> None:
        self.root = root
        self.upstream = upstream
        self.started: list[EdgeProcess] = []

    def __call__(
        self,
        policies: dict[str, Any] | None = None,
        *,
        program: str = "sluice-edge",
        env: dict[str, str] | None = None,
        loaded: bool = True,
        **config: Any,
    ) -> EdgeProcess:
        if "upstream_url" not in config and self.upstream is not None:
            config["upstream_url"] = self.upstream.url
        edge = EdgeProcess(self.root / f"edge{len(self.started)}", config, policies, program, env)
        self.started.append(edge)
        return edge.wait_ready(loaded)

    def stop_all(self) -> list[str]:
        problems = []
        for edge in self.started:
            if edge.process.returncode is not None and edge._stderr.closed:
                continue  # the test stopped it and checked it itself
            code = edge.terminate()
            if code != 0:
                problems.append(f"edge in {edge.workdir} exited {code}: {edge.stderr()[-2000:]}")
        return problems


# -- policies and payloads --------------------------------------------------------------


def write_json(path: Path, doc: Any) -> None:
    path.write_text(json.dumps(doc, indent=1))


def policies(*items: dict[str, Any]) -> dict[str, Any]:
    return {"policies": list(items)}


def drop_logs(pid: str, **matcher: Any) -> dict[str, Any]:
    return {"id": pid, "name": pid, "log": {"match": [matcher], "keep": "none"}}


def otlp_logs_json(bodies: Sequence[str], service: str = "svc", **attrs: str) -> dict[str, Any]:
    return {
        "resourceLogs": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": service}}]
                },
                "scopeLogs": [
                    {
                        "scope": {"name": "test"},
                        "logRecords": [
                            {
                                "timeUnixNano": "1700000000000000000",
                                "severityText": "INFO",
                                "body": {"stringValue": body},
                                "attributes": [
                                    {"key": k, "value": {"stringValue": v}}
                                    for k, v in attrs.items()
                                ],
                            }
                            for body in bodies
                        ],
                    }
                ],
            }
        ]
    }


def otlp_logs_proto(bodies: Sequence[str], service: str = "svc") -> bytes:
    request = ExportLogsServiceRequest()
    resource_logs = request.resource_logs.add()
    attribute = resource_logs.resource.attributes.add()
    attribute.key, attribute.value.string_value = "service.name", service
    scope = resource_logs.scope_logs.add()
    scope.scope.name = "test"
    for body in bodies:
        record = scope.log_records.add()
        record.time_unix_nano = 1_700_000_000_000_000_000
        record.severity_text = "INFO"
        record.body.string_value = body
    return bytes(request.SerializeToString())


def json_bodies(doc: Any) -> list[str]:
    """Log bodies of an OTLP JSON logs document, in order."""
    return [
        record["body"]["stringValue"]
        for resource in doc.get("resourceLogs", [])
        for scope in resource.get("scopeLogs", [])
        for record in scope.get("logRecords", [])
    ]


def proto_bodies(data: bytes) -> list[str]:
    request = ExportLogsServiceRequest()
    request.ParseFromString(data)
    return [
        record.body.string_value
        for resource in request.resource_logs
        for scope in resource.scope_logs
        for record in scope.log_records
    ]


def compress(encoding: str, data: bytes) -> bytes:
    if encoding == "gzip":
        return gzip.compress(data)
    if encoding == "deflate":
        return zlib.compress(data)
    if encoding == "zstd":
        return zstandard.ZstdCompressor().compress(data)
    assert encoding in ("", "identity"), encoding
    return data


def decompress(encoding: str, data: bytes) -> bytes:
    encoding = encoding.strip().lower()
    if encoding == "gzip":
        return gzip.decompress(data)
    if encoding == "deflate":
        return zlib.decompress(data)
    if encoding == "zstd":
        return zstandard.ZstdDecompressor().decompressobj().decompress(data)
    if encoding in ("snappy", "lz4"):
        return bytes(getattr(cramjam, encoding).decompress(data))
    return data


POLICY_RECORDS = "sluice_processor_policy_records_total"


@dataclass
class Prometheus:
    """Parsed Prometheus text (by prometheus_client's parser, which also checks
    the format): {(sample name, frozenset(labels)): value}."""

    samples: dict[tuple[str, frozenset[tuple[str, str]]], float] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> Prometheus:
        out = cls()
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                out.samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
        return out

    def get(self, name: str, **labels: str) -> float:
        return self.samples.get((name, frozenset(labels.items())), 0.0)

    def has(self, name: str, **labels: str) -> bool:
        return (name, frozenset(labels.items())) in self.samples

    def results(self, telemetry_type: str) -> dict[str, float]:
        """``sluice_processor_policy_records_total`` of a telemetry type, by result."""
        return {
            dict(labels)["result"]: value
            for (name, labels), value in self.samples.items()
            if name == POLICY_RECORDS and ("telemetry_type", telemetry_type) in labels
        }


def otlp_metrics_json(names: Sequence[str]) -> dict[str, Any]:
    return {
        "resourceMetrics": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "svc"}}]
                },
                "scopeMetrics": [
                    {
                        "scope": {"name": "test"},
                        "metrics": [
                            {
                                "name": name,
                                "gauge": {
                                    "dataPoints": [
                                        {"timeUnixNano": "1700000000000000000", "asInt": "1"}
                                    ]
                                },
                            }
                            for name in names
                        ],
                    }
                ],
            }
        ]
    }


def otlp_traces_proto(names: Sequence[str]) -> bytes:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = ExportTraceServiceRequest()
    scope = request.resource_spans.add().scope_spans.add()
    for i, name in enumerate(names):
        span = scope.spans.add()
        span.trace_id = bytes([i + 1] * 16)
        span.span_id = bytes([i + 1] * 8)
        span.name = name
    return bytes(request.SerializeToString())
