"""Read policy documents in both dialects into :class:`~sluice.policy.model.Policy` objects.

One tolerant parser serves the authoring JSON (snake_case keys, short enum
names, shorthands) and the proto-JSON ``SyncResponse`` (lowerCamelCase keys,
full enum names or numbers, int64 as strings). Every key is looked up in
snake_case first, then in camelCase. Each policy is parsed and validated on
its own: its errors are collected (not just the first) and make it inert,
while every other policy still loads.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import struct
from collections.abc import Callable, Mapping, Sequence
from functools import cache, partial
from typing import TYPE_CHECKING, Any

from sluice.policy import regex_dialect
from sluice.policy.model import (
    EVENT_NAME,
    KEEP_ALL,
    KEEP_NONE,
    LINK_TRACE_ID,
    LOG_FIELDS,
    METRIC_FIELDS,
    METRIC_TYPE,
    SPAN_KIND,
    SPAN_STATUS,
    TEMPORALITY,
    TRACE_FIELDS,
    Keep,
    KeepKind,
    LoadReport,
    Matcher,
    MatchOp,
    Policy,
    SamplingMode,
    Selector,
    Signal,
    Source,
    Transform,
    TransformOp,
    TypedValue,
)

if TYPE_CHECKING:
    from sluice.policy.cache import CompileCache


class PolicyDocumentError(ValueError):
    """The document as a whole cannot be read (not JSON, no ``policies`` array)."""


class _Invalid(Exception):
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
DEFAULT_REDACT_REPLACEMENT = "[REDACTED]"
_HEX = re.compile(r"[0-9A-Fa-f]*")
_DIGITS = re.compile(r"[0-9]+")
"""ASCII decimal digits (str.isdigit also takes superscripts and fullwidth digits)."""


@cache
def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(part.title() for part in rest)


def _get(obj: Mapping[str, Any], key: str) -> Any:
    """The value under the snake_case key or its camelCase spelling; None if neither."""
    if key in obj:
        return obj[key]
    return obj.get(_camel(key))


def _has(obj: Mapping[str, Any], key: str) -> bool:
    return _get(obj, key) is not None


def _bool(value: Any, default: bool, key: str) -> bool:
    """The boolean `key`'s value; None (the key is absent or null) is `default`.
    An error names the key: a matcher holds several booleans."""
    if value is None:
        return default
    try:
        return _boolean(value)
    except _Invalid as problem:
        raise _Invalid(f"{key}: {problem}") from None


def _boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise _Invalid(f"expected true or false, got {json_repr(value)}")


# ---------------------------------------------------------------------------
# Enums: short lowercase name, full proto name, or number.


class _Enum:
    def __init__(self, proto_prefix: str, numbers: Mapping[str, int], aliases: Mapping[str, str]):
        self.prefix = proto_prefix
        self.by_number = {n: name for name, n in numbers.items()}
        self.by_name = {name: name for name in numbers}
        self.by_name.update({f"{proto_prefix}{name.upper()}": name for name in numbers})
        self.by_name.update(aliases)

    def parse(self, value: Any, what: str) -> str:
        """The short name for `value`; raises _Invalid for unknown or unspecified values."""
        if isinstance(value, bool):
            raise _Invalid(f"invalid {what} {json_repr(value)}")
        if isinstance(value, int) or (isinstance(value, str) and _DIGITS.fullmatch(value)):
            number = int(value)
            if number in self.by_number:
                return self.by_number[number]
            if number == 0:
                raise _Invalid("field is unspecified")
            raise _Invalid(f"invalid {what} {json_repr(value)}")
        if isinstance(value, str):
            # Names as written: no engine reads "SERVER" or "Gauge" (Go rejects them).
            name = self.by_name.get(value)
            if name is not None:
                return name
            if value == f"{self.prefix}UNSPECIFIED":
                raise _Invalid("field is unspecified")
        raise _Invalid(f"invalid {what} {json_repr(value)}")


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


LOG_FIELD = _Enum(
    "LOG_FIELD_",
    dict(zip(LOG_FIELDS, (1, 2, 3, 4, 5, 10, 11), strict=True)),
    {"message": "body", "status": "severity_text", "level": "severity_text"},
)
METRIC_FIELD = _Enum(
    "METRIC_FIELD_", dict(zip(METRIC_FIELDS, (1, 2, 3, 10, 11, 12, 13), strict=True)), {}
)
TRACE_FIELD = _Enum(
    "TRACE_FIELD_", dict(zip(TRACE_FIELDS, (1, 2, 3, 4, 5, 10, 11, 12, 13), strict=True)), {}
)
METRIC_TYPE_ENUM = _Enum(
    "METRIC_TYPE_",
    {"gauge": 1, "sum": 2, "histogram": 3, "exponential_histogram": 4, "summary": 5},
    {},
)
TEMPORALITY_ENUM = _Enum("AGGREGATION_TEMPORALITY_", {"delta": 1, "cumulative": 2}, {})
SPAN_KIND_ENUM = _Enum(
    "SPAN_KIND_", {"internal": 1, "server": 2, "client": 3, "producer": 4, "consumer": 5}, {}
)
SPAN_STATUS_ENUM = _Enum(
    "SPAN_STATUS_CODE_",
    {"unset": 0, "ok": 1, "error": 2},
    {
        "SPAN_STATUS_CODE_UNSPECIFIED": "unset",
        "STATUS_CODE_UNSET": "unset",
        "STATUS_CODE_OK": "ok",
        "STATUS_CODE_ERROR": "error",
    },
)
SAMPLING_MODE_ENUM = _Enum(
    "SAMPLING_MODE_", {"hash_seed": 1, "proportional": 2, "equalizing": 3}, {}
)


# ---------------------------------------------------------------------------
# Selectors


def parse_path(value: Any) -> tuple[str, ...]:
    """An AttributePath: ``"key"``, ``["a", "b"]`` or ``{"path": ["a", "b"]}``.
    A dotted string is one segment."""
    if isinstance(value, Mapping):
        value = value.get("path")
        if value is None:  # proto-JSON: a null repeated field is the empty list
            value = []
    if isinstance(value, str):
        segments: tuple[str, ...] = (value,) if value else ()
    elif isinstance(value, list) and all(isinstance(s, str) for s in value):
        segments = tuple(value)
    else:
        raise _Invalid(f"invalid attribute path {json_repr(value)}")
    if not segments:
        raise _Invalid("attribute has empty path")
    return segments


_ATTRIBUTE_KEYS: dict[Signal, tuple[tuple[str, Source], ...]] = {
    Signal.LOG: (
        ("log_attribute", Source.ATTRIBUTE),
        ("resource_attribute", Source.RESOURCE_ATTRIBUTE),
        ("scope_attribute", Source.SCOPE_ATTRIBUTE),
    ),
    Signal.METRIC: (
        ("datapoint_attribute", Source.ATTRIBUTE),
        ("resource_attribute", Source.RESOURCE_ATTRIBUTE),
        ("scope_attribute", Source.SCOPE_ATTRIBUTE),
    ),
    Signal.TRACE: (
        ("span_attribute", Source.ATTRIBUTE),
        ("resource_attribute", Source.RESOURCE_ATTRIBUTE),
        ("scope_attribute", Source.SCOPE_ATTRIBUTE),
        ("event_attribute", Source.EVENT_ATTRIBUTE),
    ),
}
_FIELD_KEYS: dict[Signal, tuple[str, _Enum]] = {
    Signal.LOG: ("log_field", LOG_FIELD),
    Signal.METRIC: ("metric_field", METRIC_FIELD),
    Signal.TRACE: ("trace_field", TRACE_FIELD),
}
# Selectors that carry their own comparison value: key -> (field name, enum or None).
_VALUE_SELECTORS: dict[Signal, tuple[tuple[str, str, _Enum | None], ...]] = {
    Signal.LOG: (),
    Signal.METRIC: (
        ("metric_type", METRIC_TYPE, METRIC_TYPE_ENUM),
        ("aggregation_temporality", TEMPORALITY, TEMPORALITY_ENUM),
    ),
    Signal.TRACE: (
        ("span_kind", SPAN_KIND, SPAN_KIND_ENUM),
        ("span_status", SPAN_STATUS, SPAN_STATUS_ENUM),
        ("event_name", EVENT_NAME, None),
        ("link_trace_id", LINK_TRACE_ID, None),
    ),
}


def parse_selector(
    obj: Mapping[str, Any], signal: Signal, prefix: str = ""
) -> tuple[Selector, str | None]:
    """The one field selector of `obj` (keys optionally prefixed, e.g. ``from_``).

    Returns the selector and, for value-carrying selectors, the value to compare
    with. Raises _Invalid when there is none, more than one, or a bad one.
    """
    found: list[tuple[Selector, str | None]] = []
    field_key, field_enum = _FIELD_KEYS[signal]
    raw = _get(obj, prefix + field_key)
    if raw is not None:
        found.append((Selector(Source.FIELD, field_enum.parse(raw, field_key)), None))
    for key, source in _ATTRIBUTE_KEYS[signal]:
        raw = _get(obj, prefix + key)
        if raw is not None:
            found.append((Selector(source, path=parse_path(raw)), None))
    if not prefix:
        for key, name, enum in _VALUE_SELECTORS[signal]:
            if key not in obj and _camel(key) not in obj:
                continue
            raw = _get(obj, key)
            if enum is not None:
                if raw is None:
                    raise _Invalid("field is unspecified")
                found.append((Selector(Source.FIELD, name), enum.parse(raw, key)))
            else:
                if not isinstance(raw, str):
                    raise _Invalid(f"{key} must be a string")
                found.append((Selector(Source.FIELD, name), raw))
    if not found:
        raise _Invalid("matcher has no field specified")
    if len(found) > 1:
        raise _Invalid("matcher has more than one field specified")
    return found[0]


# ---------------------------------------------------------------------------
# Matchers


_MATCH_KEYS: tuple[tuple[str, MatchOp], ...] = tuple((op.value, op) for op in MatchOp)


def _int64(value: Any) -> int:
    if isinstance(value, bool):
        raise _Invalid(f"invalid int_value {json_repr(value)}")
    if isinstance(value, int):
        number = value
    elif (isinstance(value, str) and re.fullmatch(r"[+-]?[0-9]+", value.strip())) or (
        isinstance(value, float) and value.is_integer()
    ):
        number = int(value)
    else:
        raise _Invalid(f"invalid int_value {json_repr(value)}")
    if not INT64_MIN <= number <= INT64_MAX:
        raise _Invalid(f"int_value {number} out of int64 range")
    return number


def _double(value: Any) -> float:
    if isinstance(value, bool):
        raise _Invalid(f"invalid double_value {json_repr(value)}")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    raise _Invalid(f"invalid double_value {json_repr(value)}")


def _typed_literal(value: Any, op: MatchOp) -> TypedValue:
    """The literal of `equals` or a comparison, as a Python value of the right type."""
    if isinstance(value, bool):
        if op is not MatchOp.EQUALS:
            raise _Invalid(f"{op.value} requires a number, got {json_repr(value)}")
        return value
    if isinstance(value, int):
        return _int64(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _Invalid(f"{op.value} value must be finite")
        return value
    if isinstance(value, str):
        if op is not MatchOp.EQUALS:
            raise _Invalid(f"{op.value} requires a number, got {json_repr(value)}")
        return value
    if not isinstance(value, Mapping):
        raise _Invalid(f"invalid {op.value} value {json_repr(value)}")
    variants = [k for k in TYPED_VALUE_KEYS if _has(value, k)]
    if not variants:
        raise _Invalid(f"{op.value} value oneof is unset")
    if len(variants) > 1:
        raise _Invalid(f"{op.value} value has more than one of {', '.join(variants)}")
    kind = variants[0]
    raw = _get(value, kind)
    if op is not MatchOp.EQUALS and kind not in ("int_value", "double_value"):
        raise _Invalid(f"{op.value} requires int_value or double_value, got {kind}")
    if kind == "bool_value":
        return _bool(raw, False, "bool_value")
    if kind == "int_value":
        return _int64(raw)
    if kind == "double_value":
        return _double(raw)
    if kind == "bytes_value":
        if not isinstance(raw, str):
            raise _Invalid(f"invalid bytes_value {json_repr(raw)}")
        try:
            return base64.b64decode(raw, validate=True)
        except (binascii.Error, ValueError):
            raise _Invalid(f"invalid bytes_value {json_repr(raw)}") from None
    if kind == "hex_value":
        # Hex digits only: bytes.fromhex would also skip whitespace.
        if not isinstance(raw, str) or len(raw) % 2 or not _HEX.fullmatch(raw):
            raise _Invalid(f"invalid hex_value {json_repr(raw)}")
        return bytes.fromhex(raw)
    if not isinstance(raw, str):
        raise _Invalid(f"invalid string_value {json_repr(raw)}")
    return raw


def parse_matcher(obj: Any, signal: Signal) -> Matcher:
    """One matcher object; raises _Invalid with the first problem found."""
    if not isinstance(obj, Mapping):
        raise _Invalid("matcher must be an object")
    selector, carried = parse_selector(obj, signal)
    negate = _bool(_get(obj, "negate"), False, "negate")
    case_insensitive = _bool(_get(obj, "case_insensitive"), False, "case_insensitive")
    if carried is not None:
        if not carried:
            raise _Invalid("empty pattern")
        return Matcher(selector, MatchOp.EXACT, carried, negate, case_insensitive)
    present = [(key, op) for key, op in _MATCH_KEYS if _get(obj, key) is not None]
    if not present:
        raise _Invalid("matcher has no match condition")
    if len(present) > 1:
        raise _Invalid("matcher has more than one match condition")
    key, op = present[0]
    raw = _get(obj, key)
    value: TypedValue
    if op is MatchOp.EXISTS:
        value = _bool(raw, True, key)
    elif op is MatchOp.EQUALS or op in (MatchOp.GT, MatchOp.GTE, MatchOp.LT, MatchOp.LTE):
        value = _typed_literal(raw, op)
        if value == "" and isinstance(value, str):
            raise _Invalid("empty pattern")
    else:
        if not isinstance(raw, str):
            raise _Invalid(f"{key} must be a string, got {json_repr(raw)}")
        if raw == "":
            raise _Invalid("empty pattern")
        if op is MatchOp.REGEX:
            problem = regex_dialect.re2_error(raw)
            if problem is not None:
                raise _Invalid(f"invalid regex {json_repr(raw)}: {problem}")
        value = raw
    return Matcher(selector, op, value, negate, case_insensitive)


# ---------------------------------------------------------------------------
# keep


# ASCII digits only: Python's \d (and int/float) also take fullwidth and other
# Unicode digits, which no other engine reads as numbers.
_RATE = re.compile(r"([0-9]+)/([0-9]*)([sm])")
_DECIMAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")


def parse_log_keep(raw: Any) -> Keep:
    """`log.keep`: all, none, N%, N/s, N/m, N/Ds, N/Dm (plus legacy bool and {percentage})."""
    if raw is None:
        return KEEP_ALL
    if raw is True:
        return KEEP_ALL
    if raw is False:
        return KEEP_NONE
    if isinstance(raw, Mapping) and _has(raw, "percentage"):
        pct = raw.get("percentage")
        if isinstance(pct, bool) or not isinstance(pct, int | float) or not 0 <= pct <= 100:
            raise _Invalid(f"invalid value {json_repr(raw)}")
        return _percent_keep(float(f"{pct:.0f}"))
    if not isinstance(raw, str):
        raise _Invalid(f"invalid value {json_repr(raw)}")
    text = raw.strip()
    if text in ("", "all"):
        return KEEP_ALL
    if text == "none":
        return KEEP_NONE
    if text.endswith("%") and _DECIMAL.fullmatch(text[:-1]):
        pct = float(text[:-1])
        if math.isfinite(pct) and 0 <= pct <= 100:
            return _percent_keep(pct, text)
    rate = _RATE.fullmatch(text)
    if rate:
        limit, every, unit = int(rate.group(1)), rate.group(2), rate.group(3)
        windows = int(every) if every else 1
        if limit >= 1 and windows >= 1:
            unit_ms = 1000 if unit == "s" else 60000
            return Keep(KeepKind.RATE, limit=limit, window_ms=windows * unit_ms, text=text)
    raise _Invalid(f"invalid value {json_repr(raw)}")


def _percent_keep(pct: float, text: str = "") -> Keep:
    text = text or f"{pct:g}%"
    if pct >= 100:
        return Keep(KeepKind.ALL, text=text)
    if pct <= 0:
        return Keep(KeepKind.NONE, percent=0.0, text=text)
    return Keep(KeepKind.PERCENT, percent=pct, text=text)


def parse_sample_rate(raw: Any) -> Keep:
    """The product dialect's `log.sample_rate` (a fraction 0..1)."""
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not 0 <= raw <= 1:
        raise _Invalid(f"{json_repr(raw)} out of range [0, 1]")
    return _percent_keep(raw * 100.0)


