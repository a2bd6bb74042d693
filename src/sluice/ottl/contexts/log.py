"""The log context (upstream's ``ottllog``) over lean log records.

Records stay wire bytes in the pipeline (:mod:`sluice.telemetry.otlp_lean`).
The body, the attributes and the string fields are read from the bytes with
the policy engine's record locator (compiled, it finds a body in ~0.1 us
where parsing a 600-byte record into a message takes ~1 us, most of it
copying the body); numbers are read from the record parsed once into a
``LeanLogRecord`` (its attributes stay raw ``KeyValue`` bytes). A record in
a layout the locator does not read is parsed for every path.
"""

from __future__ import annotations

from typing import Any

from sluice.ottl.contexts.base import (
    COMMON,
    Context,
    Getter,
    Item,
    Resolution,
    Resolved,
    leaf,
    unindexed,
)
from sluice.ottl.errors import OttlRuntimeError
from sluice.ottl.syntax import Field
from sluice.ottl.values import (
    PMap,
    PSlice,
    RawPMap,
    from_any,
    index_map,
    index_slice,
    int64,
    string_like,
)
from sluice.policy.view import MalformedRecord
from sluice.telemetry.otlp_lean import RecordLayout, locate, parse_record
from sluice.telemetry.otlp_raw import read_varint
from sluice.telemetry.pdata_text import value_as_string

SEVERITIES = ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL")
ENUMS: dict[str, int] = {"SEVERITY_NUMBER_UNSPECIFIED": 0}
for _level, _name in enumerate(SEVERITIES):
    for _step in range(4):
        ENUMS[f"SEVERITY_NUMBER_{_name}{_step + 1 if _step else ''}"] = _level * 4 + _step + 1


UNREAD, LOCATED, WITH_ATTRIBUTES, PARSED_ONLY = 0, 1, 2, 3
"""What :meth:`LogItem.located` knows of the current record's layout."""


class LogItem(Item):
    """One log record (its wire bytes): :meth:`reset` for each record."""

    __slots__ = ("layout", "parsed", "raw", "state")

    def __init__(self) -> None:
        super().__init__()
        self.raw = b""
        self.parsed: Any = None
        self.layout: RecordLayout | None = None
        self.state = UNREAD

    def reset(self, raw: bytes) -> None:
        self.raw = raw
        self.parsed = None
        self.state = UNREAD

    def message(self) -> Any:
        parsed = self.parsed
        if parsed is None:
            try:
                parsed = self.parsed = parse_record(self.raw)
            except MalformedRecord as broken:
                raise OttlRuntimeError(str(broken)) from None
        return parsed

    def located(self, attributes: bool) -> RecordLayout | None:
        """Where the record's fields are (None: read the parsed message)."""
        state = self.state
        if state == WITH_ATTRIBUTES or (state == LOCATED and not attributes):
            return self.layout
        if state == PARSED_ONLY:
            return None
        layout = self.layout = locate(self.raw, attributes)
        if layout is None:
            self.message()  # raises for bytes that are not a LogRecord
            self.state = PARSED_ONLY
        else:
            self.state = WITH_ATTRIBUTES if attributes else LOCATED
        return layout


def _string_payload(raw: bytes, start: int, end: int) -> tuple[int, int] | None:
    """Where the string of the AnyValue at raw[start:end] is, when
    ``string_value`` is its only field."""
    if end - start >= 2 and raw[start] == 0x0A:
        length, first = read_varint(raw, start + 1, end)
        if first >= 0 and first + length == end:
            return first, end
    return None


def _body(item: LogItem) -> Any:
    at = item.located(False)
    if at is None:
        return from_any(item.message().body)
    if at.body < 0:
        return None
    raw = item.raw
    text = _string_payload(raw, at.body, at.body_end)
    if text is None:
        return from_any(item.message().body)
    try:
        return raw[text[0] : text[1]].decode()
    except UnicodeDecodeError as broken:
        raise OttlRuntimeError(f"log record body is not valid UTF-8: {broken}") from None


