"""Pattern leaves answered by one multi-pattern scan per value.

Every ``IsMatch(path, "re")`` of a condition sequence registers its regular
expression with the path's :class:`Slot`; at the end each slot compiles its
patterns into one Sluice :class:`~sluice.policy.patterns.FieldScanner`
(Hyperscan, RE2 for what Hyperscan cannot match faithfully). On an item, the
first leaf that needs a slot reads the path's value once, scans it once, and
keeps the pattern ids it hit in ``item.hits``; every other leaf on that path
is a membership test. So a thousand ``IsMatch(body, ...)`` conditions cost
one scan of the body, not a thousand regular expressions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sluice.ottl.contexts import Getter, Resolved
from sluice.ottl.errors import OttlRuntimeError
from sluice.ottl.values import string_like
from sluice.policy.model import MatchOp
from sluice.policy.patterns import DatabaseCache, FieldScanner, PatternSpec

Reader = Callable[[Any], tuple[int, ...]]


class Slot:
    """The patterns matched against one path's value."""

    def __init__(self, index: int, resolved: Resolved):
        self.index = index
        self.key = resolved.key
        self.getter: Getter = resolved.getter
        self.text = resolved.text
        self.patterns: dict[str, int] = {}
        self.read: Reader = _unfinished
        """The ids an item's value hits (set by :meth:`Scans.finish`)."""

    def finish(self, cache: DatabaseCache | None) -> None:
        # Bodies are nearly always distinct: remembering them costs more than
        # it saves. Other values (attributes, names) repeat.
        memoize = not self.key.endswith(".body")
        scanner = FieldScanner(
            [(pid, PatternSpec(MatchOp.REGEX, regex)) for regex, pid in self.patterns.items()],
            None,
            cache,
            memoize=memoize,
        )
        scan = scanner.hits if memoize else scanner.compute
        getter = self.getter
        text_of = self.text

        def read(item: Any) -> tuple[int, ...]:
            text = text_of(item) if text_of is not None else string_like(getter(item))
            if text is None:
                return ()
            try:
                return scan(text)
            except UnicodeDecodeError as broken:  # bytes from a record
                raise OttlRuntimeError(f"value is not valid UTF-8: {broken}") from None

        self.read = read


def _unfinished(item: Any) -> tuple[int, ...]:
    raise RuntimeError("pattern scans used before Scans.finish")


class Scans:
    """The pattern slots of one condition sequence."""

    def __init__(self) -> None:
        self.slots: list[Slot] = []
        self._by_key: dict[str, Slot] = {}
        self._next_id = 0

    def pattern(self, resolved: Resolved, regex: str) -> tuple[Slot, int]:
        """The slot of `resolved`'s path and the id of `regex` in it."""
        slot = self._by_key.get(resolved.key)
        if slot is None:
            slot = self._by_key[resolved.key] = Slot(len(self.slots), resolved)
            self.slots.append(slot)
        pid = slot.patterns.get(regex)
        if pid is None:
            pid = slot.patterns[regex] = self._next_id
            self._next_id += 1
        return slot, pid

    def finish(self, cache: DatabaseCache | None) -> None:
        for slot in self.slots:
            slot.finish(cache)


def leaf(slot: Slot, pid: int) -> Callable[[Any], bool]:
    """The predicate ``IsMatch(path, regex)`` for the pattern `pid` of `slot`."""
    index = slot.index

    def matches(item: Any) -> bool:
        hits = item.hits[index]
        if hits is None:
            hits = item.hits[index] = slot.read(item)
        return pid in hits

    return matches
