"""Record views over OTLP JSON export requests (decoded with :func:`json.loads`).

The documents are edited in place and written back with the same OTLP
camelCase keys, so a record no policy touched comes out exactly as it came in.
Ids are lowercase hex strings; enums may be names or numbers; 64-bit integers
may be strings.

Reading is total: a document of any shape is read without raising, so one
malformed value never switches filtering off for the rest of a request. A
value of the wrong JSON type reads as absent, an AnyValue of the wrong shape
(a body or attribute value that is not an object, a ``stringValue`` that is
not a string) as present without text, an attribute entry that is not an
object with a string ``key`` is skipped (a missing ``key`` is the empty key,
as in the protobuf JSON mapping), and an ``attributes`` that is not a list
holds none. Only a record that is not an object is unreadable: the engine
keeps it as it came and counts it malformed. Edits never overwrite a value
they cannot read: such a record is kept unchanged and counted malformed.
"""

from __future__ import annotations

import base64
import binascii
import operator
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from sluice.policy import native
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
from sluice.policy.view import (
    PRESENT,
    Ctx,
    FieldReader,
    MalformedRecord,
    RecordView,
    Scan,
    Value,
    _Present,
)
from sluice.telemetry.reading import (
    FirstEntries,
    MultiGetter,
    dictionary_of,
    make_plan,
    matcher_of,
)

JsonObj = dict[str, Any]
ScanValue = str | _Present

# -- AnyValue and attribute lists -------------------------------------------------


def typed_any(av: Any) -> Value:
    """The typed view of an OTLP JSON AnyValue (an attribute's value); a variant
    of the wrong JSON type is present without a typed value."""
    if not isinstance(av, dict):
        return PRESENT
    if "stringValue" in av:
        s = av["stringValue"]
        return s if isinstance(s, str) else PRESENT
    if "boolValue" in av:
        flag = av["boolValue"]
        return flag if isinstance(flag, bool) else PRESENT
    if "intValue" in av:
        raw = av["intValue"]
        if isinstance(raw, bool) or not isinstance(raw, int | str):
            return PRESENT
        try:
            return int(raw)
        except ValueError:  # not decimal digits, or more digits than int() takes
            return PRESENT
    if "doubleValue" in av:
        raw = av["doubleValue"]
        if isinstance(raw, bool) or not isinstance(raw, int | float | str):
            return PRESENT
        try:
            return float(raw)
        except (ValueError, OverflowError):  # a word, or an integer past the double range
            return PRESENT
    if "bytesValue" in av:
        try:
            return base64.b64decode(av["bytesValue"])
        except (TypeError, ValueError, binascii.Error):
            return PRESENT
    return PRESENT


def scan_any(av: Any) -> ScanValue:
    """The scan view of an attribute value: its string if non-empty, else PRESENT."""
    if isinstance(av, dict):
        s = av.get("stringValue")
        if s and isinstance(s, str):
            return s
    return PRESENT


def _member(holder: Any, key: str) -> Any:
    """``holder[key]`` when `holder` is an object, else None."""
    return holder.get(key) if isinstance(holder, dict) else None


def _body_value(body: Any) -> ScanValue | None:
    """What a scan sees of a (not null) body AnyValue: its string when
    non-empty, None for an empty string or an empty AnyValue, else PRESENT."""
    if body.__class__ is dict:
        text = body.get("stringValue")
        if text.__class__ is str:
            return text or None
        return PRESENT if body else None
    return PRESENT


def _kvlist_values(value: Any) -> Any:
    if isinstance(value, dict):
        kvlist = value.get("kvlistValue")
        if isinstance(kvlist, dict):
            return kvlist.get("values")
    return None


def find_kv(kvs: Any, path: Sequence[str]) -> JsonObj | None:
    """The KeyValue at `path` (first entry per segment; inner segments walk kvlists)."""
    for depth, key in enumerate(path):
        if not isinstance(kvs, list):
            return None
        found = None
        for kv in kvs:
            if isinstance(kv, dict) and kv.get("key") == key:
                found = kv
                break
        if found is None:
            return None
        if depth == len(path) - 1:
            return found
        kvs = _kvlist_values(found.get("value"))
    return None


