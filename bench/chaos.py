"""Chaos benchmark: does Edge lose or duplicate records when its upstream misbehaves?

Retrying clients (OTLP/HTTP protobuf and JSON, the real OpenTelemetry SDK
exporter, and Datadog log batches retried as the Agent does; see
``chaos_clients.py``) send uniquely numbered log records through the real
``sluice-edge`` (three policies: drop DEBUG, mask card numbers, tag WARN
records, so the filtered path re-encodes) to an upstream that, at random,
refuses connections, resets them, stalls past Edge's upstream timeout, cuts
its answer in or after the status line, in the headers or in the body,
closes or resets without answering, or answers 429/503 with ``Retry-After``;
otherwise it commits the records and answers 200/202 (see
``chaos_upstream.py``).

After ``--seconds`` no new batch starts; batches still being retried get up
to ``--drain`` seconds to finish. Then every record id the clients sent (less
those the policies drop by design) is checked against the ids the upstream
committed:

* lost, silently: the client was acked (2xx), the upstream never committed
  it. This is the number that must be 0;
* lost, visibly: the client gave up after all its retries (a status it does
  not retry, or out of attempts or time) and the upstream never committed it;
* duplicates: extra commits of an id, each classified by the commit before
  it: the upstream had committed and then failed to answer in time (no proxy
  can avoid the client's retry, and EDGE.md section 2's one retry of a request
  whose reused connection closed without answering is such a copy too), or
  Edge sent a client attempt again although the upstream had answered it, or
  neither (Edge answered the client an error after the upstream's 2xx).

Also printed: requests/s through Edge, the upstream's faults per kind, and
Edge's peak RSS (the run stops early if RSS passes ``--rss-limit-mib``).
Everything runs on 127.0.0.1; every socket has a timeout, and every loop is
bounded by the run's deadline.

Run from the repository root: ``.venv/bin/python bench/chaos.py [--seconds 180]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

if not __package__:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.blackbox import EdgeUnderTest, MemoryWatch
from bench.chaos_clients import CLIENT_KINDS, Run, Tally, quiet_sdk_logging, run_client
from bench.chaos_records import POLICIES
from bench.chaos_upstream import FAULTS, ChaosUpstream, Delivery


@dataclass
class Accounting:
    """Every record sent, checked against what the upstream committed."""

    sent: int = 0
    dropped_by_policy: int = 0
    committed: int = 0
    silent_loss: int = 0
    gave_up_lost: int = 0
    gave_up_committed: int = 0
    unfinished: int = 0
    duplicates: Counter[str] = field(default_factory=Counter)
    resent_after: Counter[str] = field(default_factory=Counter)
    """Extra copies of a client attempt Edge sent, by what the upstream did with the first."""
    policy_bypassed: int = 0
    transform_missed: int = 0
    unknown: int = 0
    silent_loss_after: Counter[str] = field(default_factory=Counter)
    """Silently lost records by the last upstream fault they met."""
    silent_examples: list[int] = field(default_factory=list)

    @property
    def lost(self) -> int:
        return self.silent_loss + self.gave_up_lost


UNAVOIDABLE = "after the upstream committed and failed to answer: the client's retry"
RETRIED = (
    "after the upstream committed and failed to answer: Edge's one retry of a request whose "
    "reused connection closed without an answer (EDGE.md section 2)"
)
RESENT = "Edge sent a client attempt again after the upstream had answered it"
UNEXPLAINED = "other: the upstream had answered 2xx, the client still retried"


ACKED, GAVE_UP, UNFINISHED, DROPPED = 1, 2, 3, 4
"""A record's fate at the clients (0: no client reported it)."""


def account(tallies: list[Tally], deliveries: list[Delivery]) -> Accounting:
    """Record ids are dense (one counter for all clients), so every table is
    indexed by id: a few bytes per record, even for millions of them."""
    out = Accounting()
    size = 1 + max((max(ids, default=0) for t in tallies for ids in t.all_ids()), default=0)
    fate = bytearray(size)
    for tally in tallies:
        for code, ids in (
            (ACKED, tally.kept["acked"]),
            (GAVE_UP, tally.kept["gave up"]),
            (UNFINISHED, tally.kept["unfinished"]),
            (DROPPED, tally.dropped),
        ):
            for record_id in ids:
                fate[record_id] = code
    last_commit: list[Delivery | None] = [None] * size
    last_fault = [""] * size
    """The last fault each record met at the upstream without being committed."""
    first_seen: dict[int, str] = {}
    """Each client attempt's first fate at the upstream."""
    for delivery in deliveries:
        if delivery.attempt >= 0:
            if delivery.attempt not in first_seen:
                first_seen[delivery.attempt] = delivery.kind
            else:
                out.resent_after[first_seen[delivery.attempt]] += 1
        out.transform_missed += delivery.transform_missed
        for record_id in delivery.ids:
            if not 0 < record_id < size or not fate[record_id]:
                out.unknown += delivery.committed
            elif not delivery.committed:
                last_fault[record_id] = delivery.kind
            else:
                before = last_commit[record_id]
                last_commit[record_id] = delivery
                if before is not None:
                    out.duplicates[_duplicate_cause(before, delivery)] += 1
    silent: list[int] = []
    for record_id in range(1, size):
        code, committed = fate[record_id], last_commit[record_id] is not None
        if code == DROPPED:
            out.dropped_by_policy += 1
            out.policy_bypassed += committed
        elif code:
            out.sent += 1
            if committed:
                out.committed += 1
                out.gave_up_committed += code == GAVE_UP
            elif code == ACKED:
                silent.append(record_id)
            elif code == GAVE_UP:
                out.gave_up_lost += 1
            else:
                out.unfinished += 1
    out.silent_loss = len(silent)
    out.silent_loss_after = Counter(last_fault[i] or "never reached the upstream" for i in silent)
    out.silent_examples = silent[:5]
    return out


