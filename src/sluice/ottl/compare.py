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
- maps and slices support ``==`` and ``!=`` only, with Go's ``==`` on the
  ``pcommon.Map`` / ``pcommon.Slice`` values (upstream v0.115 has no map or
  slice comparison of its own): equal only when both wrap the same storage,
  i.e. both operands are the same path read on the same item, never for
  equal contents elsewhere.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from sluice.ottl.values import PMap, PSlice

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


def compare(a: Any, b: Any, op: str, same: bool = False) -> bool:
    """`a op b` under OTTL's rules; `op` is one of ``== != < <= >= >``.
    `same`: both values were read by the same path (so maps or slices are
    the same storage)."""
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
        equal = same and isinstance(a, PMap | PSlice)  # same path: b is the same kind
        return equal if op == EQ else not equal
    return False
