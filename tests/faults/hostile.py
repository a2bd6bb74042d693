"""Hostile and careless clients over raw sockets, and what they observe of
Edge: the bytes it answered and how the connection ended (:class:`Outcome`,
whose text makes a failed assertion say what happened), and Edge's memory
from ``/proc/<pid>/status``.

Reads never wait past their timeout, so a test on a server that hangs fails
with "timeout after N s" instead of hanging itself.
"""

from __future__ import annotations

import json
import re
import select
import socket
import struct
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

MiB = 1 << 20
_CONTENT_LENGTH = re.compile(rb"(?im)^content-length:[ \t]*(\d+)[ \t]*$")
_CHUNKED = re.compile(rb"(?im)^transfer-encoding:[ \t]*chunked[ \t]*$")
_STATUS = re.compile(rb"HTTP/1\.[01] (\d{3})[ \r]")


@dataclass
class Outcome:
    """What a client got back: the bytes, and how the exchange ended:
    ``answered`` (one whole response read, the connection may stay open),
    ``eof`` (Edge closed), ``reset`` (RST) or ``timeout``."""

    data: bytes
    ended: str
    elapsed: float
    send_error: str | None = None
    """Why sending stopped early (``BrokenPipeError``...), if it did."""

    @property
    def status(self) -> int | None:
        found = _STATUS.match(self.data)
        return int(found.group(1)) if found else None

    @property
    def body(self) -> bytes:
        """The body (de-chunked), as much of it as arrived."""
        return _framed(self.data)[1]

    @property
    def error(self) -> str | None:
        """The message of a JSON error body (``{"error": "..."}``), if it is one."""
        try:
            doc = json.loads(self.body)
        except ValueError:
            return None
        return doc.get("error") if isinstance(doc, dict) else None

    def __str__(self) -> str:
        sent = f" (sending stopped: {self.send_error})" if self.send_error else ""
        return f"{self.ended} after {self.elapsed:.1f} s{sent}, having received {self.data[:300]!r}"


def _framed(data: bytes) -> tuple[bool, bytes]:
    """Whether `data` holds one whole response (framed by Content-Length or
    chunked), and its body so far. A response framed by neither ends at close."""
    head, found, rest = data.partition(b"\r\n\r\n")
    length = _CONTENT_LENGTH.search(head)
    if not found or not (length or _CHUNKED.search(head)):
        return False, rest
    if length:
        return len(rest) >= int(length.group(1)), rest[: int(length.group(1))]
    chunks = []
    while True:
        line, found, rest = rest.partition(b"\r\n")
        try:
            size = int(line.split(b";")[0], 16) if found else -1
        except ValueError:  # not chunked after all: read on until the close
            size = -1
        if size < 0 or len(rest) < size + 2:
            return False, b"".join(chunks)
        if size == 0:  # the last chunk; whole once the (empty) trailer section ends
            return rest.startswith(b"\r\n") or b"\r\n\r\n" in rest, b"".join(chunks)
        chunks.append(rest[:size])
        rest = rest[size + 2 :]


def _read(sock: socket.socket, timeout: float, stop_at_response: bool, started: float) -> Outcome:
    deadline = time.monotonic() + timeout
    data = b""
    while True:
        if stop_at_response and _framed(data)[0]:
            return Outcome(data, "answered", time.monotonic() - started)
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return Outcome(data, "timeout", time.monotonic() - started)
        sock.settimeout(remaining)
        try:
            chunk = sock.recv(MiB)
        except TimeoutError:
            continue
        except ConnectionResetError:
            return Outcome(data, "reset", time.monotonic() - started)
        if not chunk:
            return Outcome(data, "eof", time.monotonic() - started)
        data += chunk


def read_answer(sock: socket.socket, timeout: float = 10.0) -> Outcome:
    """Read one whole (Content-Length framed) response, or until Edge closes
    the connection, or the timeout."""
    return _read(sock, timeout, True, time.monotonic())


def wait_closed(sock: socket.socket, timeout: float = 10.0) -> Outcome:
    """Read everything until Edge closes the connection (or the timeout)."""
    return _read(sock, timeout, False, time.monotonic())


