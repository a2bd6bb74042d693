"""Matchers: a selector and one condition (a pattern, ``exists``, ``equals``
or a comparison with a typed literal), validated as the engine will read it."""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Mapping
from typing import Any

from sluice.policy import regex_dialect
from sluice.policy.model import Matcher, MatchOp, Signal, TypedValue
from sluice.policy.parse.dialect import (
    TYPED_VALUE_KEYS,
    Invalid,
    has,
    int64,
    json_repr,
    member,
    optional_boolean,
)
from sluice.policy.parse.selectors import parse_selector

_HEX = re.compile(r"[0-9A-Fa-f]*")

_MATCH_KEYS: tuple[tuple[str, MatchOp], ...] = tuple((op.value, op) for op in MatchOp)


def _double(value: Any) -> float:
    if isinstance(value, bool):
        raise Invalid(f"invalid double_value {json_repr(value)}")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    raise Invalid(f"invalid double_value {json_repr(value)}")


def _typed_literal(value: Any, op: MatchOp) -> TypedValue:
    """The literal of `equals` or a comparison, as a Python value of the right type."""
    if isinstance(value, bool):
        if op is not MatchOp.EQUALS:
            raise Invalid(f"{op.value} requires a number, got {json_repr(value)}")
        return value
    if isinstance(value, int):
        return int64(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise Invalid(f"{op.value} value must be finite")
        return value
    if isinstance(value, str):
        if op is not MatchOp.EQUALS:
            raise Invalid(f"{op.value} requires a number, got {json_repr(value)}")
        return value
    if not isinstance(value, Mapping):
        raise Invalid(f"invalid {op.value} value {json_repr(value)}")
    variants = [k for k in TYPED_VALUE_KEYS if has(value, k)]
    if not variants:
        raise Invalid(f"{op.value} value oneof is unset")
    if len(variants) > 1:
        raise Invalid(f"{op.value} value has more than one of {', '.join(variants)}")
    kind = variants[0]
    raw = member(value, kind)
    if op is not MatchOp.EQUALS and kind not in ("int_value", "double_value"):
        raise Invalid(f"{op.value} requires int_value or double_value, got {kind}")
    if kind == "bool_value":
        return optional_boolean(raw, False, "bool_value")
    if kind == "int_value":
        return int64(raw)
    if kind == "double_value":
        return _double(raw)
    if kind == "bytes_value":
        if not isinstance(raw, str):
            raise Invalid(f"invalid bytes_value {json_repr(raw)}")
        try:
            return base64.b64decode(raw, validate=True)
        except (binascii.Error, ValueError):
            raise Invalid(f"invalid bytes_value {json_repr(raw)}") from None
    if kind == "hex_value":
        # Hex digits only: bytes.fromhex would also skip whitespace.
        if not isinstance(raw, str) or len(raw) % 2 or not _HEX.fullmatch(raw):
            raise Invalid(f"invalid hex_value {json_repr(raw)}")
        return bytes.fromhex(raw)
    if not isinstance(raw, str):
        raise Invalid(f"invalid string_value {json_repr(raw)}")
    return raw


def parse_matcher(obj: Any, signal: Signal) -> Matcher:
    """One matcher object; raises Invalid with the first problem found."""
    if not isinstance(obj, Mapping):
        raise Invalid("matcher must be an object")
    selector, carried = parse_selector(obj, signal)
    negate = optional_boolean(member(obj, "negate"), False, "negate")
    case_insensitive = optional_boolean(member(obj, "case_insensitive"), False, "case_insensitive")
    if carried is not None:
        if not carried:
            raise Invalid("empty pattern")
        return Matcher(selector, MatchOp.EXACT, carried, negate, case_insensitive)
    present = [(key, op) for key, op in _MATCH_KEYS if member(obj, key) is not None]
    if not present:
        raise Invalid("matcher has no match condition")
    if len(present) > 1:
        raise Invalid("matcher has more than one match condition")
    key, op = present[0]
    raw = member(obj, key)
    value: TypedValue
    if op is MatchOp.EXISTS:
        value = optional_boolean(raw, True, key)
    elif op is MatchOp.EQUALS or op in (MatchOp.GT, MatchOp.GTE, MatchOp.LT, MatchOp.LTE):
        value = _typed_literal(raw, op)
        if value == "" and isinstance(value, str):
            raise Invalid("empty pattern")
    else:
        if not isinstance(raw, str):
            raise Invalid(f"{key} must be a string, got {json_repr(raw)}")
        if raw == "":
            raise Invalid("empty pattern")
        if op is MatchOp.REGEX:
            problem = regex_dialect.re2_error(raw)
            if problem is not None:
                raise Invalid(f"invalid regex {json_repr(raw)}: {problem}")
        value = raw
    return Matcher(selector, op, value, negate, case_insensitive)
