"""Forwarding to the upstream: a pool of keep-alive HTTP/1.1 connections.

A request that fails because a pooled connection had already been closed by
the upstream, before any byte of the response arrived, is retried once on a
fresh connection; nothing else is retried (a replay could duplicate data).
The timeout covers the whole request (connect, send, answer). Rather than a
timer per request (a timer handle made and cancelled every time), each
connection notes its deadline and one sweep per pool, a few times per
timeout while requests are in flight, fails those past it.
"""

from __future__ import annotations

import asyncio
import ssl
from collections import deque
from dataclasses import dataclass
from typing import cast
from urllib.parse import urlsplit

import httptools

from sluice.edge.http import Headers, is_hop_by_hop


class UpstreamError(Exception):
    """The upstream could not be reached or did not answer properly."""


class UpstreamTimeout(UpstreamError):
    """The upstream did not answer within the timeout."""


class _StaleConnection(UpstreamError):
    """A reused connection closed before any response byte: safe to retry once."""


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
        self.received = False
        self.closed = False
        self.head = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        self.loop = asyncio.get_running_loop()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.transport = None
        if self.received:
            self._finish_unframed()
        self._settle(
            UpstreamError("upstream closed the connection mid-response")
            if self.received
            else _StaleConnection("upstream closed the connection")
        )

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
        """A response without Content-Length or chunked encoding ends at close."""
        waiter = self.waiter
        if waiter is None or waiter.done() or not self.received:
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

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name, value))

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_headers_complete(self) -> None:
        if self.head and not 100 <= self.parser.get_status_code() < 200:
            # A HEAD answer has no body whatever its Content-Length says; the
            # parser would wait for one, so settle now and retire the connection.
            self._settle(UpstreamResponse(self.parser.get_status_code(), self.headers, b"", False))
            if self.transport is not None:
                self.transport.close()

    def on_message_complete(self) -> None:
        if 100 <= self.parser.get_status_code() < 200:
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
        if self.transport is not None:
            self.transport.close()

    def send(
        self, data: list[bytes], deadline: float, head: bool = False
    ) -> asyncio.Future[UpstreamResponse]:
        """Write one request; the future settles with its response or error.
        The pool's sweep fails it once `deadline` has passed."""
        assert self.transport is not None and self.loop is not None
        self.head = head
        self.received = False
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

    def __init__(self, base_url: str, timeout: float, max_idle: int = 64):
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"upstream URL must be http(s)://host[:port][/path], got {base_url!r}")
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.base_path = parts.path.rstrip("/")
        self.ssl = ssl.create_default_context() if parts.scheme == "https" else None
        default_port = self.port == (443 if self.ssl else 80)
        self.host_header = (self.host if default_port else f"{self.host}:{self.port}").encode()
        self.timeout = timeout
        self.max_idle = max_idle
        self._idle: deque[_Connection] = deque()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._in_flight: set[_Connection] = set()
        self._sweeper: asyncio.TimerHandle | None = None
        self._sweep_every = min(max(timeout / 8, 0.01), 0.25)
        """Timeouts fire at most this late (seconds)."""

    def target(self, path: str, query: str) -> bytes:
        """Upstream base path + inbound path + ?query, verbatim."""
        full = self.base_path + path
        return (full + "?" + query if query else full).encode("latin-1")

    async def _connect(self, deadline: float) -> _Connection:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout_at(deadline):
                _, connection = await loop.create_connection(
                    _Connection,
                    self.host,
                    self.port,
                    ssl=self.ssl,
                    server_hostname=self.host if self.ssl else None,
                )
        except TimeoutError:
            raise UpstreamTimeout(
                f"cannot connect to upstream {self.host}:{self.port} within {self.timeout:g} s"
            ) from None
        except OSError as problem:
            raise UpstreamError(
                f"cannot connect to upstream {self.host}:{self.port}: {problem.strerror or problem}"
            ) from None
        return connection

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

    def _idle_connection(self) -> _Connection | None:
        while self._idle:
            candidate = self._idle.pop()
            if not candidate.closed:
                return candidate
        return None

    async def request(
        self, method: str, path: str, query: str, headers: bytes, body: bytes
    ) -> UpstreamResponse:
        """Send one request; `headers` is the encoded header block to relay
        (``Host`` and ``Content-Length`` are added here). Raises
        UpstreamTimeout or UpstreamError."""
        data = self._encode(method, self.target(path, query), headers, body)
        head = method == "HEAD"
        loop = self._loop or self._bind_loop()
        deadline = loop.time() + self.timeout
        connection = self._idle_connection()
        reused = connection is not None
        if connection is None:
            connection = await self._connect(deadline)
        in_flight = self._in_flight
        self._watch(connection)
        try:
            response = await connection.send(data, deadline, head)
        except _StaleConnection:
            if not reused:
                raise UpstreamError("upstream closed the connection without answering") from None
            in_flight.discard(connection)
            connection = await self._connect(deadline)
            self._watch(connection)
            try:
                response = await connection.send(data, deadline, head)
            except _StaleConnection:
                raise UpstreamError("upstream closed the connection without answering") from None
        finally:
            in_flight.discard(connection)
        if response.keep_alive and not connection.closed and len(self._idle) < self.max_idle:
            connection.waiter = None
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


def relay_headers(headers: Headers) -> tuple[Headers, bytes | None]:
    """Upstream response headers to relay (minus hop-by-hop ones,
    Content-Length and Content-Type, which the server writes itself), and the
    first Content-Type, in one pass."""
    relayed: Headers = []
    content_type: bytes | None = None
    for name, value in headers:
        lowered = name.lower()
        if lowered == b"content-type":
            if content_type is None:
                content_type = value
        elif lowered != b"content-length" and not is_hop_by_hop(lowered):
            relayed.append((name, value))
    return relayed, content_type
