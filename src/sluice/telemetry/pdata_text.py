"""Values as the Go collector's pdata writes them: floats in Go's ``%v``
and JSON forms, an ``AnyValue``'s ``AsString`` and ``AsRaw``, and Go's
``json.Marshal`` of raw values (sorted keys, HTML characters escaped, byte
slices base64). The debug exporter prints with these; OTTL's ``IsMatch``
matches against them."""

from __future__ import annotations

import base64
import json
import math
from decimal import Decimal
from typing import Any

VALUE_TYPES = {
    "string_value": "Str",
    "bool_value": "Bool",
    "int_value": "Int",
    "double_value": "Double",
    "array_value": "Slice",
    "kvlist_value": "Map",
    "bytes_value": "Bytes",
    None: "Empty",
}
"""pdata's ``ValueType`` names, by ``AnyValue`` field."""


class NotJson(ValueError):
    """A value Go's ``json.Marshal`` refuses (a NaN or infinite float)."""


def _shortest(x: float) -> tuple[str, int]:
    """The shortest digits that read back as ``abs(x)`` (x finite, not 0),
    and where the decimal point goes: ``0.<digits> * 10**point``."""
    _, digits, exponent = Decimal(repr(abs(x))).as_tuple()
    text = "".join(map(str, digits))
    stripped = text.rstrip("0")
    assert isinstance(exponent, int)
    return stripped, len(text) + exponent


def _exponent_form(digits: str, point: int, negative: bool, width: int = 2) -> str:
    """``d.ddde±XX``, the exponent padded to `width` digits."""
    exponent = point - 1
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    sign = "-" if exponent < 0 else "+"
    return f"{'-' if negative else ''}{mantissa}e{sign}{abs(exponent):0{width}d}"


def _fixed_form(digits: str, point: int, negative: bool) -> str:
    if point <= 0:
        text = "0." + "0" * -point + digits
    elif point >= len(digits):
        text = digits + "0" * (point - len(digits))
    else:
        text = digits[:point] + "." + digits[point:]
    return ("-" if negative else "") + text


def special_float(x: float) -> str | None:
    """Go's text of a NaN or infinity (None for a finite float)."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    return None


def _finite(x: float) -> tuple[str, int, bool] | str:
    """(shortest digits, decimal point, negative) of a finite non-zero `x`;
    otherwise its whole text: ``NaN``, ``+Inf``, ``-Inf``, ``0``, ``-0``."""
    special = special_float(x)
    if special is not None:
        return special
    negative = math.copysign(1.0, x) < 0
    if x == 0:
        return "-0" if negative else "0"
    digits, point = _shortest(x)
    return digits, point, negative


def float_v(x: float) -> str:
    """Go's ``%v`` (strconv ``'g'``, shortest): ``1.23``, ``1e+06``, ``1e-05``."""
    parts = _finite(x)
    if isinstance(parts, str):
        return parts
    digits, point, negative = parts
    if point - 1 < -4 or point - 1 >= 6:
        return _exponent_form(digits, point, negative)
    return _fixed_form(digits, point, negative)


def float_fixed(x: float) -> str:
    """Go's ``strconv.FormatFloat(x, 'f', -1, 64)``: the shortest digits that
    read back, never in exponent form (``1e21`` is 22 digits)."""
    parts = _finite(x)
    return parts if isinstance(parts, str) else _fixed_form(*parts)


def float_as_string(x: float) -> str:
    """pdata's ``AsString`` of a double (JSON's number form): exponent form
    only below 1e-6 or from 1e21, without a padded exponent (``1e-7``)."""
    parts = _finite(x)
    if isinstance(parts, str):
        return parts if x == 0 else f"json: unsupported value: {parts}"
    digits, point, negative = parts
    if abs(x) < 1e-6 or abs(x) >= 1e21:
        return _exponent_form(digits, point, negative, width=1)
    return _fixed_form(digits, point, negative)


def value_type(value: Any) -> str:
    """pdata's type name of an ``AnyValue``."""
    return VALUE_TYPES[value.WhichOneof("value")]


def as_raw(value: Any) -> Any:
    """pdata's ``AsRaw`` of an ``AnyValue``: dicts, lists and scalars."""
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "kvlist_value":
        return {item.key: as_raw(item.value) for item in value.kvlist_value.values}
    if kind == "array_value":
        return [as_raw(item) for item in value.array_value.values]
    return getattr(value, kind)


def go_json(raw: Any) -> str:
    """Go's ``json.Marshal`` of a pdata ``AsRaw`` value (keys sorted, HTML
    characters escaped, numbers in JSON's shortest form); raises
    :class:`NotJson` for a NaN or infinite float."""
    if raw is None:
        return "null"
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if isinstance(raw, int):
        return str(raw)
    if isinstance(raw, float):
        if math.isnan(raw) or math.isinf(raw):
            raise NotJson(f"json: unsupported value: {float_v(raw)}")
        return float_as_string(raw)
    if isinstance(raw, bytes):
        return json_string(base64.b64encode(raw).decode())
    if isinstance(raw, dict):
        return "{" + ",".join(f"{json_string(k)}:{go_json(raw[k])}" for k in sorted(raw)) + "}"
    if isinstance(raw, list):
        return "[" + ",".join(go_json(item) for item in raw) + "]"
    return json_string(str(raw))


def json_string(text: str) -> str:
    """A JSON string as Go writes it (HTML characters and U+2028/9 escaped)."""
    encoded = json.dumps(text, ensure_ascii=False)
    for char, escape in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        encoded = encoded.replace(char, escape)
    return encoded


def value_as_string(value: Any) -> str:
    """pdata's ``Value.AsString``."""
    kind = value.WhichOneof("value")
    if kind is None:
        return ""
    if kind == "string_value":
        return str(value.string_value)
    if kind == "bool_value":
        return "true" if value.bool_value else "false"
    if kind == "int_value":
        return str(value.int_value)
    if kind == "double_value":
        return float_as_string(value.double_value)
    if kind == "bytes_value":
        return base64.b64encode(value.bytes_value).decode()
    try:
        return go_json(as_raw(value))
    except NotJson:
        return ""  # Go's json.Marshal fails on NaN or Inf; AsString ignores the error
