"""How a view turns a list of selectors into a read plan, shared by all views.

The plan splits selectors into plain field getters, multi-valued getters
(span event names, link ids, event attributes) and an index of attribute
keys, so that a record's attribute list is walked once whatever the number of
attribute selectors.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sluice.policy.model import Selector, Source
from sluice.policy.view import Scan

Getter = Callable[[Any], Any]
MultiGetter = Callable[[Any], list[Any]]


AttributeEntries = Scan | tuple[tuple[Scan, tuple[str, ...]], ...]
"""What the plan does with an attribute key: scan its value (the common case:
one selector for exactly that key), or, for nested paths or several selectors
sharing a first segment, (scan, remaining path) pairs."""


class FirstEntries:
    """The keys met so far in one attribute list, so that only the first entry
    of a key counts (a key written twice reads as its first value). Lists
    rarely repeat keys: the first key is held without building a set."""

    def __init__(self) -> None:
        self.first: object = None
        self.seen: set[object] | None = None

    def add(self, key: object) -> bool:
        """Note `key`; False when it was met before."""
        if self.first is None:
            self.first = key
            return True
        if self.seen is None:
            if key == self.first:
                return False
            self.seen = {self.first, key}
            return True
        if key in self.seen:
            return False
        self.seen.add(key)
        return True


def dictionary_of(scan: Scan) -> dict[Any, tuple[int, ...]] | None:
    """The dict `scan` is the ``__getitem__`` of (a scanner's memo of values it
    has answered), so that a reader in C looks a value up there and calls
    `scan` only on a miss, with the same answer; None for any other scan."""
    owner = getattr(scan, "__self__", None)
    if (
        isinstance(owner, dict)
        and getattr(scan, "__name__", None) == "__getitem__"
        and type(owner).__getitem__ is dict.__getitem__
    ):
        return owner
    return None


def matcher_of(scan: Scan | None) -> Any:
    """The native matcher that answers every UTF-8 value as `scan` does, when
    `scan` is a field scanner's unmemoized ``compute`` (a body's scan) and the
    scanner has one (``FieldScanner.matcher``); else None (also for no scan).
    A reader in C then scans a value's bytes where they lie, without a bytes
    object or a call."""
    owner = getattr(scan, "__self__", None)
    if getattr(scan, "__name__", None) != "compute" or owner is None:
        return None
    return getattr(owner, "matcher", None)


@dataclass
class ReadPlan:
    fields: list[tuple[Scan, Selector]] = field(default_factory=list)
    """Single-valued well-known fields; the view decides how to read each."""
    multi: list[tuple[Scan, MultiGetter]] = field(default_factory=list)
    index: dict[str, AttributeEntries] = field(default_factory=dict)
    attribute_source: Source | None = None


def make_plan(
    fields: Sequence[tuple[Scan, Selector]],
    multi_getter: Callable[[Selector], MultiGetter | None],
) -> ReadPlan:
    plan = ReadPlan()
    by_key: dict[str, list[tuple[Scan, tuple[str, ...]]]] = {}
    for scan, selector in fields:
        if selector.source is Source.ATTRIBUTE or selector.source in (
            Source.RESOURCE_ATTRIBUTE,
            Source.SCOPE_ATTRIBUTE,
        ):
            plan.attribute_source = selector.source
            by_key.setdefault(selector.path[0], []).append((scan, selector.path[1:]))
            continue
        many = multi_getter(selector)
        if many is not None:
            plan.multi.append((scan, many))
        else:
            plan.fields.append((scan, selector))
    for key, entries in by_key.items():
        single = len(entries) == 1 and not entries[0][1]
        plan.index[key] = entries[0][0] if single else tuple(entries)
    return plan
