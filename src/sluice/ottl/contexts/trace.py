"""The span and span event contexts (upstream's ``ottlspan`` and
``ottlspanevent``) over ``ExportTraceServiceRequest`` messages."""

from __future__ import annotations

import re
from typing import Any

from sluice.ottl.contexts.base import (
    COMMON,
    Context,
    Getter,
    Item,
    Resolution,
    Resolved,
    attributes_getter,
    leaf,
    unindexed,
)
from sluice.ottl.errors import OttlRuntimeError
from sluice.ottl.syntax import Field
from sluice.ottl.values import Sequence, int64

ENUMS = {
    "SPAN_KIND_UNSPECIFIED": 0,
    "SPAN_KIND_INTERNAL": 1,
    "SPAN_KIND_SERVER": 2,
    "SPAN_KIND_CLIENT": 3,
    "SPAN_KIND_PRODUCER": 4,
    "SPAN_KIND_CONSUMER": 5,
    "STATUS_CODE_UNSET": 0,
    "STATUS_CODE_OK": 1,
    "STATUS_CODE_ERROR": 2,
}
_KIND_NAMES = ("Unspecified", "Internal", "Server", "Client", "Producer", "Consumer")


class SpanItem(Item):
    """One span."""

    __slots__ = ("span",)

    def __init__(self) -> None:
        super().__init__()
        self.span: Any = None


class SpanEventItem(SpanItem):
    """One span event, with its span and containers."""

    __slots__ = ("event",)

    def __init__(self) -> None:
        super().__init__()
        self.event: Any = None


def _kind_string(item: SpanItem) -> str:
    kind = item.span.kind
    return _KIND_NAMES[kind] if 0 <= kind < len(_KIND_NAMES) else ""


def _kind_deprecated(item: SpanItem) -> str:
    kind = item.span.kind
    names = [k for k, v in ENUMS.items() if k.startswith("SPAN_KIND_") and v == kind]
    return names[0] if names else ""


def _hex_id(name: str, size: int) -> Getter:
    def get(item: SpanItem) -> str:
        raw: bytes = getattr(item.span, name)
        return raw.hex() if len(raw) == size else "00" * size

    return get


def _span_field(name: str) -> Getter:
    return lambda item: getattr(item.span, name)


def _span_number(name: str) -> Getter:
    return lambda item: int64(getattr(item.span, name))


_IDS = {"trace_id": 16, "span_id": 8, "parent_span_id": 8}
_NUMBERS = (
    "start_time_unix_nano",
    "end_time_unix_nano",
    "dropped_attributes_count",
    "dropped_events_count",
    "dropped_links_count",
)
_OTHERS = frozenset(
    {"attributes", "name", "trace_state", "kind", "events", "links", "start_time", "end_time"}
    | set(_NUMBERS)
)
_EVENT_PATHS = frozenset(
    {"attributes", "name", "time_unix_nano", "dropped_attributes_count", "time"}
)