def _nested_hits(entries: tuple[tuple[Scan, tuple[str, ...]], ...], value: Any) -> tuple[int, ...]:
    """What an attribute's selectors that go deeper than its key (or share it)
    hit in its `value`."""
    hits: tuple[int, ...] = ()
    for scan, rest in entries:
        if rest:
            inner = find_kv(_kvlist_values(value), rest)
            if inner is None:
                continue
            found = scan(scan_any(inner.get("value")))
        else:
            found = scan(scan_any(value))
        if found:
            hits += found
    return hits


def _parent_list(holder: JsonObj, path: Sequence[str], create: bool) -> list[Any] | None:
    """The attribute list that holds the last segment of `path`; with `create`,
    missing intermediate kvlists are made (and a missing top list). An
    ``attributes`` or kvlist ``values`` that holds something other than a list
    is never replaced: creating through it raises :class:`MalformedRecord`."""
    kvs = holder.get("attributes")
    if not isinstance(kvs, list):
        if not create:
            return None
        _writable(kvs, "attributes")
        kvs = holder["attributes"] = []
    for key in path[:-1]:
        kv = find_kv(kvs, (key,))
        if kv is None:
            if not create:
                return None
            kv = {"key": key, "value": {"kvlistValue": {"values": []}}}
            kvs.append(kv)
        value = kv.get("value")
        inner = value.get("kvlistValue") if isinstance(value, dict) else None
        if not isinstance(inner, dict):
            if not create:
                return None
            inner = {"values": []}
            kv["value"] = {"kvlistValue": inner}
        if not isinstance(inner.get("values"), list):
            if not create:
                return None
            _writable(inner.get("values"), "values")
            inner["values"] = []
        kvs = inner["values"]
    return kvs


def _writable(present: Any, key: str) -> None:
    """Raise unless `present`, found where a list or object belongs, is absent."""
    if present is not None:
        raise MalformedRecord(f"{key} is not a list or object; not overwritten")


def set_attribute(holder: JsonObj, path: Sequence[str], value: JsonObj) -> None:
    kvs = _parent_list(holder, path, create=True)
    assert kvs is not None
    kv = find_kv(kvs, path[-1:])
    if kv is None:
        kvs.append({"key": path[-1], "value": value})
    else:
        kv["value"] = value


def remove_attribute(holder: JsonObj, path: Sequence[str]) -> bool:
    kvs = _parent_list(holder, path, create=False)
    if not kvs:
        return False
    key = path[-1]
    kept = [kv for kv in kvs if not (isinstance(kv, dict) and kv.get("key") == key)]
    if len(kept) == len(kvs):
        return False
    kvs[:] = kept
    return True


def rename_attribute(holder: JsonObj, path: Sequence[str], to: str, upsert: bool) -> bool:
    kvs = _parent_list(holder, path, create=False)
    source = find_kv(kvs, path[-1:]) if kvs else None
    if source is None or kvs is None:
        return False
    if to == path[-1]:
        return True
    target = find_kv(kvs, (to,))
    if target is not None and not upsert:
        return True
    value = source.get("value", {})
    if target is not None:
        target["value"] = value
    kvs[:] = [kv for kv in kvs if not (isinstance(kv, dict) and kv.get("key") == path[-1])]
    if target is None:
        kvs.append({"key": to, "value": value})
    return True


def _hex_id(raw: Any) -> str | None:
    if not raw or not isinstance(raw, str) or raw.strip("0") == "":
        return None
    return raw.lower()


def _id_bytes(raw: Any) -> bytes | None:
    if not raw or not isinstance(raw, str):
        return None
    try:
        value = bytes.fromhex(raw)
    except ValueError:
        return None
    return value if value.strip(b"\x00") else None


def _nonempty(raw: Any) -> str | None:
    return raw if raw and isinstance(raw, str) else None


def _enum_name(raw: Any, prefix: str, names: Sequence[str]) -> str | None:
    """Short lowercase name of an OTLP enum given as name or number (None for 0/unknown)."""
    if isinstance(raw, str):
        if raw.isdecimal():
            raw = int(raw)
        elif raw.startswith(prefix):
            name = raw[len(prefix) :].lower()
            return name if name in names else None
        else:
            return None
    if isinstance(raw, int) and not isinstance(raw, bool) and 0 < raw < len(names) + 1:
        return names[raw - 1]
    return None


