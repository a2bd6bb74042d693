"""A list of conditions ORed together, with upstream's error modes (its
``ConditionSequence``): conditions run in order and the first true one
decides; a condition that fails on an item either stops the evaluation
(``propagate``) or is skipped (``ignore`` logs it, ``silent`` does not).

Conditions made only of ``IsMatch(path, "re")`` leaves (joined by ``or``)
are not run one by one: their paths are scanned once and the lowest-placed
such condition that hit is found from the pattern ids. Only the other
conditions placed before it still run, in order, so the result, and which
condition's error would surface, are those of running every condition in
turn. A thousand pattern conditions cost about what one does.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sluice.gostrconv import quoted
from sluice.ottl.compiler import Compiled, Compiler
from sluice.ottl.contexts import Context
from sluice.ottl.errors import OttlConfigError, OttlRuntimeError
from sluice.policy.patterns import DatabaseCache

PROPAGATE, IGNORE, SILENT = "propagate", "ignore", "silent"


class ConditionFailed(Exception):
    """A condition failed on an item in ``propagate`` mode (upstream's
    "failed to eval condition" error)."""

    def __init__(self, condition: str, cause: OttlRuntimeError):
        super().__init__(f"failed to eval condition: {condition}, {cause}")
        self.condition = condition


@dataclass
class Failures:
    """Conditions that failed (``ignore`` mode) since the last report: count
    and first error of each, so a batch logs one line per condition."""

    counts: dict[str, list[Any]] = field(default_factory=dict)

    def add(self, condition: str, error: OttlRuntimeError) -> None:
        entry = self.counts.get(condition)
        if entry is None:
            self.counts[condition] = [1, str(error)]
        else:
            entry[0] += 1

    def take(self) -> dict[str, list[Any]]:
        taken, self.counts = self.counts, {}
        return taken


class ConditionSequence:
    """Compiled conditions of one context, ORed together."""

    def __init__(
        self,
        context: Context,
        conditions: Iterable[str],
        error_mode: str = PROPAGATE,
        cache: DatabaseCache | None = None,
    ):
        """Raises :class:`OttlConfigError` naming the first bad condition
        (use :func:`check` to list every problem)."""
        compiler = Compiler(context)
        self.conditions: list[Compiled] = []
        for text in conditions:
            try:
                self.conditions.append(compiler.condition(text))
            except OttlConfigError as problem:
                raise OttlConfigError(
                    f"unable to parse OTTL condition {quoted(text)}: {problem}"
                ) from None
        compiler.scans.finish(cache)
        self.error_mode = error_mode
        self.failures = Failures()
        self._memos = compiler.memos
        self._slots = len(compiler.scans.slots)
        self._count = len(self.conditions)
        first: dict[int, int] = {}
        slots: dict[int, Any] = {}
        for index, condition in enumerate(self.conditions):
            for slot, pid in condition.pattern_leaves or ():
                first.setdefault(pid, index)
                slots[slot.index] = slot.read
        self._first_condition = first
        """Pattern id -> the first pattern-only condition it makes true."""
        self._pattern_slots = list(slots.items())
        self._others = [
            (index, c.text, c.predicate)
            for index, c in enumerate(self.conditions)
            if c.pattern_leaves is None
        ]
        self._all = [(index, c.text, c.predicate) for index, c in enumerate(self.conditions)]

    def __len__(self) -> int:
        return self._count

    def matches(self, item: Any) -> bool:
        """Whether some condition is true for `item` (its ``hits`` are reset
        here). Raises :class:`ConditionFailed` in ``propagate`` mode."""
        if self._slots:
            item.hits = [None] * self._slots
        if not self._pattern_slots:
            return self._run(self._all, item, self._count)
        try:
            limit = self._first_pattern_condition(item)
        except OttlRuntimeError:
            # Some scanned value could not be read: run every condition in
            # turn, so that the error surfaces where upstream's would.
            return self._run(self._all, item, self._count)
        return self._run(self._others, item, limit) or limit < self._count

    def _first_pattern_condition(self, item: Any) -> int:
        best = self._count
        first = self._first_condition.get
        hits = item.hits
        for index, read in self._pattern_slots:
            found = hits[index]
            if found is None:
                found = hits[index] = read(item)
            for pid in found:
                condition = first(pid)
                if condition is not None and condition < best:
                    best = condition
        return best

    def _run(self, conditions: list[tuple[int, str, Any]], item: Any, limit: int) -> bool:
        """Run `conditions` placed before `limit`, in order."""
        for index, text, predicate in conditions:
            if index >= limit:
                return False
            try:
                if predicate(item):
                    return True
            except OttlRuntimeError as error:
                if self.error_mode == PROPAGATE:
                    raise ConditionFailed(text, error) from None
                if self.error_mode == IGNORE:
                    self.failures.add(text, error)
        return False

    def release(self) -> None:
        """Forget the containers of the last batch (resource and scope values
        are remembered per container while a batch is evaluated)."""
        for memo in self._memos:
            memo.last = (None, None)


def check(context: Context, conditions: Iterable[str]) -> list[tuple[int, str]]:
    """(index, message) of every condition that does not compile."""
    problems = []
    for index, text in enumerate(conditions):
        try:
            Compiler(context).condition(text)
        except OttlConfigError as problem:
            problems.append((index, f"unable to parse OTTL condition {quoted(text)}: {problem}"))
    return problems
