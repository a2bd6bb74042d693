"""The Hyperscan databases of one field: compiled within a memory budget,
and rebuilt in part when a few patterns change.

**Memory.** Hyperscan's compiler needs far more memory than the database it
produces, and how much depends on the patterns, not just their number: 1,000
regexes like ``event-N-[a-f0-9]+ failed`` take 76 MiB to compile into a
412 KiB database, 4,800 patterns of a realistic mix 58 MiB. The budget
(``$SLUICE_COMPILE_MEMORY_MIB``; Edge's default is 64, a sidecar's limit)
bounds the process and its compiler together: a field's patterns, sorted so that the
same set always splits the same way, are compiled in a child process held to
what the budget leaves (:mod:`sluice.policy.compiler_process`); a run of
patterns the compiler cannot fit is split in two and each half compiled
again (:mod:`sluice.policy.shardplan`). The split that worked is remembered
(:class:`Layout`), so a restart goes straight to it. Splitting costs scan
time: every extra database is one more scan of each value.

**Updates.** A snapshot compiled from a previous one keeps the previous
field's databases when only a few patterns changed: patterns that are gone
are masked (their ids map to nothing), new ones go into one small extra
database compiled on the spot. Such a build is *incomplete*; the registry
then compiles the complete one in the background and swaps again
(:meth:`CompileCache.complete`), so the scan cost returns to that of a fresh
compile.
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sluice.heap import release_free_memory, resident_bytes
from sluice.policy import compiler_process, native, shardplan
from sluice.policy.shardplan import Entry as Entry
from sluice.policy.shardplan import Plans, ShardPlan

log = logging.getLogger(__name__)

SMALL_BUILD = 64
"""Builds of at most this many patterns compile in the calling thread: their
memory is small, and forking a large process costs more than compiling them."""
BATCH_MIN_PATTERNS = 16
"""The small builds of one compile go to one child process (see
:func:`build_small_many`) when they hold at least this many patterns
together: below that, forking costs more than the compiler's pages do."""
OVERLAY_SHARE = 0.25
"""An incremental build adds at most this share of the field's patterns in its
extra database (and at most :data:`MAX_OVERLAY`); beyond that the field is
compiled complete at once."""
MAX_OVERLAY = 512

SIDECAR_BUDGET_MIB = 64
"""Edge's compile memory budget by default: a sidecar's memory limit."""
BUDGET_VARIABLE = "SLUICE_COMPILE_MEMORY_MIB"


@dataclass(frozen=True, slots=True)
class Shard:
    """One compiled database. A pattern's id in it is its position in `entries`."""

    entries: tuple[Entry, ...]
    database: Any


@dataclass(frozen=True, slots=True)
class FieldDatabases:
    """What answers the Hyperscan patterns of one field."""

    entries: tuple[Entry, ...]
    """The field's patterns, sorted and without repeats."""
    shards: tuple[Shard, ...]
    """Databases to scan. A shard may hold entries that are no longer among
    `entries` (kept from an earlier build): their hits are ignored."""
    rejected: frozenset[Entry]
    """Patterns Hyperscan refused (or could not compile within the budget):
    the scanner matches them with RE2."""
    complete: bool = True
    """False when built on an earlier build's shards plus an extra one."""


NO_DATABASES = FieldDatabases((), (), frozenset())


@dataclass(frozen=True, slots=True)
class Layout:
    """How a complete build split a field's sorted entries into databases."""

    shards: tuple[ShardPlan, ...]


def budget_from_environment(default_mib: int = 0) -> int:
    """The compile memory budget in bytes: the most the process (with its
    compiler child) should hold while compiling. ``$SLUICE_COMPILE_MEMORY_MIB``
    (0 means no limit), else `default_mib`. A value that is not a number is
    reported and the default used."""
    raw = os.environ.get(BUDGET_VARIABLE, "").strip()
    if not raw:
        return default_mib << 20
    try:
        mib = float(raw)
    except ValueError:
        mib = -1.0
    if not math.isfinite(mib) or mib < 0:
        log.error(
            "%s=%r is not a number of MiB (0 for no limit); using %d",
            BUDGET_VARIABLE,
            raw,
            default_mib,
        )
        return default_mib << 20
    return int(mib * (1 << 20))


def sorted_entries(entries: Sequence[Entry]) -> tuple[Entry, ...]:
    """The order every build uses: deterministic for the set, so a set
    compiled again (or by another process) gets the same databases."""
    return tuple(sorted(set(entries)))


@dataclass(frozen=True, slots=True)
class BuildReport:
    """What one complete build cost."""

    patterns: int
    databases: int
    seconds: float
    child_peak_bytes: int
    """The compiler child's own memory at its peak (0 when the build ran in
    the calling thread)."""
    parent_bytes: int = 0
    """The serving process's resident size when the child started."""


