"""The OTLP JSON view of traces: resourceSpans / scopeSpans / spans."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from sluice.policy.model import EVENT_NAME, ID_FIELDS, LINK_TRACE_ID, SPAN_KIND, SPAN_STATUS
from sluice.policy.view import Ctx, MalformedRecord, Value
from sluice.telemetry.otlp_json.fields import (
    ID_SIZES,
    enum_name,
    hex_id,
    id_bytes,
    member,
    nonempty,
)
from sluice.telemetry.otlp_json.view import Getter, JsonView

_SPAN_KINDS = ("internal", "server", "client", "producer", "consumer")
_STATUS = ("ok", "error")
_SPAN_IDS = {"trace_id": "traceId", "span_id": "spanId", "parent_span_id": "parentSpanId"}


def _span_kind(span: Any) -> str | None:
    return enum_name(span.get("kind"), "SPAN_KIND_", _SPAN_KINDS)


def _span_status(span: Any) -> str:
    status = span.get("status")
    code = status.get("code") if isinstance(status, dict) else None
    return enum_name(code, "STATUS_CODE_", _STATUS) or "unset"


def _event_names(span: Any) -> list[str]:
    events = span.get("events")
    if not isinstance(events, list):
        return []
    return [e["name"] for e in events if isinstance(e, dict) and nonempty(e.get("name"))]


def _link_trace_ids(span: Any) -> list[str]:
    links = span.get("links")
    if not isinstance(links, list):
        return []
    out = []
    for link in links:
        hexid = hex_id(link.get("traceId"), ID_SIZES["traceId"]) if isinstance(link, dict) else None
        if hexid:
            out.append(hexid)
    return out


class JsonTraceView(JsonView):
    """OTLP JSON traces: resourceSpans / scopeSpans / spans."""

    RESOURCES = "resourceSpans"
    SCOPES = "scopeSpans"
    RECORDS = "spans"
    PLAIN_FIELDS: ClassVar[dict[str, str]] = {"name": "name", "trace_state": "traceState"}

    def scan_field(self, name: str) -> Getter:
        if name == SPAN_KIND:
            return _span_kind
        if name == SPAN_STATUS:
            return _span_status
        if name in _SPAN_IDS:
            key = _SPAN_IDS[name]
            size = ID_SIZES[key]
            return lambda span: hex_id(span.get(key), size)
        key = "traceState" if name == "trace_state" else name
        return lambda span: nonempty(span.get(key))

    def multi_field(self, name: str) -> Callable[[Any], list[str]] | None:
        if name == EVENT_NAME:
            return _event_names
        if name == LINK_TRACE_ID:
            return _link_trace_ids
        return None

    def typed_field(self, ctx: Ctx, name: str) -> Value | None:
        if name in ID_FIELDS:
            key = _SPAN_IDS[name]
            return id_bytes(ctx.record.get(key), ID_SIZES[key])
        many = self.multi_field(name)
        if many is not None:
            values = many(ctx.record)
            return values[0] if values else None
        value: Value | None = self.scan_field(name)(ctx.record)
        return value

    def trace_state(self, record: Any) -> str:
        value = member(record, "traceState")
        return value if isinstance(value, str) else ""

    def set_trace_state(self, record: Any, value: str) -> None:
        if not isinstance(record, dict) or not isinstance(record.get("traceState", ""), str | None):
            raise MalformedRecord("span or its traceState unreadable; not overwritten")
        record["traceState"] = value

    def trace_id(self, record: Any) -> bytes:
        return id_bytes(member(record, "traceId"), ID_SIZES["traceId"]) or b""