def span_path(resolution: Resolution, fields: tuple[Field, ...]) -> Resolved:
    """The span's own paths (also ``span.*`` in the span event context)."""
    first = fields[0]
    name = first.name
    getter: Getter
    rest = fields[1:]
    if name in _IDS:
        if not rest:
            raise resolution.unsupported(f"compare {name}.string (the id as hex) instead")
        if rest[0].name != "string":
            raise resolution.error(rest[0].name)
        unindexed(first)
        leaf(resolution, rest)
        getter = _hex_id(name, _IDS[name])
    elif name == "kind" and rest:
        unindexed(first)
        last = leaf(resolution, rest)
        if last.name == "string":
            getter = _kind_string
        elif last.name == "deprecated_string":
            getter = _kind_deprecated
        else:
            raise resolution.error(last.name)
    elif name == "status":
        if not rest:
            raise resolution.unsupported("compare status.code or status.message")
        unindexed(first)
        last = leaf(resolution, rest)
        if last.name == "code":
            getter = lambda item: item.span.status.code  # noqa: E731
        elif last.name == "message":
            getter = lambda item: item.span.status.message  # noqa: E731
        else:
            raise resolution.error(last.name)
    else:
        if name not in _OTHERS:
            raise resolution.error(name)
        last = leaf(resolution, fields, keys=name in ("attributes", "trace_state"))
        if name == "attributes":
            getter = attributes_getter(lambda item: item.span.attributes, last.keys)
        elif name == "trace_state" and last.keys:
            getter = _trace_state_key(last.keys[0])
        elif name in ("name", "trace_state"):
            getter = _span_field(name)
        elif name == "kind":
            getter = lambda item: item.span.kind  # noqa: E731
        elif name in _NUMBERS:
            getter = _span_number(name)
        elif name in ("events", "links"):
            return Resolved(_sequence(name), resolution.key(fields), sequence=True)
        else:
            raise resolution.unsupported("time values need converters outside Sluice's subset")
    return Resolved(getter, resolution.key(fields))


_TRACE_STATE_KEY = re.compile(
    r"[a-z][_0-9a-z\-*/]{0,255}|[a-z0-9][_0-9a-z\-*/]{0,240}@[a-z][_0-9a-z\-*/]{0,13}"
)
_TRACE_STATE_VALUE = re.compile(
    r"[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]"
)


def trace_state_members(text: str) -> dict[str, str] | None:
    """A W3C ``tracestate`` as OpenTelemetry Go's ``trace.ParseTraceState``
    reads it: ``key=value`` members split on commas (empty ones skipped,
    blanks before a key and after a value trimmed); None when a member,
    a repeated key or more than 32 members make it invalid."""
    members: dict[str, str] = {}
    for member in text.split(","):
        if not member:
            continue
        key, equals, value = member.partition("=")
        key, value = key.lstrip(" \t"), value.rstrip(" \t")
        if (
            not equals
            or key in members
            or _TRACE_STATE_KEY.fullmatch(key) is None
            or _TRACE_STATE_VALUE.fullmatch(value) is None
        ):
            return None
        members[key] = value
        if len(members) > 32:
            return None
    return members


def _trace_state_key(key: str | int) -> Getter:
    """``trace_state["k"]``: the member's value, "" when it has none, nil
    when the span's trace state is not valid (upstream's ``ts.Get(key)``)."""

    def get(item: SpanItem) -> Any:
        if not isinstance(key, str):
            raise OttlRuntimeError("trace state key must be a string")
        members = trace_state_members(item.span.trace_state)
        return None if members is None else members.get(key, "")

    return get


def _sequence(name: str) -> Getter:
    kind = "ptrace.SpanEventSlice" if name == "events" else "ptrace.SpanLinkSlice"
    return lambda item: Sequence(kind, getattr(item.span, name))


def span_event_path(resolution: Resolution, fields: tuple[Field, ...]) -> Resolved:
    name = fields[0].name
    if name not in _EVENT_PATHS:
        raise resolution.error(name)
    last = leaf(resolution, fields, keys=name == "attributes")
    getter: Getter
    if name == "attributes":
        getter = attributes_getter(lambda item: item.event.attributes, last.keys)
    elif name == "name":
        getter = lambda item: item.event.name  # noqa: E731
    elif name == "time_unix_nano":
        getter = lambda item: int64(item.event.time_unix_nano)  # noqa: E731
    elif name == "dropped_attributes_count":
        getter = lambda item: item.event.dropped_attributes_count  # noqa: E731
    else:
        raise resolution.unsupported("time values need converters outside Sluice's subset")
    return Resolved(getter, resolution.key(fields))


SPAN = Context("span", span_path, ENUMS, COMMON)
SPAN_EVENT = Context("spanevent", span_event_path, ENUMS, {**COMMON, "span": span_path})
