"""The two JSON dialects policies are written in, and what they share:
a key is read in snake_case first, then in its lowerCamelCase spelling;
booleans, int64s (numbers or text) and the protocol's enums (short names,
full proto names or numbers) are read the same way in both. A problem is
raised as :class:`Invalid`, whose message the policy's error list takes."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any

from sluice.policy.model import LOG_FIELDS, METRIC_FIELDS, TRACE_FIELDS


class Invalid(Exception):
    """One validation problem inside a policy; carries the message without its prefix."""


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
TYPED_VALUE_KEYS = (
    "bool_value",
    "int_value",
    "double_value",
    "bytes_value",
    "hex_value",
    "string_value",
)
"""The variants of a typed literal (``TypedValue``), in proto order."""
_DIGITS = re.compile(r"[0-9]+")
"""ASCII decimal digits (str.isdigit also takes superscripts and fullwidth digits)."""


def int64(value: Any, name: str = "int_value") -> int:
    """An int64 as proto-JSON writes it: a number, or decimal text. Problems
    name the value as `name`."""
    if isinstance(value, bool):
        raise Invalid(f"invalid {name} {json_repr(value)}")
    if isinstance(value, int):
        number = value
    elif (isinstance(value, str) and re.fullmatch(r"[+-]?[0-9]+", value.strip())) or (
        isinstance(value, float) and value.is_integer()
    ):
        number = int(value)
    else:
        raise Invalid(f"invalid {name} {json_repr(value)}")
    if not INT64_MIN <= number <= INT64_MAX:
        raise Invalid(f"{name} {number} out of int64 range")
    return number


@cache
def camel(snake: str) -> str:
    """The lowerCamelCase spelling of a snake_case key (proto-JSON's)."""
    head, *rest = snake.split("_")
    return head + "".join(part.title() for part in rest)


def member(obj: Mapping[str, Any], key: str) -> Any:
    """The value under the snake_case key or its camelCase spelling; None if neither."""
    if key in obj:
        return obj[key]
    return obj.get(camel(key))


def has(obj: Mapping[str, Any], key: str) -> bool:
    """Whether `obj` holds `key` (in either spelling) with a value other than null."""
    return member(obj, key) is not None


def optional_boolean(value: Any, default: bool, key: str) -> bool:
    """The boolean `key`'s value; None (the key is absent or null) is `default`.
    An error names the key: a matcher holds several booleans."""
    if value is None:
        return default
    try:
        return boolean(value)
    except Invalid as problem:
        raise Invalid(f"{key}: {problem}") from None


def boolean(value: Any) -> bool:
    """`value` when it is a JSON boolean."""
    if isinstance(value, bool):
        return value
    raise Invalid(f"expected true or false, got {json_repr(value)}")


class EnumNames:
    """An enum of the policy protocol: its values read by short lowercase name,
    full proto name (``SPAN_KIND_SERVER``), alias or number."""

    def __init__(self, proto_prefix: str, numbers: Mapping[str, int], aliases: Mapping[str, str]):
        self.prefix = proto_prefix
        self.by_number = {n: name for name, n in numbers.items()}
        self.by_name = {name: name for name in numbers}
        self.by_name.update({f"{proto_prefix}{name.upper()}": name for name in numbers})
        self.by_name.update(aliases)

    def parse(self, value: Any, what: str) -> str:
        """The short name for `value`; raises Invalid for unknown or unspecified values."""
        if isinstance(value, bool):
            raise Invalid(f"invalid {what} {json_repr(value)}")
        if isinstance(value, int) or (isinstance(value, str) and _DIGITS.fullmatch(value)):
            number = int(value)
            if number in self.by_number:
                return self.by_number[number]
            if number == 0:
                raise Invalid("field is unspecified")
            raise Invalid(f"invalid {what} {json_repr(value)}")
        if isinstance(value, str):
            # Names as written: no engine reads "SERVER" or "Gauge" (Go rejects them).
            name = self.by_name.get(value)
            if name is not None:
                return name
            if value == f"{self.prefix}UNSPECIFIED":
                raise Invalid("field is unspecified")
        raise Invalid(f"invalid {what} {json_repr(value)}")


def json_repr(value: Any) -> str:
    """A value the way it appears in a JSON file, for error messages."""
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    return str(value)


LOG_FIELD = EnumNames(
    "LOG_FIELD_",
    dict(zip(LOG_FIELDS, (1, 2, 3, 4, 5, 10, 11), strict=True)),
    {"message": "body", "status": "severity_text", "level": "severity_text"},
)
METRIC_FIELD = EnumNames(
    "METRIC_FIELD_", dict(zip(METRIC_FIELDS, (1, 2, 3, 10, 11, 12, 13), strict=True)), {}
)
TRACE_FIELD = EnumNames(
    "TRACE_FIELD_", dict(zip(TRACE_FIELDS, (1, 2, 3, 4, 5, 10, 11, 12, 13), strict=True)), {}
)
METRIC_TYPE_ENUM = EnumNames(
    "METRIC_TYPE_",
    {"gauge": 1, "sum": 2, "histogram": 3, "exponential_histogram": 4, "summary": 5},
    {},
)
TEMPORALITY_ENUM = EnumNames("AGGREGATION_TEMPORALITY_", {"delta": 1, "cumulative": 2}, {})
SPAN_KIND_ENUM = EnumNames(
    "SPAN_KIND_", {"internal": 1, "server": 2, "client": 3, "producer": 4, "consumer": 5}, {}
)
SPAN_STATUS_ENUM = EnumNames(
    "SPAN_STATUS_CODE_",
    {"unset": 0, "ok": 1, "error": 2},
    {
        "SPAN_STATUS_CODE_UNSPECIFIED": "unset",
        "STATUS_CODE_UNSET": "unset",
        "STATUS_CODE_OK": "ok",
        "STATUS_CODE_ERROR": "error",
    },
)
SAMPLING_MODE_ENUM = EnumNames(
    "SAMPLING_MODE_", {"hash_seed": 1, "proportional": 2, "equalizing": 3}, {}
)