def _empty(container: Any, key: str) -> bool:
    """Whether a container holds nothing under `key` (no list, or an empty one).
    A container that is not an object, or whose `key` holds something else, is
    not empty: it goes upstream as it came."""
    if not isinstance(container, dict):
        return False
    items = container.get(key)
    return items is None or (isinstance(items, list) and not items)


# -- the shared walking/reading machinery -------------------------------------------


Getter = Callable[[Any], Any]


_jsonread: Any = native.extension("sluice.telemetry._jsonread")
"""Reads a scope's records in one C call (see ``_jsonread.c``); None without."""


def _scanner(scan: Scan) -> tuple[Scan, dict[Any, tuple[int, ...]] | None]:
    return scan, dictionary_of(scan)


class _BatchReader:
    """A record reader (a :data:`FieldReader`) that also reads a scope's
    records in one C call; a record that call leaves to it is read by `one`."""

    def __init__(self, one: FieldReader, batch: Any):
        self.one = one
        self.batch = batch

    def __call__(self, record: Any) -> tuple[int, ...]:
        return self.one(record)

    def read_batch(
        self, records: Sequence[Any], prefix: tuple[int, ...] = ()
    ) -> list[tuple[int, ...] | None]:
        """Each record's hits after `prefix`, or None for a record to read
        with a call."""
        found: list[tuple[int, ...] | None] = self.batch.read(records, prefix)
        return found