def _float32(value: float) -> float:
    return float(struct.unpack("<f", struct.pack("<f", value))[0])


def parse_trace_keep(raw: Any) -> Keep:
    """`trace.keep`: a TraceSamplingConfig object."""
    if not isinstance(raw, Mapping):
        raise _Invalid(f"invalid value {json_repr(raw)}")
    pct_raw = _get(raw, "percentage")
    if pct_raw is None:
        pct = 0.0  # proto3 default: an encoder may leave a zero out
    elif isinstance(pct_raw, bool) or not isinstance(pct_raw, int | float | str):
        raise _Invalid(f"invalid percentage {json_repr(pct_raw)}")
    else:
        try:
            pct = float(pct_raw)
            pct = _float32(pct) if math.isfinite(pct) else pct
        except (ValueError, OverflowError):
            raise _Invalid(f"invalid percentage {json_repr(pct_raw)}") from None
    if not 0 <= pct <= 100:  # also rejects NaN
        raise _Invalid(f"percentage {pct_raw} out of range [0, 100]")
    mode_raw = _get(raw, "mode")
    mode = SamplingMode.HASH_SEED
    if mode_raw is not None:
        if isinstance(mode_raw, int) and not isinstance(mode_raw, bool):
            mode = SamplingMode(mode_raw) if mode_raw in (1, 2, 3) else SamplingMode.HASH_SEED
        else:
            name = (
                SAMPLING_MODE_ENUM.parse(mode_raw, "mode")
                if mode_raw != "SAMPLING_MODE_UNSPECIFIED"
                else "hash_seed"
            )
            mode = SamplingMode[name.upper()]
    precision_raw = _get(raw, "sampling_precision")
    precision = 4
    if precision_raw is not None:
        precision = _int64(precision_raw)
        precision = 4 if precision <= 0 else min(precision, 14)
    seed_raw = _get(raw, "hash_seed")
    seed = 0 if seed_raw is None else _int64(seed_raw)
    if not 0 <= seed <= 0xFFFFFFFF:
        raise _Invalid(f"hash_seed {seed} out of range [0, 4294967295]")
    fail_closed = _bool(_get(raw, "fail_closed"), True, "fail_closed")
    common: dict[str, Any] = {
        "mode": mode,
        "precision": precision,
        "hash_seed": seed,
        "fail_closed": fail_closed,
    }
    if pct >= 100:
        return Keep(KeepKind.ALL, percent=100.0, text="100%", **common)
    if pct <= 0:
        return Keep(KeepKind.NONE, percent=0.0, text="0%", **common)
    return Keep(KeepKind.TRACE_SAMPLE, percent=pct, text=f"{pct:g}%", **common)


