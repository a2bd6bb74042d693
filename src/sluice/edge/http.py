"""A small HTTP/1.1 server protocol for asyncio (uvloop) on the httptools parser.

Keep-alive and pipelining (responses in request order), a body size cap that
answers 413 without reading further, 400 for unparseable requests. Each
complete request goes to an async handler that returns a :class:`Response`.
No ASGI layer: at tens of thousands of requests per second the per-request
Python work is the budget.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import cast

import httptools

log = logging.getLogger(__name__)

Headers = list[tuple[bytes, bytes]]

REASONS = {
    200: b"OK",
    202: b"Accepted",
    204: b"No Content",
    400: b"Bad Request",
    401: b"Unauthorized",
    403: b"Forbidden",
    404: b"Not Found",
    405: b"Method Not Allowed",
    408: b"Request Timeout",
    413: b"Content Too Large",
    415: b"Unsupported Media Type",
    429: b"Too Many Requests",
    500: b"Internal Server Error",
    502: b"Bad Gateway",
    503: b"Service Unavailable",
    504: b"Gateway Timeout",
}
HOP_BY_HOP = frozenset(
    {b"connection", b"keep-alive", b"transfer-encoding", b"te", b"upgrade", b"trailer"}
)
"""Hop-by-hop headers, never forwarded; nor is any ``Proxy-*`` header."""


def is_hop_by_hop(lowered_name: bytes) -> bool:
    return lowered_name in HOP_BY_HOP or lowered_name.startswith(b"proxy-")


WRITTEN_BY_EDGE = frozenset({b"host", b"content-length", b"expect"})
"""Request headers Edge does not relay besides hop-by-hop ones: it writes
``Host`` and ``Content-Length`` itself and answers ``Expect: 100-continue`` on
its own (it has the whole body before forwarding)."""


@dataclass(slots=True)
class Request:
    """One parsed request. `headers` maps lowercased names to the first value
    sent; `forwarded` is the header block to relay upstream, already encoded
    (original case and order, without hop-by-hop headers, ``Host``,
    ``Content-Length`` and ``Expect``)."""

    method: str
    path: str
    query: str
    headers: dict[bytes, bytes]
    forwarded: bytes
    body: bytes
    keep_alive: bool = True
    reserved: int = 0
    """Memory budget reserved for this body (given back when answered)."""

    def header(self, lowered_name: bytes) -> bytes | None:
        return self.headers.get(lowered_name)


@dataclass(slots=True)
class Response:
    status: int
    body: bytes = b""
    headers: Headers = field(default_factory=list)
    content_type: bytes | None = b"application/json"


def json_error(status: int, message: str) -> Response:
    """A short JSON error body, as clients (agents, collectors) expect."""
    return Response(status, json.dumps({"error": message}).encode())


Handler = Callable[[Request], Awaitable[Response]]


def encode_response(response: Response, keep_alive: bool, head: bool = False) -> bytes:
    reason = REASONS.get(response.status, b"Status")
    parts = [b"HTTP/1.1 %d %s\r\n" % (response.status, reason)]
    for name, value in response.headers:
        parts.append(name + b": " + value + b"\r\n")
    if response.content_type is not None:
        parts.append(b"Content-Type: " + response.content_type + b"\r\n")
    parts.append(b"Content-Length: %d\r\n" % len(response.body))
    if not keep_alive:
        parts.append(b"Connection: close\r\n")
    parts.append(b"\r\n")
    if not head:  # a HEAD answer announces the length but carries no body
        parts.append(response.body)
    return b"".join(parts)


class _Answer:
    """A response decided while parsing (e.g. 400 for a malformed request),
    queued behind the answers owed to earlier pipelined requests."""

    __slots__ = ("response",)

    def __init__(self, response: Response):
        self.response = response


class HttpServerProtocol(asyncio.BufferedProtocol):
    """One client connection.

    Memory: a request body is reserved against the tracker's budget when its
    headers arrive (Content-Length); past the budget the connection stops
    reading until the tracker admits it. Each request carries its own
    reservation and gives it back when answered, so nothing leaks. Reads go
    into the tracker's one small buffer (parsed at once, before the next
    read), so a connection waiting for admission holds at most one read of
    its body, not the event loop's default 256 KiB per connection.
    """

    def __init__(self, handler: Handler, max_body_size: int, tracker: ConnectionTracker):
        self._handler = handler
        self._max_body = max_body_size
        self._tracker = tracker
        self._parser = httptools.HttpRequestParser(self)
        self._transport: asyncio.Transport | None = None
        self._loop = asyncio.get_running_loop()  # made by the server, in its loop
        self._url = b""
        self._headers: Headers = []
        self._lowered: dict[bytes, bytes] = {}
        self._relayed = b""
        self._body: list[bytes] = []
        self._body_size = 0
        self._queue: deque[Request | _Answer] = deque()
        self._busy = False
        self._serving = False
        """The connection's serving task exists (it lives as long as the connection)."""
        self._wakeup: asyncio.Future[None] | None = None
        """What the serving task waits on while the queue is empty."""
        self._closing = False
        self._reserved = 0
        """Budget reserved for the request being received."""
        self._owed = 0
        """Budget the tracker owes the request being received (waiting for memory)."""
        self._waiting_memory = False

    # -- asyncio.Protocol --------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        self._tracker.opened(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self._transport = None
        self._wake()  # the serving task sees the connection gone and ends
        released = self._reserved + sum(
            item.reserved for item in self._queue if isinstance(item, Request)
        )
        self._reserved = 0
        self._queue.clear()
        self._tracker.release(released)
        self._tracker.closed(self)

    @property
    def alive(self) -> bool:
        return self._transport is not None

    def admitted(self, size: int) -> None:
        """The tracker reserved `size` for the body this connection waited for."""
        self._waiting_memory = False
        if self._owed:
            self._owed = 0
            self._reserved += size  # that request is still arriving
        else:
            self._tracker.release(size)  # it arrived whole meanwhile: give it back
        self._update_reading()

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._tracker.read_buffer

    def buffer_updated(self, nbytes: int) -> None:
        self.data_received(self._tracker.read_buffer[:nbytes])

    def data_received(self, data: bytes | memoryview) -> None:
        if self._closing:
            return
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fail(400, "protocol upgrades are not supported")
        except httptools.HttpParserError as problem:
            self._fail(400, f"malformed HTTP request: {problem}")

    # -- httptools callbacks -----------------------------------------------------

    def on_message_begin(self) -> None:
        self._url = b""
        self._headers = []
        self._body = []
        self._body_size = 0

    def on_url(self, url: bytes) -> None:
        self._url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers.append((name, value))

    def on_headers_complete(self) -> None:
        lowered: dict[bytes, bytes] = {}
        relayed: list[bytes] = []
        for name, value in self._headers:
            low = name.lower()
            if low not in lowered:
                lowered[low] = value
            if not is_hop_by_hop(low) and low not in WRITTEN_BY_EDGE:
                relayed += (name, b": ", value, b"\r\n")
        self._lowered = lowered
        self._relayed = b"".join(relayed)
        length = lowered.get(b"content-length", b"")
        declared = int(length) if length.isdigit() else 0
        expect = lowered.get(b"expect")
        expect_continue = expect is not None and expect.strip().lower() == b"100-continue"
        if declared > self._max_body:
            self._fail(413, f"body larger than max_body_size ({self._max_body} bytes)")
            return
        if declared:
            if self._tracker.admit(declared):
                self._reserved = declared
            else:
                self._owed = declared
                self._waiting_memory = True
                self._tracker.wait(self, declared)
                self._update_reading()
        if expect_continue and self._transport is not None:
            self._transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")

    def on_body(self, body: bytes) -> None:
        if self._closing:
            return
        self._body_size += len(body)
        if self._body_size > self._max_body:
            self._fail(413, f"body larger than max_body_size ({self._max_body} bytes)")
            return
        self._body.append(body)

    def on_message_complete(self) -> None:
        if self._closing:
            return
        url = self._url.decode("latin-1")
        path, _, query = url.partition("?")
        request = Request(
            self._parser.get_method().decode("latin-1"),
            path,
            query,
            self._lowered,
            self._relayed,
            self._body[0] if len(self._body) == 1 else b"".join(self._body),
            self._parser.should_keep_alive(),
            self._reserved,
        )
        self._body = []
        self._reserved = 0
        self._owed = 0  # if still waiting, admission is handed back on arrival
        self._enqueue(request)

    # -- serving -----------------------------------------------------------------

    def _enqueue(self, item: Request | _Answer) -> None:
        self._queue.append(item)
        if not self._busy:
            self._busy = True
            self._tracker.busy(+1)
            if self._serving:
                self._wake()
            else:
                self._serving = True
                self._loop.create_task(self._serve())
        self._update_reading()

    def _wake(self) -> None:
        wakeup = self._wakeup
        if wakeup is not None:
            self._wakeup = None
            wakeup.set_result(None)

    def _update_reading(self) -> None:
        """Read while neither far-ahead pipelining nor memory says wait."""
        if self._transport is None or self._closing:
            return
        pause = self._waiting_memory or len(self._queue) > 16
        if pause:
            self._transport.pause_reading()
        else:
            self._transport.resume_reading()

    async def _serve(self) -> None:
        """Answer queued requests in order, for the life of the connection: one
        task per connection, parked on a future while idle (cheaper than a task
        per request)."""
        try:
            while self._transport is not None:
                if not self._queue:
                    self._idle()
                    self._wakeup = self._loop.create_future()
                    await self._wakeup
                    continue
                item = self._queue.popleft()
                if isinstance(item, _Answer):
                    self._transport.write(encode_response(item.response, keep_alive=False))
                    self._close()
                    return
                try:
                    response = await self._handler(item)
                except Exception:
                    log.exception("handler failed for %s %s", item.method, item.path)
                    response = json_error(500, "internal error")
                self._tracker.release(item.reserved)
                if self._transport is None:
                    return
                keep_alive = item.keep_alive and not self._tracker.draining
                head = item.method == "HEAD"
                # The task outlives the request: drop it (and its body) before
                # waiting for the next one, or every idle connection holds its last.
                del item
                self._transport.write(encode_response(response, keep_alive, head))
                del response
                if not keep_alive:
                    self._close()
                    return
                self._update_reading()
        finally:
            self._idle()
            self._wakeup = None

    def _idle(self) -> None:
        if self._busy:
            self._busy = False
            self._tracker.busy(-1)

    def _fail(self, status: int, message: str) -> None:
        """Answer an unreadable request and close (the stream position is lost),
        after the answers owed to requests that came before it."""
        if self._closing or self._transport is None:
            return
        answer = json_error(status, message)
        if self._busy or self._queue:
            self._queue.append(_Answer(answer))
            self._closing = True
            self._transport.pause_reading()
            return
        self._transport.write(encode_response(answer, keep_alive=False))
        self._close()

    def _close(self) -> None:
        self._closing = True
        if self._transport is not None:
            self._transport.close()

    def close_if_idle(self) -> None:
        if not self._busy and not self._queue:
            self._close()


