"""Selectors: which field or attribute a matcher, a transform or a sample
key reads (``log_field``, ``log_attribute``, ``span_kind``...)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sluice.policy.model import (
    EVENT_NAME,
    LINK_TRACE_ID,
    METRIC_TYPE,
    SPAN_KIND,
    SPAN_STATUS,
    TEMPORALITY,
    Selector,
    Signal,
    Source,
)
from sluice.policy.parse.dialect import (
    LOG_FIELD,
    METRIC_FIELD,
    METRIC_TYPE_ENUM,
    SPAN_KIND_ENUM,
    SPAN_STATUS_ENUM,
    TEMPORALITY_ENUM,
    TRACE_FIELD,
    EnumNames,
    Invalid,
    camel,
    json_repr,
    member,
)


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
        raise Invalid(f"invalid attribute path {json_repr(value)}")
    if not segments:
        raise Invalid("attribute has empty path")
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
_FIELD_KEYS: dict[Signal, tuple[str, EnumNames]] = {
    Signal.LOG: ("log_field", LOG_FIELD),
    Signal.METRIC: ("metric_field", METRIC_FIELD),
    Signal.TRACE: ("trace_field", TRACE_FIELD),
}
# Selectors that carry their own comparison value: key -> (field name, enum or None).
_VALUE_SELECTORS: dict[Signal, tuple[tuple[str, str, EnumNames | None], ...]] = {
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
    with. Raises Invalid when there is none, more than one, or a bad one.
    """
    found: list[tuple[Selector, str | None]] = []
    field_key, field_enum = _FIELD_KEYS[signal]
    raw = member(obj, prefix + field_key)
    if raw is not None:
        found.append((Selector(Source.FIELD, field_enum.parse(raw, field_key)), None))
    for key, source in _ATTRIBUTE_KEYS[signal]:
        raw = member(obj, prefix + key)
        if raw is not None:
            found.append((Selector(source, path=parse_path(raw)), None))
    if not prefix:
        for key, name, enum in _VALUE_SELECTORS[signal]:
            if key not in obj and camel(key) not in obj:
                continue
            raw = member(obj, key)
            if enum is not None:
                if raw is None:
                    raise Invalid("field is unspecified")
                found.append((Selector(Source.FIELD, name), enum.parse(raw, key)))
            else:
                if not isinstance(raw, str):
                    raise Invalid(f"{key} must be a string")
                found.append((Selector(Source.FIELD, name), raw))
    if not found:
        raise Invalid("matcher has no field specified")
    if len(found) > 1:
        raise Invalid("matcher has more than one field specified")
    return found[0]
