"""The values OTTL conditions see, as upstream's paths return them.

A path yields a Go value; here: ``None`` (nil, and an empty ``AnyValue``),
``str``, ``int`` (int64), ``float``, ``bool``, ``bytes`` (a byte slice),
:class:`PMap` (``pcommon.Map``: attributes, a kvlist) or :class:`PSlice`
(``pcommon.Slice``: an array), and, only as the argument of ``Len``,
:class:`Sequence` (the events of a span, the points of a metric...).
Maps and slices wrap the protobuf fields they read; nothing is copied.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Sequence as Seq
from decimal import Decimal
from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from sluice.ottl.errors import OttlRuntimeError
from sluice.telemetry.otlp_raw import key_and_value

TYPE_NAMES = {
    None: "Empty",
    "string_value": "Str",
    "int_value": "Int",
    "double_value": "Double",
    "bool_value": "Bool",
    "kvlist_value": "Map",
    "array_value": "Slice",
    "bytes_value": "Bytes",
}
"""``pcommon.ValueType`` names, by ``AnyValue`` field, for error messages."""


class PMap:
    """``pcommon.Map`` over a repeated ``KeyValue`` field. A key written twice
    reads as its first entry, as ``Map.Get``."""

    __slots__ = ("kvs",)

    def __init__(self, kvs: Any):
        self.kvs = kvs

    def __len__(self) -> int:
        return len(self.kvs)

    def get(self, key: str) -> Any:
        """The ``AnyValue`` of `key`, or None."""
        for kv in self.kvs:
            if kv.key == key:
                return kv.value
        return None

    def pairs(self) -> list[tuple[str, Any]]:
        """(key, AnyValue) of every entry, in order."""
        return [(kv.key, kv.value) for kv in self.kvs]


class RawPMap(PMap):
    """``pcommon.Map`` over lean log attributes: ``KeyValue`` wire bytes."""

    __slots__ = ()

    def get(self, key: str) -> Any:
        wanted = key.encode()
        for kv in self.kvs:
            name, value = _split(kv)
            if name == wanted:
                return _any(value)
        return None

    def pairs(self) -> list[tuple[str, Any]]:
        out = []
        for kv in self.kvs:
            name, value = _split(kv)
            out.append((name.decode("utf-8", "replace"), _any(value)))
        return out


def _split(kv: bytes) -> tuple[bytes, bytes]:
    try:
        return key_and_value(kv)
    except ValueError as broken:  # MalformedAttribute
        raise OttlRuntimeError(str(broken)) from None


def _any(raw: bytes) -> Any:
    try:
        return AnyValue.FromString(raw)
    except DecodeError as broken:
        raise OttlRuntimeError(f"attribute value is not an AnyValue: {broken}") from None


class PSlice:
    """``pcommon.Slice`` over a repeated ``AnyValue`` field."""

    __slots__ = ("values",)

    def __init__(self, values: Any):
        self.values = values

    def __len__(self) -> int:
        return len(self.values)


class Sequence:
    """A slice of telemetry (span events, links, data points...) that OTTL
    can only measure with ``Len``."""

    __slots__ = ("items", "kind")

    def __init__(self, kind: str, items: Seq[Any]):
        self.kind = kind
        self.items = items

    def __len__(self) -> int:
        return len(self.items)


def from_any(value: Any) -> Any:
    """The OTTL value of an ``AnyValue`` message (upstream's ``GetValue``)."""
    kind = value.WhichOneof("value")
    if kind == "string_value":
        return value.string_value
    if kind == "int_value":
        return value.int_value
    if kind == "double_value":
        return value.double_value
    if kind == "bool_value":
        return value.bool_value
    if kind == "kvlist_value":
        return PMap(value.kvlist_value.values)
    if kind == "array_value":
        return PSlice(value.array_value.values)
    if kind == "bytes_value":
        return value.bytes_value
    return None


def index_any(value: Any, keys: tuple[str | int, ...]) -> Any:
    """Index an ``AnyValue`` with the rest of a path's keys (maps by string,
    slices by int), as upstream: a missing map key is nil, anything else that
    cannot be indexed is an error."""
    for key in keys:
        kind = value.WhichOneof("value")
        if kind == "kvlist_value":
            if not isinstance(key, str):
                raise OttlRuntimeError("map must be indexed by a string")
            found = PMap(value.kvlist_value.values).get(key)
            if found is None:
                return None
            value = found
        elif kind == "array_value":
            if not isinstance(key, int):
                raise OttlRuntimeError("slice must be indexed by an int")
            items = value.array_value.values
            if not 0 <= key < len(items):
                raise OttlRuntimeError(f"index {key} out of bounds")
            value = items[key]
        else:
            raise OttlRuntimeError(f"type {TYPE_NAMES[kind]} does not support string indexing")
    return from_any(value)


def index_map(attributes: PMap, keys: tuple[str | int, ...]) -> Any:
    """``attributes["k"]...``: the first key looks the map up (missing: nil)."""
    first = keys[0]
    if not isinstance(first, str):
        raise OttlRuntimeError("non-string indexing is not supported")
    found = attributes.get(first)
    if found is None:
        return None
    return index_any(found, keys[1:])


# -- how values become text ---------------------------------------------------------


def string_like(value: Any) -> str | None:
    """Upstream's ``StringLikeGetter``: the text ``IsMatch`` matches (None
    for nil). Byte slices are lowercase hex, maps and slices JSON, numbers and
    bools as Go's JSON writes them."""
    if value is None:
        return None
    if value.__class__ is str:
        text: str = value
        return text
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, PMap | PSlice):
        return go_json(raw_of(value))
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    raise OttlRuntimeError(f"unsupported type: {type_name(value)}")


