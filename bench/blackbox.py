"""Edge as a black box, for the fault benchmarks (``chaos.py``, ``hostile.py``).

* :class:`EdgeUnderTest`: the real ``sluice-edge`` started from a JSON config
  in a folder with ``listen_port`` 0, its port read from its log line.
* :class:`MemoryWatch`: samples Edge's VmRSS/VmHWM from ``/proc``, and raises
  a flag when RSS passes a limit, so a run that blows memory up stops early.
* :class:`RawUpstream`: a threaded HTTP/1.1 upstream on plain sockets, one
  thread per connection, whose handler may answer, stall, cut an answer short
  or reset; it can also stop listening for a while (connections refused).

Nothing here talks to anything but 127.0.0.1, and every socket has a timeout.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

EDGE = Path(sys.executable).parent / "sluice-edge"
LISTENING = re.compile(r"listening on \S+:(\d+)")
START_TIMEOUT = 60.0
MIB = 1 << 20


class EdgeUnderTest:
    """One ``sluice-edge`` process with a file policy provider, on a free port."""

    def __init__(self, folder: Path, config: dict[str, Any], policies: list[dict[str, Any]]):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "policies.json").write_text(json.dumps({"policies": policies}))
        config = {
            "listen_port": 0,
            "log_level": "info",  # the port is only logged at info
            "policy_providers": [{"type": "file", "id": "bench", "path": "policies.json"}],
            **config,
        }
        (folder / "edge.json").write_text(json.dumps(config))
        self.log_path = folder / "edge.stderr"
        self._log = self.log_path.open("wb")
        env = {**os.environ, "SLUICE_CACHE_DIR": str(folder / "cache")}
        self.process = subprocess.Popen(
            [str(EDGE), str(folder / "edge.json")],
            stdout=subprocess.DEVNULL,
            stderr=self._log,
            env=env,
        )
        self.pid = self.process.pid
        self.port = 0
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"sluice-edge exited {self.process.returncode}: {self.log()}")
            if not self.port:
                found = LISTENING.search(self.log())
                self.port = int(found.group(1)) if found else 0
            if self.port:
                try:
                    _, body = self.get("/_health")
                    if all(p["loaded"] for p in json.loads(body)["providers"]):
                        return
                except (OSError, http.client.HTTPException, ValueError, KeyError):
                    pass
            time.sleep(0.05)
        self.stop()
        raise SystemExit(f"sluice-edge not ready within {START_TIMEOUT:g} s: {self.log()}")

    def log(self) -> str:
        """What Edge wrote to stderr so far (the tail)."""
        return self.log_path.read_text(errors="replace")[-4000:]

    def get(self, path: str, timeout: float = 5.0) -> tuple[int, bytes]:
        """(status, body) of a GET to Edge, on a fresh connection."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request("GET", path)
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()

    def metric_totals(self, name: str, label: str) -> dict[str, float]:
        """Edge's Prometheus counter `name` summed per value of `label`."""
        _, text = self.get("/_metrics")
        totals: dict[str, float] = {}
        pattern = re.compile(rf"^{name}\{{(.*)\}}\s+(\S+)$", re.MULTILINE)
        for labels, value in pattern.findall(text.decode()):
            key = dict(re.findall(r'(\w+)="([^"]*)"', labels)).get(label, "")
            totals[key] = totals.get(key, 0.0) + float(value)
        return totals

    def memory(self) -> tuple[float, float]:
        """(VmRSS, VmHWM) in MiB; (0, 0) once the process is gone."""
        try:
            status = Path(f"/proc/{self.pid}/status").read_text()
        except OSError:
            return 0.0, 0.0
        values = dict(re.findall(r"(VmRSS|VmHWM):\s+(\d+)", status))
        return int(values.get("VmRSS", 0)) / 1024, int(values.get("VmHWM", 0)) / 1024

    def stop(self, timeout: float = 20.0) -> int | None:
        """SIGTERM, then SIGKILL after `timeout`; the exit code (None: it had to be killed)."""
        code: int | None = self.process.poll()
        if code is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                code = self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                code = None
        self._log.close()
        return code


class MemoryWatch(threading.Thread):
    """Samples Edge's RSS every `interval` s until :meth:`finish`; sets
    :attr:`over_limit` when RSS passes `limit_mib`."""

    def __init__(self, edge: EdgeUnderTest, interval: float, limit_mib: float):
        super().__init__(name="memory-watch", daemon=True)
        self.edge = edge
        self.interval = interval
        self.limit_mib = limit_mib
        self.samples: list[tuple[float, float]] = []
        """(monotonic time, RSS MiB)."""
        self.hwm = 0.0
        self.over_limit = threading.Event()
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.is_set():
            rss, hwm = self.edge.memory()
            self.samples.append((time.monotonic(), rss))
            self.hwm = max(self.hwm, hwm)
            if rss > self.limit_mib:
                self.over_limit.set()
            self._done.wait(self.interval)

    def finish(self) -> None:
        self._done.set()
        self.join(timeout=5)

    def peak(self, since: float = 0.0) -> float:
        """The highest RSS sampled since a monotonic time."""
        return max((rss for t, rss in self.samples if t >= since), default=0.0)

    def back_to(self, idle: float, since: float, slack: float = 0.1) -> float | None:
        """Seconds after `since` until RSS first came within `slack` (or 2 MiB)
        of `idle`; None if it did not while sampled."""
        limit = idle + max(2.0, slack * idle)
        return next((t - since for t, rss in self.samples if t >= since and rss <= limit), None)


