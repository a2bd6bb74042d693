"""A small HTTP/1.1 server protocol for asyncio (uvloop) on the httptools parser.

Keep-alive and pipelining (responses in request order); each complete request
goes to an async handler that returns a :class:`Response`. No ASGI layer: at
tens of thousands of requests per second the per-request Python work is the
budget (bench/README.md compares this layer with granian).

Hostile and broken clients are bounded (:class:`ServerLimits`): the request
line, the header block and the header count have limits (414, 431); a
request's headers and its body each have a deadline (408), an idle keep-alive
connection is closed after its own; bodies, chunked or not, are capped (413)
and counted against one memory budget as their bytes arrive. A request waits
for that memory briefly (503 with ``Retry-After`` beyond), and while it waits
a body that has stopped arriving gives its memory back (408), so stalled
uploads cannot starve the others. Connections are capped, evicting the
longest-idle one first, so ``/_health`` keeps answering.
An error answer is written, then the connection is half-closed and its input
drained for a moment, so that the client reads the answer instead of a reset.
A client that half-closes after a complete request still gets its answers.
"""

from __future__ import annotations

import asyncio
import json
import logging
import select
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, fields
from http import HTTPStatus
from typing import Final, cast

import httptools

log = logging.getLogger(__name__)

Headers = list[tuple[bytes, bytes]]

REASONS = {status.value: status.phrase.encode("latin-1") for status in HTTPStatus} | {
    413: b"Content Too Large",  # RFC 9110's names (Python's own from 3.13)
    414: b"URI Too Long",
    416: b"Range Not Satisfiable",
    422: b"Unprocessable Content",
}
"""The reason phrase of each status an answer may have, relayed ones too."""
HOP_BY_HOP = frozenset(
    {b"connection", b"keep-alive", b"transfer-encoding", b"te", b"upgrade", b"trailer"}
)
"""Hop-by-hop headers, never forwarded; nor is any ``Proxy-*`` header."""


def is_hop_by_hop(lowered_name: bytes) -> bool:
    return lowered_name in HOP_BY_HOP or lowered_name.startswith(b"proxy-")


def connection_options(values: list[bytes]) -> frozenset[bytes]:
    """The header names the ``Connection`` header `values` list, lowercased:
    hop-by-hop for this message (RFC 9110 7.6.1), so not relayed either.
    Names dropped anyway and the ``close`` option are left out, so that the
    usual ``keep-alive`` and ``close`` give an empty set."""
    names = set()
    for value in values:
        for token in value.split(b","):
            name = token.strip().lower()
            if name and name != b"close" and not is_hop_by_hop(name):
                names.add(name)
    return frozenset(names)


def origin_form(target: bytes) -> bytes:
    """A request target as ``/path?query``: an absolute-form one
    (``http://host:port/path?query``), which a server must accept (RFC 9112
    3.2.2), loses its scheme and authority; any other is left as it is."""
    if target.startswith(b"/"):
        return target
    scheme, found, rest = target.partition(b"://")
    if not found or scheme.lower() not in (b"http", b"https"):
        return target
    query = rest.find(b"?")
    path = rest.find(b"/", 0, query if query >= 0 else len(rest))
    if path >= 0:
        return rest[path:]
    return b"/" + rest[query:] if query >= 0 else b"/"


WRITTEN_BY_EDGE = frozenset({b"host", b"content-length", b"expect"})
"""Request headers Edge does not relay besides hop-by-hop ones: it writes
``Host`` and ``Content-Length`` itself and answers ``Expect: 100-continue`` on
its own (it has the whole body before forwarding)."""

LOCAL_PATHS = frozenset({b"/_health", b"/_ready"})
"""Probes answered even on a connection over the cap (cheap, and an orchestrator
must see the process alive while it is busy)."""

LINGER_SECS: Final = 2.0
"""After an error answer, how long the connection's input is drained before it
is closed (closing with unread input would reset the answer away)."""


