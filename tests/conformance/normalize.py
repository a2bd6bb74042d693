"""The conformance harness's jq normalisation (POLICY.md 10.3), in Python.

Applied to both the expected and the actual output before comparing:
bottom-up, drop empty/zero/default values from objects, turn enum names and
all-digit strings into numbers, and whole floats into integers.
"""

from __future__ import annotations

import re
from typing import Any

_DROP_STRINGS = {
    "SEVERITY_NUMBER_UNSPECIFIED",
    "STATUS_CODE_UNSET",
    "SPAN_KIND_UNSPECIFIED",
    "AGGREGATION_TEMPORALITY_UNSPECIFIED",
}
_SEVERITIES = ["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"]
_ENUMS: dict[str, int] = {
    "SPAN_KIND_INTERNAL": 1,
    "SPAN_KIND_SERVER": 2,
    "SPAN_KIND_CLIENT": 3,
    "SPAN_KIND_PRODUCER": 4,
    "SPAN_KIND_CONSUMER": 5,
    "STATUS_CODE_OK": 1,
    "STATUS_CODE_ERROR": 2,
    "AGGREGATION_TEMPORALITY_DELTA": 1,
    "AGGREGATION_TEMPORALITY_CUMULATIVE": 2,
}
for _i, _name in enumerate(_SEVERITIES):
    _ENUMS[f"SEVERITY_NUMBER_{_name}"] = 4 * _i + 1
    for _n in range(2, 5):
        _ENUMS[f"SEVERITY_NUMBER_{_name}{_n}"] = 4 * _i + _n
_DIGITS = re.compile(r"[0-9]+")


def _dropped(value: Any) -> bool:
    if value is None or value is False:
        return True
    if isinstance(value, (list, dict, str)) and not value:
        return True
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0:
        return True
    return isinstance(value, str) and value in _DROP_STRINGS


def _scalar(value: Any, in_object: bool) -> Any:
    if isinstance(value, str):
        if in_object and value in _ENUMS:
            return _ENUMS[value]
        if _DIGITS.fullmatch(value):
            return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def normalize(value: Any, in_object: bool = False) -> Any:
    """Return the normalised copy of a decoded JSON value."""
    if isinstance(value, dict):
        out = {}
        for key, child in value.items():
            child = normalize(child, in_object=True)
            if not _dropped(child):
                out[key] = child
        return out
    if isinstance(value, list):
        return [normalize(child) for child in value]
    return _scalar(value, in_object)
