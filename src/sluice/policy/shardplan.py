"""Compile a run of sorted patterns into Hyperscan databases: all of them in
one, unless the compiler runs out of memory; patterns Hyperscan refuses are
found by bisection and left to RE2.

It runs in the compiler child (:mod:`sluice.policy.compiler_process`), which
is ended when it passes its memory budget, and in the calling thread for
small builds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import hyperscan

Entry = tuple[bytes, int]
"""A Hyperscan expression and its compile flags."""

ShardPlan = tuple[int, tuple[int, ...]]
"""One database of a layout: how many consecutive entries it covers, and the
positions among them (relative) that Hyperscan refused."""

Plans = list[tuple[ShardPlan, bytes]]
"""Each database's plan and its serialized form (``b""`` when every entry of
its run was refused)."""


class Exhausted(Exception):
    """The compiler ran out of memory."""


def compile_run(entries: Sequence[Entry]) -> Any:
    """One database, numbering the entries by position. Raises
    :class:`Exhausted`, or hyperscan.error for a pattern Hyperscan refuses."""
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    try:
        database.compile(
            expressions=[e for e, _ in entries],
            ids=list(range(len(entries))),
            elements=len(entries),
            flags=[f for _, f in entries],
        )
    except MemoryError:
        raise Exhausted from None
    except hyperscan.error as problem:
        if "allocate memory" in str(problem):
            raise Exhausted from None
        raise
    return database


def plan(entries: Sequence[Entry]) -> Plans:
    """Compile sorted `entries`: one database, or (when memory runs out)
    the two halves' plans, and so on."""
    out: Plans = []
    _plan(entries, out)
    return out


def _plan(entries: Sequence[Entry], out: Plans) -> None:
    refused: list[int] = []
    try:
        database = compile_run(entries)
    except Exhausted:
        if len(entries) > 1:
            _halves(entries, out)
            return
        refused = [0]
    except hyperscan.error:
        _rejects(entries, 0, refused)
    else:
        out.append(((len(entries), ()), hyperscan.dumpb(database)))
        return
    if len(refused) == len(entries):
        out.append(((len(entries), tuple(refused)), b""))
        return
    # Compile what was accepted; it may still need splitting for memory.
    gone = set(refused)
    try:
        database = compile_run([e for i, e in enumerate(entries) if i not in gone])
    except Exhausted:
        _halves(entries, out)
        return
    out.append(((len(entries), tuple(refused)), hyperscan.dumpb(database)))


def _halves(entries: Sequence[Entry], out: Plans) -> None:
    middle = len(entries) // 2
    _plan(entries[:middle], out)
    _plan(entries[middle:], out)


def _rejects(entries: Sequence[Entry], base: int, out: list[int]) -> None:
    """Find the entries Hyperscan refuses by bisection; their positions
    (offset by `base`) go to `out`."""
    try:
        compile_run(entries)
    except (hyperscan.error, Exhausted):
        if len(entries) == 1:
            out.append(base)
            return
        middle = len(entries) // 2
        _rejects(entries[:middle], base, out)
        _rejects(entries[middle:], base + middle, out)