class _JsonView(RecordView):
    """What the three OTLP JSON signals share: containers, attributes, reading."""

    RESOURCES: str
    SCOPES: str
    RECORDS: str

    def resources(self, batch: Any) -> Sequence[Any]:
        items = batch.get(self.RESOURCES) if isinstance(batch, dict) else None
        return [r for r in items if isinstance(r, dict)] if isinstance(items, list) else ()

    def scopes(self, resource: Any) -> Sequence[Any]:
        items = resource.get(self.SCOPES)
        return [s for s in items if isinstance(s, dict)] if isinstance(items, list) else ()

    def records(self, scope: Any) -> Sequence[Any]:
        items = scope.get(self.RECORDS)
        return items if isinstance(items, list) else ()

    def read_records(
        self, reader: FieldReader, records: Sequence[Any], prefix: tuple[int, ...] = ()
    ) -> Sequence[tuple[int, ...] | None] | None:
        return reader.read_batch(records, prefix) if isinstance(reader, _BatchReader) else None

    def remove_records(self, scope: Any, indexes: list[int]) -> None:
        gone = set(indexes)
        scope[self.RECORDS] = [r for i, r in enumerate(scope[self.RECORDS]) if i not in gone]

    def prune(self, batch: Any) -> bool:
        resources = batch.get(self.RESOURCES) if isinstance(batch, dict) else None
        if not isinstance(resources, list):
            return False
        changed = False
        for resource in resources:
            scopes = resource.get(self.SCOPES) if isinstance(resource, dict) else None
            if isinstance(scopes, list):
                kept = [s for s in scopes if not _empty(s, self.RECORDS)]
                if len(kept) != len(scopes):
                    resource[self.SCOPES] = kept
                    changed = True
        kept_resources = [r for r in resources if not _empty(r, self.SCOPES)]
        if len(kept_resources) != len(resources):
            batch[self.RESOURCES] = kept_resources
            changed = True
        return changed

    # Attribute holders: the object whose "attributes" list a source reads.
    def record_attribute_holder(self, record: Any) -> Any:
        return record

    def _holder(self, ctx: Ctx, source: Source) -> Any:
        if source is Source.RESOURCE_ATTRIBUTE:
            return ctx.resource.get("resource")
        if source is Source.SCOPE_ATTRIBUTE:
            return ctx.scope.get("scope")
        return self.record_attribute_holder(ctx.record)

    # Per-signal field tables: scan getter and typed getter, by field name.
    def scan_field(self, name: str) -> Getter:
        raise NotImplementedError(name)

    def multi_field(self, name: str) -> Callable[[Any], list[str]] | None:
        return None

    def typed_field(self, ctx: Ctx, name: str) -> Value | None:
        raise NotImplementedError(name)

    def _multi(self, selector: Selector) -> MultiGetter | None:
        if selector.source is Source.EVENT_ATTRIBUTE:
            return _event_attribute_values(selector.path)
        return self.multi_field(selector.name)

    PLAIN_FIELDS: ClassVar[dict[str, str]] = {}
    """Record fields that are plain JSON strings, by selector name -> JSON key."""

    def _plain_key(self, selector: Selector) -> str | None:
        if selector.level is Level.RESOURCE or selector.name == "scope_schema_url":
            return "schemaUrl"
        return self.PLAIN_FIELDS.get(selector.name)

    def reader(self, fields: Sequence[tuple[Scan, Selector]]) -> FieldReader:
        plan = make_plan(fields, self._multi)
        multi, index = plan.multi, plan.index
        body_scan: Scan | None = None
        plain: list[tuple[Scan, str]] = []
        getters: list[tuple[Scan, Getter]] = []
        for scan, selector in plan.fields:
            key = self._plain_key(selector)
            if selector.name == "body" and isinstance(self, JsonLogView):
                body_scan = scan
            elif key is not None:
                plain.append((scan, key))
            else:
                getters.append((scan, self.container_getter(selector)))
        source = plan.attribute_source
        attrs_of = self._attrs_getter(source) if source else None

        def read(container: Any) -> tuple[int, ...]:
            if container.__class__ is not dict:
                raise MalformedRecord("record is not an object")
            hits: tuple[int, ...] = ()
            if body_scan is not None:
                body = container.get("body")
                if body is not None:
                    seen = _body_value(body)
                    if seen is not None:
                        found = body_scan(seen)
                        if found:
                            hits += found
            for scan, key in plain:
                value = container.get(key)
                if value.__class__ is str and value:
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
            kvs = attrs_of(container) if attrs_of is not None else None
            if kvs.__class__ is list and kvs:
                entries: FirstEntries | None = None
                for kv in kvs:
                    if kv.__class__ is not dict:
                        continue
                    name = kv.get("key")
                    if name.__class__ is not str:
                        continue
                    entry = index.get(name)
                    if entry is None:
                        continue
                    if entries is None:
                        entries = FirstEntries()
                    if not entries.add(name):  # only the first entry of a key counts
                        continue
                    value = kv.get("value")
                    if entry.__class__ is not tuple:
                        found = entry(scan_any(value))  # type: ignore[operator]
                    else:
                        found = _nested_hits(entry, value)
                    if found:
                        hits += found
            return hits

        if _jsonread is None:
            return read
        batch = _jsonread.Reader(
            None if body_scan is None else _scanner(body_scan),
            tuple((key, *_scanner(scan)) for scan, key in plain),
            tuple((get, *_scanner(scan)) for scan, get in getters),
            tuple((many, *_scanner(scan)) for scan, many in multi),
            self._attrs_key(source) or attrs_of,
            {
                key: (None, entry) if entry.__class__ is tuple else _scanner(entry)  # type: ignore[arg-type]
                for key, entry in index.items()
            },
            _nested_hits,
            PRESENT,
            matcher_of(body_scan),
        )
        return _BatchReader(read, batch)

    def _attrs_key(self, source: Source | None) -> str | None:
        """The member of a record that holds the attributes `source` reads,
        when they are the record's own."""
        if source is Source.ATTRIBUTE and (
            type(self).record_attribute_holder is _JsonView.record_attribute_holder
        ):
            return "attributes"
        return None

    def _attrs_getter(self, source: Source) -> Callable[[Any], Any]:
        if source is Source.RESOURCE_ATTRIBUTE:
            return lambda res: _member(res.get("resource"), "attributes")
        if source is Source.SCOPE_ATTRIBUTE:
            return lambda scope: _member(scope.get("scope"), "attributes")
        key = self._attrs_key(source)
        if key is not None:
            return operator.methodcaller("get", key)
        holder = self.record_attribute_holder
        return lambda rec: _member(holder(rec), "attributes")

    def container_getter(self, sel: Selector) -> Getter:
        if sel.level is Level.RESOURCE or sel.name == "scope_schema_url":
            return lambda c: _nonempty(c.get("schemaUrl"))
        if sel.name in ("scope_name", "scope_version"):
            key = sel.name[len("scope_") :]
            return lambda c: _nonempty(_member(c.get("scope"), key))
        return self.scan_field(sel.name)

    def get(self, ctx: Ctx, selector: Selector) -> Value | None:
        if not isinstance(ctx.record, dict):
            raise MalformedRecord("record is not an object")
        if selector.source is Source.FIELD:
            name = selector.name
            if name == "resource_schema_url":
                return _nonempty(ctx.resource.get("schemaUrl"))
            if name == "scope_schema_url":
                return _nonempty(ctx.scope.get("schemaUrl"))
            if name in ("scope_name", "scope_version"):
                return _nonempty(_member(ctx.scope.get("scope"), name[len("scope_") :]))
            return self.typed_field(ctx, name)
        if selector.source is Source.EVENT_ATTRIBUTE:
            values = self.values(ctx, selector)
            return values[0] if values else None
        holder = self._holder(ctx, selector.source)
        kv = find_kv(holder.get("attributes") if isinstance(holder, dict) else None, selector.path)
        return None if kv is None else typed_any(kv.get("value"))

    def values(self, ctx: Ctx, selector: Selector) -> Sequence[Value]:
        if selector.source is not Source.EVENT_ATTRIBUTE:
            return super().values(ctx, selector)
        found: list[Value] = []
        for event in _events(ctx.record):
            kv = find_kv(_member(event, "attributes"), selector.path)
            if kv is not None:
                found.append(typed_any(kv.get("value")))
        return found


