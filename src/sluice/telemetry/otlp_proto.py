"""Record views over decoded OTLP protobuf export requests.

The messages (``opentelemetry-proto``'s generated classes) are read and
edited in place; nothing is converted to JSON. Ids are raw bytes, enums are
numbers.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

from sluice.policy.model import (
    EVENT_NAME,
    ID_FIELDS,
    LINK_TRACE_ID,
    METRIC_TYPE,
    SPAN_KIND,
    SPAN_STATUS,
    TEMPORALITY,
    Level,
    Selector,
    Signal,
    Source,
)
from sluice.policy.view import PRESENT, Ctx, FieldReader, RecordView, Scan, Value, _Present
from sluice.telemetry.reading import AttributeEntries, FirstEntries, MultiGetter, make_plan

ScanValue = str | _Present
Getter = Callable[[Any], Any]
RawScan = Callable[[Sequence[bytes], tuple[int, ...]], tuple[int, ...]]


def typed_any(av: Any) -> Value:
    """The typed view of an AnyValue message (unset or array/kvlist: PRESENT)."""
    kind = av.WhichOneof("value")
    if kind == "string_value":
        return str(av.string_value)
    if kind in ("bool_value", "int_value", "double_value", "bytes_value"):
        value: Value = getattr(av, kind)
        return value
    return PRESENT


def scan_any(av: Any) -> ScanValue:
    s = av.string_value
    return s if s else PRESENT


def find_kv(kvs: Any, path: Sequence[str]) -> Any:
    """The KeyValue at `path` (first entry per segment; inner segments walk kvlists)."""
    for depth, key in enumerate(path):
        found = None
        for kv in kvs:
            if kv.key == key:
                found = kv
                break
        if found is None:
            return None
        if depth == len(path) - 1:
            return found
        if found.value.WhichOneof("value") != "kvlist_value":
            return None
        kvs = found.value.kvlist_value.values
    return None


def _parent_list(kvs: Any, path: Sequence[str], create: bool) -> Any:
    for key in path[:-1]:
        kv = find_kv(kvs, (key,))
        if kv is None:
            if not create:
                return None
            kv = kvs.add(key=key)
        if kv.value.WhichOneof("value") != "kvlist_value":
            if not create:
                return None
            kv.value.kvlist_value.SetInParent()
        kvs = kv.value.kvlist_value.values
    return kvs


def set_attribute(kvs: Any, path: Sequence[str], value: str) -> None:
    parent = _parent_list(kvs, path, create=True)
    kv = find_kv(parent, path[-1:])
    if kv is None:
        kv = parent.add(key=path[-1])
    kv.value.string_value = value


def _delete_key(kvs: Any, key: str) -> bool:
    removed = False
    for i in range(len(kvs) - 1, -1, -1):
        if kvs[i].key == key:
            del kvs[i]
            removed = True
    return removed


def remove_attribute(kvs: Any, path: Sequence[str]) -> bool:
    parent = _parent_list(kvs, path, create=False)
    return parent is not None and _delete_key(parent, path[-1])


def rename_attribute(kvs: Any, path: Sequence[str], to: str, upsert: bool) -> bool:
    parent = _parent_list(kvs, path, create=False)
    source = find_kv(parent, path[-1:]) if parent is not None else None
    if source is None:
        return False
    if to == path[-1]:
        return True
    target = find_kv(parent, (to,))
    if target is not None and not upsert:
        return True
    value = type(source.value)()
    value.CopyFrom(source.value)
    if target is not None:
        target.value.CopyFrom(value)
    _delete_key(parent, path[-1])
    if target is None:
        parent.add(key=to).value.CopyFrom(value)
    return True


def hex_id(raw: bytes) -> str | None:
    """Lowercase hex of an id; None when empty or all zero."""
    return raw.hex() if raw and raw.strip(b"\x00") else None


def _id(raw: bytes) -> bytes | None:
    return raw if raw and raw.strip(b"\x00") else None


def _nonempty(value: str) -> str | None:
    return value or None


class _ProtoView(RecordView):
    """What the three OTLP protobuf signals share."""

    RESOURCES: str
    SCOPES: str
    RECORDS: str

    def resources(self, batch: Any) -> Sequence[Any]:
        return getattr(batch, self.RESOURCES)  # type: ignore[no-any-return]

    def scopes(self, resource: Any) -> Sequence[Any]:
        return getattr(resource, self.SCOPES)  # type: ignore[no-any-return]

    def records(self, scope: Any) -> Sequence[Any]:
        return getattr(scope, self.RECORDS)  # type: ignore[no-any-return]

    def remove_records(self, scope: Any, indexes: list[int]) -> None:
        records = getattr(scope, self.RECORDS)
        for index in reversed(indexes):
            del records[index]

    def prune(self, batch: Any) -> bool:
        changed = False
        resources = getattr(batch, self.RESOURCES)
        for r in range(len(resources) - 1, -1, -1):
            scopes = getattr(resources[r], self.SCOPES)
            for s in range(len(scopes) - 1, -1, -1):
                if not len(getattr(scopes[s], self.RECORDS)):
                    del scopes[s]
                    changed = True
            if not len(scopes):
                del resources[r]
                changed = True
        return changed

    def record_attributes(self, record: Any) -> Any:
        return record.attributes

    def _attributes(self, ctx: Ctx, source: Source) -> Any:
        if source is Source.RESOURCE_ATTRIBUTE:
            return ctx.resource.resource.attributes
        if source is Source.SCOPE_ATTRIBUTE:
            return ctx.scope.scope.attributes
        return self.record_attributes(ctx.record)

    def scan_field(self, name: str) -> Getter:
        raise NotImplementedError(name)

    def multi_field(self, name: str) -> Callable[[Any], list[str]] | None:
        return None

    def typed_field(self, ctx: Ctx, name: str) -> Value | None:
        value: Value | None = self.scan_field(name)(ctx.record)
        return value

    def container_getter(self, sel: Selector) -> Getter:
        if sel.level is Level.RESOURCE or sel.name == "scope_schema_url":
            return lambda c: _nonempty(c.schema_url)
        if sel.name == "scope_name":
            return lambda c: _nonempty(c.scope.name)
        if sel.name == "scope_version":
            return lambda c: _nonempty(c.scope.version)
        return self.scan_field(sel.name)

    def _multi(self, selector: Selector) -> MultiGetter | None:
        if selector.source is Source.EVENT_ATTRIBUTE:
            return _event_attribute_values(selector.path)
        return self.multi_field(selector.name)

    PLAIN_FIELDS: frozenset[str] = frozenset()
    """Record fields that are plain string fields of the message, by name."""

    def _plain_attribute(self, selector: Selector) -> str | None:
        if selector.level is Level.RESOURCE or selector.name == "scope_schema_url":
            return "schema_url"
        return selector.name if selector.name in self.PLAIN_FIELDS else None

    def reader(self, fields: Sequence[tuple[Scan, Selector]]) -> FieldReader:
        plan = make_plan(fields, self._multi)
        multi, index = plan.multi, plan.index
        body_scan: Scan | None = None
        plain: list[tuple[Scan, Callable[[Any], str]]] = []
        getters: list[tuple[Scan, Getter]] = []
        for scan, selector in plan.fields:
            name = self._plain_attribute(selector)
            if selector.name == "body" and isinstance(self, ProtoLogView):
                body_scan = scan
            elif name is not None:
                plain.append((scan, operator.attrgetter(name)))
            else:
                getters.append((scan, self.container_getter(selector)))
        raw_scan = (
            self.raw_attribute_scanner(index) if plan.attribute_source is Source.ATTRIBUTE else None
        )
        attrs_of = (
            self._attrs_getter(plan.attribute_source)
            if plan.attribute_source and raw_scan is None
            else None
        )

        def read(container: Any) -> tuple[int, ...]:
            hits: tuple[int, ...] = ()
            if body_scan is not None:
                # A non-empty string body (the common case) answers without the
                # slower HasField/WhichOneof calls.
                value = container.body.string_value or _body_scan(container)
                if value is not None:
                    found = body_scan(value)
                    if found:
                        hits += found
            for scan, get_text in plain:
                value = get_text(container)
                if value:
                    found = scan(value)
                    if found:
                        hits += found
            for scan, get in getters:
                value = get(container)
                if value is not None:
                    found = scan(value)
                    if found:
                        hits += found
            for scan, many in multi:
                for value in many(container):
                    found = scan(value)
                    if found:
                        hits += found
            if raw_scan is not None:
                return raw_scan(container.attributes, hits)
            if attrs_of is not None:
                entries: FirstEntries | None = None
                for kv in attrs_of(container):
                    key = kv.key
                    entry = index.get(key)
                    if entry is None:
                        continue
                    if entries is None:
                        entries = FirstEntries()
                    if not entries.add(key):  # only the first entry of a key counts
                        continue
                    value = kv.value
                    if entry.__class__ is not tuple:
                        found = entry(value.string_value or PRESENT)  # type: ignore[operator]
                        if found:
                            hits += found
                        continue
                    for scan, rest in entry:
                        if not rest:
                            found = scan(scan_any(value))
                        elif value.WhichOneof("value") == "kvlist_value":
                            inner = find_kv(value.kvlist_value.values, rest)
                            if inner is None:
                                continue
                            found = scan(scan_any(inner.value))
                        else:
                            continue
                        if found:
                            hits += found
            return hits

        return read

    def raw_attribute_scanner(self, index: dict[str, AttributeEntries]) -> RawScan | None:
        """For records whose attributes are raw KeyValue bytes: what scans them
        (see :mod:`sluice.telemetry.otlp_raw`). None: they are messages."""
        return None

    def _attrs_getter(self, source: Source) -> Callable[[Any], Any]:
        if source is Source.RESOURCE_ATTRIBUTE:
            return lambda res: res.resource.attributes
        if source is Source.SCOPE_ATTRIBUTE:
            return lambda scope: scope.scope.attributes
        if type(self).record_attributes is _ProtoView.record_attributes:
            return operator.attrgetter("attributes")  # C-level, no method call per record
        return self.record_attributes

    def get(self, ctx: Ctx, selector: Selector) -> Value | None:
        if selector.source is Source.FIELD:
            name = selector.name
            if name == "resource_schema_url":
                return _nonempty(ctx.resource.schema_url)
            if name == "scope_schema_url":
                return _nonempty(ctx.scope.schema_url)
            if name == "scope_name":
                return _nonempty(ctx.scope.scope.name)
            if name == "scope_version":
                return _nonempty(ctx.scope.scope.version)
            return self.typed_field(ctx, name)
        if selector.source is Source.EVENT_ATTRIBUTE:
            values = self.values(ctx, selector)
            return values[0] if values else None
        kvs = self._attributes(ctx, selector.source)
        kv = find_kv(kvs, selector.path) if kvs is not None else None
        return None if kv is None else typed_any(kv.value)

    def values(self, ctx: Ctx, selector: Selector) -> Sequence[Value]:
        if selector.source is not Source.EVENT_ATTRIBUTE:
            return super().values(ctx, selector)
        found: list[Value] = []
        for event in ctx.record.events:
            kv = find_kv(event.attributes, selector.path)
            if kv is not None:
                found.append(typed_any(kv.value))
        return found


def _event_attribute_values(path: tuple[str, ...]) -> Callable[[Any], list[ScanValue]]:
    def values(span: Any) -> list[ScanValue]:
        out: list[ScanValue] = []
        for event in span.events:
            kv = find_kv(event.attributes, path)
            if kv is not None:
                out.append(scan_any(kv.value))
        return out

    return values


# -- logs -------------------------------------------------------------------------


def body_scan_value(body: Any) -> ScanValue | None:
    """What a scan sees of a body AnyValue: its string when non-empty, PRESENT
    for another value, None for an empty string or no value."""
    kind = body.WhichOneof("value")
    if kind == "string_value":
        return body.string_value or None
    return None if kind is None else PRESENT


def _body_scan(rec: Any) -> ScanValue | None:
    return body_scan_value(rec.body) if rec.HasField("body") else None


class ProtoLogView(_ProtoView):
    """ExportLogsServiceRequest: resource_logs / scope_logs / log_records."""

    RESOURCES = "resource_logs"
    SCOPES = "scope_logs"
    RECORDS = "log_records"
    PLAIN_FIELDS = frozenset({"severity_text", "event_name"})

    def scan_field(self, name: str) -> Getter:
        if name == "body":
            return _body_scan
        if name in ID_FIELDS:
            return lambda rec: hex_id(getattr(rec, name))
        return lambda rec: _nonempty(getattr(rec, name))

    def typed_field(self, ctx: Ctx, name: str) -> Value | None:
        rec = ctx.record
        if name == "body":
            if not rec.HasField("body") or rec.body.WhichOneof("value") is None:
                return None
            value = typed_any(rec.body)
            return None if value == "" else value
        if name in ID_FIELDS:
            return _id(getattr(rec, name))
        return _nonempty(getattr(rec, name))

    def set_string(self, ctx: Ctx, selector: Selector, value: str) -> None:
        if selector.source is Source.FIELD:
            name = selector.name
            if name == "body":
                ctx.record.body.string_value = value
            elif name in ID_FIELDS:
                setattr(ctx.record, name, _id_from_hex(value, 16 if name == "trace_id" else 8))
            elif name == "resource_schema_url":
                ctx.resource.schema_url = value
            elif name == "scope_schema_url":
                ctx.scope.schema_url = value
            else:
                setattr(ctx.record, name, value)
            return
        set_attribute(self._attributes(ctx, selector.source), selector.path, value)

    def remove(self, ctx: Ctx, selector: Selector) -> bool:
        if selector.source is Source.FIELD:
            if self.get(ctx, selector) is None:
                return False  # absent (or empty): nothing to change
            name = selector.name
            if name == "body":
                ctx.record.ClearField("body")
            elif name == "resource_schema_url":
                ctx.resource.schema_url = ""
            elif name == "scope_schema_url":
                ctx.scope.schema_url = ""
            else:
                ctx.record.ClearField(name)
            return True
        return remove_attribute(self._attributes(ctx, selector.source), selector.path)

    def rename(self, ctx: Ctx, source: Selector, to: str, upsert: bool) -> bool:
        if source.source is Source.FIELD:
            return False
        return rename_attribute(self._attributes(ctx, source.source), source.path, to, upsert)


def _id_from_hex(value: str, size: int) -> bytes:
    try:
        raw = bytes.fromhex(value)
    except ValueError:
        return b""
    return raw if len(raw) == size else b""


# -- metrics ----------------------------------------------------------------------

_METRIC_TYPES = {
    "gauge": "gauge",
    "sum": "sum",
    "histogram": "histogram",
    "exponential_histogram": "exponential_histogram",
    "summary": "summary",
}
_TEMPORALITIES = {1: "delta", 2: "cumulative"}
_EMPTY: tuple[Any, ...] = ()


def _metric_type(metric: Any) -> str | None:
    kind = metric.WhichOneof("data")
    return _METRIC_TYPES.get(kind) if kind else None


def _temporality(metric: Any) -> str | None:
    kind = metric.WhichOneof("data")
    if kind not in ("sum", "histogram", "exponential_histogram"):
        return None
    return _TEMPORALITIES.get(getattr(metric, kind).aggregation_temporality)


def _first_point_attributes(metric: Any) -> Any:
    kind = metric.WhichOneof("data")
    if kind is None:
        return _EMPTY
    points = getattr(metric, kind).data_points
    return points[0].attributes if len(points) else _EMPTY


class ProtoMetricView(_ProtoView):
    """ExportMetricsServiceRequest: one record per metric; datapoint attributes
    come from the first data point."""

    RESOURCES = "resource_metrics"
    SCOPES = "scope_metrics"
    RECORDS = "metrics"
    PLAIN_FIELDS = frozenset({"name", "description", "unit"})

    def record_attributes(self, record: Any) -> Any:
        return _first_point_attributes(record)

    def scan_field(self, name: str) -> Getter:
        if name == METRIC_TYPE:
            return _metric_type
        if name == TEMPORALITY:
            return _temporality
        return lambda metric: _nonempty(getattr(metric, name))


# -- traces -----------------------------------------------------------------------

_SPAN_KINDS = {1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}
_STATUS = {1: "ok", 2: "error"}


def _event_names(span: Any) -> list[str]:
    return [e.name for e in span.events if e.name]


def _link_trace_ids(span: Any) -> list[str]:
    return [h for h in (hex_id(link.trace_id) for link in span.links) if h]


class ProtoTraceView(_ProtoView):
    """ExportTraceServiceRequest: resource_spans / scope_spans / spans."""

    RESOURCES = "resource_spans"
    SCOPES = "scope_spans"
    RECORDS = "spans"
    PLAIN_FIELDS = frozenset({"name", "trace_state"})

    def scan_field(self, name: str) -> Getter:
        if name == SPAN_KIND:
            return lambda span: _SPAN_KINDS.get(span.kind)
        if name == SPAN_STATUS:
            return lambda span: _STATUS.get(span.status.code, "unset")
        if name in ID_FIELDS:
            return lambda span: hex_id(getattr(span, name))
        return lambda span: _nonempty(getattr(span, name))

    def multi_field(self, name: str) -> Callable[[Any], list[str]] | None:
        if name == EVENT_NAME:
            return _event_names
        if name == LINK_TRACE_ID:
            return _link_trace_ids
        return None

    def typed_field(self, ctx: Ctx, name: str) -> Value | None:
        if name in ID_FIELDS:
            return _id(getattr(ctx.record, name))
        many = self.multi_field(name)
        if many is not None:
            values = many(ctx.record)
            return values[0] if values else None
        value: Value | None = self.scan_field(name)(ctx.record)
        return value

    def trace_state(self, record: Any) -> str:
        return str(record.trace_state)

    def set_trace_state(self, record: Any, value: str) -> None:
        record.trace_state = value

    def trace_id(self, record: Any) -> bytes:
        return _id(record.trace_id) or b""


_VIEWS: dict[Signal, RecordView] = {
    Signal.LOG: ProtoLogView(),
    Signal.METRIC: ProtoMetricView(),
    Signal.TRACE: ProtoTraceView(),
}


def proto_view(signal: Signal) -> RecordView:
    """The OTLP protobuf view of a signal (stateless; one each is shared)."""
    return _VIEWS[signal]
