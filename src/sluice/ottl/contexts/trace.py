"""The span and span event contexts (upstream's ``ottlspan`` and
``ottlspanevent``) over ``ExportTraceServiceRequest`` messages."""

from __future__ import annotations

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
)
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
        leaf(resolution, rest)
        getter = _hex_id(name, _IDS[name])
    elif name == "kind" and rest:
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
        last = leaf(resolution, fields, keys=name == "attributes")
        if name == "attributes":
            getter = attributes_getter(lambda item: item.span.attributes, last.keys)
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
