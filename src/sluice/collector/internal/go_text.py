"""Values written the way the Go collector writes them, so that what Sluice
prints or compares reads like upstream's (the debug exporter's output, the
text the attributes processor matches and converts): floats as Go's ``%v``,
``%f``, ``strconv.FormatFloat(x, 'f', -1, 64)`` and pdata's ``AsString`` print
them, attribute values with pdata's type names, timestamps as Go's
``time.Time.String()``, enums by pdata's names."""

from __future__ import annotations

import base64
import datetime
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
SEVERITIES = ["Unspecified"] + [
    f"{level}{n if n > 1 else ''}"
    for level in ("Trace", "Debug", "Info", "Warn", "Error", "Fatal")
    for n in range(1, 5)
]
SPAN_KINDS = ["Unspecified", "Internal", "Server", "Client", "Producer", "Consumer"]
STATUS_CODES = ["Unset", "Ok", "Error"]
TEMPORALITIES = ["Unspecified", "Delta", "Cumulative"]
METRIC_TYPES = {
    None: "Empty",
    "gauge": "Gauge",
    "sum": "Sum",
    "histogram": "Histogram",
    "exponential_histogram": "ExponentialHistogram",
    "summary": "Summary",
}
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def enum_name(names: list[str], number: int) -> str:
    """pdata's name of an enum value ("" for one it does not know)."""
    return names[number] if 0 <= number < len(names) else ""


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


def _special(x: float) -> str | None:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    return None


def _finite(x: float) -> tuple[str, int, bool] | str:
    """(shortest digits, decimal point, negative) of a finite non-zero `x`,
    else its text: ``NaN``, ``+Inf``, ``-Inf``, ``0``, ``-0``."""
    special = _special(x)
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


def float_f(x: float) -> str:
    """Go's ``%f``: six decimals."""
    return _special(x) or f"{x:f}"


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


def raw(value: Any) -> Any:
    """pdata's ``AsRaw`` of an ``AnyValue``: None, a scalar, bytes, a dict or a list."""
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "kvlist_value":
        return {item.key: raw(item.value) for item in value.kvlist_value.values}
    if kind == "array_value":
        return [raw(item) for item in value.array_value.values]
    return getattr(value, kind)


class _NotJson(ValueError):
    pass


def _json(raw: Any) -> str:
    """Go's ``json.Marshal`` of a pdata ``AsRaw`` value (keys sorted, HTML
    characters escaped, numbers in JSON's shortest form)."""
    if raw is None:
        return "null"
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if isinstance(raw, int):
        return str(raw)
    if isinstance(raw, float):
        if math.isnan(raw) or math.isinf(raw):
            raise _NotJson
        return float_as_string(raw)
    if isinstance(raw, bytes):
        return _json_string(base64.b64encode(raw).decode())
    if isinstance(raw, dict):
        return "{" + ",".join(f"{_json_string(k)}:{_json(raw[k])}" for k in sorted(raw)) + "}"
    if isinstance(raw, list):
        return "[" + ",".join(_json(item) for item in raw) + "]"
    return _json_string(str(raw))


def _json_string(text: str) -> str:
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
        return _json(raw(value))
    except _NotJson:
        return ""  # Go's json.Marshal fails on NaN or Inf; AsString ignores the error


def typed(value: Any) -> str:
    """``Type(value)``, as the detailed dump writes attribute values."""
    return f"{value_type(value)}({value_as_string(value)})"


def timestamp(nanos: int) -> str:
    """Go's ``time.Time.String()`` of a pdata timestamp, in UTC."""
    if nanos >= 1 << 63:
        nanos -= 1 << 64  # pdata reads the fixed64 as int64
    seconds, fraction = divmod(nanos, 1_000_000_000)
    moment = _EPOCH + datetime.timedelta(seconds=seconds)
    text = moment.strftime("%Y-%m-%d %H:%M:%S")
    if fraction:
        text += "." + f"{fraction:09d}".rstrip("0")
    return text + " +0000 UTC"


def hex_id(raw: bytes) -> str:
    """A trace or span id as pdata prints it ("" when all zeros or absent)."""
    return raw.hex() if any(raw) else ""