class ConnectionTracker:
    """Open connections and requests in flight (for graceful shutdown), and the
    memory budget for request bodies: a body that would take the bytes held
    past the budget waits, with its connection's reading paused, until others
    finish. One request is always admitted, so large bodies cannot deadlock."""

    def __init__(self, budget: int = 2 << 20, read_size: int = 64 << 10) -> None:
        self.read_buffer = memoryview(bytearray(read_size))
        """Where every connection's reads land; parsed before the next read."""
        self.connections: set[HttpServerProtocol] = set()
        self.in_flight = 0
        self.draining = False
        self.budget = budget
        self.held = 0
        self._waiting: deque[tuple[HttpServerProtocol, int]] = deque()
        self._idle = asyncio.Event()
        self._idle.set()

    def admit(self, size: int) -> bool:
        if self.held and self.held + size > self.budget:
            return False
        self.held += size
        return True

    def wait(self, connection: HttpServerProtocol, size: int) -> None:
        self._waiting.append((connection, size))

    def release(self, size: int) -> None:
        self.held = max(0, self.held - size)
        while self._waiting:
            connection, need = self._waiting[0]
            if not connection.alive:
                self._waiting.popleft()
                continue
            if self.held and self.held + need > self.budget:
                break
            self._waiting.popleft()
            self.held += need
            connection.admitted(need)

    def opened(self, connection: HttpServerProtocol) -> None:
        self.connections.add(connection)

    def closed(self, connection: HttpServerProtocol) -> None:
        self.connections.discard(connection)

    def busy(self, delta: int) -> None:
        self.in_flight += delta
        if self.in_flight:
            self._idle.clear()
        else:
            self._idle.set()

    async def drain(self, timeout: float) -> bool:
        """Stop keep-alive, close idle connections, wait for requests in flight."""
        self.draining = True
        for connection in list(self.connections):
            connection.close_if_idle()
        try:
            await asyncio.wait_for(self._idle.wait(), timeout)
        except TimeoutError:
            return False
        return True
