"""A scripted, misbehaving HTTP/1.1 upstream on 127.0.0.1 for the fault suite.

Each request the upstream reads whole (header block and body, by
Content-Length or chunked) is *committed*: it is recorded, the upstream may
have stored it. The script then says what to do with the connection, as a
list of steps, chosen per request (and so per connection)::

    def script(request: Received) -> list[Step]:
        if request.connection == 0 and request.index == 1:
            return [Close()]  # read the second request whole, never answer
        return [respond(200, b"{}")]

    upstream = ScriptedUpstream(script)

Steps: :class:`Send` raw bytes, :class:`Pause`, :class:`StreamBody` (a large
patterned body without holding it in memory), :class:`Close`,
:class:`CloseUnread`. Without a final close the connection is kept alive for
the next request. Every
byte received is kept per connection (:attr:`UpstreamConnection.received`).
"""

from __future__ import annotations

import contextlib
import select
import socket
import struct
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

# -- the script -------------------------------------------------------------------


@dataclass(frozen=True)
class Send:
    """Write these bytes as they are (a whole response, or a broken one)."""

    data: bytes


@dataclass(frozen=True)
class Pause:
    """Do nothing for a while (cut short when the upstream stops)."""

    seconds: float


@dataclass(frozen=True)
class StreamBody:
    """Write `size` bytes of :data:`PATTERN` (after a head sent with :class:`Send`)."""

    size: int


@dataclass(frozen=True)
class Close:
    """Close the connection: FIN, or RST with ``reset=True``."""

    reset: bool = False


@dataclass(frozen=True)
class CloseUnread:
    """Keep the connection until the next request starts arriving, then close
    it without reading a byte of that request: an idle close that crossed the
    request on the wire, every time (FIN, then RST for the unread bytes)."""


Step = Send | Pause | StreamBody | Close | CloseUnread


def respond(
    status: int = 200, body: bytes = b"{}", headers: Sequence[tuple[str, str]] = ()
) -> Send:
    """A complete keep-alive response framed by Content-Length."""
    head = [f"HTTP/1.1 {status} Scripted", f"Content-Length: {len(body)}"]
    head += [f"{name}: {value}" for name, value in headers]
    return Send(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)


PATTERN_PERIOD = 251
"""The length of the repeating unit of :data:`PATTERN` (prime, so that no
power-of-two chunking lines up with it)."""
PATTERN = bytes(i % PATTERN_PERIOD for i in range((1 << 20) + PATTERN_PERIOD))
"""1 MiB of a repeating byte sequence (plus one period, to slice at any offset)."""


def pattern_at(offset: int, length: int) -> bytes:
    """The slice of an endless :data:`PATTERN` stream at `offset` (length <= 1 MiB)."""
    start = offset % PATTERN_PERIOD
    return PATTERN[start : start + length]


# -- what the upstream saw ----------------------------------------------------------------


@dataclass
class Received:
    """One request the upstream read whole (committed)."""

    connection: int
    """Which connection (0 for the first the upstream accepted)."""
    index: int
    """Which request on that connection (0 for the first)."""
    method: str
    target: str
    headers: list[tuple[str, str]]
    body: bytes


@dataclass
class UpstreamConnection:
    """One connection Edge opened to the upstream."""

    index: int
    received: bytearray = field(default_factory=bytearray)
    """Every byte read from it, committed or not."""
    requests: list[Received] = field(default_factory=list)


Script = Callable[[Received], Sequence[Step]]


def answer_all(request: Received) -> Sequence[Step]:
    """The default script: 200 ``{}`` to everything, keep-alive."""
    return [respond()]


class _EndOfStream(Exception):
    """The peer closed (or reset) the connection, or the upstream is stopping."""