@dataclass(frozen=True)
class ServerLimits:
    """What one client may cost. Timeouts are in seconds."""

    max_body_size: int = 1 << 20
    """Per request body, raw (413 beyond)."""
    max_header_size: int = 64 << 10
    """Request line and header block together (431 beyond)."""
    max_header_count: int = 100
    max_url_size: int = 8 << 10
    """The request target (414 beyond)."""
    idle_timeout: float = 60.0
    """A keep-alive connection with no request under way is closed after this."""
    header_timeout: float = 10.0
    """A request's line and headers must arrive within this of its first byte
    (of the connection, for the first request); 408 otherwise."""
    body_timeout: float = 30.0
    """A body must arrive within this of its headers (time spent paused for
    memory does not count); 408 otherwise."""
    memory_wait: float = 2.0
    """Longest a request waits for memory for its body (503 with
    ``Retry-After`` beyond): a saturated server refuses, it does not queue
    senders into their own timeouts."""
    body_stall: float = 1.0
    """While a request waits for memory, a body that has received nothing for
    this long is cut off (408), giving its memory back: stalled uploads
    cannot hold the budget against everyone else."""
    max_connections: int = 1024
    """Beyond it the longest-idle connection is closed; with none idle, a new
    connection's request gets 503 (probes excepted)."""
    body_budget: int = 2 << 20
    """Bytes of request bodies held at once (received or being handled)."""

    def __reduce__(self) -> tuple[type[ServerLimits], tuple[float, ...]]:
        # Workers get their config pickled; the default unpickling assigns
        # fields one by one, which a frozen compiled class refuses.
        return (ServerLimits, tuple(getattr(self, f.name) for f in fields(self)))

    @property
    def sweep_every(self) -> float:
        """How often deadlines are checked: each fires at most this late."""
        shortest = min(
            self.idle_timeout,
            self.header_timeout,
            self.body_timeout,
            self.memory_wait,
            self.body_stall,
        )
        return min(max(shortest / 4, 0.01), 0.25)


@dataclass(slots=True)
class Request:
    """One parsed request. `headers` maps lowercased names to the first value
    sent; `forwarded` is the header block to relay upstream, already encoded
    (original case and order, without hop-by-hop headers, those ``Connection``
    names, ``Host``, ``Content-Length`` and ``Expect``)."""

    method: str
    path: str
    query: str
    headers: dict[bytes, bytes]
    forwarded: bytes
    body: bytes
    keep_alive: bool = True
    reserved: int = 0
    """Body bytes counted against the memory budget (given back when answered)."""
    lines: Headers = field(default_factory=list)
    """Every header line as sent (name as written), for what needs repeated ones."""
    peer: str = ""
    """The client's IP address (empty for a Unix socket)."""

    def header(self, lowered_name: bytes) -> bytes | None:
        return self.headers.get(lowered_name)


@dataclass(slots=True)
class Response:
    status: int
    body: bytes = b""
    headers: Headers = field(default_factory=list)
    content_type: bytes | None = b"application/json"
    length_in_headers: bool = False
    """An answer to HEAD whose `headers` carry the Content-Length to announce
    (a relayed one: the upstream's, or none if it sent none), not the body's."""


def json_error(status: int, message: str, headers: Headers | None = None) -> Response:
    """A short JSON error body, as clients (agents, collectors) expect."""
    return Response(status, json.dumps({"error": message}).encode(), headers or [])


CONTINUE: Final = b"HTTP/1.1 100 Continue\r\n\r\n"
"""The interim answer to ``Expect: 100-continue``."""
Handler = Callable[[Request], Awaitable[Response]]


BODILESS: Final = frozenset({204, 304})
"""Statuses whose answers end at their header block (RFC 9110 6.4.1); a 204
carries no Content-Length either (8.6), nor does a 304 here (it may, only as
what a 200 would carry, which Edge does not know)."""


def encode_response(response: Response, keep_alive: bool, head: bool = False) -> bytes:
    reason = REASONS.get(response.status, b"Status")
    bodiless = response.status in BODILESS
    parts = [b"HTTP/1.1 %d %s\r\n" % (response.status, reason)]
    for name, value in response.headers:
        parts.append(name + b": " + value + b"\r\n")
    if response.content_type is not None:
        parts.append(b"Content-Type: " + response.content_type + b"\r\n")
    if not ((head and response.length_in_headers) or bodiless):
        parts.append(b"Content-Length: %d\r\n" % len(response.body))
    if not keep_alive:
        parts.append(b"Connection: close\r\n")
    parts.append(b"\r\n")
    if not (head or bodiless):  # a HEAD answer announces the length but carries no body
        parts.append(response.body)
    return b"".join(parts)