def parse_metric_keep(raw: Any) -> Keep:
    """`metric.keep`: true (all) or false (none); "all"/"none" are accepted too."""
    if raw is True or raw == "all":
        return KEEP_ALL
    if raw is False or raw == "none":
        return KEEP_NONE
    raise _Invalid(f"invalid value {json_repr(raw)}")


# ---------------------------------------------------------------------------
# transforms


_LOG_SELECTOR_KEYS = ("log_field", "log_attribute", "resource_attribute", "scope_attribute")


def _parse_transforms(raw: Any, errors: list[str]) -> tuple[Transform, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, Mapping):
        errors.append("log: transform: must be an object")
        return ()
    steps: list[Transform] = []
    for op in TransformOp:
        items = _get(raw, op.value)
        if items is None:
            continue
        if not isinstance(items, list):
            errors.append(f"log: transform: {op.value}: must be a list")
            continue
        for j, item in enumerate(items):
            try:
                steps.append(_parse_transform(op, item))
            except _Invalid as problem:
                errors.append(f"log: transform: {op.value}[{j}]: {problem}")
    return tuple(steps)


def _parse_transform(op: TransformOp, item: Any) -> Transform:
    if not isinstance(item, Mapping):
        raise _Invalid("must be an object")
    if op is TransformOp.RENAME:
        source, _ = parse_selector(item, Signal.LOG, prefix="from_")
        to = item.get("to")
        if to is None or to == "":
            raise _Invalid("rename target is empty")
        if not isinstance(to, str):
            raise _Invalid(f"rename target must be a string, got {json_repr(to)}")
        upsert = _bool(_get(item, "upsert"), False, "upsert")
        target = Selector(source.source, source.name, (*source.path[:-1], to))
        return Transform(op, target, upsert=upsert, source=source)
    target, _ = parse_selector(item, Signal.LOG)
    if op is TransformOp.REMOVE:
        return Transform(op, target)
    value = item.get("replacement" if op is TransformOp.REDACT else "value")
    if op is TransformOp.REDACT:
        value = DEFAULT_REDACT_REPLACEMENT if value is None else value
        regex = _get(item, "regex")
        if regex is not None:
            if not isinstance(regex, str):
                raise _Invalid(f"invalid regex {json_repr(regex)}")
            if regex == "":
                raise _Invalid("empty pattern")
            problem = regex_dialect.re2_error(regex)
            if problem is not None:
                raise _Invalid(f"invalid regex {json_repr(regex)}: {problem}")
        if not isinstance(value, str):
            raise _Invalid(f"replacement must be a string, got {json_repr(value)}")
        return Transform(op, target, value=value, regex=regex)
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise _Invalid(f"value must be a string, got {json_repr(value)}")
    return Transform(op, target, value=value, upsert=_bool(_get(item, "upsert"), False, "upsert"))