def _duplicate_cause(before: Delivery, again: Delivery) -> str:
    """Why a record committed by `before` was committed again by `again`."""
    if before.attempt == again.attempt:
        return RESENT if before.answered else RETRIED
    return UNEXPLAINED if before.answered else UNAVOIDABLE


REQUEST_JOIN = 15.0
"""Seconds to wait for a client thread after abandon (its socket timeout is 10 s)."""


def run(args: argparse.Namespace, folder: Path) -> None:
    """Start the upstream and Edge in `folder`, load, drain, account, report."""
    quiet_sdk_logging()
    upstream = ChaosUpstream(args.seed, args.fault_rate, args.edge_timeout)
    edge = EdgeUnderTest(
        folder,
        {
            "upstream_url": upstream.url,
            "upstream_timeout_secs": args.edge_timeout,
            "max_body_size": 4 << 20,
        },
        POLICIES,
    )
    watch = MemoryWatch(edge, 0.5, args.rss_limit_mib)
    threads: list[threading.Thread] = []
    tallies: list[Tally] = []
    try:
        watch.start()
        upstream.arm()
        started = time.monotonic()
        shared = Run(edge.port, started + args.seconds, threading.Event())
        for name in CLIENT_KINDS:
            for index in range(args.clients):
                tally = Tally(name)
                tallies.append(tally)
                thread = threading.Thread(
                    target=run_client, args=(shared, name, index, args.seed, tally), daemon=True
                )
                thread.start()
                threads.append(thread)
        while time.monotonic() < shared.deadline and not watch.over_limit.is_set():
            watch.over_limit.wait(0.2)
        stopped_early = watch.over_limit.is_set()
        shared.deadline = min(shared.deadline, time.monotonic())
        load_seconds = time.monotonic() - started
        drain_until = time.monotonic() + (1.0 if stopped_early else args.drain)
        for thread in threads:
            thread.join(timeout=max(0.0, drain_until - time.monotonic()))
        shared.abandon.set()
        for exporter in shared.exporters:
            exporter.shutdown()
        for thread in threads:
            thread.join(timeout=REQUEST_JOIN)
        still_running = sum(thread.is_alive() for thread in threads)
        elapsed = time.monotonic() - started
        time.sleep(0.5)  # let the upstream log what it read last
        upstream.disarm()
        requests = sum(edge.metric_totals("sluice_edge_requests_total", "route").values())
        upstream_errors = edge.metric_totals("sluice_edge_upstream_errors_total", "kind")
    finally:
        watch.finish()
        code = edge.stop()
        upstream.stop()
    report(
        args,
        tallies,
        upstream,
        account(tallies, upstream.log()),
        Figures(
            load_seconds,
            elapsed,
            requests,
            upstream_errors,
            watch.hwm,
            stopped_early,
            still_running,
            code,
        ),
    )


@dataclass
class Figures:
    """The run's measurements besides the records."""

    load_seconds: float
    elapsed: float
    edge_requests: float
    upstream_errors: dict[str, float]
    peak_rss: float
    stopped_early: bool
    still_running: int
    exit_code: int | None


