"""What the HTTP server's connections may cost, and the bookkeeping that holds
them to it: :class:`ServerLimits` and :class:`ConnectionTracker` (the
connection cap, every connection's deadline, the memory budget for request
bodies and graceful shutdown). The connections themselves are
:class:`~sluice.transport.http_server.HttpServerProtocol`.
"""

from __future__ import annotations

import asyncio
import select
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

from sluice.transport.http_message import Response

if TYPE_CHECKING:
    from sluice.transport.http_server import HttpServerProtocol


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