def http_bytes(
    method: str, target: str, body: bytes = b"", headers: Sequence[tuple[str, str]] = ()
) -> bytes:
    """A request as bytes: Host, the given headers, then Content-Length unless
    the headers frame the body themselves."""
    lines = [f"{method} {target} HTTP/1.1", "Host: edge"]
    lines += [f"{name}: {value}" for name, value in headers]
    if not any(name.lower() in ("content-length", "transfer-encoding") for name, _ in headers):
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def connect(port: int, timeout: float = 10.0) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def open_idle(port: int, count: int) -> list[socket.socket]:
    """`count` connections that send nothing (the caller closes them)."""
    return [connect(port) for _ in range(count)]


def abort(sock: socket.socket) -> None:
    """Close with an RST, as a killed client does."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def send_naively(sock: socket.socket, parts: Iterable[bytes]) -> str | None:
    """Send everything without looking at the answer (as http.client does);
    the error's name if Edge stopped taking it, else None."""
    try:
        for part in parts:
            sock.sendall(part)
    except OSError as problem:
        return type(problem).__name__
    return None


def send_until_answered(
    sock: socket.socket, parts: Iterable[bytes], timeout: float = 10.0
) -> Outcome:
    """Send while watching for an answer; stop sending at its first byte, then
    read it whole (a careful client that does not push into a refusal)."""
    started = time.monotonic()
    deadline = started + timeout
    pending = iter(parts)
    piece = b""
    while True:
        if not piece:
            piece = next(pending, b"")
            if not piece:
                break
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return Outcome(b"", "timeout", time.monotonic() - started)
        readable, writable, _ = select.select([sock], [sock], [], remaining)
        if readable:
            break
        if writable:
            try:
                piece = piece[sock.send(piece) :]
            except OSError as problem:
                outcome = _read(sock, max(0.0, deadline - time.monotonic()), True, started)
                outcome.send_error = type(problem).__name__
                return outcome
    return _read(sock, max(0.0, deadline - time.monotonic()), True, started)


def send_concurrently(
    sends: Sequence[tuple[socket.socket, bytes]], patience: float = 0.5
) -> list[int]:
    """Send each payload on its socket, all at once, as far as Edge takes
    them: stop when all is sent, or when no socket took a byte for `patience`
    seconds (Edge stopped reading). How many bytes went out on each; a socket
    Edge closed stops where it was."""
    views = [memoryview(data) for _, data in sends]
    sent = [0] * len(sends)
    pending = {sock: i for i, (sock, _) in enumerate(sends) if views[i]}
    for sock in pending:
        sock.setblocking(False)
    try:
        while pending:
            _, writable, _ = select.select([], list(pending), [], patience)
            if not writable:
                break
            for sock in writable:
                i = pending[sock]
                try:
                    sent[i] += sock.send(views[i][sent[i] : sent[i] + MiB])
                except BlockingIOError:
                    continue
                except OSError:
                    del pending[sock]
                    continue
                if sent[i] == len(views[i]):
                    del pending[sock]
    finally:
        for sock, _ in sends:
            if sock.fileno() >= 0:
                sock.settimeout(10.0)
    return sent


def trickle(sock: socket.socket, data: bytes, interval: float, timeout: float = 10.0) -> Outcome:
    """Slowloris: one byte every `interval` seconds until Edge answers or
    closes (or `data` runs out: then just wait for the answer)."""
    started = time.monotonic()
    deadline = started + timeout
    for i in range(len(data)):
        try:
            sock.sendall(data[i : i + 1])
        except OSError as problem:
            outcome = _read(sock, max(0.0, deadline - time.monotonic()), True, started)
            outcome.send_error = type(problem).__name__
            return outcome
        wait = min(interval, deadline - time.monotonic())
        if wait <= 0 or select.select([sock], [], [], wait)[0]:
            break
    return _read(sock, max(0.0, deadline - time.monotonic()), True, started)


@dataclass(frozen=True)
class Memory:
    """A process's resident memory now (VmRSS) and at its peak (VmHWM), in bytes."""

    rss: int
    peak: int

    def __str__(self) -> str:
        return f"RSS {self.rss / MiB:.1f} MiB (peak {self.peak / MiB:.1f} MiB)"


def memory(pid: int) -> Memory:
    fields: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) * 1024
    return Memory(fields["VmRSS"], fields["VmHWM"])
