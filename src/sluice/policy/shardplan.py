"""Compile a run of sorted patterns into Hyperscan databases: all of them in
one, unless the compiler runs out of memory; patterns Hyperscan refuses are
found by bisection and left to RE2.

It runs in the compiler child (:mod:`sluice.policy.compiler_process`), which
is ended when it passes its memory budget, and in the calling thread for
small builds.
"""

from __future__ import annotations

import re
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


_ANCHORED_LITERAL = re.compile(rb"\\A((?:\\x[0-7][0-9a-f]|[0-9A-Za-z])+)(\\z)?")
"""An ASCII literal anchored at the start (``starts_with``) or at both ends
(``exact``), as :func:`hyperscan_syntax.literal_to_hyperscan` writes it (a
regex that translates to one is the same pattern)."""
_LENGTH_FOLDING = re.compile(rb"[KkSs]")
"""The ASCII letters whose caseless matches can be longer than they are:
under ``HS_FLAG_UTF8 | HS_FLAG_CASELESS`` Hyperscan matches ``k`` with
U+212A and ``s`` with U+017F, and no other ASCII letter with anything
outside ASCII (checked over every code point)."""


def end_check(entry: Entry) -> int:
    """How a match of `entry` in its database is confirmed: 0 when every
    report is a match; L when it is one only if it ends at offset L; -L when
    it must end at L and the value be L bytes long.

    A start-anchored literal is compiled floating (:func:`compiled_form`):
    Hyperscan runs every start-anchored pattern of a database as one DFA
    from the value's first byte, and a thousand ``starts_with`` and
    ``exact`` conditions on a body make that DFA large and slow to walk
    (about 8% of a 10,000-policy body scan), where the same literals cost
    little among the literal matcher's. A literal found at the start ends at
    its length; found elsewhere, it ends later."""
    found = _ANCHORED_LITERAL.fullmatch(entry[0])
    if found is None:
        return 0
    if entry[1] & hyperscan.HS_FLAG_CASELESS and _LENGTH_FOLDING.search(found.group(1)):
        return 0  # a match's length is not the literal's
    length = len(re.sub(rb"\\x..", b"x", found.group(1)))
    return -length if found.group(2) else length


def compiled_form(entry: Entry) -> Entry:
    """What Hyperscan compiles for `entry`: a start-anchored literal (see
    :func:`end_check`) without its anchors and reported at every occurrence,
    so that the one at the start is among them; any other entry as it is."""
    if not end_check(entry):
        return entry
    found = _ANCHORED_LITERAL.fullmatch(entry[0])
    assert found is not None
    return found.group(1), entry[1] & ~hyperscan.HS_FLAG_SINGLEMATCH


class Exhausted(Exception):
    """The compiler ran out of memory."""


def compile_run(entries: Sequence[Entry]) -> Any:
    """One database, numbering the entries by position. Raises
    :class:`Exhausted`, or hyperscan.error for a pattern Hyperscan refuses."""
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    compiled = [compiled_form(entry) for entry in entries]
    try:
        database.compile(
            expressions=[e for e, _ in compiled],
            ids=list(range(len(compiled))),
            elements=len(compiled),
            flags=[f for _, f in compiled],
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
