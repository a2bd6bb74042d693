"""A policy server that misbehaves at the socket level, against the real
``sluice-edge``: a stalled or oversized sync is a failed sync that shows in
``/_health`` within the provider's deadline, the last good policies stay
active, and SIGTERM is not held up by the provider."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.edge.helpers import EdgeLauncher, EdgeProcess, Upstream, json_bodies, otlp_logs_json
from tests.providers.helpers import wait_until

TIMEOUT_SECS = 0.5
GOOD = json.dumps(
    {
        "hash": "h1",
        "policies": [
            {
                "id": "drop-x",
                "name": "drop-x",
                "enabled": True,
                "log": {"match": [{"logField": "LOG_FIELD_BODY", "exact": "x"}], "keep": "none"},
            }
        ],
    }
).encode()
GOOD_RESPONSE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
    b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(GOOD), GOOD)
)
STREAMED_LIMIT = 32 << 20
"""An oversized answer stops here, so that a client without a cap fails too
instead of reading for minutes."""

Fault = Callable[[socket.socket, threading.Event], None]


def trickle(conn: socket.socket, stopping: threading.Event) -> None:
    """A valid answer, one byte at a time, each well within the deadline
    (half of it), so that only a deadline on the whole sync can end it: the
    answer would take about 50 s."""
    for i in range(len(GOOD_RESPONSE)):
        conn.sendall(GOOD_RESPONSE[i : i + 1])
        if stopping.wait(TIMEOUT_SECS / 2):
            return


def hang_after_headers(conn: socket.socket, stopping: threading.Event) -> None:
    conn.sendall(GOOD_RESPONSE[: GOOD_RESPONSE.index(b"\r\n\r\n") + 4])
    stopping.wait()


def _stream(conn: socket.socket, head: bytes, piece: bytes) -> None:
    conn.sendall(head)
    for _ in range(STREAMED_LIMIT // len(piece)):
        conn.sendall(piece)


def declared_400_mb(conn: socket.socket, stopping: threading.Event) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 400000000\r\n\r\n"
    _stream(conn, head, b" " * 65536)


def chunked_without_end(conn: socket.socket, stopping: threading.Event) -> None:
    head = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    _stream(conn, head, b"10000\r\n" + b" " * 65536 + b"\r\n")


class ScriptedPolicyServer:
    """An HTTP policy server on 127.0.0.1 written on raw sockets: the first
    sync gets `GOOD`, every later one gets `fault`."""

    def __init__(self, fault: Fault) -> None:
        self.fault = fault
        self.syncs = 0
        self.stopping = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}/v1/policy/sync"
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.settimeout(10)
                head = b""
                while b"\r\n\r\n" not in head:
                    head += conn.recv(65536)
                head, _, body = head.partition(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                while len(body) < length:
                    body += conn.recv(65536)
                with self._lock:
                    self.syncs += 1
                    first = self.syncs == 1
                if first:
                    conn.sendall(GOOD_RESPONSE)
                else:
                    self.fault(conn, self.stopping)
            except OSError:  # the client gave up on us: that is the point
                return

    def close(self) -> None:
        self.stopping.set()
        self._listener.close()


@pytest.fixture
def policy_server(request: pytest.FixtureRequest) -> Iterator[ScriptedPolicyServer]:
    server = ScriptedPolicyServer(request.param)
    yield server
    server.close()


def edge_syncing_with(
    start_edge: EdgeLauncher, server: ScriptedPolicyServer, **provider: Any
) -> EdgeProcess:
    return start_edge(
        None,
        policy_providers=[
            {
                "type": "http",
                "id": "remote",
                "url": server.url,
                "poll_interval_secs": 0.2,
                "timeout_secs": TIMEOUT_SECS,
                **provider,
            }
        ],
    )


def wait_for_error(edge: EdgeProcess, mentions: str) -> None:
    """/_health shows the provider's failure (a few deadlines at most)."""
    wait_until(
        lambda: mentions in edge.health()["providers"][0]["last_error"],
        f"/_health to show {mentions!r}",
        timeout=10 * TIMEOUT_SECS,
    )


def assert_last_good_set_applies(edge: EdgeProcess, upstream: Upstream) -> None:
    assert edge.health()["providers"][0]["loaded"] is True
    assert edge.health()["policies"]["logs"] == 1
    body = json.dumps(otlp_logs_json(["x", "y"])).encode()
    assert edge.post("/v1/logs", body, "application/json").status == 200
    assert json_bodies(json.loads(upstream.received()[-1].body)) == ["y"]


def assert_sigterm_exits_promptly(edge: EdgeProcess) -> None:
    """SIGTERM while the provider is stuck: exit 0 within a few deadlines
    (no drain is needed: nothing is in flight). Before, Edge stayed alive for
    as long as the server kept trickling."""
    assert edge.terminate(timeout=10 * TIMEOUT_SECS) == 0, edge.stderr()[-3000:]


@pytest.mark.parametrize(
    "policy_server",
    [trickle, hang_after_headers],
    ids=["trickle", "hang-after-headers"],
    indirect=True,
)
def test_a_stalled_sync_fails_at_the_deadline_and_does_not_hold_shutdown(
    start_edge: EdgeLauncher, upstream: Upstream, policy_server: ScriptedPolicyServer
) -> None:
    edge = edge_syncing_with(start_edge, policy_server)
    wait_for_error(edge, f"timed out after {TIMEOUT_SECS:g} s")
    assert_last_good_set_applies(edge, upstream)
    assert "timed out" in edge.stderr()
    assert_sigterm_exits_promptly(edge)


@pytest.mark.parametrize(
    "policy_server",
    [declared_400_mb, chunked_without_end],
    ids=["content-length-400-mb", "chunked-without-end"],
    indirect=True,
)
def test_an_oversized_sync_response_is_refused(
    start_edge: EdgeLauncher, upstream: Upstream, policy_server: ScriptedPolicyServer
) -> None:
    edge = edge_syncing_with(start_edge, policy_server, max_response_bytes=65536)
    wait_for_error(edge, "larger than max_response_bytes (65536 bytes)")
    assert_last_good_set_applies(edge, upstream)
    assert_sigterm_exits_promptly(edge)