# ---------------------------------------------------------------------------
# policies and documents


def _parse_sample_key(raw: Any) -> Selector:
    if not isinstance(raw, Mapping):
        raise _Invalid("must be an object")
    return parse_selector(raw, Signal.LOG)[0]


def _collect(errors: list[str], prefix: str, parse: Callable[[], Any]) -> Any:
    try:
        return parse()
    except _Invalid as problem:
        errors.append(f"{prefix}: {problem}")
        return None


def parse_policy(obj: Mapping[str, Any]) -> Policy:
    """Parse and validate one policy object that has a usable ``id``."""
    pid = obj["id"]
    raw_name = obj.get("name")
    name = raw_name if isinstance(raw_name, str) else ""
    errors: list[str] = []
    enabled = obj.get("enabled", True)
    if not isinstance(enabled, bool):
        # Only a missing `enabled` means true (POLICY.md 1.2). Any other value,
        # null included, is an error: the policy counts as enabled so that it is
        # reported, and stays inert. Reading it as true dropped what its author
        # may have meant to switch off ("enabled": "false").
        _collect(errors, "enabled", partial(_boolean, enabled))
        enabled = True
    signal = next((s for s in Signal if isinstance(obj.get(s.value), Mapping)), None)
    base = Policy(id=pid, name=name, enabled=enabled, signal=signal)
    if not enabled or signal is None:
        return base
    target: Mapping[str, Any] = obj[signal.value]
    sig = signal.value

    matchers: list[Matcher] = []
    match_list = target.get("match")
    if match_list is None or (isinstance(match_list, list) and not match_list):
        errors.append(f"{sig}: no matchers specified")
    elif not isinstance(match_list, list):
        errors.append(f"{sig}: match: must be a list")
    else:
        for i, item in enumerate(match_list):
            m = _collect(errors, f"{sig}: match[{i}]", partial(parse_matcher, item, signal))
            if m is not None:
                matchers.append(m)

    keep: Keep | None = KEEP_ALL
    sample_key: Selector | None = None
    transforms: tuple[Transform, ...] = ()
    if signal is Signal.LOG:
        keep_raw, rate_raw = target.get("keep"), _get(target, "sample_rate")
        if keep_raw is not None and rate_raw is not None:
            errors.append("log: keep and sample_rate are mutually exclusive")
        elif rate_raw is not None:
            keep = _collect(errors, "log: sample_rate", lambda: parse_sample_rate(rate_raw))
        else:
            keep = _collect(errors, "log: keep", lambda: parse_log_keep(keep_raw))
        key_raw = _get(target, "sample_key")
        if key_raw is not None:
            sample_key = _collect(errors, "log: sampleKey", lambda: _parse_sample_key(key_raw))
        transforms = _parse_transforms(target.get("transform"), errors)
    elif signal is Signal.METRIC:
        if "keep" not in target:
            errors.append("metric: keep: missing")
        else:
            keep = _collect(errors, "metric: keep", lambda: parse_metric_keep(target["keep"]))
    else:
        if target.get("keep") is None:
            errors.append("trace: keep: missing")
        else:
            keep = _collect(errors, "trace: keep", lambda: parse_trace_keep(target["keep"]))

    return Policy(
        id=pid,
        name=name,
        enabled=True,
        signal=signal,
        matchers=tuple(matchers),
        keep=keep or KEEP_ALL,
        sample_key=sample_key,
        transforms=transforms,
        errors=tuple(errors),
    )


