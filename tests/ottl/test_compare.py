"""OTTL's comparison rules, checked against the cases of upstream's
``pkg/ottl/compare_test.go``: every basic type against every other, each
with all six operators."""

from __future__ import annotations

import pytest

from sluice.ottl.compare import compare
from sluice.ottl.values import PMap, PSlice
from tests.ottl.items import add_attributes, set_any

OPS = ("==", "!=", "<", "<=", ">=", ">")
# Upstream's fixtures: ta/tb bools, sa/sb strings, sn empty string, ba/bb
# byte slices, bn a nil byte slice (here: empty bytes), i64/f64 numbers.
ta, tb = False, True
sa, sb, sn = "1", "2", ""
ba, bb, bn = b"1", b"2", b""
i64a, i64b = 1, 2
f64a, f64b = 1.0, 2.0

CASES = [
    ("identity string", sa, sa, [1, 0, 0, 1, 1, 0]),
    ("identity int64", i64a, i64a, [1, 0, 0, 1, 1, 0]),
    ("identity float64", f64a, f64a, [1, 0, 0, 1, 1, 0]),
    ("identity bytes", ba, ba, [1, 0, 0, 1, 1, 0]),
    ("identity nil", None, None, [1, 0, 0, 1, 1, 0]),
    ("diff strings", sa, sb, [0, 1, 1, 1, 0, 0]),
    ("string bytes", sa, ba, [0, 1, 0, 0, 0, 0]),
    ("string int64", sa, i64a, [0, 1, 0, 0, 0, 0]),
    ("string float64", sa, f64a, [0, 1, 0, 0, 0, 0]),
    ("string nil", sa, None, [0, 1, 0, 0, 0, 0]),
    ("diff bytes", ba, bb, [0, 1, 1, 1, 0, 0]),
    ("bytes string", ba, sa, [0, 1, 0, 0, 0, 0]),
    ("bytes int64", ba, i64a, [0, 1, 0, 0, 0, 0]),
    ("bytes float64", ba, f64a, [0, 1, 0, 0, 0, 0]),
    ("bytes nil", ba, None, [0, 1, 0, 0, 0, 0]),
    ("bytes nilbytes", ba, bn, [0, 1, 0, 0, 0, 0]),
    ("false true", ta, tb, [0, 1, 1, 1, 0, 0]),
    ("true false", tb, ta, [0, 1, 0, 0, 1, 1]),
    ("true true", tb, tb, [1, 0, 0, 1, 1, 0]),
    ("false false", ta, ta, [1, 0, 0, 1, 1, 0]),
    ("bool string", ta, sa, [0, 1, 0, 0, 0, 0]),
    ("bool int64", ta, i64a, [0, 1, 0, 0, 0, 0]),
    ("bool float64", ta, f64a, [0, 1, 0, 0, 0, 0]),
    ("bool and nil bytes", ta, bn, [0, 1, 0, 0, 0, 0]),
    ("bool and empty string", ta, sn, [0, 1, 0, 0, 0, 0]),
    ("nil string", None, sa, [0, 1, 0, 0, 0, 0]),
    ("nil int64", None, i64a, [0, 1, 0, 0, 0, 0]),
    ("nil float64", None, f64a, [0, 1, 0, 0, 0, 0]),
    ("nil and nil bytes", None, bn, [1, 0, 0, 1, 1, 0]),
    ("nil and empty string", None, sn, [0, 1, 0, 0, 0, 0]),
    ("int64 string", i64a, sa, [0, 1, 0, 0, 0, 0]),
    ("int64 bytes", i64a, ba, [0, 1, 0, 0, 0, 0]),
    ("int64 nil", i64a, None, [0, 1, 0, 0, 0, 0]),
    ("int64 int64", i64a, i64b, [0, 1, 1, 1, 0, 0]),
    ("int64 float64", i64a, f64b, [0, 1, 1, 1, 0, 0]),
    ("diff float64s", f64a, f64b, [0, 1, 1, 1, 0, 0]),
    ("float64 string", f64a, sa, [0, 1, 0, 0, 0, 0]),
    ("float64 bytes", f64a, ba, [0, 1, 0, 0, 0, 0]),
    ("float64 nil", f64a, None, [0, 1, 0, 0, 0, 0]),
    ("float64 int64", f64a, i64b, [0, 1, 1, 1, 0, 0]),
    # Beyond upstream's table, from the same rules:
    ("int64 equal float64", 2, 2.0, [1, 0, 0, 1, 1, 0]),
    ("int64 converted to float64", 2**53 + 1, float(2**53), [1, 0, 0, 1, 1, 0]),
    ("NaN", float("nan"), float("nan"), [0, 1, 0, 0, 0, 0]),
    ("string order is byte order", "Z", "a", [0, 1, 1, 1, 0, 0]),
    ("code points beyond ASCII", "é", "z", [0, 1, 0, 0, 1, 1]),
]


@pytest.mark.parametrize(("name", "a", "b", "want"), CASES, ids=[c[0] for c in CASES])
def test_compare(name: str, a: object, b: object, want: list[int]) -> None:
    assert [compare(a, b, op) for op in OPS] == [bool(w) for w in want]


def _map(*pairs: tuple[str, object]) -> PMap:
    from opentelemetry.proto.common.v1.common_pb2 import KeyValueList

    values = KeyValueList()
    add_attributes(values.values, list(pairs))
    return PMap(values.values)


def _slice(*items: object) -> PSlice:
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue

    value = AnyValue()
    set_any(value, list(items))
    return PSlice(value.array_value.values)


def test_maps_and_slices_are_equal_only_as_the_same_value() -> None:
    """Upstream v0.115 compares maps and slices with Go's ``==`` on their
    ``pcommon`` wrappers: equal when they are the same storage (one path
    read twice: `same`), never for equal contents; no ordering."""
    a = _map(("x", 1), ("y", {"z": "w"}))
    equal_contents = _map(("x", 1), ("y", {"z": "w"}))
    assert [compare(a, equal_contents, op) for op in OPS] == [0, 1, 0, 0, 0, 0]
    assert [compare(a, a, op, same=True) for op in OPS] == [1, 0, 0, 0, 0, 0]
    assert [compare(a, "x", op) for op in OPS] == [0, 1, 0, 0, 0, 0]
    assert [compare(_slice(1, "a"), _slice(1, "a"), op) for op in OPS] == [0, 1, 0, 0, 0, 0]
    items = _slice(1, "a")
    assert [compare(items, items, op, same=True) for op in OPS] == [1, 0, 0, 0, 0, 0]
    assert compare(a, None, "!=") and not compare(a, None, "==")
