"""Forwarding to the upstream: a pool of keep-alive HTTP/1.1 connections.

A request is sent twice in one case only (EDGE.md section 2): it went out on
a pooled connection, and that connection failed (the write failed, or it was
closed or reset) before a byte of an answer arrived. That is how an
upstream's close of an idle connection looks when it crosses the next
request on the wire, and the request then goes once more, on a fresh
connection. Any other failure (on a fresh connection, after a byte of the
answer, a timeout) is the caller's error to report (502/504), because the
upstream may have processed the request. What keeps the retry rare is that a
pooled connection is checked before it is used: one the upstream has closed
(or written to unasked) is discarded, and one idle longer than
``POOL_IDLE_SECS`` is closed rather than reused (servers drop idle
connections, Node.js after 5 s).

A response counts only once its status line and header block are complete;
a response body is bounded (``max_response_size``), so an upstream cannot
make Edge buffer more than that.

The timeout covers the whole request (connect, send, answer). Rather than a
timer per request (a timer handle made and cancelled every time), each
connection notes its deadline and one sweep per pool, a few times per
timeout while requests are in flight, fails those past it.
"""

from __future__ import annotations

import asyncio
import select
import socket
import ssl
from collections import deque
from dataclasses import dataclass
from typing import Final, cast
from urllib.parse import urlsplit

import httptools

from sluice.transport.http_message import Headers, connection_options, is_hop_by_hop


class UpstreamError(Exception):
    """The upstream could not be reached or did not answer properly."""


class UpstreamTimeout(UpstreamError):
    """The upstream did not answer within the timeout."""


class UpstreamClosed(UpstreamError):
    """The connection was closed or reset before a byte of an answer arrived."""


class UpstreamUnreachable(UpstreamError):
    """No connection could be made. `address` is the (IP, port) of the
    first resolved address, whose failure `cause` is (as Go's dialer reports
    the first address's error); None when the name did not resolve."""

    def __init__(self, message: str, address: tuple[str, int] | None, cause: OSError):
        super().__init__(message)
        self.address = address
        self.cause = cause


POOL_IDLE_SECS: Final = 4.0
"""A pooled connection idle longer than this is closed, not reused."""
DEFAULT_MAX_RESPONSE: Final = 16 << 20
"""Largest upstream response body relayed (bytes); a larger one is a 502."""
MAX_RESPONSE_HEADERS: Final = 256
_READABLE: Final = select.POLLIN | select.POLLPRI | select.POLLRDHUP


@dataclass(slots=True)
class UpstreamResponse:
    status: int
    headers: Headers
    body: bytes
    keep_alive: bool