def load_document(doc: Any, cache: CompileCache | None = None) -> LoadReport:
    """Parse a decoded policy document (either dialect).

    Raises PolicyDocumentError when the document has no ``policies`` array;
    problems inside single policies are reported on those policies instead.
    Duplicate ids: the later policy wins and a warning is recorded. With a
    `cache`, a policy object parsed before (by content) is not parsed again.
    """
    if not isinstance(doc, Mapping) or not isinstance(doc.get("policies"), list):
        raise PolicyDocumentError('the document has no "policies" array')
    report = LoadReport()
    usable: list[Mapping[str, Any]] = []
    steps: list[str | int] = []
    """In document order: a warning, or the position of a policy in `usable`."""
    for index, obj in enumerate(doc["policies"]):
        if not isinstance(obj, Mapping):
            steps.append(f"policies[{index}]: not an object; ignored")
            continue
        pid = obj.get("id")
        if not isinstance(pid, str) or not pid:
            steps.append(f'policies[{index}]: missing or empty "id"; ignored')
            continue
        steps.append(len(usable))
        usable.append(obj)
    parsed: Sequence[Policy] = (
        cache.parse_all(usable) if cache is not None else [parse_policy(obj) for obj in usable]
    )
    by_id: dict[str, int] = {}
    for step in steps:
        if isinstance(step, str):
            report.warnings.append(step)
            continue
        policy = parsed[step]
        pid = policy.id
        if policy.signal is None and policy.enabled:
            report.warnings.append(f"policy {pid!r}: no log, metric or trace target; ignored")
        if pid in by_id:
            report.warnings.append(f"policy {pid!r}: duplicate id; the later definition wins")
            report.policies[by_id[pid]] = policy
        else:
            by_id[pid] = len(report.policies)
            report.policies.append(policy)
    return report