def build_layout(
    entries: tuple[Entry, ...], budget: int
) -> tuple[Layout, list[tuple[Shard, bytes]], BuildReport]:
    """Compile sorted `entries` completely. With a budget (bytes, 0 for none)
    and more than :data:`SMALL_BUILD` entries the compiler runs in a child
    process; otherwise in this thread. Returns the layout, each shard with
    its serialized database, and what it cost."""
    started = time.perf_counter()
    resident = 0
    if budget and len(entries) > SMALL_BUILD and compiler_process.can_fork():
        release_free_memory()  # what the process freed (a parsed document) is headroom too
        resident = resident_bytes()
        headroom = compiler_process.headroom_within(budget, resident)
        plans, peak = compiler_process.run_isolated(entries, headroom)
    else:
        plans, peak = shardplan.plan(entries), 0
    layout, shards = _loaded(entries, plans)
    report = BuildReport(len(entries), len(shards), time.perf_counter() - started, peak, resident)
    return layout, shards, report


def build_small_many(
    runs: Sequence[tuple[Entry, ...]], budget: int
) -> list[tuple[Layout, list[tuple[Shard, bytes]]]]:
    """Compile each of `runs` (sorted, each a small build) completely: all of
    them in ONE child process when there is a budget, the process can fork
    and together they hold at least :data:`BATCH_MIN_PATTERNS` patterns, so
    that Hyperscan's compiler (its code and heap) never enters the serving
    process; otherwise, or when the child fails, in this thread."""
    total = sum(len(run) for run in runs)
    if budget and total >= BATCH_MIN_PATTERNS and compiler_process.can_fork():
        started = time.perf_counter()
        resident = resident_bytes()
        headroom = compiler_process.headroom_within(budget, resident)
        try:
            planned, peak = compiler_process.plan_many(runs, headroom)
        except compiler_process.ChildFailed as problem:
            log.warning(
                "compiling %d small builds in a child: %s; compiling here", len(runs), problem
            )
        else:
            out = [_loaded(run, plans) for run, plans in zip(runs, planned, strict=True)]
            log.info(
                "compiled %d small build(s) of %d patterns in one compiler child in %.2f s"
                " (child peak %.1f MiB)",
                len(runs),
                total,
                time.perf_counter() - started,
                peak / (1 << 20),
            )
            return out
    return [_loaded(run, shardplan.plan(run)) for run in runs]


def _loaded(entries: tuple[Entry, ...], plans: Plans) -> tuple[Layout, list[tuple[Shard, bytes]]]:
    """The layout of `plans` over `entries`, and each compiled shard (loaded)
    with its serialized database."""
    shards: list[tuple[Shard, bytes]] = []
    position = 0
    for (count, refused), blob in plans:
        run = entries[position : position + count]
        position += count
        if blob:
            gone = set(refused)
            kept = tuple(e for i, e in enumerate(run) if i not in gone)
            shards.append((Shard(kept, native.load_database(blob)), blob))
    return Layout(tuple(plan for plan, _ in plans)), shards


def shard_runs(entries: tuple[Entry, ...], layout: Layout) -> list[tuple[Entry, ...]] | None:
    """The compiled entries of each database of `layout` over `entries`
    (None when the layout does not cover exactly these entries)."""
    if sum(count for count, _ in layout.shards) != len(entries):
        return None
    runs = []
    position = 0
    for count, refused in layout.shards:
        run = entries[position : position + count]
        position += count
        gone = set(refused)
        kept = tuple(e for i, e in enumerate(run) if i not in gone)
        if kept:
            runs.append(kept)
    return runs


def refused_entries(entries: tuple[Entry, ...], layout: Layout) -> frozenset[Entry]:
    """The entries `layout` leaves to RE2."""
    out: list[Entry] = []
    position = 0
    for count, refused in layout.shards:
        out.extend(entries[position + i] for i in refused)
        position += count
    return frozenset(out)


def overlay_added(entries: tuple[Entry, ...], previous: FieldDatabases) -> tuple[Entry, ...] | None:
    """The patterns (sorted) an incremental build of `entries` on `previous`
    compiles into its extra database; None when too many changed for one."""
    known: set[Entry] = set(previous.rejected)
    for shard in previous.shards:
        known.update(shard.entries)
    added = tuple(e for e in entries if e not in known)
    limit = min(MAX_OVERLAY, max(SMALL_BUILD, int(len(entries) * OVERLAY_SHARE)))
    return None if len(added) > limit else added


def overlay(
    entries: tuple[Entry, ...],
    previous: FieldDatabases,
    compile_small: Callable[[tuple[Entry, ...]], tuple[list[Shard], frozenset[Entry]]],
) -> FieldDatabases | None:
    """The incremental build of a field whose patterns went from `previous`
    to `entries`, or None when too much changed for one (then compile it
    complete). `compile_small` compiles the new patterns (in this thread)
    and says which it refused."""
    added = overlay_added(entries, previous)
    if added is None:
        return None
    wanted = set(entries)
    shards = [s for s in previous.shards if not wanted.isdisjoint(s.entries)]
    rejected = {e for e in previous.rejected if e in wanted}
    if added:
        extra, refused = compile_small(added)
        shards.extend(extra)
        rejected.update(refused)
    return FieldDatabases(entries, tuple(shards), frozenset(rejected), complete=False)