def body_string(item: LogItem) -> str:
    """``body.string``: pdata's ``AsString`` of the body."""
    body = _body(item)
    return body if isinstance(body, str) else value_as_string(item.message().body)


def _body_text(item: LogItem) -> Any:
    """What ``IsMatch`` scans of the body: a string body as its UTF-8 bytes,
    straight from the record (the scanner validates them)."""
    at = item.located(False)
    if at is not None and at.body >= 0:
        text = _string_payload(item.raw, at.body, at.body_end)
        if text is not None:
            return item.raw[text[0] : text[1]]
    return string_like(_body(item))


def _body_key(keys: tuple[str | int, ...]) -> Getter:
    def get(item: LogItem) -> Any:
        body = _body(item)
        if isinstance(body, PMap):
            return index_map(body, keys)
        if isinstance(body, PSlice):
            return index_slice(body, keys)
        kind = {str: "Str", int: "Int", float: "Double", bool: "Bool", bytes: "Bytes"}
        name = kind.get(type(body), "Empty")
        raise OttlRuntimeError(f"log bodies of type {name} cannot be indexed")

    return get


def attribute_list(item: LogItem) -> Any:
    """The record's attributes as raw ``KeyValue`` bytes, one per entry."""
    at = item.located(True)
    return item.message().attributes if at is None else at.attributes


def _attributes(keys: tuple[str | int, ...]) -> Getter:
    if not keys:
        return lambda item: RawPMap(attribute_list(item))
    return lambda item: index_map(RawPMap(attribute_list(item)), keys)


def _number(name: str) -> Getter:
    return lambda item: int64(getattr(item.message(), name))


def severity_number(item: LogItem) -> int:
    """``severity_number`` (from the record parsed once, attributes left raw)."""
    number: int = item.message().severity_number
    return number


def severity_text(item: LogItem) -> str:
    """``severity_text``, read from the record's bytes."""
    at = item.located(False)
    if at is None:
        return str(item.message().severity_text)
    if at.severity < 0:
        return ""
    try:
        return item.raw[at.severity : at.severity_end].decode()
    except UnicodeDecodeError as broken:
        raise OttlRuntimeError(f"log record severity text is not valid UTF-8: {broken}") from None


def _hex_id(name: str, size: int) -> Getter:
    def get(item: LogItem) -> str:
        raw: bytes = getattr(item.message(), name)
        return raw.hex() if len(raw) == size else "00" * size

    return get


_NUMBERS = (
    "time_unix_nano",
    "observed_time_unix_nano",
    "severity_number",
    "dropped_attributes_count",
    "flags",
)
_IDS = {"trace_id": 16, "span_id": 8}
_OTHERS = frozenset({"attributes", "severity_text", "time", "observed_time", *_NUMBERS})
"""Upstream v0.115's log paths (``event_name`` came later)."""


def log_path(resolution: Resolution, fields: tuple[Field, ...]) -> Resolved:
    first = fields[0]
    name = first.name
    getter: Getter
    if name == "body":
        if len(fields) > 1:
            if fields[1].name != "string":
                raise resolution.error(fields[1].name)
            unindexed(first)
            leaf(resolution, fields[1:])
            getter = body_string
        else:
            if not first.keys:
                return Resolved(_body, resolution.key(fields), text=_body_text)
            getter = _body_key(first.keys)
    elif name in _IDS:
        if len(fields) < 2:
            raise resolution.unsupported(f"compare {name}.string (the id as hex) instead")
        if fields[1].name != "string":
            raise resolution.error(fields[1].name)
        unindexed(first)
        leaf(resolution, fields[1:])
        getter = _hex_id(name, _IDS[name])
    else:
        if name not in _OTHERS:
            raise resolution.error(name)
        last = leaf(resolution, fields, keys=name == "attributes")
        if name == "attributes":
            getter = _attributes(last.keys)
        elif name in _NUMBERS:
            getter = _number(name)
        elif name == "severity_text":
            getter = severity_text
        else:
            raise resolution.unsupported("time values need converters outside Sluice's subset")
    return Resolved(getter, resolution.key(fields))


LOG = Context("log", log_path, ENUMS, COMMON)
