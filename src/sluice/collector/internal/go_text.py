"""Values written the way the Go collector writes them, so that what Sluice
prints or compares reads like upstream's (the debug exporter's output, the
text the attributes processor matches and converts): floats as Go's ``%v``,
``%f`` and ``strconv.FormatFloat(x, 'f', -1, 64)`` print them, attribute
values with pdata's type names and ``AsString``
(:mod:`sluice.telemetry.pdata_text`, shared with OTTL), timestamps as Go's
``time.Time.String()``, enums by pdata's names."""

from __future__ import annotations

import datetime
from typing import Any

from sluice.telemetry.pdata_text import (
    float_fixed,
    float_v,
    special_float,
    value_as_string,
    value_type,
)

__all__ = [
    "METRIC_TYPES",
    "SEVERITIES",
    "SPAN_KINDS",
    "STATUS_CODES",
    "TEMPORALITIES",
    "enum_name",
    "float_f",
    "float_fixed",
    "float_v",
    "hex_id",
    "path_error",
    "timestamp",
    "typed",
    "value_as_string",
    "value_type",
]

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


def path_error(operation: str, problem: OSError) -> str:
    """`problem` as Go's ``*fs.PathError`` words it: ``open a.yaml: no such
    file or directory``."""
    reason = problem.strerror or str(problem)
    return f"{operation} {problem.filename}: {reason[:1].lower()}{reason[1:]}"


def enum_name(names: list[str], number: int) -> str:
    """pdata's name of an enum value ("" for one it does not know)."""
    return names[number] if 0 <= number < len(names) else ""


def float_f(x: float) -> str:
    """Go's ``%f``: six decimals."""
    return special_float(x) or f"{x:f}"


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