class _Connection(asyncio.Protocol):
    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.waiter: asyncio.Future[UpstreamResponse] | None = None
        self.deadline = 0.0
        """When the request in flight times out (loop time)."""
        self.headers: Headers = []
        self.body: list[bytes] = []
        self.body_size = 0
        self.max_body = 0
        self.received = False
        self.headers_done = False
        self.closed = False
        self.head = False
        self.idle_since = 0.0
        self.poller: select.poll | None = None
        """Polls the transport's socket: anything readable on an idle
        connection (an end of stream, bytes nobody asked for) makes it unusable."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        self.loop = asyncio.get_running_loop()
        raw = transport.get_extra_info("socket")
        if raw is not None:
            self.poller = select.poll()
            self.poller.register(raw.fileno(), _READABLE)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.transport = None
        self.poller = None
        if self.received:
            self._finish_unframed()
        if self.headers_done:
            self._settle(UpstreamError("upstream closed the connection mid-response"))
        elif self.received:
            problem = "upstream closed the connection before completing its response headers"
            self._settle(UpstreamError(problem))
        else:
            self._settle(UpstreamClosed("upstream closed the connection without answering"))

    def usable(self) -> bool:
        """Open, with nothing unasked-for to read: checked just before a reuse,
        so a close the event loop has not processed yet shows here (a poll
        that returns at once; 0.5 us)."""
        if self.closed or self.poller is None:
            return False
        return not self.poller.poll(0)

    def data_received(self, data: bytes) -> None:
        self.received = True
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as problem:
            self._fail(UpstreamError(f"malformed response from upstream: {problem}"))

    def eof_received(self) -> bool | None:
        self._finish_unframed()
        return None

    def _finish_unframed(self) -> None:
        """A response without Content-Length or chunked encoding ends at close
        (one whose status line or headers were cut short is no response)."""
        waiter = self.waiter
        if waiter is None or waiter.done() or not self.headers_done:
            return
        framing = {name.lower() for name, _ in self.headers}
        if b"content-length" in framing or b"transfer-encoding" in framing:
            return
        try:
            status = self.parser.get_status_code()
        except httptools.HttpParserError:
            return
        self._settle(UpstreamResponse(status, self.headers, b"".join(self.body), False))

    def on_message_begin(self) -> None:
        self.headers = []
        self.body = []
        self.body_size = 0
        self.headers_done = False

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name, value))
        if len(self.headers) > MAX_RESPONSE_HEADERS:
            self._fail(UpstreamError(f"upstream sent more than {MAX_RESPONSE_HEADERS} headers"))

    def on_body(self, body: bytes) -> None:
        self.body_size += len(body)
        if self.body_size > self.max_body:
            self._fail(UpstreamError(f"upstream response larger than {self.max_body} bytes"))
            return
        self.body.append(body)

    def on_headers_complete(self) -> None:
        self.headers_done = True
        if self.head and not 100 <= self.parser.get_status_code() < 200:
            # A HEAD answer has no body whatever its Content-Length says; the
            # parser would wait for one, so settle now and retire the connection.
            self._settle(UpstreamResponse(self.parser.get_status_code(), self.headers, b"", False))
            if self.transport is not None:
                self.transport.close()

    def on_message_complete(self) -> None:
        if 100 <= self.parser.get_status_code() < 200:
            self.headers_done = False
            return  # an interim answer (100 Continue): the final one follows
        self._settle(
            UpstreamResponse(
                self.parser.get_status_code(),
                self.headers,
                b"".join(self.body),
                self.parser.should_keep_alive(),
            )
        )

    def _settle(self, outcome: UpstreamResponse | Exception) -> None:
        waiter = self.waiter
        if waiter is None or waiter.done():
            return
        if isinstance(outcome, Exception):
            waiter.set_exception(outcome)
        else:
            waiter.set_result(outcome)

    def _fail(self, problem: Exception) -> None:
        self._settle(problem)
        self.body = []
        if self.transport is not None:
            self.transport.close()

    def send(
        self, data: list[bytes], deadline: float, max_body: int, head: bool = False
    ) -> asyncio.Future[UpstreamResponse]:
        """Write one request; the future settles with its response or error.
        The pool's sweep fails it once `deadline` has passed."""
        assert self.transport is not None and self.loop is not None
        self.head = head
        self.received = False
        self.headers_done = False
        self.max_body = max_body
        self.deadline = deadline
        self.waiter = self.loop.create_future()
        self.transport.writelines(data)
        return self.waiter

    def expire(self, timeout: float) -> None:
        """Fail the request in flight, unless it has just been answered."""
        if self.waiter is not None and not self.waiter.done():
            self._fail(UpstreamTimeout(f"upstream did not answer within {timeout:g} s"))


