"""The OTLP JSON view of logs: resourceLogs / scopeLogs / logRecords."""

from __future__ import annotations

from typing import Any, ClassVar

from sluice.policy.model import Selector, Source
from sluice.policy.view import Ctx, MalformedRecord, Value
from sluice.telemetry.otlp_json.attributes import (
    JsonObj,
    remove_attribute,
    rename_attribute,
    set_attribute,
    typed_any,
    writable,
)
from sluice.telemetry.otlp_json.fields import (
    ID_SIZES,
    ScanValue,
    body_value,
    hex_id,
    id_bytes,
    nonempty,
)
from sluice.telemetry.otlp_json.view import Getter, JsonView


def _body_scan(rec: Any) -> ScanValue | None:
    body = rec.get("body")
    return None if body is None else body_value(body)


_LOG_SCALARS = {"severity_text": "severityText", "event_name": "eventName"}
_LOG_IDS = {"trace_id": "traceId", "span_id": "spanId"}


class JsonLogView(JsonView):
    """OTLP JSON logs: resourceLogs / scopeLogs / logRecords."""

    RESOURCES = "resourceLogs"
    SCOPES = "scopeLogs"
    RECORDS = "logRecords"
    PLAIN_FIELDS: ClassVar[dict[str, str]] = _LOG_SCALARS
    HAS_BODY: ClassVar[bool] = True

    def scan_field(self, name: str) -> Getter:
        if name == "body":
            return _body_scan
        if name in _LOG_SCALARS:
            key = _LOG_SCALARS[name]
            return lambda rec: nonempty(rec.get(key))
        key = _LOG_IDS[name]
        size = ID_SIZES[key]
        return lambda rec: hex_id(rec.get(key), size)

    def typed_field(self, ctx: Ctx, name: str) -> Value | None:
        rec = ctx.record
        if name == "body":
            body = rec.get("body")
            if body is None or body == {}:
                return None
            value = typed_any(body)
            return None if value == "" else value
        if name in _LOG_SCALARS:
            return nonempty(rec.get(_LOG_SCALARS[name]))
        key = _LOG_IDS[name]
        return id_bytes(rec.get(key), ID_SIZES[key])

    def set_string(self, ctx: Ctx, selector: Selector, value: str) -> None:
        if not isinstance(ctx.record, dict):
            raise MalformedRecord("record is not an object")
        if selector.source is Source.FIELD:
            name = selector.name
            if name == "body":
                ctx.record["body"] = {"stringValue": value}
            elif name in _LOG_SCALARS:
                ctx.record[_LOG_SCALARS[name]] = value
            elif name in _LOG_IDS:
                ctx.record[_LOG_IDS[name]] = _valid_hex(value, 16 if name == "trace_id" else 8)
            elif name == "resource_schema_url":
                ctx.resource["schemaUrl"] = value
            elif name == "scope_schema_url":
                ctx.scope["schemaUrl"] = value
            return
        holder = self._writable_holder(ctx, selector.source)
        set_attribute(holder, selector.path, {"stringValue": value})

    def _writable_holder(self, ctx: Ctx, source: Source) -> JsonObj:
        if source is Source.RESOURCE_ATTRIBUTE:
            key, container = "resource", ctx.resource
        elif source is Source.SCOPE_ATTRIBUTE:
            key, container = "scope", ctx.scope
        else:
            return ctx.record  # type: ignore[no-any-return]
        if not isinstance(container.get(key), dict):
            writable(container.get(key), key)
            container[key] = {}
        return container[key]  # type: ignore[no-any-return]

    def remove(self, ctx: Ctx, selector: Selector) -> bool:
        if selector.source is Source.FIELD:
            if self.get(ctx, selector) is None:
                return False  # absent (or empty): nothing to change
            name = selector.name
            if name == "body":
                ctx.record.pop("body", None)
            elif name in _LOG_SCALARS:
                ctx.record[_LOG_SCALARS[name]] = ""
            elif name in _LOG_IDS:
                ctx.record[_LOG_IDS[name]] = ""
            elif name == "resource_schema_url":
                ctx.resource["schemaUrl"] = ""
            elif name == "scope_schema_url":
                ctx.scope["schemaUrl"] = ""
            return True
        holder = self._holder(ctx, selector.source)
        return isinstance(holder, dict) and remove_attribute(holder, selector.path)

    def rename(self, ctx: Ctx, source: Selector, to: str, upsert: bool) -> bool:
        if source.source is Source.FIELD:
            return False
        holder = self._holder(ctx, source.source)
        return isinstance(holder, dict) and rename_attribute(holder, source.path, to, upsert)


def _valid_hex(value: str, size: int) -> str:
    try:
        raw = bytes.fromhex(value)
    except ValueError:
        return ""
    return raw.hex() if len(raw) == size else ""
