"""Datadog log intake (``/api/v2/logs``): log arrays as record views, and
the flat view that Datadog metrics (:mod:`sluice.telemetry.datadog_metrics`)
share.

A Datadog batch is flat: one resource, one scope, the records. Field mapping
for logs (EDGE.md section 3): ``body`` reads ``message`` (then ``msg``,
``log``); ``severity_text`` reads ``status`` (then ``level``); attributes are
top-level keys (nested paths walk objects, a dotted literal key is also
tried); ``service.name``/``host.name`` resource attributes are ``service``/
``hostname``; a tag from ``ddtags`` (``key:value``) can be matched by key when
the record has no such key. Values keep their JSON type: only strings are
visible to string matchers.

Kept records that no transform touched are forwarded as the exact bytes they
arrived as: :func:`split_array` keeps each element's source text.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from typing import Any

from sluice.policy.model import Level, Selector, Source
from sluice.policy.view import PRESENT, Ctx, FieldReader, MalformedRecord, RecordView, Scan, Value
from sluice.telemetry import jsonbody

_DECODER = json.JSONDecoder()
_WS = " \t\n\r"
_scan_value: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]
"""The C scanner behind ``json.loads``, called directly: a one-record request
is small enough that the three Python-level calls around it cost as much as
the parse."""
BODY_KEYS = ("message", "msg", "log")
SEVERITY_KEYS = ("status", "level")
RESOURCE_ALIASES = {"service.name": "service", "host.name": "hostname"}


class NotAnArray(ValueError):
    """The body is not the document expected (a log array, a series object, an
    Agent protobuf payload), or not in its format at all."""


def split_array(text: str) -> list[tuple[Any, str]]:
    """Parse a JSON array into (value, source text) per element."""
    index = len(text) - len(text.lstrip(_WS))
    if text[index : index + 1] != "[":
        raise NotAnArray("expected a JSON array")
    index += 1
    out: list[tuple[Any, str]] = []
    length = len(text)
    while True:
        while index < length and text[index] in _WS:
            index += 1
        if index < length and text[index] == "]" and not out:
            index += 1
            break
        try:
            value, end = _DECODER.raw_decode(text, index)
        except json.JSONDecodeError as problem:
            raise NotAnArray(str(problem)) from None
        out.append((value, text[index:end]))
        index = end
        while index < length and text[index] in _WS:
            index += 1
        if index < length and text[index] == ",":
            index += 1
            continue
        if index < length and text[index] == "]":
            index += 1
            break
        raise NotAnArray(f"expected ',' or ']' at offset {index}")
    if text[index:].strip(_WS):
        raise NotAnArray("data after the array")
    return out


def parse_document(body: bytes) -> Any:
    """``json.loads(body)``: through :mod:`jsonbody` when it can answer, else
    the C scanner behind ``json.loads`` without its Python-level wrappers."""
    value = jsonbody.parse(body)
    if value is not jsonbody.UNPARSED:
        return value
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as not_utf8:
        raise NotAnArray(f"not UTF-8: {not_utf8}") from None
    start = 0 if text[:1] not in _WS else len(text) - len(text.lstrip(_WS))
    try:
        value, end = _scan_value(text, start)
    except StopIteration as stop:
        raise NotAnArray(f"expected a JSON value at offset {stop.value}") from None
    except json.JSONDecodeError as problem:
        raise NotAnArray(str(problem)) from None
    except RecursionError:
        raise NotAnArray("JSON nested too deeply") from None
    if end != len(text) and text[end:].strip(_WS):
        raise NotAnArray(f"data after the JSON value at offset {end}")
    return jsonbody.check_depth(value)


class DatadogBatch:
    """Decoded records plus the request text; tracks drops and edits. A body
    that is one log object rather than an array (the intake's "simple JSON
    message") is a batch of that one record, and is written back as an object."""

    __slots__ = ("_positions", "body", "dropped", "edited", "records", "single")

    def __init__(self, records: list[Any], body: bytes, single: bool = False):
        self.records = records
        self.body = body
        self.single = single
        self.dropped: set[int] = set()
        self.edited: set[int] = set()
        self._positions: dict[int, int] | None = None

    @classmethod
    def parse(cls, body: bytes) -> DatadogBatch:
        """One call into the C JSON scanner; element source spans are only worked
        out (by :meth:`encode`) when some records are dropped and others kept."""
        records = parse_document(body)
        if records.__class__ is dict:
            return cls([records], body, single=True)
        if records.__class__ is not list:
            raise NotAnArray("expected a JSON array or object")
        return cls(records, body)

    def mark_edited(self, record: Any) -> None:
        if self._positions is None:
            self._positions = {id(r): i for i, r in enumerate(self.records)}
        index = self._positions.get(id(record))
        if index is not None:
            self.edited.add(index)

    def kept(self) -> list[int]:
        return [i for i in range(len(self.records)) if i not in self.dropped]

    def encode(self) -> bytes:
        """The kept records: original text for untouched ones, re-encoded edits."""
        if self.single:
            if 0 in self.edited:
                return jsonbody.to_utf8(jsonbody.dumps(self.records[0]))
            return self.body
        kept = self.kept()
        sources = (
            [s for _, s in split_array(self.body.decode())]
            if any(i not in self.edited for i in kept)
            else []
        )
        parts = [jsonbody.dumps(self.records[i]) if i in self.edited else sources[i] for i in kept]
        return jsonbody.to_utf8("[" + ",".join(parts) + "]")


def scalar(value: Any) -> Value | None:
    """Typed view of a JSON value (None for null; objects and arrays PRESENT)."""
    if value is None:
        return None
    if isinstance(value, str | bool | int | float):
        return value
    return PRESENT


_NO_TAGS: dict[str, str] = {}
_TAG_MEMO: dict[str, dict[str, str]] = {}
_TAG_MEMO_LIMIT = 4096


def _parse_tags(raw: str) -> dict[str, str]:
    tags: dict[str, str] = {}
    for tag in raw.split(","):
        key, sep, value = tag.strip().partition(":")
        if key and key not in tags:
            tags[key] = value if sep else ""
    return tags


def _tags(record: dict[str, Any]) -> dict[str, str]:
    """A record's ``ddtags`` as a read-only dict. An agent sends the same tag
    string on every log of a container, so parsed strings are remembered."""
    raw = record.get("ddtags")
    if raw.__class__ is not str:
        return _NO_TAGS
    tags = _TAG_MEMO.get(raw)
    if tags is None:
        if len(_TAG_MEMO) >= _TAG_MEMO_LIMIT:
            _TAG_MEMO.clear()
        tags = _TAG_MEMO[raw] = _parse_tags(raw)
    return tags


def _tag_key(tag: str) -> str:
    return tag.strip().partition(":")[0]


def _tag_edited(raw: str, key: str, value: str | None = None, to: str | None = None) -> str:
    """`raw` (a ``ddtags`` string) with its tags `key` edited, every other tag's
    text as it was: the first one given `value`; or every one renamed `to`,
    replacing the tags named `to`; or every one removed."""
    out: list[str] = []
    first = True
    for tag in raw.split(","):
        name = _tag_key(tag)
        if name != key:
            if to is None or name != to:
                out.append(tag)
        elif to is not None:
            out.append(tag.replace(key, to, 1))
        elif value is not None:
            out.append(f"{tag[: len(tag) - len(tag.lstrip())]}{key}:{value}" if first else tag)
            first = False
    return ",".join(out)


def _walk(record: dict[str, Any], path: Sequence[str]) -> Any:
    """The value at a path of keys through nested objects; None when absent."""
    current: Any = record
    for key in path:
        if not isinstance(current, dict):
            return None
        current = current.get(key)
    return current


def _nested(record: dict[str, Any], path: Sequence[str]) -> Any:
    """A path of two or more keys through nested objects, else the dotted
    literal key (``{"a.b": ...}``); None when absent."""
    value = _walk(record, path)
    return record.get(".".join(path)) if value is None else value


def _field_keys(name: str) -> Sequence[str]:
    """The record keys a log field reads, in order of preference."""
    if name == "body":
        return BODY_KEYS
    if name == "severity_text":
        return SEVERITY_KEYS
    return (name,)


def _first_key(record: dict[str, Any], keys: Sequence[str]) -> str | None:
    """The key a field reads (see :func:`_log_getter`), None when it is absent."""
    for key in keys:
        value = record.get(key)
        if value is not None and value != "":
            return key
    return None


class FlatRecordView(RecordView):
    """A batch with one implicit resource and scope: every value is on the record."""

    record_class: type = dict
    """What every readable record is exactly (JSON forms: an object); any
    other record is malformed."""

    def resources(self, batch: Any) -> Sequence[Any]:
        return (batch,)

    def scopes(self, resource: Any) -> Sequence[Any]:
        return (resource,)

    def records(self, scope: Any) -> Sequence[Any]:
        return scope.records  # type: ignore[no-any-return]

    def remove_records(self, scope: Any, indexes: list[int]) -> None:
        scope.dropped.update(indexes)

    def prune(self, batch: Any) -> bool:
        return False

    def level_of(self, selector: Selector) -> Level:
        return Level.RECORD

    def _raw(self, record: Any, selector: Selector, cache: dict[str, Any] | None = None) -> Any:
        """A selector's raw JSON value on one record (None when absent); `cache`
        holds what several selectors of one record share (parsed tags)."""
        raise NotImplementedError

    def _getter(self, selector: Selector) -> Callable[[Any, dict[str, Any]], Any]:
        """A function reading one selector off a record (specialised once per plan)."""
        raw = self._raw
        return lambda record, cache: raw(record, selector, cache)

    def reader(self, fields: Sequence[tuple[Scan, Selector]]) -> FieldReader:
        # An empty string is absent for a field (message, status, a metric's
        # name...) and present for an attribute (POLICY.md 2.1).
        plan = [
            (scan, self._getter(selector), None if selector.source is Source.FIELD else PRESENT)
            for scan, selector in fields
        ]
        record_class = self.record_class

        def read(container: Any) -> tuple[int, ...]:
            if container.__class__ is not record_class:
                raise MalformedRecord("record is not an object")
            hits: tuple[int, ...] = ()
            cache: dict[str, Any] = {}
            for scan, get, empty in plan:
                value = get(container, cache)
                if value is None:
                    continue
                # Only a non-empty string has text to scan.
                if value.__class__ is not str:
                    value = PRESENT
                elif not value:
                    if empty is None:
                        continue
                    value = empty
                found = scan(value)
                if found:
                    hits += found
            return hits

        return read


class DatadogLogView(FlatRecordView):
    """Datadog log intake records (a :class:`DatadogBatch`)."""

    def _raw(self, record: Any, selector: Selector, cache: dict[str, Any] | None = None) -> Any:
        if not isinstance(record, dict):
            return None
        return _log_getter(selector)(record, {} if cache is None else cache)

    def _getter(self, selector: Selector) -> Callable[[Any, dict[str, Any]], Any]:
        return _log_getter(selector)

    def get(self, ctx: Ctx, selector: Selector) -> Value | None:
        value = scalar(self._raw(ctx.record, selector))
        return None if value == "" and selector.source is Source.FIELD else value

    def _target(self, ctx: Ctx, selector: Selector, create: bool) -> tuple[Any, str] | None:
        record = ctx.record
        if not isinstance(record, dict):
            return None
        if selector.source is Source.FIELD:
            keys = _field_keys(selector.name)
            return record, _first_key(record, keys) or keys[0]
        path = _log_path(selector)
        if len(path) > 1 and _walk(record, path) is None:
            dotted = ".".join(path)
            if record.get(dotted) is not None:
                return record, dotted  # what the selector reads (see _nested)
        holder: Any = record
        for key in path[:-1]:
            if not isinstance(holder.get(key), dict):
                if not create:
                    return None
                holder[key] = {}
            holder = holder[key]
        return holder, path[-1]

    def _edited(self, ctx: Ctx) -> None:
        ctx.scope.mark_edited(ctx.record)

    @staticmethod
    def _tag(record: Any, selector: Selector) -> str | None:
        """The ``ddtags`` tag an attribute selector reads (and so edits): its
        key, when the record has no value of that name and has such a tag."""
        if selector.source in _NO_TAGS_SOURCES or not isinstance(record, dict):
            return None
        path = _log_path(selector)
        if len(path) != 1 or record.get(path[0]) is not None or path[0] not in _tags(record):
            return None
        return path[0]

    def _edit_tags(
        self, ctx: Ctx, key: str, value: str | None = None, to: str | None = None
    ) -> None:
        ctx.record["ddtags"] = _tag_edited(ctx.record["ddtags"], key, value, to)
        self._edited(ctx)

    def set_string(self, ctx: Ctx, selector: Selector, value: str) -> None:
        tag = self._tag(ctx.record, selector)
        if tag is not None:
            self._edit_tags(ctx, tag, value=value)
            return
        target = self._target(ctx, selector, create=True)
        if target is not None:
            holder, key = target
            holder[key] = value
            self._edited(ctx)

    def remove(self, ctx: Ctx, selector: Selector) -> bool:
        tag = self._tag(ctx.record, selector)
        if tag is not None:
            self._edit_tags(ctx, tag)
            return True
        target = self._target(ctx, selector, create=False)
        if target is None or target[1] not in target[0]:
            return False
        del target[0][target[1]]
        self._edited(ctx)
        return True

    def rename(self, ctx: Ctx, source: Selector, to: str, upsert: bool) -> bool:
        if source.source is Source.FIELD:
            return False
        tag = self._tag(ctx.record, source)
        if tag is not None:
            # Within the tags, as an attribute is renamed within its list.
            if to != tag and (upsert or to not in _tags(ctx.record)):
                self._edit_tags(ctx, tag, to=to)
            return True
        target = self._target(ctx, source, create=False)
        if target is None or target[1] not in target[0]:
            return False
        holder, key = target
        if to == key or (to in holder and not upsert):
            return True
        holder[to] = holder.pop(key)
        self._edited(ctx)
        return True


LOG_VIEW = DatadogLogView()
_NO_TAGS_SOURCES = (Source.FIELD, Source.SCOPE_ATTRIBUTE)


def _log_path(selector: Selector) -> tuple[str, ...]:
    """An attribute selector's path on a Datadog record (OTel resource names mapped)."""
    if selector.source is Source.RESOURCE_ATTRIBUTE and len(selector.path) == 1:
        return (RESOURCE_ALIASES.get(selector.path[0], selector.path[0]),)
    return selector.path


@functools.lru_cache(maxsize=4096)
def _log_getter(selector: Selector) -> Callable[[dict[str, Any], dict[str, Any]], Any]:
    """A function reading one selector off a Datadog log record; built once per
    selector (readers and the per-record slow path share it)."""
    if selector.source is Source.SCOPE_ATTRIBUTE:
        return lambda record, cache: None
    if selector.source is Source.FIELD:
        keys = _field_keys(selector.name)
        first, fallbacks = keys[0], keys[1:]

        def field(record: dict[str, Any], cache: dict[str, Any]) -> Any:
            # An empty string is absent for a field (POLICY.md 2.1): the next key is read.
            value = record.get(first)
            if value is None or value == "":
                for key in fallbacks:
                    other = record.get(key)
                    if other is not None and other != "":
                        return other
            return value

        return field
    path = _log_path(selector)
    if len(path) > 1:
        return lambda record, cache: _nested(record, path)
    key = path[0]

    def attribute(record: dict[str, Any], cache: dict[str, Any]) -> Any:
        value = record.get(key)
        return _tags(record).get(key) if value is None else value

    return attribute