class UpstreamPool:
    """Keep-alive connections to one upstream base URL (``http(s)://host:port/base``)."""

    def __init__(
        self,
        base_url: str,
        timeout: float,
        max_idle: int = 64,
        max_response_size: int = DEFAULT_MAX_RESPONSE,
        tls: ssl.SSLContext | None = None,
        server_name: str = "",
        host_header: str = "",
    ):
        """`tls` replaces the default client context of ``https`` URLs;
        `server_name` replaces the URL's host in SNI and certificate checks;
        `host_header` replaces the ``Host`` the URL gives."""
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"upstream URL must be http(s)://host[:port][/path], got {base_url!r}")
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.base_path = parts.path.rstrip("/")
        self.ssl = (tls or ssl.create_default_context()) if parts.scheme == "https" else None
        self.server_name = server_name or self.host
        default_port = self.port == (443 if self.ssl else 80)
        self.host_header = (
            host_header or (self.host if default_port else f"{self.host}:{self.port}")
        ).encode("latin-1")
        self.timeout = timeout
        self.max_idle = max_idle
        self.max_response_size = max_response_size
        self._idle: deque[_Connection] = deque()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._in_flight: set[_Connection] = set()
        self._sweeper: asyncio.TimerHandle | None = None
        self._sweep_every = min(max(timeout / 8, 0.01), 0.25)
        """Timeouts fire at most this late (seconds)."""

    def target(self, path: str, query: str | None) -> bytes:
        """Upstream base path + inbound path + ?query, verbatim (None: no ``?``)."""
        full = self.base_path + path
        return (full if query is None else full + "?" + query).encode("latin-1")

    async def _connect(self, deadline: float) -> _Connection:
        try:
            async with asyncio.timeout_at(deadline):
                return await self._dial()
        except TimeoutError:
            raise UpstreamTimeout(
                f"cannot connect to upstream {self.host}:{self.port} within {self.timeout:g} s"
            ) from None
        except ssl.SSLError as problem:
            raise UpstreamError(self._cannot_connect(problem)) from None

    async def _dial(self) -> _Connection:
        """A connection to the first resolved address that accepts one, in
        the resolver's order; raises UpstreamUnreachable naming the first
        address's failure when none does."""
        loop = asyncio.get_running_loop()
        try:
            addresses = await loop.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM)
        except OSError as problem:
            raise UpstreamUnreachable(self._cannot_connect(problem), None, problem) from None
        first: UpstreamUnreachable | None = None
        for family, _, _, _, sockaddr in addresses:
            ip, port = str(sockaddr[0]), int(sockaddr[1])
            try:
                _, connection = await loop.create_connection(
                    _Connection,
                    ip,
                    port,
                    family=family,
                    ssl=self.ssl,
                    server_hostname=self.server_name if self.ssl else None,
                )
            except ssl.SSLError:
                raise
            except OSError as problem:
                if first is None:
                    first = UpstreamUnreachable(self._cannot_connect(problem), (ip, port), problem)
                continue
            return connection
        if first is None:
            nothing = OSError(f"no address for {self.host}")
            first = UpstreamUnreachable(self._cannot_connect(nothing), None, nothing)
        raise first

    def _cannot_connect(self, problem: OSError) -> str:
        return f"cannot connect to upstream {self.host}:{self.port}: {problem.strerror or problem}"

    def _encode(self, method: str, target: bytes, headers: bytes, body: bytes) -> list[bytes]:
        head = b"%s %s HTTP/1.1\r\nHost: %s\r\n%sContent-Length: %d\r\n\r\n" % (
            method.encode("latin-1"),
            target,
            self.host_header,
            headers,
            len(body),
        )
        if len(body) < 16384:
            return [head + body]
        return [head, body]  # large bodies are written as they are, not copied

    def _bind_loop(self) -> asyncio.AbstractEventLoop:
        """The event loop this pool serves (a pool is used from one loop only)."""
        self._loop = asyncio.get_running_loop()
        return self._loop

    def _sweep(self) -> None:
        """Fail the requests past their deadline; run again while any is in flight."""
        assert self._loop is not None
        now = self._loop.time()
        for connection in [c for c in self._in_flight if c.deadline <= now]:
            connection.expire(self.timeout)
        self._sweeper = (
            self._loop.call_later(self._sweep_every, self._sweep) if self._in_flight else None
        )

    def _watch(self, connection: _Connection) -> None:
        """Put `connection` under the sweep until its request settles."""
        self._in_flight.add(connection)
        if self._sweeper is None:
            assert self._loop is not None
            self._sweeper = self._loop.call_later(self._sweep_every, self._sweep)

    def _idle_connection(self, now: float) -> _Connection | None:
        """The most recently used pooled connection that is safe to reuse;
        the others found on the way are closed."""
        while self._idle:
            candidate = self._idle.pop()
            if now - candidate.idle_since < POOL_IDLE_SECS and candidate.usable():
                return candidate
            if candidate.transport is not None:
                candidate.transport.close()
        return None

    async def request(
        self, method: str, path: str, query: str | None, headers: bytes, body: bytes
    ) -> UpstreamResponse:
        """Send one request; `headers` is the encoded header block to relay
        (``Host`` and ``Content-Length`` are added here). Raises
        UpstreamTimeout or UpstreamError; retries only as the module
        docstring says."""
        data = self._encode(method, self.target(path, query), headers, body)
        head = method == "HEAD"
        loop = self._loop or self._bind_loop()
        now = loop.time()
        deadline = now + self.timeout
        connection = self._idle_connection(now)
        pooled = connection is not None
        if connection is None:
            connection = await self._connect(deadline)
        in_flight = self._in_flight
        self._watch(connection)
        try:
            response = await connection.send(data, deadline, self.max_response_size, head)
        except UpstreamClosed:
            if not pooled:
                raise
            in_flight.discard(connection)  # once more, on a fresh connection (module docstring)
            connection = await self._connect(deadline)
            self._watch(connection)
            response = await connection.send(data, deadline, self.max_response_size, head)
        finally:
            in_flight.discard(connection)
        if response.keep_alive and not connection.closed and len(self._idle) < self.max_idle:
            connection.waiter = None
            connection.idle_since = loop.time()
            self._idle.append(connection)
        elif connection.transport is not None:
            connection.transport.close()
        return response

    def close(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
        while self._idle:
            connection = self._idle.pop()
            if connection.transport is not None:
                connection.transport.close()


def relay_headers(headers: Headers, head: bool = False) -> tuple[Headers, bytes | None]:
    """Upstream response headers to relay, and the first Content-Type. Left
    out: hop-by-hop headers and those the ``Connection`` header names, and
    Content-Type and Content-Length, which the server writes itself (except
    that an answer to HEAD, `head`, keeps the upstream's Content-Length)."""
    relayed: Headers = []
    connection: list[bytes] = []
    content_type: bytes | None = None
    for name, value in headers:
        lowered = name.lower()
        if lowered == b"content-type":
            if content_type is None:
                content_type = value
        elif is_hop_by_hop(lowered):
            if lowered == b"connection":
                connection.append(value)
        elif lowered != b"content-length" or head:
            relayed.append((name, value))
    if connection and (named := connection_options(connection)):
        relayed = [(name, value) for name, value in relayed if name.lower() not in named]
    return relayed, content_type