def _events(span: Any) -> list[Any]:
    events = span.get("events") if isinstance(span, dict) else None
    return events if isinstance(events, list) else []


def _event_attribute_values(path: tuple[str, ...]) -> Callable[[Any], list[ScanValue]]:
    def values(span: Any) -> list[ScanValue]:
        out: list[ScanValue] = []
        for event in _events(span):
            kv = find_kv(_member(event, "attributes"), path)
            if kv is not None:
                out.append(scan_any(kv.get("value")))
        return out

    return values


# -- logs -------------------------------------------------------------------------


def _body_scan(rec: Any) -> ScanValue | None:
    body = rec.get("body")
    return None if body is None else _body_value(body)


_LOG_SCALARS = {"severity_text": "severityText", "event_name": "eventName"}
_LOG_IDS = {"trace_id": "traceId", "span_id": "spanId"}


class JsonLogView(_JsonView):
    """OTLP JSON logs: resourceLogs / scopeLogs / logRecords."""

    RESOURCES = "resourceLogs"
    SCOPES = "scopeLogs"
    RECORDS = "logRecords"
    PLAIN_FIELDS: ClassVar[dict[str, str]] = _LOG_SCALARS

    def scan_field(self, name: str) -> Getter:
        if name == "body":
            return _body_scan
        if name in _LOG_SCALARS:
            key = _LOG_SCALARS[name]
            return lambda rec: _nonempty(rec.get(key))
        key = _LOG_IDS[name]
        return lambda rec: _hex_id(rec.get(key))

    def typed_field(self, ctx: Ctx, name: str) -> Value | None:
        rec = ctx.record
        if name == "body":
            body = rec.get("body")
            if body is None or body == {}:
                return None
            value = typed_any(body)
            return None if value == "" else value
        if name in _LOG_SCALARS:
            return _nonempty(rec.get(_LOG_SCALARS[name]))
        return _id_bytes(rec.get(_LOG_IDS[name]))

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
            _writable(container.get(key), key)
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


# -- metrics ----------------------------------------------------------------------

_METRIC_DATA = (
    ("gauge", "gauge"),
    ("sum", "sum"),
    ("histogram", "histogram"),
    ("exponentialHistogram", "exponential_histogram"),
    ("summary", "summary"),
)
_TEMPORALITIES = ("delta", "cumulative")


def metric_data(metric: Any) -> tuple[str, Any] | tuple[None, None]:
    for key, name in _METRIC_DATA:
        data = metric.get(key)
        if isinstance(data, dict):
            return name, data
    return None, None


def _metric_type(metric: Any) -> str | None:
    return metric_data(metric)[0]


def _temporality(metric: Any) -> str | None:
    name, data = metric_data(metric)
    if data is None or name not in ("sum", "histogram", "exponential_histogram"):
        return None
    return _enum_name(
        data.get("aggregationTemporality"), "AGGREGATION_TEMPORALITY_", _TEMPORALITIES
    )