def report(
    args: argparse.Namespace,
    tallies: list[Tally],
    upstream: ChaosUpstream,
    result: Accounting,
    figures: Figures,
) -> None:
    """Print the tables (Markdown) and which targets were missed."""
    print(
        f"chaos run: {figures.load_seconds:.0f} s of load (+{figures.elapsed - figures.load_seconds:.0f} s "
        f"drain), seed {args.seed}, {args.clients} client(s) per kind, fault rate "
        f"{args.fault_rate:.2f}, Edge upstream_timeout_secs {args.edge_timeout:g}"
    )
    if figures.stopped_early:
        print(f"STOPPED EARLY: Edge's RSS passed {args.rss_limit_mib:.0f} MiB")
    print("\n| client | batches | acked | gave up | unfinished | attempts | statuses | errors |")
    print("|---|---:|---:|---:|---:|---:|---|---|")
    for name in CLIENT_KINDS:
        mine = [t for t in tallies if t.kind == name]
        batches = sum((t.batches for t in mine), Counter[str]())
        statuses = sum((t.statuses for t in mine), Counter[int]())
        errors = sum((t.errors for t in mine), Counter[str]())
        print(
            f"| {name} | {sum(batches.values()):,} | {batches['acked']:,} | {batches['gave up']:,} | "
            f"{batches['unfinished']:,} | {sum(t.attempts for t in mine):,} | "
            f"{_counts(statuses)} | {_counts(errors)} |"
        )
    answered = sum(sum(t.statuses.values()) for t in tallies)
    print(
        f"\nEdge: {answered / figures.elapsed:,.0f} requests/s answered to the clients "
        f"({figures.edge_requests / figures.elapsed:,.0f}/s by its own count), "
        f"peak RSS {figures.peak_rss:.1f} MiB, exit code {figures.exit_code}; "
        f"its upstream errors: {_counts(figures.upstream_errors) or 'none'}"
    )
    print("\n| upstream | count | of which committed first |")
    print("|---|---:|---:|")
    committed = Counter(d.kind for d in upstream.log() if d.committed)
    for kind in ("ok", *FAULTS, "unreadable"):
        print(f"| {kind} | {upstream.kinds[kind]:,} | {committed[kind]:,} |")
    outages = upstream.outages
    print(f"| reset at accept | {outages.resets_at_accept:,} | |")
    print(f"| stopped listening | {outages.count:,} times, {outages.seconds:.1f} s | |")
    print("\n| records | count |")
    print("|---|---:|")
    rows = [
        ("sent (the policies keep them)", result.sent),
        ("dropped by policy by design (DEBUG)", result.dropped_by_policy),
        ("committed by the upstream (unique)", result.committed),
        ("**lost: acked but never committed (silent)**", result.silent_loss),
        ("lost: never acked after all retries", result.gave_up_lost),
        ("not acked, yet committed", result.gave_up_committed),
        ("unfinished when the drain time ran out", result.unfinished),
        ("duplicate commits", sum(result.duplicates.values())),
        *(
            (f"- {why}", result.duplicates[why])
            for why in (UNAVOIDABLE, RETRIED, RESENT, UNEXPLAINED)
        ),
        ("extra copies of a client attempt Edge sent upstream", sum(result.resent_after.values())),
        ("DEBUG records committed (policy bypassed)", result.policy_bypassed),
        (
            "committed records a transform missed (card unmasked, WARN untagged)",
            result.transform_missed,
        ),
        ("committed ids no client sent", result.unknown),
    ]
    for label, value in rows:
        print(f"| {label} | {value:,} |")
    if result.silent_loss:
        print(
            f"\nsilently lost records by the last upstream fault they met: "
            f"{_counts(result.silent_loss_after)}; some ids: {result.silent_examples}"
        )
    if result.resent_after:
        print(
            "\nextra copies Edge sent, by what the upstream did with the first copy: "
            + _counts(result.resent_after)
        )
    if figures.still_running:
        print(f"\n{figures.still_running} client thread(s) had not stopped at the end")
    missed = [
        name
        for name, bad in (
            ("0 records lost", result.lost),
            (
                "duplicates only after a commit the upstream failed to answer",
                result.duplicates[RESENT] + result.duplicates[UNEXPLAINED],
            ),
            ("policies applied to every record", result.policy_bypassed + result.transform_missed),
            ("every batch settled within the drain time", result.unfinished),
        )
        if bad
    ]
    print("\ntargets: " + ("all met" if not missed else "MISSED: " + "; ".join(missed)))


def _counts(counter: Counter[int] | Counter[str] | dict[str, float]) -> str:
    return ", ".join(
        f"{key} {value:,.0f}" for key, value in sorted(counter.items(), key=str) if value
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=180.0, help="load duration")
    parser.add_argument("--seed", type=int, default=20251121)
    parser.add_argument("--clients", type=int, default=4, help="client threads per kind")
    parser.add_argument(
        "--fault-rate", type=float, default=0.2, help="share of upstream requests that fail"
    )
    parser.add_argument(
        "--drain", type=float, default=60.0, help="seconds for batches in flight to finish"
    )
    parser.add_argument("--edge-timeout", type=float, default=2.0, help="upstream_timeout_secs")
    parser.add_argument("--rss-limit-mib", type=float, default=2048.0, help="stop early above")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sluice-chaos-") as tmp:
        run(args, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
