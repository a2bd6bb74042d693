"""The misbehaving upstream of the chaos benchmark.

For each request Edge forwards, it picks at random (seeded) one of
:data:`FAULTS` or, otherwise, commits the request's records and answers
200/202. Faults that happen after the request was read commit its records
first half of the time: then the upstream has stored data and failed to say
so, the one case where a retried request legitimately duplicates records.
Independently, it resets some fresh connections at accept, and now and then
stops listening for a moment (connections refused).

Every request read is logged as a :class:`Delivery`, in the order of the
commits, with the client's attempt id (header ``X-Chaos-Attempt``, which
Edge passes on): the accounting in ``chaos.py`` reads that log.
"""

from __future__ import annotations

import random
import socket
import threading
import time
from array import array
from collections import Counter
from dataclasses import dataclass, field

from bench.blackbox import RawUpstream, Request, answer, reset
from bench.chaos_records import read_records

ATTEMPT_HEADER = "X-Chaos-Attempt"

FAULTS = (
    "429 Retry-After",
    "503 Retry-After",
    "timeout",
    "cut in status line",
    "cut after status line",
    "cut in headers",
    "cut in body",
    "close without answer",
    "reset without answer",
)
"""What the upstream may do instead of answering a request it has read."""

_COMMIT_MAY_PRECEDE = frozenset(FAULTS[2:])
"""Faults after which the records may have been stored: 429/503 never store."""


@dataclass(slots=True)
class Delivery:
    """One request the upstream read, and what it did with it."""

    attempt: int
    """The client's attempt id (-1: the header was missing)."""
    kind: str
    """``ok``, ``unreadable`` or one of :data:`FAULTS`."""
    committed: bool
    ids: array[int]
    """The records in the request, whether committed or not."""
    transform_missed: int = 0
    answered: bool = False
    """A 2xx answer for the stored records left the upstream in time."""


@dataclass
class Outages:
    count: int = 0
    seconds: float = 0.0
    resets_at_accept: int = 0


@dataclass
class ChaosUpstream:
    """A :class:`RawUpstream` with faults, and the log of what it stored."""

    seed: int
    fault_rate: float
    edge_timeout: float
    """Edge's ``upstream_timeout_secs``: a timeout fault stalls past it, and an
    answer later than half of it counts as not given in time."""
    outage_every: float = 10.0
    """Mean seconds between listener outages."""
    deliveries: list[Delivery] = field(default_factory=list)
    kinds: Counter[str] = field(default_factory=Counter)
    outages: Outages = field(default_factory=Outages)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        self._outage_rng = random.Random(self.seed + 1)
        self._lock = threading.Lock()
        self._armed = threading.Event()
        self._done = threading.Event()
        self.server = RawUpstream(self._handle, self._on_accept)
        self.url = self.server.url
        self._outage_thread = threading.Thread(target=self._outage_loop, daemon=True)

    def arm(self) -> None:
        """Start misbehaving (Edge is up and its clients are about to start)."""
        self._armed.set()
        if self.fault_rate > 0:
            self._outage_thread.start()

    def disarm(self) -> None:
        self._armed.clear()
        self._done.set()

    def stop(self) -> None:
        self.disarm()
        self.server.stop()

    def _draw(self) -> float:
        with self._lock:
            return self._rng.random()

    def _outage_loop(self) -> None:
        while not self._done.wait(self._outage_rng.expovariate(1 / self.outage_every)):
            seconds = 0.2 + 0.6 * self._outage_rng.random()
            self.server.refuse_for(seconds)
            with self._lock:
                self.outages.count += 1
                self.outages.seconds += seconds

    def _on_accept(self, sock: socket.socket) -> bool:
        if self._armed.is_set() and self._draw() < self.fault_rate / 4:
            with self._lock:
                self.outages.resets_at_accept += 1
            reset(sock)
            return False
        return True

    def _pick(self) -> str:
        if not self._armed.is_set():
            return "ok"
        with self._lock:
            if self._rng.random() >= self.fault_rate:
                return "ok"
            return self._rng.choice(FAULTS)

    def _handle(self, request: Request, sock: socket.socket) -> bool:
        try:
            attempt = int(request.headers.get(ATTEMPT_HEADER.lower(), "-1"))
        except ValueError:
            attempt = -1
        content_type = request.headers.get("content-type", "")
        try:
            arrived = read_records(
                request.target,
                content_type,
                request.headers.get("content-encoding", ""),
                request.body,
            )
        except Exception:  # whatever Edge sent is not a re-encoding of a client's batch
            self._log(Delivery(attempt, "unreadable", False, array("q")))
            answer(sock, 400, b'{"error":"unreadable body"}')
            return True
        kind = self._pick()
        commit = kind == "ok" or (kind in _COMMIT_MAY_PRECEDE and self._draw() < 0.5)
        delivery = Delivery(
            attempt,
            kind,
            commit,
            array("q", [record.id for record in arrived]),
            sum(record.transform_missed for record in arrived) if commit else 0,
        )
        self._log(delivery)
        datadog = request.target.startswith("/api/v2/")
        status = 202 if datadog else 200
        if "protobuf" in content_type:
            ok_body, ok_type = b"\x0a\x00", "application/x-protobuf"
        else:
            ok_body, ok_type = (b"{}" if datadog else b'{"partialSuccess":{}}'), "application/json"
        if kind == "ok":
            answer(sock, status, ok_body, (("Content-Type", ok_type),))
            delivery.answered = time.monotonic() - request.started < self.edge_timeout / 2
            return True
        if kind.endswith("Retry-After"):
            headers = (("Content-Type", "application/json"), ("Retry-After", "1"))
            answer(sock, int(kind[:3]), b'{"error":"try later"}', headers)
            return True
        if kind == "timeout":
            time.sleep(self.edge_timeout + 0.5)
            if commit:  # a slow store answers at last; Edge has given up by now
                answer(sock, status, ok_body, (("Content-Type", ok_type),))
        elif kind == "cut in status line":
            sock.sendall(b"HTTP/1.1 20")
        elif kind == "cut after status line":
            sock.sendall(f"HTTP/1.1 {status} OK\r\n".encode())
        elif kind == "cut in headers":
            sock.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: " + ok_type.encode() + b"\r\nContent-Le"
            )
        elif kind == "cut in body":
            head = f"HTTP/1.1 {status} OK\r\nContent-Type: {ok_type}\r\nContent-Length: {len(ok_body)}\r\n\r\n"
            sock.sendall(head.encode() + ok_body[: len(ok_body) // 2])
        elif kind == "reset without answer":
            reset(sock)
        return False

    def _log(self, delivery: Delivery) -> None:
        with self._lock:
            self.deliveries.append(delivery)
            self.kinds[delivery.kind] += 1

    def log(self) -> list[Delivery]:
        """The deliveries so far, in the order the upstream read them."""
        with self._lock:
            return list(self.deliveries)