def _first_datapoint(metric: Any) -> Any:
    _, data = metric_data(metric)
    points = data.get("dataPoints") if data is not None else None
    return (
        points[0] if isinstance(points, list) and points and isinstance(points[0], dict) else None
    )


class JsonMetricView(_JsonView):
    """OTLP JSON metrics: one record per metric; datapoint attributes come from
    the metric's first data point."""

    RESOURCES = "resourceMetrics"
    SCOPES = "scopeMetrics"
    RECORDS = "metrics"
    PLAIN_FIELDS: ClassVar[dict[str, str]] = {
        "name": "name",
        "description": "description",
        "unit": "unit",
    }

    def record_attribute_holder(self, record: Any) -> Any:
        return _first_datapoint(record)

    def scan_field(self, name: str) -> Getter:
        if name == METRIC_TYPE:
            return _metric_type
        if name == TEMPORALITY:
            return _temporality
        return lambda metric: _nonempty(metric.get(name))

    def typed_field(self, ctx: Ctx, name: str) -> Value | None:
        value: Value | None = self.scan_field(name)(ctx.record)
        return value


# -- traces -----------------------------------------------------------------------

_SPAN_KINDS = ("internal", "server", "client", "producer", "consumer")
_STATUS = ("ok", "error")
_SPAN_IDS = {"trace_id": "traceId", "span_id": "spanId", "parent_span_id": "parentSpanId"}


def _span_kind(span: Any) -> str | None:
    return _enum_name(span.get("kind"), "SPAN_KIND_", _SPAN_KINDS)


def _span_status(span: Any) -> str:
    status = span.get("status")
    code = status.get("code") if isinstance(status, dict) else None
    return _enum_name(code, "STATUS_CODE_", _STATUS) or "unset"


def _event_names(span: Any) -> list[str]:
    events = span.get("events")
    if not isinstance(events, list):
        return []
    return [e["name"] for e in events if isinstance(e, dict) and _nonempty(e.get("name"))]


def _link_trace_ids(span: Any) -> list[str]:
    links = span.get("links")
    if not isinstance(links, list):
        return []
    out = []
    for link in links:
        hexid = _hex_id(link.get("traceId")) if isinstance(link, dict) else None
        if hexid:
            out.append(hexid)
    return out


class JsonTraceView(_JsonView):
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
            return lambda span: _hex_id(span.get(key))
        key = "traceState" if name == "trace_state" else name
        return lambda span: _nonempty(span.get(key))

    def multi_field(self, name: str) -> Callable[[Any], list[str]] | None:
        if name == EVENT_NAME:
            return _event_names
        if name == LINK_TRACE_ID:
            return _link_trace_ids
        return None

    def typed_field(self, ctx: Ctx, name: str) -> Value | None:
        if name in ID_FIELDS:
            return _id_bytes(ctx.record.get(_SPAN_IDS[name]))
        many = self.multi_field(name)
        if many is not None:
            values = many(ctx.record)
            return values[0] if values else None
        value: Value | None = self.scan_field(name)(ctx.record)
        return value

    def trace_state(self, record: Any) -> str:
        value = _member(record, "traceState")
        return value if isinstance(value, str) else ""

    def set_trace_state(self, record: Any, value: str) -> None:
        if not isinstance(record, dict) or not isinstance(record.get("traceState", ""), str | None):
            raise MalformedRecord("span or its traceState unreadable; not overwritten")
        record["traceState"] = value

    def trace_id(self, record: Any) -> bytes:
        return _id_bytes(_member(record, "traceId")) or b""


# -- signal dispatch ----------------------------------------------------------------

_VIEWS: dict[Signal, RecordView] = {
    Signal.LOG: JsonLogView(),
    Signal.METRIC: JsonMetricView(),
    Signal.TRACE: JsonTraceView(),
}
_TOP_KEYS = (
    ("resourceLogs", Signal.LOG),
    ("resourceMetrics", Signal.METRIC),
    ("resourceSpans", Signal.TRACE),
)


def json_view(signal: Signal) -> RecordView:
    """The OTLP JSON view of a signal (views hold no state; one each is shared)."""
    return _VIEWS[signal]


def detect_signal(doc: Any) -> Signal | None:
    """The signal of an export request, from its first top-level key."""
    if isinstance(doc, dict):
        for key in doc:
            for top, signal in _TOP_KEYS:
                if key == top:
                    return signal
    return None