class _Answer:
    """A response decided while parsing (e.g. 400 for a malformed request),
    queued behind the answers owed to earlier pipelined requests."""

    __slots__ = ("response",)

    def __init__(self, response: Response):
        self.response = response


# Where a connection is in its current request (what its deadline means).
IDLE: Final = 0
"""Between requests (or before the first byte of the first: `_first` says)."""
HEAD: Final = 1
"""Reading a request line and headers."""
BODY: Final = 2
"""Reading a body."""
HANDLING: Final = 3
"""The request is complete and being answered (the upstream has its own timeout)."""
LINGER: Final = 4
"""Answered with an error; draining input until the client closes or time is up."""


class HttpServerProtocol(asyncio.BufferedProtocol):
    """One client connection.

    Reads go into the tracker's one small buffer and are parsed at once, so an
    idle or waiting connection holds no read buffer of its own. Body bytes are
    counted against the tracker's budget as they arrive; past the budget the
    connection stops reading until memory is given back (see
    :meth:`ConnectionTracker.hold`), for `memory_wait` at most.
    A request carries its count and gives it back when answered; a closed
    connection gives back everything and drops its buffers and parser at once.
    """

    def __init__(
        self,
        handler: Handler,
        limits: ServerLimits,
        tracker: ConnectionTracker,
        loggable_path: Callable[[str], str] | None = None,
    ):
        """`loggable_path`: a request path as a log line may show it, for
        handlers whose paths can carry secrets (default: as it is)."""
        self._handler = handler
        self._loggable_path = loggable_path
        self._limits = limits
        self._tracker = tracker
        self._parser: httptools.HttpRequestParser | None = httptools.HttpRequestParser(self)
        self._transport: asyncio.Transport | None = None
        self._loop = asyncio.get_running_loop()  # made by the server, in its loop
        self._url = b""
        self._headers: Headers = []
        self._lowered: dict[bytes, bytes] = {}
        self._relayed = b""
        self._body: list[bytes] = []
        self._body_size = 0
        self._head_bytes = 0
        """Bytes read since the current request began, while in its head."""
        self._queue: deque[Request | _Answer] = deque()
        self._busy = False
        self._serving = False
        """The connection's serving task exists (it lives as long as the connection)."""
        self._wakeup: asyncio.Future[None] | None = None
        """What the serving task waits on while the queue is empty."""
        self._closing = False
        self._phase = IDLE
        self._first = True
        """No request has begun on this connection yet."""
        self.deadline = 0.0
        """When the current phase times out (loop time; 0: never)."""
        self._held = 0
        """Body bytes of the request being received, counted against the budget."""
        self.waiting_memory = False
        self._continue_owed = False
        """A ``100 Continue`` held back while the body waits for memory: the
        client sends its body only once there is room (or gets the 503)."""
        self._body_read_at = 0.0
        """When the body being received last grew (or began, or was resumed)."""
        self._over_cap = False
        """Accepted beyond max_connections with none idle: only probes are served."""
        self._eof = False
        """The client half-closed after complete requests: answer them, then close."""
        self._peer = ""
        """The client's IP address."""
        self._ignoring_upgrade = False
        """The request being parsed asks for a protocol upgrade, which is not
        honoured: it is read again without it (see :meth:`_without_upgrade`)."""

    # -- asyncio.Protocol --------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        self._over_cap = not self._tracker.opened(self)
        peer = transport.get_extra_info("peername")
        self._peer = str(peer[0]) if isinstance(peer, tuple) and peer else ""
        # Nothing sent yet: idle and awaiting headers at once, whichever is shorter.
        limits = self._limits
        self.deadline = self._loop.time() + min(limits.header_timeout, limits.idle_timeout)

    def connection_lost(self, exc: Exception | None) -> None:
        self._transport = None
        self._wake()  # the serving task sees the connection gone and ends
        unanswered = [item for item in self._queue if isinstance(item, Request)]
        released = self._held + sum(item.reserved for item in unanswered)
        self._held = 0
        self._queue.clear()
        # Break the parser <-> protocol cycle and drop partial input now, not
        # whenever the cycle collector runs.
        self._parser = None
        self._body = []
        self._headers = []
        self._lowered = {}
        self._relayed = b""
        self._tracker.closed(self, released, len(unanswered))

    def eof_received(self) -> bool | None:
        """The client will send nothing more: answer the requests it sent
        completely (keeping the write side open), else close."""
        if self._phase == HANDLING:
            self._eof = True
            return True
        return None  # close

    @property
    def alive(self) -> bool:
        return self._transport is not None

    def get_buffer(self, sizehint: int) -> memoryview:
        # Until a body is admitted, reads are small: a connection waiting for
        # memory (or an aborted one nobody has noticed yet) then holds at most
        # a small read of body bytes.
        if self._phase == BODY:
            return self._tracker.read_buffer
        return self._tracker.head_buffer

    def buffer_updated(self, nbytes: int) -> None:
        self.data_received(self._tracker.read_buffer[:nbytes])

    def data_received(self, data: bytes | memoryview) -> None:
        parser = self._parser
        if self._closing or parser is None:
            return  # lingering: the input is drained and dropped
        if self._phase != BODY:
            self._head_bytes += len(data)
        try:
            while True:
                try:
                    parser.feed_data(data)
                    break
                except httptools.HttpParserUpgrade as upgrade:
                    if not self._ignoring_upgrade:
                        raise
                    data = self._without_upgrade() + bytes(data[upgrade.args[0] :])
                    parser = self._parser = httptools.HttpRequestParser(self)
        except httptools.HttpParserUpgrade:
            self._fail(400, "protocol upgrades are not supported")
        except httptools.HttpParserError as problem:
            if not self._closing:  # a limit already answered is not a parse error
                self._fail(400, f"malformed HTTP request: {problem}")
        if self._phase == HEAD and self._head_bytes > self._limits.max_header_size:
            self._headers_too_large()

    # -- httptools callbacks -----------------------------------------------------

    def on_message_begin(self) -> None:
        self._tracker.not_idle(self)
        if not self._first:
            self.deadline = self._loop.time() + self._limits.header_timeout
        self._first = False
        self._phase = HEAD
        self._url = b""
        self._headers = []
        self._body = []
        self._body_size = 0

    def on_url(self, url: bytes) -> None:
        self._url += url
        if len(self._url) > self._limits.max_url_size:
            self._fail(414, f"request target longer than {self._limits.max_url_size} bytes")
            raise httptools.HttpParserError("limit")  # stop parsing this input

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers.append((name, value))
        if len(self._headers) > self._limits.max_header_count:
            self._fail(431, f"more than {self._limits.max_header_count} request headers")
            raise httptools.HttpParserError("limit")

    def on_headers_complete(self) -> None:
        assert self._parser is not None
        if self._parser.should_upgrade() and self._parser.get_method() != b"CONNECT":
            # The parser would skip the body as the upgraded protocol's: this
            # request is read again without its Upgrade header (data_received).
            self._ignoring_upgrade = True
            return
        self._phase = BODY
        self._head_bytes = 0
        self._continue_owed = False
        now = self._loop.time()
        self.deadline = now + self._limits.body_timeout
        self._body_read_at = now
        lowered: dict[bytes, bytes] = {}
        relayed: list[bytes] = []
        connection: list[bytes] = []
        size = len(self._url)
        self._url = origin_form(self._url)
        for name, value in self._headers:
            size += len(name) + len(value) + 4
            low = name.lower()
            if low not in lowered:
                lowered[low] = value
            if is_hop_by_hop(low):
                if low == b"connection":
                    connection.append(value)
            elif low not in WRITTEN_BY_EDGE:
                relayed += (name, b": ", value, b"\r\n")
        if connection and (named := connection_options(connection)):
            # `relayed` holds four parts per header, its name first.
            relayed = [
                part
                for at in range(0, len(relayed), 4)
                if relayed[at].lower() not in named
                for part in relayed[at : at + 4]
            ]
        self._lowered = lowered
        self._relayed = b"".join(relayed)
        if size > self._limits.max_header_size:
            # (A block that never ends is caught on the raw bytes read instead.)
            self._headers_too_large()
            raise httptools.HttpParserError("limit")
        if self._over_cap and self._url.partition(b"?")[0] not in LOCAL_PATHS:
            self._fail(
                503,
                "too many connections; retry later",
                [(b"Retry-After", b"1")],
            )
            raise httptools.HttpParserError("limit")
        length = lowered.get(b"content-length", b"")
        declared = int(length) if length.isdigit() else 0
        if declared > self._limits.max_body_size:
            self._too_large()
            raise httptools.HttpParserError("limit")
        if (declared or b"transfer-encoding" in lowered) and not self._tracker.admit(self):
            self._wait_for_memory()
        expect = lowered.get(b"expect")
        if (
            expect is not None
            and expect.strip().lower() == b"100-continue"
            and self._transport is not None
        ):
            if self.waiting_memory:
                self._continue_owed = True
            else:
                self._transport.write(CONTINUE)

    def on_body(self, body: bytes) -> None:
        if self._closing:
            return
        size = len(body)
        self._body_size += size
        if self._body_size > self._limits.max_body_size:
            self._too_large()
            raise httptools.HttpParserError("limit")
        self._body.append(body)
        self._held += size
        self._body_read_at = self._loop.time()
        if not self._tracker.hold(self, size) and not self.waiting_memory:
            self._wait_for_memory()

    def on_message_complete(self) -> None:
        if self._closing or self._parser is None or self._ignoring_upgrade:
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
            self._held,
            self._headers,
            self._peer,
        )
        self._body = []
        self._held = 0
        self._phase = HANDLING
        self.deadline = 0.0
        self.waiting_memory = False  # it arrived whole while waiting: nothing to wait for
        self._tracker.received(self)
        self._enqueue(request)

    def _without_upgrade(self) -> bytes:
        """The head of the request being parsed without its ``Upgrade``
        headers, to parse it again as a plain HTTP/1.1 request: Upgrade is
        hop-by-hop, and a server may ignore it (RFC 9110 7.8). The parser
        took anything after an upgrade request's head for the new protocol,
        so its body would have been lost."""
        assert self._parser is not None
        self._ignoring_upgrade = False
        method = self._parser.get_method()
        version = self._parser.get_http_version().encode("latin-1")
        lines = [b"%s %s HTTP/%s\r\n" % (method, self._url, version)]
        for name, value in self._headers:
            if name.lower() != b"upgrade":
                lines.append(name + b": " + value + b"\r\n")
        lines.append(b"\r\n")
        return b"".join(lines)

    # -- memory and deadlines (called by the tracker) ------------------------------

    def _wait_for_memory(self) -> None:
        """Stop reading until the tracker has room, for `memory_wait` at most."""
        self.waiting_memory = True
        self.deadline = self._loop.time() + self._limits.memory_wait
        self._update_reading()

    def resume_for_memory(self) -> None:
        """The tracker has room again: read on, with the body's deadline
        counted from now (waiting was not the client's fault)."""
        self.waiting_memory = False
        if self._continue_owed and self._transport is not None:
            self._continue_owed = False
            self._transport.write(CONTINUE)
        if self._phase == BODY:
            now = self._loop.time()
            self.deadline = now + self._limits.body_timeout
            self._body_read_at = now
        self._update_reading()

    def stalled(self, since: float) -> bool:
        """Holding body bytes, and received none since `since` (Edge not
        having paused it)."""
        return (
            self._phase == BODY
            and self._held > 0
            and not self.waiting_memory
            and self._body_read_at <= since
        )

    def cut_off_stall(self) -> None:
        """Give up a stalled body whose memory another request waits for."""
        self._fail(
            408,
            f"request body stalled for {self._limits.body_stall:g} s while other requests "
            "waited for memory",
        )

    def expire(self) -> None:
        """The current phase ran past its deadline."""
        if self.waiting_memory:
            self._fail(
                503,
                f"no memory for the request body within {self._limits.memory_wait:g} s "
                "(other requests hold it); retry later",
                [(b"Retry-After", b"1")],
            )
        elif self._phase == HEAD:
            self._fail(
                408, f"request headers not received within {self._limits.header_timeout:g} s"
            )
        elif self._phase == BODY:
            self._fail(408, f"request body not received within {self._limits.body_timeout:g} s")
        else:  # idle keep-alive, or lingering after an error answer
            self._close()

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
        if self.waiting_memory or len(self._queue) > 16:
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
                    if self._eof:
                        self._close()
                        return
                    self._idle()
                    self._wakeup = self._loop.create_future()
                    await self._wakeup
                    continue
                item = self._queue.popleft()
                if isinstance(item, _Answer):
                    self._answer_and_linger(item.response)
                    return
                try:
                    response = await self._handler(item)
                except Exception:
                    path = item.path
                    if self._loggable_path is not None:
                        path = self._loggable_path(path)
                    log.exception("handler failed for %s %s", item.method, path)
                    response = json_error(500, "internal error")
                self._tracker.answered(item.reserved)
                if self._transport is None:
                    return
                keep_alive = (
                    item.keep_alive and not self._tracker.draining and not self._eof
                ) or bool(self._queue)
                head = item.method == "HEAD"
                # The task outlives the request: drop it (and its body) before
                # waiting for the next one, or every idle connection holds its last.
                del item
                self._transport.write(encode_response(response, keep_alive, head))
                del response
                if not keep_alive:
                    self._close()
                    return
                if self._phase == HANDLING and not self._queue:
                    self._phase = IDLE
                    self.deadline = self._loop.time() + self._limits.idle_timeout
                    self._tracker.now_idle(self)
                self._update_reading()
        finally:
            self._idle()
            self._wakeup = None

    def _idle(self) -> None:
        if self._busy:
            self._busy = False
            self._tracker.busy(-1)

    def _headers_too_large(self) -> None:
        self._fail(431, f"request header block larger than {self._limits.max_header_size} bytes")

    def _too_large(self) -> None:
        too_large = self._tracker.too_large
        if too_large is None or self._parser is None or self._closing:
            self._fail(413, f"body larger than max_body_size ({self._limits.max_body_size} bytes)")
            return
        method = self._parser.get_method().decode("latin-1")
        path = self._url.decode("latin-1").partition("?")[0]
        answer = too_large(method, path, self._lowered)
        self._fail(answer.status, "", answer=answer)

    def _fail(
        self,
        status: int,
        message: str,
        headers: Headers | None = None,
        answer: Response | None = None,
    ) -> None:
        """Answer an unreadable or refused request (with `answer`, or a JSON
        error of `status` and `message`) and close (the stream position is
        lost), after the answers owed to requests before it."""
        if self._closing or self._transport is None:
            return
        if answer is None:
            answer = json_error(status, message, headers)
        if self._tracker.refused is not None:
            self._tracker.refused(status)
        self._closing = True
        self.waiting_memory = False
        self._tracker.abandon(self, self._held)
        self._held = 0
        self._body = []
        if self._busy:
            self.deadline = 0.0
            self._queue.append(_Answer(answer))
            self._transport.pause_reading()
            return
        self._answer_and_linger(answer)

    def _answer_and_linger(self, response: Response) -> None:
        """Write `response`, half-close, and drain the input for a moment: a
        client still sending its body then reads the answer instead of a reset."""
        transport = self._transport
        if transport is None:
            return
        self._closing = True
        transport.write(encode_response(response, keep_alive=False))
        self._phase = LINGER
        self.deadline = self._loop.time() + LINGER_SECS
        self.waiting_memory = False
        if transport.can_write_eof():
            transport.write_eof()
        transport.resume_reading()

    def _close(self) -> None:
        self._closing = True
        if self._transport is not None:
            self._transport.close()

    def fileno(self) -> int:
        """The socket's descriptor (-1 once closed)."""
        transport = self._transport
        if transport is None:
            return -1
        sock = transport.get_extra_info("socket")
        return -1 if sock is None else int(sock.fileno())

    def abort(self) -> None:
        """Drop the connection at once (its client is gone)."""
        self._closing = True
        if self._transport is not None:
            self._transport.abort()

    def close_if_idle(self) -> None:
        if not self._busy and not self._queue:
            self._close()


