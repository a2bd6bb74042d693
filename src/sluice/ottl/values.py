"""The values OTTL conditions see, as upstream's paths return them.

A path yields a Go value; here: ``None`` (nil, and an empty ``AnyValue``),
``str``, ``int`` (int64), ``float``, ``bool``, ``bytes`` (a byte slice),
:class:`PMap` (``pcommon.Map``: attributes, a kvlist) or :class:`PSlice`
(``pcommon.Slice``: an array), and, only as the argument of ``Len``,
:class:`Sequence` (the events of a span, the points of a metric...).
Maps and slices wrap the protobuf fields they read; nothing is copied.
"""

from __future__ import annotations

from collections.abc import Sequence as Seq
from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from sluice.ottl.errors import OttlRuntimeError
from sluice.telemetry.otlp_raw import key_and_value
from sluice.telemetry.pdata_text import VALUE_TYPES, NotJson, go_json


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

    def value(self, key: str) -> Any:
        """The OTTL value of `key` (nil when missing)."""
        found = self.get(key)
        return None if found is None else from_any(found)

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

    def value(self, key: str) -> Any:
        # A short string value (the common case) is read without parsing.
        wanted = key.encode()
        for kv in self.kvs:
            name, value = _split(kv)
            if name != wanted:
                continue
            size = len(value)
            if size >= 2 and value[0] == 0x0A and value[1] < 0x80 and value[1] + 2 == size:
                try:
                    return value[2:].decode()
                except UnicodeDecodeError as broken:
                    raise OttlRuntimeError(
                        f"attribute value is not valid UTF-8: {broken}"
                    ) from None
            return from_any(_any(value))
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
            raise OttlRuntimeError(f"type {VALUE_TYPES[kind]} does not support string indexing")
    return from_any(value)


def index_map(attributes: PMap, keys: tuple[str | int, ...]) -> Any:
    """``attributes["k"]...``: the first key looks the map up (missing: nil)."""
    first = keys[0]
    if not isinstance(first, str):
        raise OttlRuntimeError("non-string indexing is not supported")
    if len(keys) == 1:
        return attributes.value(first)
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
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    try:
        if isinstance(value, float):
            return go_json(value)
        if isinstance(value, PMap | PSlice):
            return go_json(raw_of(value))
    except NotJson as refused:
        raise OttlRuntimeError(str(refused)) from None
    raise OttlRuntimeError(f"unsupported type: {type_name(value)}")


def raw_of(value: Any) -> Any:
    """``AsRaw``: maps as dicts (a repeated key keeps its last entry), slices
    as lists, other values as themselves."""
    if isinstance(value, PMap):
        return {key: raw_of(from_any(item)) for key, item in value.pairs()}
    if isinstance(value, PSlice):
        return [raw_of(from_any(item)) for item in value.values]
    return value


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