def as_string(value: Any) -> str:
    """``pcommon.Value.AsString`` of a body (``body.string``)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        try:
            return go_float(value)
        except OttlRuntimeError:
            return f"json: unsupported value: {_go_g(value)}"
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    try:
        return go_json(raw_of(value))
    except OttlRuntimeError:
        return ""  # upstream ignores the marshalling error


def raw_of(value: Any) -> Any:
    """``AsRaw``: maps as dicts (a repeated key keeps its last entry), slices
    as lists, other values as themselves."""
    if isinstance(value, PMap):
        return {key: raw_of(from_any(item)) for key, item in value.pairs()}
    if isinstance(value, PSlice):
        return [raw_of(from_any(item)) for item in value.values]
    return value


def go_json(raw: Any) -> str:
    """``json.Marshal`` as Go writes it: sorted keys, no spaces, HTML
    characters escaped, byte slices base64, floats in Go's format."""
    if raw is None:
        return "null"
    if isinstance(raw, str):
        return _go_string(raw)
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if isinstance(raw, int):
        return str(raw)
    if isinstance(raw, float):
        return go_float(raw)
    if isinstance(raw, bytes):
        return '"' + base64.b64encode(raw).decode() + '"'
    if isinstance(raw, dict):
        return "{" + ",".join(_go_string(k) + ":" + go_json(raw[k]) for k in sorted(raw)) + "}"
    return "[" + ",".join(go_json(item) for item in raw) + "]"


_HTML = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def _go_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False).translate(_HTML)


def go_float(value: float) -> str:
    """A float64 as Go's ``encoding/json`` writes it: the shortest digits,
    fixed notation unless below 1e-6 or from 1e21 up; NaN and infinities
    cannot be written (an error, as upstream)."""
    if math.isnan(value) or math.isinf(value):
        raise OttlRuntimeError(f"json: unsupported value: {_go_g(value)}")
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    sign, digits, exponent = Decimal(repr(value)).as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    assert isinstance(exponent, int)
    point = len(digits) + exponent  # digits before the decimal point
    minus = "-" if sign else ""
    if abs(value) < 1e-6 or abs(value) >= 1e21:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        power = point - 1
        return f"{minus}{mantissa}e{'-' if power < 0 else '+'}{abs(power):02d}".replace("e-0", "e-")
    if point <= 0:
        return f"{minus}0.{'0' * -point}{text}"
    if point >= len(text):
        return minus + text + "0" * (point - len(text))
    return f"{minus}{text[:point]}.{text[point:]}"


def _go_g(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    return "+Inf" if value > 0 else "-Inf"


def type_name(value: Any) -> str:
    """The Go type upstream's messages name for a value."""
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bytes):
        return "[]uint8"
    if isinstance(value, PMap):
        return "pcommon.Map"
    if isinstance(value, PSlice):
        return "pcommon.Slice"
    if isinstance(value, Sequence):
        return value.kind
    return type(value).__name__


def index_slice(items: PSlice, keys: tuple[str | int, ...]) -> Any:
    """``body[0]...`` on a slice body: the first key must be an int in range."""
    first = keys[0]
    if not isinstance(first, int):
        raise OttlRuntimeError("non-integer indexing is not supported")
    if not 0 <= first < len(items):
        raise OttlRuntimeError(f"index {first} out of bounds")
    return index_any(items.values[first], keys[1:])


def int64(value: int) -> int:
    """A uint64 field as Go's int64 conversion reads it."""
    return value - (1 << 64) if value >= 1 << 63 else value
