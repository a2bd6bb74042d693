"""Hostile-load benchmark: Edge's memory while clients misbehave, and whether valid traffic still flows.

``--connections`` (default 50) client threads run for ``--seconds`` (default
60) against the real ``sluice-edge`` (the 9 rules of ``edge.py``, a
``max_body_size`` of 2 MiB, an upstream on 127.0.0.1 that answers 200 at once),
each in one role, each reconnecting whenever Edge closes on it:

* aborted upload: headers with ``Content-Length: 1048576``, half of the body,
  then close;
* header flood: a request with ``--flood-mib`` MiB in one header, or one with
  10,000 header lines, alternately; then the answer is read;
* slowloris: a request's headers at 2 bytes/s, never finished;
* idle: a connection that sends nothing;
* valid: 1 MiB OTLP protobuf POSTs (about 1,000 log records), which must keep
  succeeding.

A probe GETs ``/_health`` once a second. Edge's VmRSS is sampled from
``/proc`` every 100 ms: the report gives the idle RSS before the load (after a
few valid requests), the peak during it (VmHWM), the RSS ``--settle`` seconds
(default 10) after the load stopped and when it came back to idle, with the
valid requests' outcomes and latencies and what Edge did to each hostile
connection. The load stops early when RSS passes ``--rss-limit-mib``. Every
socket has a timeout; every loop ends with the run.

Target (issue 12): peak RSS < 64 MiB, back to idle within 10 s.

Run from the repository root: ``.venv/bin/python bench/hostile.py [--seconds 60]``.
"""

from __future__ import annotations

import argparse
import functools
import http.client
import random
import select
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

if not __package__:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.blackbox import MIB, EdgeUnderTest, MemoryWatch, RawUpstream, Request, answer
from bench.edge import RULES, otlp_body

PROTOBUF = "application/x-protobuf"
DECLARED = 1 << 20
"""The Content-Length an aborted upload declares (half of it is sent)."""
SOCKET_TIMEOUT = 5.0
IDLE_SLACK = 0.1
"""RSS within this share (or 2 MiB) of the idle figure counts as back to idle."""
VALID_TIMEOUT = 30.0
MIX = {"aborted upload": 12, "header flood": 6, "slowloris": 12, "idle": 10, "valid": 10}
"""Connections per role out of 50; scaled to ``--connections``."""


