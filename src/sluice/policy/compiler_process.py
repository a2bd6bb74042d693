"""The short-lived child processes Hyperscan's compiler (and a large first
parse) runs in.

A large build forks: the child shares the serving process's memory (copy on
write), compiles at the lowest CPU priority, writes the serialized databases
to a pipe and exits, and every byte the compiler used goes with it. The
serving thread only waits on the pipe, without the GIL; a crash inside the
compiler kills the child, not the server.

A watch thread in the child reads the child's own memory (the pages no other
process maps and the child wrote: what the compiler allocates, pages copied
from the parent; ``/proc/self/smaps_rollup``'s Private_Dirty) every few
milliseconds and ends the child when it passes the headroom the
budget leaves above the serving process. The parent then compiles the two
halves of the run in children of their own, and so on. (A cap on the data
segment, ``RLIMIT_DATA``, would let the compiler fail more gracefully, but it
counts address space, not memory: Hyperscan reserves far more than it
touches, and reuses free heap the child inherited without mapping more.)
"""

from __future__ import annotations

import gc
import logging
import marshal
import os
import signal
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from sluice.policy import shardplan, store
from sluice.policy.shardplan import Entry, Plans

log = logging.getLogger(__name__)

EXIT_OVER_BUDGET = 75
"""The child's exit status when its memory passed the headroom."""
WATCH_SECS = 0.002
MARGIN_BYTES = 4 << 20
"""Kept free of the budget: what the parent may grow by meanwhile, and what
the watch may miss between two looks."""
CODE_BYTES = 4 << 20
"""Kept free of the budget for the compiler's code, which every child maps
anew (3.6 MiB measured) and the watch does not count (see
:func:`_private_bytes`)."""
MIN_HEADROOM_BYTES = 8 << 20
"""The least a compile gets, even when the process alone already fills the
budget (the budget is then too small for the policy set: logged)."""
MAX_SPLITS = 4
"""How often a run is halved for memory: at most 16 databases for one run of
patterns. Every database is one more scan of each value, so a budget too
small for the set (a child's own memory also counts the pages the serving
process changes meanwhile) must not turn a field into hundreds of databases
(a budget of 64 MiB split 10,000 policies' body patterns into 1,385)."""
UNWATCHED = 1 << 62
"""The headroom of a child compiling beyond the budget."""
_ROLLUP = "/proc/self/smaps_rollup"
forked = 0
"""How many children this process has forked: one per compile of many
small builds, one per large build (what tests observe)."""


def can_fork() -> bool:
    """Whether builds can run in a child process (Linux 4.14 and later)."""
    return hasattr(os, "fork") and os.path.exists(_ROLLUP)


def headroom_within(budget: int, resident: int) -> int:
    """How much the compiler child may take so that it and the serving
    process (`resident` bytes) together stay within `budget` bytes."""
    headroom = budget - resident - MARGIN_BYTES - CODE_BYTES
    if headroom < MIN_HEADROOM_BYTES:
        log.warning(
            "the compile memory budget (%d MiB) leaves %d MiB above the %d MiB this process "
            "holds; compiling within %d MiB, in more databases (slower scans): raise "
            "SLUICE_COMPILE_MEMORY_MIB",
            budget >> 20,
            max(0, headroom) >> 20,
            resident >> 20,
            MIN_HEADROOM_BYTES >> 20,
        )
        headroom = MIN_HEADROOM_BYTES
    return headroom


def _private_bytes() -> int:
    """The child's own memory: pages no other process maps that it wrote.
    Not its clean pages: those are the compiler's code (about 3.6 MiB), which
    the serving process never runs (small builds compile in a child too), so
    every child is the first to touch it. Code is file-backed and dropped
    under memory pressure rather than counted towards an out-of-memory kill;
    counting it would make every half of a split run carry it whole, and the
    splits (one more scan of each value per database) would not converge: the
    headroom sets :data:`CODE_BYTES` aside for it instead."""
    total = 0
    with open(_ROLLUP, encoding="ascii") as rollup:
        for line in rollup:
            if line.startswith("Private_Dirty:"):
                total += int(line.split()[1]) * 1024
    return total


class _Watch(threading.Thread):
    """Ends the child when its own memory passes `limit` bytes."""

    def __init__(self, limit: int) -> None:
        super().__init__(daemon=True)
        self.limit = limit
        self.peak = 0

    def run(self) -> None:
        while True:
            used = _private_bytes()
            self.peak = max(self.peak, used)
            if used > self.limit:
                os._exit(EXIT_OVER_BUDGET)
            time.sleep(WATCH_SECS)


Work = Callable[[], bytes]
"""What a child computes: its result, as bytes."""


