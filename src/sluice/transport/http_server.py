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
import logging
from collections import deque
from collections.abc import Callable
from typing import Final, cast

import httptools

from sluice.transport import go_reading
from sluice.transport.connections import ConnectionTracker, ServerLimits
from sluice.transport.go_reading import go_unreadable
from sluice.transport.http_message import (
    CONTINUE,
    WRITTEN_BY_EDGE,
    Handler,
    Headers,
    Request,
    Response,
    connection_options,
    encode_response,
    is_hop_by_hop,
    json_error,
    origin_form,
)

log = logging.getLogger(__name__)

LOCAL_PATHS = frozenset({b"/_health", b"/_ready"})
"""Probes answered even on a connection over the cap (cheap, and an orchestrator
must see the process alive while it is busy)."""

LINGER_SECS: Final = 2.0
"""After an error answer, how long the connection's input is drained before it
is closed (closing with unread input would reset the answer away)."""


class _Answer:
    """A response decided while parsing (e.g. 400 for a malformed request),
    encoded, queued behind the answers owed to earlier pipelined requests."""

    __slots__ = ("wire",)

    def __init__(self, wire: bytes):
        self.wire = wire


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
        go_net_http: bool = False,
    ):
        """`loggable_path`: a request path as a log line may show it, for
        handlers whose paths can carry secrets (default: as it is).
        `go_net_http`: answer as Go's net/http server does where HTTP leaves
        it open (the collector's servers, whose upstream is written in Go):
        every answer is dated; a request it cannot read gets Go's plain-text
        answer (and one without a valid Host, an unknown transfer coding or
        a version other than 1.x its refusal); an unknown ``Expect`` is
        417 and ``100 Continue`` is sent only for a body; ``OPTIONS *`` is
        answered without the handler; a method the parser does not know is
        served, and Content-Length lines that agree are read as one (for a
        request pipelined behind others too); a body that cannot be read to
        its end (cut short, timed out, badly chunked) goes to the handler
        with the error Go's read meets (:attr:`Request.body_error`), for it
        to answer."""
        self._handler = handler
        self._go_net_http = go_net_http
        self._loggable_path = loggable_path
        self._limits = limits
        self._tracker = tracker
        self._parser: httptools.HttpRequestParser | None = self._new_parser()
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
        self._between = True
        """The parser is between requests (none begun and unfinished)."""
        self._begun = 0
        """Requests begun on this connection."""
        self._extension_method = b""
        """The request being parsed has this method, which the parser does
        not know and reads as POST (:func:`go_reading.reread`)."""

    def _new_parser(self) -> httptools.HttpRequestParser:
        if self._go_net_http:
            return go_reading.new_parser(self)
        return httptools.HttpRequestParser(self)

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
        completely (keeping the write side open), else close (answering a
        head cut short first, as Go's server does)."""
        if self._phase == HANDLING:
            self._eof = True
            return True
        if self._phase == HEAD and self._go_net_http:
            # Go reads the head to its end and finds it cut short: its bare 400.
            self._fail(400, "", go=go_unreadable(400))
            return True
        if self._phase == BODY and self._go_net_http and not self._closing:
            self._body_failed("unexpected EOF")
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
        # Whether `data` begins with a request, which a request the parser
        # refuses and Go reads can be read again from.
        at_start = self._between
        begun = self._begun
        try:
            while True:
                try:
                    parser.feed_data(data)
                    break
                except httptools.HttpParserUpgrade as upgrade:
                    rest = bytes(data[upgrade.args[0] :])
                    if self._ignoring_upgrade:
                        data = self._without_upgrade() + rest
                    elif self._go_net_http and parser.get_method() == b"CONNECT":
                        data = rest  # to Go, the next request (no tunnel without a hijack)
                    else:
                        raise
                    at_start, begun = True, self._begun
                    parser = self._parser = self._new_parser()
                except httptools.HttpParserError as problem:
                    if self._closing or not (
                        self._go_net_http and at_start and self._begun > begun
                    ):
                        raise
                    if self._begun > begun + 1:  # pipelined behind requests read whole
                        data = data[go_reading.message_end(data, self._begun - begun - 1) :]
                    reread = go_reading.reread(data, problem)
                    data = reread.data
                    if reread.method:  # read as POST from now on
                        self._extension_method = reread.method
                    begun = self._begun
                    parser = self._parser = self._new_parser()
        except httptools.HttpParserUpgrade:
            self._fail(400, "protocol upgrades are not supported", go=go_unreadable(400))
        except httptools.HttpParserError as problem:
            if self._closing:
                pass  # a limit already answered is not a parse error
            elif self._phase == BODY and self._go_net_http:
                self._body_failed(go_reading.chunked_body_error(problem))
            else:
                self._fail(
                    400,
                    f"malformed HTTP request: {problem}",
                    go=go_reading.parse_error_answer(problem),
                )
        if self._phase == HEAD and self._head_bytes > self._limits.max_header_size:
            self._headers_too_large()

    # -- httptools callbacks -----------------------------------------------------

    def on_message_begin(self) -> None:
        self._tracker.not_idle(self)
        if not self._first:
            self.deadline = self._loop.time() + self._limits.header_timeout
        self._first = False
        self._between = False
        self._begun += 1
        self._phase = HEAD
        self._url = b""
        self._headers = []
        self._body = []
        self._body_size = 0

    def on_url(self, url: bytes) -> None:
        self._url += url
        if len(self._url) > self._limits.max_url_size:
            if self._go_net_http:  # Go bounds only line and headers together
                self._headers_too_large()
            else:
                self._fail(414, f"request target longer than {self._limits.max_url_size} bytes")
            raise httptools.HttpParserError("limit")  # stop parsing this input

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers.append((name, value))
        if len(self._headers) > self._limits.max_header_count:
            self._fail(431, f"more than {self._limits.max_header_count} request headers")
            raise httptools.HttpParserError("limit")

    def on_headers_complete(self) -> None:
        assert self._parser is not None
        if self._parser.should_upgrade() and self._method() != b"CONNECT":
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
        if self._go_net_http:
            if self._go_refuses():
                raise httptools.HttpParserError("limit")
            if b"transfer-encoding" in lowered and b"content-length" in lowered:
                self._drop_content_length()
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
            and not (
                self._go_net_http
                and not go_reading.body_follows(
                    self._parser.get_http_version(), declared, self._lowered
                )
            )
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
        self._between = True
        if self._closing or self._parser is None or self._ignoring_upgrade:
            return
        self._hand_on()

    def _hand_on(self, body_error: str = "") -> None:
        """Queue the request being received for the handler: whole, or with
        the error its body met (then it is the connection's last)."""
        assert self._parser is not None
        url = self._url.decode("latin-1")
        path, mark, query = url.partition("?")
        request = Request(
            self._method().decode("latin-1"),
            path,
            query if mark else None,
            self._lowered,
            self._relayed,
            self._body[0] if len(self._body) == 1 else b"".join(self._body),
            self._parser.should_keep_alive() and not body_error,
            self._held,
            self._headers,
            self._peer,
            # Only Go's answers depend on it (Edge answers every request in 1.1).
            self._go_net_http and self._parser.get_http_version() == "1.0",
            body_error,
        )
        self._body = []
        self._held = 0
        self._extension_method = b""
        self._phase = HANDLING
        self.deadline = 0.0
        self.waiting_memory = False  # it arrived whole while waiting: nothing to wait for
        self._tracker.received(self)
        self._enqueue(request)

    def _body_failed(self, problem: str) -> None:
        """The body being received cannot be read to its end (`problem`, in
        the words of the error Go's reader meets). Go's server runs the
        handler before the body is read, so the handler answers (the otlp
        receiver: its 400 with a Status) with what arrived; what follows on
        the wire is not read as a request, and the connection closes after
        the answer."""
        self._closing = True
        self._hand_on(problem)

    def _go_refuses(self) -> bool:
        """Answer as Go's server does a request it reads but will not serve;
        True when refused."""
        assert self._parser is not None
        refused = go_reading.refusal(
            self._parser.get_http_version(), self._method(), self._headers, self._lowered
        )
        if refused is None:
            return False
        self._fail(refused.status, refused.problem, answer=refused.answer, go=refused.wire)
        return True

    def _drop_content_length(self) -> None:
        """A chunked request's Content-Length means nothing: Go's server
        deletes it, so neither the body's limit nor the handler sees it."""
        del self._lowered[b"content-length"]
        self._headers = [line for line in self._headers if line[0].lower() != b"content-length"]

    def _method(self) -> bytes:
        """The method of the request being parsed."""
        assert self._parser is not None
        return self._extension_method or self._parser.get_method()

    def _without_upgrade(self) -> bytes:
        """The head of the request being parsed without its ``Upgrade``
        headers, to parse it again as a plain HTTP/1.1 request: Upgrade is
        hop-by-hop, and a server may ignore it (RFC 9110 7.8). The parser
        took anything after an upgrade request's head for the new protocol,
        so its body would have been lost."""
        assert self._parser is not None
        self._ignoring_upgrade = False
        method = self._parser.get_method()  # an unknown one as the parser read it (POST)
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
        elif self._phase == HEAD and self._go_net_http and not self._busy:
            # Go's server takes a read that timed out for a client gone: no answer.
            self._close()
        elif self._phase == HEAD:
            self._fail(
                408, f"request headers not received within {self._limits.header_timeout:g} s"
            )
        elif self._phase == BODY and self._go_net_http:
            transport = self._transport
            self._body_failed(
                go_reading.read_timeout_error(
                    transport and transport.get_extra_info("sockname"),
                    transport and transport.get_extra_info("peername"),
                )
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
                    self._answer_and_linger(item.wire)
                    return
                try:
                    if self._go_net_http and item.path == "*" and item.method == "OPTIONS":
                        response = Response(200, content_type=None)  # Go's globalOptionsHandler
                    else:
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
                http_10 = item.http_10
                unread = bool(item.body_error)
                # The task outlives the request: drop it (and its body) before
                # waiting for the next one, or every idle connection holds its last.
                del item
                wire = encode_response(response, keep_alive, head, self._go_net_http, http_10)
                del response
                if unread:  # the client may still be sending what cannot be read
                    self._answer_and_linger(wire)
                    return
                self._transport.write(wire)
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
        self._fail(
            431,
            f"request header block larger than {self._limits.max_header_size} bytes",
            go=go_unreadable(431),
        )

    def _too_large(self) -> None:
        too_large = self._tracker.too_large
        if too_large is None or self._parser is None or self._closing:
            self._fail(413, f"body larger than max_body_size ({self._limits.max_body_size} bytes)")
            return
        method = self._method().decode("latin-1")
        path = self._url.decode("latin-1").partition("?")[0]
        answer = too_large(method, path, self._lowered)
        self._fail(answer.status, "", answer=answer)

    def _fail(
        self,
        status: int,
        message: str,
        headers: Headers | None = None,
        answer: Response | None = None,
        go: bytes | None = None,
    ) -> None:
        """Answer an unreadable or refused request (with `answer`, or a JSON
        error of `status` and `message`; with `go` as it is if answering as
        Go's server) and close (the stream position is lost), after the
        answers owed to requests before it."""
        if self._closing or self._transport is None:
            return
        if self._go_net_http and go is not None:
            wire = go
        else:
            if answer is None:
                answer = json_error(status, message, headers)
            wire = encode_response(answer, False, dated=self._go_net_http)
        if self._tracker.refused is not None:
            self._tracker.refused(status)
        self._closing = True
        self.waiting_memory = False
        self._tracker.abandon(self, self._held)
        self._held = 0
        self._body = []
        if self._busy:
            self.deadline = 0.0
            self._queue.append(_Answer(wire))
            self._transport.pause_reading()
            return
        self._answer_and_linger(wire)

    def _answer_and_linger(self, wire: bytes) -> None:
        """Write the encoded answer, half-close, and drain the input for a
        moment: a client still sending its body then reads the answer
        instead of a reset."""
        transport = self._transport
        if transport is None:
            return
        self._closing = True
        transport.write(wire)
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