@dataclass
class RoleTally:
    """What happened to one role's connections (one thread each)."""

    connections: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    held: list[float] = field(default_factory=list)
    """Seconds a connection lasted before Edge closed it."""
    latencies: list[float] = field(default_factory=list)
    """Valid requests that succeeded: seconds each."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, outcome: str, held: float | None = None) -> None:
        with self.lock:
            self.outcomes[outcome] += 1
            if held is not None:
                self.held.append(held)


class Load:
    """The client threads of one run, and the signal that ends them."""

    def __init__(self, port: int, flood_mib: float, valid_body: bytes):
        self.port = port
        self.flood_mib = flood_mib
        self.valid_body = valid_body
        self.stop = threading.Event()
        self.tallies = {role: RoleTally() for role in (*MIX, "health probe")}

    def _connect(self, role: str) -> socket.socket | None:
        try:
            sock = socket.create_connection(("127.0.0.1", self.port), timeout=SOCKET_TIMEOUT)
        except OSError as error:
            self.tallies[role].count(f"connect failed ({type(error).__name__})")
            self.stop.wait(0.1)
            return None
        with self.tallies[role].lock:
            self.tallies[role].connections += 1
        return sock

    def _closed_by_edge(self, sock: socket.socket, wait: float) -> bool | None:
        """Waits up to `wait` s for Edge to answer or close: True if it closed,
        None if it answered something (the answer is drained)."""
        readable, _, _ = select.select([sock], [], [], wait)
        if not readable:
            return False
        try:
            return True if not sock.recv(65536) else None
        except OSError:
            return True

    def aborted_upload(self, role: str, rng: random.Random) -> None:
        head = (
            f"POST /v1/logs HTTP/1.1\r\nHost: edge\r\nContent-Type: {PROTOBUF}\r\n"
            f"Content-Length: {DECLARED}\r\n\r\n"
        ).encode()
        half = rng.randbytes(DECLARED // 2)
        while not self.stop.is_set():
            sock = self._connect(role)
            if sock is None:
                continue
            with sock:
                try:
                    sock.sendall(head + half)
                    self.tallies[role].count("half sent, closed")
                except TimeoutError:
                    self.tallies[role].count("Edge stopped reading (send timed out)")
                except OSError:
                    self.tallies[role].count("Edge closed while sending")

    def header_flood(self, role: str, rng: random.Random) -> None:
        big = int(self.flood_mib * MIB)
        many = "".join(f"X-Flood-{i}: {i}\r\n" for i in range(10_000)).encode()
        flood_round = 0
        while not self.stop.is_set():
            flood_round += 1
            sock = self._connect(role)
            if sock is None:
                continue
            kind = "huge header" if flood_round % 2 else "10,000 headers"
            with sock:
                try:
                    sock.sendall(b"GET /v1/logs HTTP/1.1\r\nHost: edge\r\n")
                    if kind == "huge header":
                        sock.sendall(b"X-Flood: ")
                        chunk = b"a" * (64 << 10)
                        for _ in range(big // len(chunk)):
                            if self.stop.is_set():
                                break
                            sock.sendall(chunk)
                        sock.sendall(b"\r\n")
                    else:
                        sock.sendall(many)
                    sock.sendall(b"\r\n")
                    answer = sock.recv(4096)
                    status = answer.split(b" ", 2)[1].decode() if answer else "closed"
                    self.tallies[role].count(f"{kind}: {status}")
                except TimeoutError:
                    self.tallies[role].count(f"{kind}: timed out")
                except OSError:
                    self.tallies[role].count(f"{kind}: closed by Edge while sending")
                except IndexError:
                    self.tallies[role].count(f"{kind}: garbled answer")

    def hold(self, role: str, rng: random.Random, trickle: bool) -> None:
        """Keep a connection open until Edge closes it: idle, or (`trickle`,
        slowloris) sending a request's headers at 2 bytes/s, never finished."""
        while not self.stop.is_set():
            sock = self._connect(role)
            if sock is None:
                continue
            opened = time.monotonic()
            with sock:
                try:
                    if trickle:
                        sock.sendall(b"POST /v1/logs HTTP/1.1\r\nHost: edge\r\nX-Slow: ")
                    while not self.stop.is_set():
                        closed = self._closed_by_edge(sock, 0.5)
                        if closed is not False:
                            outcome = "closed by Edge" if closed else "answered by Edge"
                            self.tallies[role].count(outcome, time.monotonic() - opened)
                            break
                        if trickle:
                            sock.sendall(bytes([rng.randrange(97, 123)]))
                    else:
                        self.tallies[role].count("still open at the end")
                except OSError:
                    self.tallies[role].count("closed by Edge", time.monotonic() - opened)
            self.stop.wait(0.1)  # Edge may close at once: do not spin

    def valid(self, role: str, rng: random.Random) -> None:
        tally = self.tallies[role]
        conn: http.client.HTTPConnection | None = None
        while not self.stop.is_set():
            if conn is None:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=VALID_TIMEOUT)
                with tally.lock:
                    tally.connections += 1
            started = time.monotonic()
            try:
                conn.request("POST", "/v1/logs", self.valid_body, {"Content-Type": PROTOBUF})
                response = conn.getresponse()
                response.read()
            except (OSError, http.client.HTTPException) as error:
                tally.count(f"failed: {type(error).__name__}")
                conn.close()
                conn = None
                continue
            if response.status == 200:
                tally.count("succeeded")
                with tally.lock:
                    tally.latencies.append(time.monotonic() - started)
            else:
                tally.count(f"failed: {response.status}")
            if response.will_close:
                conn.close()
                conn = None
        if conn is not None:
            conn.close()

    def health_probe(self, role: str, rng: random.Random) -> None:
        while not self.stop.wait(1.0):
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2.0)
            try:
                conn.request("GET", "/_health")
                status = conn.getresponse().status
                self.tallies[role].count("ok" if status == 200 else f"status {status}")
            except (OSError, http.client.HTTPException) as error:
                self.tallies[role].count(f"failed: {type(error).__name__}")
            finally:
                conn.close()

    def start(self, connections: int, seed: int) -> list[threading.Thread]:
        roles: dict[str, Callable[[str, random.Random], None]] = {
            "aborted upload": self.aborted_upload,
            "header flood": self.header_flood,
            "slowloris": functools.partial(self.hold, trickle=True),
            "idle": functools.partial(self.hold, trickle=False),
            "valid": self.valid,
            "health probe": self.health_probe,
        }
        counts = {role: max(1, round(n * connections / 50)) for role, n in MIX.items()}
        counts["health probe"] = 1
        threads = []
        for role, count in counts.items():
            for index in range(count):
                thread = threading.Thread(
                    target=roles[role],
                    args=(role, random.Random(f"{seed}/{role}/{index}")),
                    name=f"{role}-{index}",
                    daemon=True,
                )
                thread.start()
                threads.append(thread)
        return threads