@dataclass
class Request:
    """One request as the upstream read it."""

    method: str
    target: str
    headers: dict[str, str]
    """Lower-case names; a repeated header keeps its last value."""
    body: bytes
    started: float = field(default_factory=time.monotonic)
    """When its first line arrived (monotonic)."""


class BadRequest(Exception):
    """The bytes on a connection are not an HTTP/1.1 request this upstream reads."""


def read_request(stream: BinaryIO, limit: int = 64 << 20) -> Request | None:
    """The next request on a keep-alive connection; None when the peer closed
    between requests. Content-Length bodies only (Edge always sends one)."""
    line = stream.readline(65536)
    if not line:
        return None
    started = time.monotonic()
    parts = line.decode("latin-1").split()
    if len(parts) != 3:
        raise BadRequest(f"request line {line[:80]!r}")
    headers: dict[str, str] = {}
    while True:
        header = stream.readline(65536)
        if not header:
            raise BadRequest("closed mid-headers")
        if header in (b"\r\n", b"\n"):
            break
        name, _, value = header.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length") or 0)
    if length > limit:
        raise BadRequest(f"Content-Length {length}")
    body = stream.read(length) if length else b""
    if len(body) != length:
        raise BadRequest("closed mid-body")
    return Request(parts[0], parts[1], headers, body, started)


def answer(
    sock: socket.socket, status: int, body: bytes = b"", headers: tuple[tuple[str, str], ...] = ()
) -> None:
    """Write one complete Content-Length response."""
    lines = [f"HTTP/1.1 {status} {http.client.responses.get(status, 'Status')}"]
    lines += [f"{name}: {value}" for name, value in headers]
    lines.append(f"Content-Length: {len(body)}")
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)


def reset(sock: socket.socket) -> None:
    """Close with a TCP RST instead of a FIN (SO_LINGER 0)."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


Handler = Callable[[Request, socket.socket], bool]
"""Answers one request on a socket; returns whether to keep the connection."""


class RawUpstream:
    """A threaded upstream on 127.0.0.1: `handler` answers each request;
    `on_accept(sock)` may refuse a fresh connection (returns False, having
    closed it). :meth:`refuse_for` stops listening for a while."""

    def __init__(
        self,
        handler: Handler,
        on_accept: Callable[[socket.socket], bool] | None = None,
        idle_timeout: float = 60.0,
    ):
        self.handler = handler
        self.on_accept = on_accept
        self.idle_timeout = idle_timeout
        self._listener: socket.socket | None = self._listen(0)
        self.port: int = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._down_until = 0.0
        self._stopped = threading.Event()
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._accept_loop, name="upstream", daemon=True)
        self._thread.start()

    @staticmethod
    def _listen(port: int) -> socket.socket:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen(512)
        sock.settimeout(0.1)
        return sock

    def refuse_for(self, seconds: float) -> None:
        """Close the listening socket for `seconds`: new connections are refused
        (and those waiting in the backlog reset); open ones carry on."""
        self._down_until = time.monotonic() + seconds

    def _accept_loop(self) -> None:
        while not self._stopped.is_set():
            if time.monotonic() < self._down_until:
                if self._listener is not None:
                    self._listener.close()
                    self._listener = None
                time.sleep(0.01)
                continue
            if self._listener is None:
                try:
                    self._listener = self._listen(self.port)
                except OSError:  # the port is still being released: try again shortly
                    time.sleep(0.01)
                    continue
            try:
                sock, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                if self._stopped.is_set():
                    break
                continue
            if self.on_accept is not None and not self.on_accept(sock):
                continue
            threading.Thread(target=self._serve, args=(sock,), daemon=True).start()
        if self._listener is not None:
            self._listener.close()

    def _serve(self, sock: socket.socket) -> None:
        with self._lock:
            self._open.add(sock)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(self.idle_timeout)
        stream = sock.makefile("rb")
        try:
            while not self._stopped.is_set():
                request = read_request(stream)
                if request is None:
                    break
                if not self.handler(request, sock):
                    break
        except (OSError, BadRequest, ValueError):
            pass  # Edge gave up on this connection, or sent what we cannot read
        finally:
            stream.close()
            with self._lock:
                self._open.discard(sock)
            with contextlib.suppress(OSError):
                sock.close()

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join(timeout=5)
        with self._lock:
            for sock in list(self._open):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