class _Reader:
    """Buffered reads off one connection, logging every byte received."""

    def __init__(self, sock: socket.socket, log: bytearray) -> None:
        self._sock = sock
        self._log = log
        self._buffer = bytearray()

    def _fill(self) -> None:
        try:
            chunk = self._sock.recv(1 << 16)
        except OSError:
            chunk = b""
        if not chunk:
            raise _EndOfStream
        self._log += chunk
        self._buffer += chunk

    def until(self, delimiter: bytes) -> bytes:
        searched = 0
        while (end := self._buffer.find(delimiter, searched)) < 0:
            searched = max(0, len(self._buffer) - len(delimiter) + 1)  # not again: 22 MiB heads
            self._fill()
        return self.exactly(end + len(delimiter))

    def exactly(self, size: int) -> bytes:
        while len(self._buffer) < size:
            self._fill()
        taken = bytes(self._buffer[:size])
        del self._buffer[:size]
        return taken

    def request(self) -> tuple[str, str, list[tuple[str, str]], bytes]:
        head = self.until(b"\r\n\r\n").decode("latin-1").split("\r\n")
        method, target, _ = head[0].split(" ", 2)
        headers = [(k.strip(), v.strip()) for k, _, v in (line.partition(":") for line in head[1:])]
        headers = [(k, v) for k, v in headers if k]
        fields = {k.lower(): v for k, v in headers}
        if fields.get("transfer-encoding", "").lower() == "chunked":
            return method, target, headers, self._chunked()
        return method, target, headers, self.exactly(int(fields.get("content-length", "0")))

    def _chunked(self) -> bytes:
        chunks = []
        while size := int(self.until(b"\r\n").split(b";")[0], 16):
            chunks.append(self.exactly(size))
            self.exactly(2)
        while self.until(b"\r\n") != b"\r\n":  # trailers
            pass
        return b"".join(chunks)


class ScriptedUpstream:
    """An HTTP/1.1 upstream on 127.0.0.1:<free port>, one thread per connection,
    answering each committed request as `script` says (settable at any time)."""

    def __init__(self, script: Script = answer_all) -> None:
        self.script = script
        self.connections: list[UpstreamConnection] = []
        self._changed = threading.Condition()
        self._stopping = threading.Event()
        self._sockets: set[socket.socket] = set()
        self._listener = socket.create_server(("127.0.0.1", 0), backlog=256)
        self._listener.settimeout(0.05)
        self.port: int = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self._accept, daemon=True).start()

    def committed(self) -> list[Received]:
        """Every request read whole so far, in order of arrival."""
        with self._changed:
            return [r for c in self.connections for r in c.requests]

    def stop(self) -> None:
        self._stopping.set()
        self._listener.close()
        with self._changed:
            for sock in self._sockets:
                with contextlib.suppress(OSError):  # already gone
                    sock.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked on it

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                sock, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self._changed:
                connection = UpstreamConnection(len(self.connections))
                self.connections.append(connection)
                self._sockets.add(sock)
            threading.Thread(target=self._serve, args=(sock, connection), daemon=True).start()

    def _serve(self, sock: socket.socket, connection: UpstreamConnection) -> None:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        reader = _Reader(sock, connection.received)
        try:
            while not self._stopping.is_set():
                method, target, headers, body = reader.request()
                with self._changed:
                    request = Received(
                        connection.index, len(connection.requests), method, target, headers, body
                    )
                    connection.requests.append(request)
                    self._changed.notify_all()
                if not self._play(sock, self.script(request)):
                    return
        except (_EndOfStream, OSError, ValueError):  # gone, or not HTTP: stop serving
            pass
        finally:
            with self._changed:
                self._sockets.discard(sock)
            sock.close()

    def _play(self, sock: socket.socket, steps: Sequence[Step]) -> bool:
        """Carry out the steps; False when the connection is finished."""
        for step in steps:
            if isinstance(step, Send):
                sock.sendall(step.data)
            elif isinstance(step, StreamBody):
                sent = 0
                while sent < step.size:
                    piece = pattern_at(sent, min(len(PATTERN) - PATTERN_PERIOD, step.size - sent))
                    sock.sendall(piece)
                    sent += len(piece)
            elif isinstance(step, Pause):
                if self._stopping.wait(step.seconds):
                    return False
            elif isinstance(step, CloseUnread):
                while not self._stopping.is_set() and not select.select([sock], [], [], 0.05)[0]:
                    pass
                sock.shutdown(socket.SHUT_WR)
                return False
            else:
                if step.reset:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                return False
        return True
