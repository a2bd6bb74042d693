"""OTTL's comparison rules (upstream's ``pkg/ottl/compare.go`` and the table
in ``LANGUAGE.md``): a comparison never fails; values of types that cannot
be compared are "not equal" (``!=`` is true, every other operator false).

- nil equals nil (``<=`` and ``>=`` hold too) and nothing else; an empty
  byte slice counts as nil (upstream reads an empty ``bytes_value`` as a nil
  slice).
- int64 and float64 compare numerically, the int converted to float64 (as
  Go does, so 2**53 + 1 equals 2.0**53).
- strings compare byte-wise (for valid UTF-8, code point order); bools with
  false < true; byte slices byte-wise.
- maps and slices support ``==`` and ``!=`` only (``pcommon`` equality).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from sluice.ottl.values import PMap, PSlice, from_any

Op = Callable[[Any, Any], bool]

EQ, NE, LT, LTE, GTE, GT = "==", "!=", "<", "<=", ">=", ">"
_ORDER: dict[str, Op] = {
    EQ: operator.eq,
    NE: operator.ne,
    LT: operator.lt,
    LTE: operator.le,
    GTE: operator.ge,
    GT: operator.gt,
}


def compare(a: Any, b: Any, op: str) -> bool:
    """`a op b` under OTTL's rules; `op` is one of ``== != < <= >= >``."""
    if isinstance(a, bytes) and not a:
        a = None
    if isinstance(b, bytes) and not b:
        b = None
    if a is None:
        if b is None:
            return op in (EQ, LTE, GTE)
        return op == NE
    if b is None:
        return op == NE
    kind = a.__class__
    other = b.__class__
    if kind is bool or other is bool:
        if kind is other:
            return _ORDER[op](a, b)
        return op == NE
    if kind is int or kind is float:
        if other is int or other is float:
            if kind is not other:  # Go converts the int to float64
                a, b = float(a), float(b)
            return _ORDER[op](a, b)
        return op == NE
    if kind is other and (kind is str or kind is bytes):
        return _ORDER[op](a, b)
    if op in (EQ, NE):
        equal = _structurally_equal(a, b)
        return equal if op == EQ else not equal
    return False


def _structurally_equal(a: Any, b: Any) -> bool:
    if isinstance(a, PMap) and isinstance(b, PMap):
        return maps_equal(a, b)
    if isinstance(a, PSlice) and isinstance(b, PSlice):
        return slices_equal(a, b)
    return False


def maps_equal(a: PMap, b: PMap) -> bool:
    """``pcommon.Map.Equal``: the same length, and every key of `a` found in
    `b` with an equal value."""
    if len(a) != len(b):
        return False
    for key, value in a.pairs():
        found = b.get(key)
        if found is None or not any_equal(value, found):
            return False
    return True


def slices_equal(a: PSlice, b: PSlice) -> bool:
    if len(a) != len(b):
        return False
    return all(any_equal(x, y) for x, y in zip(a.values, b.values, strict=True))


def any_equal(a: Any, b: Any) -> bool:
    """``pcommon.Value.Equal`` of two ``AnyValue`` messages: same type, equal value."""
    kind = a.WhichOneof("value")
    if kind != b.WhichOneof("value"):
        return False
    left, right = from_any(a), from_any(b)
    if isinstance(left, PMap):
        return maps_equal(left, right)
    if isinstance(left, PSlice):
        return slices_equal(left, right)
    return bool(left == right)