def sink(request: Request, sock: socket.socket) -> bool:
    """The upstream: every request succeeds at once."""
    answer(sock, 200, b"", (("Content-Type", request.headers.get("content-type", PROTOBUF)),))
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="load duration")
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--flood-mib", type=float, default=24.0, help="size of the huge header")
    parser.add_argument("--settle", type=float, default=10.0, help="seconds watched after the load")
    parser.add_argument("--seed", type=int, default=20251121)
    parser.add_argument("--rss-limit-mib", type=float, default=2048.0, help="stop early above")
    args = parser.parse_args()
    valid_body, records = otlp_body(random.Random(args.seed))
    upstream = RawUpstream(sink)
    with tempfile.TemporaryDirectory(prefix="sluice-hostile-") as tmp:
        edge = EdgeUnderTest(
            Path(tmp),
            {"upstream_url": upstream.url, "max_body_size": 2 * MIB, "log_level": "info"},
            [{"name": r["id"], **r} for r in RULES],
        )
        watch = MemoryWatch(edge, 0.1, args.rss_limit_mib)
        load = Load(edge.port, args.flood_mib, valid_body)
        try:
            watch.start()
            for _ in range(3):  # warm up, so that idle RSS includes a request's buffers
                conn = http.client.HTTPConnection("127.0.0.1", edge.port, timeout=VALID_TIMEOUT)
                conn.request("POST", "/v1/logs", valid_body, {"Content-Type": PROTOBUF})
                conn.getresponse().read()
                conn.close()
            time.sleep(1.0)
            idle_from = time.monotonic()
            time.sleep(1.0)
            idle = statistics.median(rss for t, rss in watch.samples if t >= idle_from)
            started = time.monotonic()
            threads = load.start(args.connections, args.seed)
            while time.monotonic() < started + args.seconds and not watch.over_limit.is_set():
                watch.over_limit.wait(0.1)
            load.stop.set()
            stopped = time.monotonic()
            for thread in threads:
                thread.join(timeout=max(0.0, stopped + VALID_TIMEOUT + 5 - time.monotonic()))
            hanging = [t.name for t in threads if t.is_alive()]
            peak = max(watch.hwm, watch.peak(started))
            time.sleep(max(0.0, stopped + args.settle - time.monotonic()) + 0.2)
            after = watch.samples[-1][1]
            try:
                health = str(edge.get("/_health")[0])
            except (OSError, http.client.HTTPException) as error:
                health = f"failed ({type(error).__name__})"
        finally:
            watch.finish()
            code = edge.stop()
            upstream.stop()
    memory = Memory(idle, peak, after, stopped - started, watch.back_to(idle, stopped, IDLE_SLACK))
    report(args, load, memory, records, watch.over_limit.is_set())
    print(f"\nafter the load: /_health {health}; Edge exit code {code}")
    if hanging:
        print(f"client threads still running at the end: {', '.join(hanging)}")
    return 0


@dataclass
class Memory:
    idle: float
    peak: float
    after: float
    """RSS ``--settle`` seconds after the load stopped."""
    load_seconds: float
    back_after: float | None
    """Seconds after the load until RSS was back to idle (None: not while watched)."""


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


def report(
    args: argparse.Namespace, load: Load, memory: Memory, records: int, stopped_early: bool
) -> None:
    roles = ", ".join(
        f"{t.connections:,} {role}" for role, t in load.tallies.items() if role in MIX
    )
    print(
        f"hostile run: {memory.load_seconds:.0f} s, {args.connections} connections at a time; "
        f"connections opened: {roles}"
    )
    if stopped_early:
        print(f"STOPPED EARLY: Edge's RSS passed {args.rss_limit_mib:.0f} MiB")
    back = f"{memory.back_after:.1f} s" if memory.back_after is not None else "no"
    print("\n| Edge RSS | MiB |")
    print("|---|---:|")
    print(f"| idle before the load | {memory.idle:.1f} |")
    print(f"| peak during the load (VmHWM) | {memory.peak:.1f} |")
    print(f"| {args.settle:g} s after the load stopped | {memory.after:.1f} |")
    print(f"| back to idle (within {IDLE_SLACK:.0%} or 2 MiB) after | {back} |")
    valid = load.tallies["valid"]
    ok = valid.outcomes["succeeded"]
    failed = sum(valid.outcomes.values()) - ok
    print(
        f"\nvalid 1 MiB OTLP POSTs ({records:,} records each): {ok:,} succeeded, {failed:,} failed; "
        f"latency p50 {_percentile(valid.latencies, 0.5) * 1000:,.0f} ms, "
        f"p99 {_percentile(valid.latencies, 0.99) * 1000:,.0f} ms, "
        f"max {max(valid.latencies, default=0) * 1000:,.0f} ms"
    )
    print("\n| role | outcomes | held by Edge before it closed, median / max s |")
    print("|---|---|---:|")
    for role, tally in load.tallies.items():
        outcomes = ", ".join(f"{name} {n:,}" for name, n in sorted(tally.outcomes.items()))
        held = f"{statistics.median(tally.held):.1f} / {max(tally.held):.1f}" if tally.held else ""
        print(f"| {role} | {outcomes} | {held} |")
    missed = []
    if memory.peak >= 64:
        missed.append(f"peak RSS < 64 MiB ({memory.peak:.0f})")
    if memory.back_after is None or memory.back_after > 10:
        missed.append("back to idle within 10 s")
    if failed:
        missed.append("every valid request succeeds")
    print("\ntargets: " + ("all met" if not missed else "MISSED: " + "; ".join(missed)))


if __name__ == "__main__":
    sys.exit(main())