class ConnectionTracker:
    """Open connections (for the cap and graceful shutdown), requests in
    flight, every connection's deadline (one periodic sweep, not a timer per
    connection), and the memory budget for request bodies."""

    def __init__(
        self,
        limits: ServerLimits | None = None,
        read_size: int = 64 << 10,
        head_size: int = 8 << 10,
        refused: Callable[[int], None] | None = None,
        too_large: Callable[[str, str, dict[bytes, bytes]], Response] | None = None,
    ) -> None:
        self.limits = limits or ServerLimits()
        self.refused = refused
        """Told the status of every request this layer answers itself (400,
        408, 413, 414, 431, 503), which no handler sees, so it can be counted."""
        self.too_large = too_large
        """The answer to a request whose body is past ``max_body_size``, from
        its method, path and lowered headers (default: 413 JSON). The
        connection is closed after it, as after any answer of this layer."""
        self.read_buffer = memoryview(bytearray(read_size))
        """Where every connection's reads land; parsed before the next read."""
        self.head_buffer = self.read_buffer[:head_size]
        """The same buffer's start: where reads land until a body is admitted."""
        self.connections: set[HttpServerProtocol] = set()
        self._idle: dict[HttpServerProtocol, None] = {}
        """Idle connections, longest idle first (evicted first at the cap)."""
        self.in_flight = 0
        self.draining = False
        self.budget = self.limits.body_budget
        self.held = 0
        self.handling = 0
        """Complete requests not answered yet (their bytes are in `held`)."""
        self.bytes_in = 0
        """Body bytes received since start (heap trimming looks at it)."""
        self._over: HttpServerProtocol | None = None
        """The one connection allowed to receive past the budget."""
        self._paused: deque[HttpServerProtocol] = deque()
        """Connections stopped in the middle of a body: resumed first (they
        hold bytes already; finishing them gives memory back soonest)."""
        self._waiting: deque[HttpServerProtocol] = deque()
        """Connections whose body has not started: resumed after those."""
        self._idle_event = asyncio.Event()
        self._idle_event.set()
        self._sweeper: asyncio.TimerHandle | None = None

    # -- connections -------------------------------------------------------------

    def opened(self, connection: HttpServerProtocol) -> bool:
        """Track a new connection; False when it is over the cap (no idle
        connection could make room)."""
        if len(self.connections) >= self.limits.max_connections and (self._paused or self._waiting):
            self._close_abandoned()  # gone clients first: they free their place at once
        if len(self.connections) >= self.limits.max_connections and self._idle:
            oldest = next(iter(self._idle))
            self._idle.pop(oldest)
            self.connections.discard(oldest)  # gone now; its close completes later
            oldest._close()
        within = len(self.connections) < self.limits.max_connections
        self.connections.add(connection)
        self._idle[connection] = None
        if self._sweeper is None:
            loop = asyncio.get_running_loop()
            self._sweeper = loop.call_later(self.limits.sweep_every, self._sweep)
        return within

    def closed(self, connection: HttpServerProtocol, released: int, unanswered: int) -> None:
        """`connection` is gone, with `released` body bytes held and
        `unanswered` complete requests never handled."""
        self.handling -= unanswered
        self.connections.discard(connection)
        self._idle.pop(connection, None)
        self.abandon(connection, released)

    def not_idle(self, connection: HttpServerProtocol) -> None:
        self._idle.pop(connection, None)

    def now_idle(self, connection: HttpServerProtocol) -> None:
        self._idle[connection] = None

    def _sweep(self) -> None:
        """Expire connections past their deadline; run again while any is open.
        While a request waits for memory, gone clients and stalled bodies
        give theirs back first, so that it may go on rather than expire."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        if self._paused or self._waiting:
            self._close_abandoned()
            self._cut_off_stalls(now)
        expired = [c for c in self.connections if 0.0 < c.deadline <= now]
        for connection in expired:
            connection.expire()
        self._sweeper = (
            loop.call_later(self.limits.sweep_every, self._sweep) if self.connections else None
        )

    def _cut_off_stalls(self, now: float) -> None:
        """With a request waiting for memory, cut off the bodies holding some
        that have received nothing for `body_stall` (their bytes may be all
        the budget: nothing else would give it back before their own 408)."""
        if not any(c.alive and c.waiting_memory for c in (*self._paused, *self._waiting)):
            return
        since = now - self.limits.body_stall
        for connection in [c for c in self.connections if c.stalled(since)]:
            connection.cut_off_stall()

    def _close_abandoned(self) -> None:
        """Close the waiting connections whose client has gone (closed or
        reset): with reading paused nothing else would notice, and each would
        hold its bytes and a descriptor until its turn came."""
        waiting = {
            c.fileno(): c for c in (*self._paused, *self._waiting) if c.alive and c.waiting_memory
        }
        poller = select.poll()
        for descriptor in waiting:
            if descriptor >= 0:
                poller.register(descriptor, select.POLLRDHUP)
        for descriptor, _ in poller.poll(0):
            waiting[descriptor].abort()
            self.connections.discard(waiting[descriptor])  # gone now; its close completes later

    # -- memory --------------------------------------------------------------------

    def admit(self, connection: HttpServerProtocol) -> bool:
        """May `connection` start reading the body it announced? False: it
        waits its turn (first come, first served), reading paused, until
        resumed or refused (`memory_wait`)."""
        if self._paused or self._waiting:
            self._waiting.append(connection)
            return False
        return self.held < self.budget or self._go_over_or_wait(connection, self._waiting)

    def hold(self, connection: HttpServerProtocol, size: int) -> bool:
        """Count `size` body bytes just received; False: stop reading until
        resumed."""
        self.held += size
        self.bytes_in += size
        if self.held <= self.budget or self._over is connection or connection.waiting_memory:
            return True
        return self._go_over_or_wait(connection, self._paused)

    def _go_over_or_wait(
        self, connection: HttpServerProtocol, line: deque[HttpServerProtocol]
    ) -> bool:
        """Past the budget a connection waits in line, unless no complete
        request is being handled (nothing would give memory back): then one
        connection at a time may receive past the budget, so that partial
        bodies never all wait on each other."""
        if self._over is None and not self.handling:
            self._over = connection
            return True
        line.append(connection)
        return False

    def received(self, connection: HttpServerProtocol) -> None:
        """`connection`'s body is complete (its bytes stay held until answered)."""
        self.handling += 1
        if self._over is connection:
            self._over = None
            self._wake_waiting()

    def abandon(self, connection: HttpServerProtocol, size: int) -> None:
        """`connection` gives up the body it was receiving (`size` bytes held)."""
        if self._over is connection:
            self._over = None
        self.release(size)

    def answered(self, size: int) -> None:
        """A complete request holding `size` body bytes has been answered."""
        self.handling -= 1
        self.release(size)

    def release(self, size: int) -> None:
        self.held = max(0, self.held - size)
        self._wake_waiting()

    def _wake_waiting(self) -> None:
        """Resume waiting connections while there is room for one read each;
        with no room and nobody over the budget, let the longest waiting go over."""
        room = self.budget - self.held
        read_size = len(self.read_buffer)
        for line in (self._paused, self._waiting):
            while line:
                connection = line[0]
                if not connection.alive or not connection.waiting_memory:
                    line.popleft()
                    continue
                if room <= 0:
                    if self._over is not None or self.handling:
                        return
                    self._over = connection
                room -= read_size
                line.popleft()
                connection.resume_for_memory()

    # -- shutdown ------------------------------------------------------------------

    def busy(self, delta: int) -> None:
        self.in_flight += delta
        if self.in_flight:
            self._idle_event.clear()
        else:
            self._idle_event.set()

    async def drain(self, timeout: float) -> bool:
        """Stop keep-alive, close idle connections, wait for requests in flight."""
        self.draining = True
        for connection in list(self.connections):
            connection.close_if_idle()
        try:
            await asyncio.wait_for(self._idle_event.wait(), timeout)
        except TimeoutError:
            return False
        return True
