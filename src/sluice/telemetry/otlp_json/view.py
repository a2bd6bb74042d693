"""What the three OTLP JSON views share: walking a request's containers,
reading the fields policies scan (a scope's records in one C call, see
``_jsonread.c``), reading typed values, and pruning what a decision emptied."""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from sluice.policy import native
from sluice.policy.model import Level, Selector, Source
from sluice.policy.view import (
    PRESENT,
    Ctx,
    FieldReader,
    MalformedRecord,
    RecordView,
    Scan,
    Value,
)
from sluice.telemetry.otlp_json.attributes import find_kv, nested_hits, scan_any, typed_any
from sluice.telemetry.otlp_json.fields import ScanValue, body_value, member, nonempty
from sluice.telemetry.reading import (
    FirstEntries,
    MultiGetter,
    dictionary_of,
    make_plan,
    matcher_of,
)

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


def _empty(container: Any, key: str) -> bool:
    """Whether a container holds nothing under `key` (no list, or an empty one).
    A container that is not an object, or whose `key` holds something else, is
    not empty: it goes upstream as it came."""
    if not isinstance(container, dict):
        return False
    items = container.get(key)
    return items is None or (isinstance(items, list) and not items)


class JsonView(RecordView):
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
            return event_attribute_values(selector.path)
        return self.multi_field(selector.name)

    PLAIN_FIELDS: ClassVar[dict[str, str]] = {}
    """Record fields that are plain JSON strings, by selector name -> JSON key."""

    HAS_BODY: ClassVar[bool] = False
    """Whether records have a body (an AnyValue the C reader scans first)."""

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
            if selector.name == "body" and self.HAS_BODY:
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
                    seen = body_value(body)
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
                        found = nested_hits(entry, value)
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
            nested_hits,
            PRESENT,
            matcher_of(body_scan),
        )
        return _BatchReader(read, batch)

    def _attrs_key(self, source: Source | None) -> str | None:
        """The member of a record that holds the attributes `source` reads,
        when they are the record's own."""
        if source is Source.ATTRIBUTE and (
            type(self).record_attribute_holder is JsonView.record_attribute_holder
        ):
            return "attributes"
        return None

    def _attrs_getter(self, source: Source) -> Callable[[Any], Any]:
        if source is Source.RESOURCE_ATTRIBUTE:
            return lambda res: member(res.get("resource"), "attributes")
        if source is Source.SCOPE_ATTRIBUTE:
            return lambda scope: member(scope.get("scope"), "attributes")
        key = self._attrs_key(source)
        if key is not None:
            return operator.methodcaller("get", key)
        holder = self.record_attribute_holder
        return lambda rec: member(holder(rec), "attributes")

    def container_getter(self, sel: Selector) -> Getter:
        if sel.level is Level.RESOURCE or sel.name == "scope_schema_url":
            return lambda c: nonempty(c.get("schemaUrl"))
        if sel.name in ("scope_name", "scope_version"):
            key = sel.name[len("scope_") :]
            return lambda c: nonempty(member(c.get("scope"), key))
        return self.scan_field(sel.name)

    def get(self, ctx: Ctx, selector: Selector) -> Value | None:
        if not isinstance(ctx.record, dict):
            raise MalformedRecord("record is not an object")
        if selector.source is Source.FIELD:
            name = selector.name
            if name == "resource_schema_url":
                return nonempty(ctx.resource.get("schemaUrl"))
            if name == "scope_schema_url":
                return nonempty(ctx.scope.get("schemaUrl"))
            if name in ("scope_name", "scope_version"):
                return nonempty(member(ctx.scope.get("scope"), name[len("scope_") :]))
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
        for event in events(ctx.record):
            kv = find_kv(member(event, "attributes"), selector.path)
            if kv is not None:
                found.append(typed_any(kv.get("value")))
        return found


def events(span: Any) -> list[Any]:
    """A span's events, [] when it has none or they are not a list."""
    items = span.get("events") if isinstance(span, dict) else None
    return items if isinstance(items, list) else []


def event_attribute_values(path: tuple[str, ...]) -> Callable[[Any], list[ScanValue]]:
    """A multi-valued getter: what a scan sees of the attribute at `path` of each event."""

    def values(span: Any) -> list[ScanValue]:
        out: list[ScanValue] = []
        for event in events(span):
            kv = find_kv(member(event, "attributes"), path)
            if kv is not None:
                out.append(scan_any(kv.get("value")))
        return out

    return values
