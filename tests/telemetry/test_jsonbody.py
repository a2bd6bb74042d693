"""jsonbody answers only where its result is exactly what ``json`` gives."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sluice.telemetry import jsonbody


def same(a: Any, b: Any) -> bool:
    """Equal values of equal types, all the way down (1 != 1.0 here)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b) and (not isinstance(a, float) or math.copysign(1, a) == math.copysign(1, b))


def agrees(body: bytes) -> None:
    try:
        expected: Any = json.loads(body)
    except (ValueError, RecursionError):
        assert jsonbody.parse(body) is jsonbody.UNPARSED, body
        return
    got = jsonbody.parse(body)
    assert got is jsonbody.UNPARSED or same(got, expected), (body, got, expected)


values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(values, st.booleans())
def test_documents_json_writes(value: Any, ascii_only: bool) -> None:
    agrees(json.dumps(value, ensure_ascii=ascii_only).encode("utf-8"))


@settings(max_examples=300, deadline=None)
@given(
    st.binary(max_size=40)
    | st.text('[]{}",:0123456789.eE+-tfrulnasNIn \\ud8', max_size=30).map(str.encode)
)
def test_arbitrary_bytes(body: bytes) -> None:
    agrees(body)


def test_what_orjson_reads_differently_goes_to_json() -> None:
    for body in (
        b"[18446744073709551616]",  # orjson: a float
        b"[-9223372036854775809]",
        b"[NaN, Infinity]",
        b"[1e400]",
        b'["\\ud800"]',  # a lone surrogate escape
        '{"a": 1}'.encode("utf-16"),
        b"[" * 2000 + b"]" * 2000,
    ):
        assert jsonbody.parse(body) is jsonbody.UNPARSED, body
        agrees(body)


def test_integers_orjson_holds_exactly_are_answered() -> None:
    body = b'{"n": 12345678901234567890, "m": -9223372036854775808}'  # within u64 / i64
    assert same(jsonbody.parse(body), json.loads(body))


def test_everyday_documents_are_answered() -> None:
    body = b'[{"message": "GET /x 200", "status": "info", "n": 922337203685477580, "f": 1.5}]'
    assert jsonbody.parse(body) is not jsonbody.UNPARSED
    assert same(jsonbody.parse(body), json.loads(body))
    assert type(jsonbody.parse(b'{"n": -922337203685477580}')["n"]) is int


def test_lone_surrogates_are_written_back_as_the_same_escapes() -> None:
    document = {"a\udfff": ["x\ud800y", "é \U0001f600", "\\\udbff"]}
    body = jsonbody.encode(document)
    body.decode("utf-8")  # valid UTF-8 throughout
    assert b"\\ud800" in body and b"\\udfff" in body and b"\\\\\\udbff" in body
    assert json.loads(body) == document
    assert "é \U0001f600".encode() in body  # everything else as UTF-8


def test_documents_nested_past_the_limit_are_refused() -> None:
    def nested(depth: int) -> bytes:
        return b'{"a":' * (depth - 1) + b"[1.5]" + b"}" * (depth - 1)

    assert jsonbody.parse(nested(jsonbody.MAX_DEPTH)) is not jsonbody.UNPARSED
    with pytest.raises(jsonbody.TooDeep):
        jsonbody.parse(nested(jsonbody.MAX_DEPTH + 1))
    with pytest.raises(jsonbody.TooDeep):
        jsonbody.check_depth(json.loads(nested(700)))


@pytest.mark.parametrize(
    "body,lenient",
    [
        (b"[1e400]", b"[Infinity]"),
        (b"[-1e400]", b"[-Infinity]"),
        (b"[NaN]", b"[NaN]"),
        (b'{"a": [Infinity]}', b'{"a":[Infinity]}'),
    ],
)
def test_numbers_json_cannot_carry_are_not_written_back(body: bytes, lenient: bytes) -> None:
    """The standard library reads them (1e400 as infinity) and would write
    ``Infinity`` or ``NaN`` back, which no JSON reader takes: refused, unless
    asked for."""
    document = json.loads(body)
    with pytest.raises(jsonbody.NotFinite, match="1e400"):
        jsonbody.encode(document)
    assert jsonbody.encode(document, allow_nan=True) == lenient