def _child(work: Work, headroom: int, write_end: int) -> None:
    """The child's side: run `work`, write its result and peak memory, leave
    (never returns)."""
    code = 1
    try:
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, signal.SIG_DFL)
        signal.set_wakeup_fd(-1)  # the parent's event loop listens on it
        gc.disable()  # walking every object would copy the parent's pages
        try:
            import ctypes

            ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
        watch = _Watch(headroom)
        watch.start()
        # The serving process keeps serving meanwhile: on a small machine the
        # work must not take the CPU from it (the old snapshot is in use until
        # this one is done, so slower work costs nothing else). Only this
        # thread: a nice value is per thread, and the watch must keep up.
        os.nice(19)
        result = work()
        payload = marshal.dumps((result, max(watch.peak, _private_bytes())))
        with os.fdopen(write_end, "wb") as out:
            out.write(payload)
        code = 0
    finally:
        os._exit(code)


class ChildFailed(Exception):
    """The child ended without a result."""

    def __init__(self, status: int) -> None:
        self.over_budget = os.WIFEXITED(status) and os.WEXITSTATUS(status) == EXIT_OVER_BUDGET
        if os.WIFSIGNALED(status):
            reason = f"killed by signal {os.WTERMSIG(status)}"
        elif self.over_budget:
            reason = "over the memory budget"
        else:
            reason = f"exit status {os.waitstatus_to_exitcode(status)}"
        super().__init__(reason)


def run_forked(work: Work, headroom: int) -> tuple[bytes, int]:
    """Run `work` in a forked child held to `headroom` bytes of its own.
    Returns its result and the child's peak memory; raises ChildFailed."""
    global forked
    forked += 1
    read_end, write_end = os.pipe()
    with store.SQLITE_LOCK:  # see there
        pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child, which leaves by os._exit
        os.close(read_end)
        _child(work, headroom, write_end)
    os.close(write_end)
    chunks: list[bytes] = []
    with os.fdopen(read_end, "rb") as source:
        while chunk := source.read(1 << 20):
            chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        raise ChildFailed(status)
    result, peak = marshal.loads(b"".join(chunks))
    return result, peak


def _in_child(entries: Sequence[Entry], headroom: int) -> tuple[Plans, int]:
    """Plan and compile `entries` in a forked child. Returns the plans and
    the child's peak memory of its own; raises ChildFailed."""
    payload, peak = run_forked(lambda: marshal.dumps(shardplan.plan(entries)), headroom)
    return _plans(marshal.loads(payload)), peak


def _plans(raw: Any) -> Plans:
    """Plans as :func:`shardplan.plan` made them, after a trip through marshal."""
    return [((count, tuple(refused)), blob) for (count, refused), blob in raw]


def plan_many(runs: Sequence[Sequence[Entry]], headroom: int) -> tuple[list[Plans], int]:
    """Plan and compile each of `runs` in ONE forked child (small builds: no
    splitting for memory). Returns their plans and the child's peak memory of
    its own; raises ChildFailed."""
    payload, peak = run_forked(
        lambda: marshal.dumps([shardplan.plan(run) for run in runs]), headroom
    )
    return [_plans(raw) for raw in marshal.loads(payload)], peak


def run_isolated(
    entries: Sequence[Entry], headroom: int, splits: int | None = None
) -> tuple[Plans, int]:
    """:func:`_in_child`; a child that ends without a result (over the
    budget, or a crash in the compiler) has its run split and each half
    compiled in a child of its own. A single pattern that still fails is left
    to RE2. A run already split `MAX_SPLITS` times that is still over the
    budget is compiled beyond it (see :data:`MAX_SPLITS`)."""
    left = MAX_SPLITS if splits is None else splits
    try:
        return _in_child(entries, headroom)
    except ChildFailed as problem:
        if len(entries) == 1:
            log.error("compiling pattern %r failed (%s); RE2 matches it", entries[0][0], problem)
            return [((1, (0,)), b"")], 0
        if problem.over_budget and left == 0:
            log.warning(
                "compiling %d patterns needs more than the %d MiB the compile memory budget "
                "leaves; compiled beyond it (raise SLUICE_COMPILE_MEMORY_MIB)",
                len(entries),
                headroom >> 20,
            )
            return run_isolated(entries, UNWATCHED, 0)
        level = logging.DEBUG if problem.over_budget else logging.WARNING
        log.log(level, "compiling %d patterns: %s; in two halves", len(entries), problem)
    middle = len(entries) // 2
    first, peak_first = run_isolated(entries[:middle], headroom, max(0, left - 1))
    second, peak_second = run_isolated(entries[middle:], headroom, max(0, left - 1))
    return first + second, max(peak_first, peak_second)
