"""Attribute values as upstream's ``attraction`` treats them: config values
turned into ``AnyValue`` the way pdata's ``Value.FromRaw`` does, SHA-256
hashing of a value's Go byte form, and the ``convert`` rules (Go's
``strconv.ParseInt`` / ``ParseFloat`` syntax, Go's float-to-int conversion).
"""

from __future__ import annotations

import datetime
import hashlib
import math
import struct
from collections.abc import Mapping
from typing import Any

from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from sluice.collector.internal.go_text import value_as_string
from sluice.gostrconv import atoi, parse_float

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
UINT64_MAX = (1 << 64) - 1
CONVERTED_TYPES = ("string", "int", "double")


class UnsupportedValue(ValueError):
    """A config value pdata cannot hold."""


def unsupported(raw: Any) -> str | None:
    """Why `raw` (a YAML value) cannot become an ``AnyValue``, or None."""
    if raw is None or isinstance(raw, (bool, float, str, bytes, datetime.date)):
        return None
    if isinstance(raw, int):
        return None if INT64_MIN <= raw <= UINT64_MAX else f"integer {raw} overflows int64"
    if isinstance(raw, list):
        return next(filter(None, map(unsupported, raw)), None)
    if isinstance(raw, Mapping):
        return next(filter(None, map(unsupported, raw.values())), None)
    return f"<Invalid value type {type(raw).__name__}>"


def any_value(raw: Any) -> AnyValue:
    """pdata's ``Value.FromRaw`` of a YAML value (raises :class:`UnsupportedValue`):
    an integer past int64 (YAML's uint64) keeps its bits, as ``int64(u)``."""
    problem = unsupported(raw)
    if problem is not None:
        raise UnsupportedValue(problem)
    value = AnyValue()
    _fill(value, raw)
    return value


def _fill(value: AnyValue, raw: Any) -> None:
    if raw is None:
        return
    if isinstance(raw, bool):
        value.bool_value = raw
    elif isinstance(raw, int):
        # YAML reads integers past int64 as uint64, whose bits FromRaw keeps.
        value.int_value = raw - (1 << 64) if raw > INT64_MAX else raw
    elif isinstance(raw, float):
        value.double_value = raw
    elif isinstance(raw, str):
        value.string_value = raw
    elif isinstance(raw, bytes):
        value.bytes_value = raw
    elif isinstance(raw, datetime.date):
        # Go's YAML keeps an untagged timestamp as the text it was written as.
        value.string_value = raw.isoformat()
    elif isinstance(raw, list):
        value.array_value.SetInParent()
        for item in raw:
            _fill(value.array_value.values.add(), item)
    else:
        value.kvlist_value.SetInParent()
        for key, item in raw.items():
            _fill(value.kvlist_value.values.add(key=str(key)).value, item)


def hash_value(value: AnyValue) -> None:
    """Replace `value` with the hex SHA-256 of its Go byte form (UTF-8 text,
    one byte for a bool, little-endian int64 or float64 bits); any other type
    (empty, bytes, map, slice) becomes the empty string, as upstream. So
    does the empty string: upstream hashes only bytes there are."""
    kind = value.WhichOneof("value")
    if kind == "string_value":
        data = value.string_value.encode()
    elif kind == "int_value":
        data = struct.pack("<q", value.int_value)
    elif kind == "double_value":
        data = struct.pack("<d", value.double_value)
    elif kind == "bool_value":
        data = b"\x01" if value.bool_value else b"\x00"
    else:
        value.string_value = ""
        return
    value.string_value = hashlib.sha256(data).hexdigest() if data else ""


def go_int64(number: float) -> int:
    """Go's ``int64(f)`` on amd64: truncation, and the minimum int64 for NaN
    or a value out of range."""
    if math.isnan(number) or not INT64_MIN <= number < -INT64_MIN:
        return INT64_MIN
    return int(number)


def convert_value(value: AnyValue, to: str) -> bool:
    """Convert `value` in place to ``int``, ``double`` or ``string``; False
    (value untouched) when it cannot be, as upstream leaves it."""
    kind = value.WhichOneof("value")
    if to == "string":
        if kind == "string_value":
            return False
        value.string_value = value_as_string(value)
        return True
    if to == "int":
        if kind == "double_value":
            value.int_value = go_int64(value.double_value)
        elif kind == "bool_value":
            value.int_value = int(value.bool_value)
        elif kind == "string_value":
            try:  # upstream's strconv.ParseInt(s, 10, 64): Atoi's syntax and range
                value.int_value = atoi(value.string_value)
            except ValueError:
                return False
        else:
            return False
        return True
    if kind == "int_value":
        value.double_value = float(value.int_value)
    elif kind == "bool_value":
        value.double_value = float(value.bool_value)
    elif kind == "string_value":
        real = parse_float(value.string_value)
        if real is None:
            return False
        value.double_value = real
    else:
        return False
    return True
