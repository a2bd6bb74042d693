"""OTLP protobuf log requests whose log records stay wire bytes.

Reading a decoded message goes through the protobuf runtime's wrapper objects,
field by field and attribute by attribute: most of a record's evaluation when no
policy matches it. So log requests are decoded into
:data:`~sluice.telemetry.otlp_raw.LeanLogsRequest`, where each log record is one
``bytes`` object, and :class:`RecordReader` reads the fields that policies look
at straight from those bytes. A dropped record's bytes are removed; every other
record goes out exactly as it came in, unless a transform edits it.

Reading is exact. The reader takes the layout SDKs write: each singular field at
most once, with the wire type logs.proto gives it, and field numbers below 16.
Any other record (a field written twice, which protobuf merges; an unknown group)
is parsed by the protobuf runtime into
:data:`~sluice.telemetry.otlp_raw.LeanLogRecord` and read as a message. Bytes
that are not a LogRecord raise :class:`MalformedRecord`, so the engine keeps that
record unchanged and counts it malformed.

When a policy needs more of a record than its scanned values (a typed check, a
sample key) or edits it (a transform), :class:`LeanRecord` parses the record into
a message once, and an edit writes the message's bytes back into the batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from google.protobuf.message import DecodeError
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from sluice.policy import native
from sluice.policy.model import RESOURCE_FIELDS, SCOPE_FIELDS, Selector, Source
from sluice.policy.view import Ctx, FieldReader, MalformedRecord, Scan, Value
from sluice.telemetry.otlp_proto import (
    ProtoLogView,
    body_scan_value,
    hex_id,
    typed_any,
)
from sluice.telemetry.otlp_raw import (
    RAW_LOG_VIEW,
    AttributeScanner,
    LeanLogRecord,
    find_value,
    read_varint,
)
from sluice.telemetry.reading import make_plan, matcher_of

# LogRecord field numbers (logs.proto).
TIME: Final = 1
SEVERITY_NUMBER: Final = 2
SEVERITY_TEXT: Final = 3
BODY: Final = 5
ATTRIBUTES: Final = 6
DROPPED_ATTRIBUTES: Final = 7
FLAGS: Final = 8
TRACE_ID: Final = 9
SPAN_ID: Final = 10
OBSERVED_TIME: Final = 11
EVENT_NAME: Final = 12

_VARINT: Final = 0
_FIXED64: Final = 1
_LENGTH: Final = 2
_FIXED32: Final = 5
_WIRE_TYPES: Final = {
    TIME: _FIXED64,
    SEVERITY_NUMBER: _VARINT,
    SEVERITY_TEXT: _LENGTH,
    BODY: _LENGTH,
    ATTRIBUTES: _LENGTH,
    DROPPED_ATTRIBUTES: _VARINT,
    FLAGS: _FIXED32,
    TRACE_ID: _LENGTH,
    SPAN_ID: _LENGTH,
    OBSERVED_TIME: _FIXED64,
    EVENT_NAME: _LENGTH,
}
_FIELD_NUMBERS: Final = {
    "body": BODY,
    "severity_text": SEVERITY_TEXT,
    "event_name": EVENT_NAME,
    "trace_id": TRACE_ID,
    "span_id": SPAN_ID,
}
"""The record-level fields the reader reads from bytes, by selector name."""


def _readable_tags() -> bytes:
    """Per one-byte tag (field numbers 1-15): 1 when the reader takes it, that is
    a known field with its own wire type or an unknown one that can be skipped."""
    table = bytearray(128)
    for tag in range(128):
        number, wire = tag >> 3, tag & 7
        skippable = wire in (_VARINT, _FIXED64, _LENGTH, _FIXED32)
        table[tag] = number > 0 and skippable and _WIRE_TYPES.get(number, wire) == wire
    return bytes(table)


_READABLE_TAGS: Final = _readable_tags()

_lean: Final[Any] = native.extension("sluice.telemetry._lean")


def parse_record(raw: bytes) -> Any:
    """`raw` as a :data:`LeanLogRecord` message."""
    try:
        return LeanLogRecord.FromString(raw)
    except DecodeError as problem:
        raise MalformedRecord(f"log record is not a LogRecord: {problem}") from None


def _body_value(raw: bytes, start: int, end: int) -> object:
    """What a scan sees of the body AnyValue at raw[start:end]: a non-empty
    string (as UTF-8 bytes when it is the AnyValue's only field), PRESENT for
    another value, None for none."""
    if end - start >= 2 and raw[start] == 0x0A:
        length, first = read_varint(raw, start + 1, end)
        if first + length == end:  # string_value is the only field
            return raw[first:end] if length else None
    try:
        return body_scan_value(AnyValue.FromString(raw[start:end]))
    except DecodeError as problem:
        raise MalformedRecord(f"log record body is not an AnyValue: {problem}") from None


class RecordLayout:
    """Where the fields of one record's bytes are: payload start and end
    offsets of the singular fields read (-1 when absent), and the attribute
    ``KeyValue`` bytes (when asked for)."""

    def __init__(self) -> None:
        self.body = self.body_end = -1
        self.severity = self.severity_end = -1
        self.event = self.event_end = -1
        self.trace = self.trace_end = -1
        self.span = self.span_end = -1
        self.attributes: list[bytes] = []


def locate(raw: bytes, attributes: bool) -> RecordLayout | None:
    """The layout of a record's bytes, with its `attributes` or not; None when
    they are not in the layout this module reads (see the module docstring)."""
    at = RecordLayout()
    seen = 0  # bit n: field n was read
    size = len(raw)
    i = 0
    while i < size:
        tag = raw[i]
        if tag > 0x7F or not _READABLE_TAGS[tag]:
            return None
        number = tag >> 3
        wire = tag & 7
        i += 1
        if wire == _LENGTH:
            if i < size and raw[i] < 0x80:
                length, start = raw[i], i + 1
            else:
                length, start = read_varint(raw, i, size)
            end = start + length
            if start < 0 or end > size:
                return None
            i = end
            if number == ATTRIBUTES:
                if attributes:
                    at.attributes.append(raw[start:end])
                continue
            bit = 1 << number
            if seen & bit:  # written twice: protobuf keeps the last (merges two bodies)
                return None
            seen |= bit
            if number == BODY:
                at.body, at.body_end = start, end
            elif number == SEVERITY_TEXT:
                at.severity, at.severity_end = start, end
            elif number == EVENT_NAME:
                at.event, at.event_end = start, end
            elif number == TRACE_ID:
                at.trace, at.trace_end = start, end
            elif number == SPAN_ID:
                at.span, at.span_end = start, end
        elif wire == _VARINT:
            stop = min(i + 10, size)
            while i < stop and raw[i] > 0x7F:
                i += 1
            if i == stop:
                return None
            i += 1
        elif wire == _FIXED64:
            i += 8
        else:
            i += 4
    return at if i == size else None


def _scan_field(
    hits: tuple[int, ...], scan: Scan | None, raw: bytes, start: int, end: int, as_id: bool
) -> tuple[int, ...]:
    """`hits` and what `scan` finds in the string (or, `as_id`, the id as
    lowercase hex) at raw[start:end]; an absent or empty field is not scanned."""
    if scan is None or end <= start:
        return hits
    data = raw[start:end]
    value: object = data
    if as_id:
        value = hex_id(data)
        if value is None:
            return hits
    found = scan(value)
    return hits + found if found else hits


class RecordReader:
    """Scans the record-level values of a policy set on one log record's bytes
    (a :data:`FieldReader`): body, severity text, event name, ids and attributes.
    Records outside the layout it reads go to `slow`, the message reader of the
    same fields."""

    def __init__(self, fields: Sequence[tuple[Scan, Selector]], slow: FieldReader):
        self.slow = slow
        self.body: Scan | None = None
        self.severity_text: Scan | None = None
        self.event_name: Scan | None = None
        self.trace_id: Scan | None = None
        self.span_id: Scan | None = None
        self.attributes: AttributeScanner | None = None
        self.readable = True
        """False when some field has no bytes reader: every record goes to `slow`."""
        plan = make_plan(fields, lambda selector: None)
        for scan, selector in plan.fields:
            number = _FIELD_NUMBERS.get(selector.name, 0)
            if number == BODY:
                self.body = scan
            elif number == SEVERITY_TEXT:
                self.severity_text = scan
            elif number == EVENT_NAME:
                self.event_name = scan
            elif number == TRACE_ID:
                self.trace_id = scan
            elif number == SPAN_ID:
                self.span_id = scan
            else:
                self.readable = False
        if plan.multi or plan.attribute_source not in (None, Source.ATTRIBUTE):
            self.readable = False
        if plan.index:
            self.attributes = AttributeScanner(plan.index)
        self.batch: Any = self._batch_reader()
        """Reads a batch of records in C (:meth:`read_batch`); None without."""

    def _batch_reader(self) -> Any:
        if not self.readable or self.trace_id is not None or self.span_id is not None:
            return None  # ids are scanned as hex: read in Python
        if _lean is None:
            return None
        attributes = self.attributes
        keys = () if attributes is None else attributes.keys
        return _lean.Reader(
            _READABLE_TAGS,
            self.body,
            self.severity_text,
            self.event_name,
            keys,
            None if attributes is None else attributes.found,
            matcher_of(self.body),
        )

    def read_batch(
        self, records: Sequence[bytes], prefix: tuple[int, ...] = ()
    ) -> list[tuple[int, ...] | None] | None:
        """Each record's hits after `prefix`, or None for a record to read with
        a call; None when this reader has no batch reading."""
        batch = self.batch
        return None if batch is None else batch.read(records, prefix)

    def __call__(self, raw: bytes) -> tuple[int, ...]:
        at = locate(raw, self.attributes is not None) if self.readable else None
        if at is None:
            return self.slow(parse_record(raw))
        hits: tuple[int, ...] = ()
        scan = self.body
        if scan is not None and at.body >= 0:
            value = _body_value(raw, at.body, at.body_end)
            if value is not None:
                found = scan(value)
                if found:
                    hits += found
        hits = _scan_field(hits, self.severity_text, raw, at.severity, at.severity_end, False)
        hits = _scan_field(hits, self.event_name, raw, at.event, at.event_end, False)
        hits = _scan_field(hits, self.trace_id, raw, at.trace, at.trace_end, True)
        hits = _scan_field(hits, self.span_id, raw, at.span, at.span_end, True)
        if self.attributes is not None:
            return self.attributes(at.attributes, hits)
        return hits


class LeanRecord:
    """One record of a lean batch: its bytes, where they live, and the message
    they parse into (on first use)."""

    def __init__(self, records: Any, position: int, raw: bytes):
        self.records = records
        self.position = position
        self.raw = raw
        self.parsed: Any = None

    def message(self) -> Any:
        if self.parsed is None:
            self.parsed = parse_record(self.raw)
        return self.parsed

    def store(self) -> None:
        """Write the (edited) message back into the batch."""
        self.raw = self.message().SerializeToString()
        self.records[self.position] = self.raw


_CONTAINER_FIELDS: Final = RESOURCE_FIELDS | SCOPE_FIELDS


def _reads_record(selector: Selector) -> bool:
    """Whether `selector` names a value of the record (not of its resource or scope)."""
    source = selector.source
    if source is Source.RESOURCE_ATTRIBUTE or source is Source.SCOPE_ATTRIBUTE:
        return False
    return selector.name not in _CONTAINER_FIELDS


class LeanLogView(ProtoLogView):
    """The view of :data:`LeanLogsRequest` batches. Resources and scopes are
    messages; records are bytes, read by :class:`RecordReader` and otherwise
    handled as :data:`~sluice.telemetry.otlp_raw.RAW_LOG_VIEW` messages."""

    def reader(self, fields: Sequence[tuple[Scan, Selector]]) -> FieldReader:
        if not fields or not _reads_record(fields[0][1]):
            return super().reader(fields)
        return RecordReader(fields, RAW_LOG_VIEW.reader(fields))

    def read_records(
        self, reader: FieldReader, records: Sequence[Any], prefix: tuple[int, ...] = ()
    ) -> Sequence[tuple[int, ...] | None] | None:
        return reader.read_batch(records, prefix) if isinstance(reader, RecordReader) else None

    def context(self, resource: Any, scope: Any, records: Any, position: int, record: Any) -> Ctx:
        return Ctx(resource, scope, LeanRecord(records, position, record))

    def get(self, ctx: Ctx, selector: Selector) -> Value | None:
        if selector.source is Source.ATTRIBUTE:
            record: LeanRecord = ctx.record
            if record.parsed is None:
                # Sample keys and typed checks on attributes: no need to parse the record.
                if _lean is not None and len(selector.path) == 1:
                    found = _lean.attribute(
                        record.raw,
                        selector.path[0].encode("utf-8", "surrogatepass"),
                        _READABLE_TAGS,
                    )
                    if found is not NotImplemented:
                        return found  # type: ignore[no-any-return]
                at = locate(record.raw, True)
                if at is not None:
                    value = find_value(at.attributes, selector.path)
                    return None if value is None else typed_any(value)
        return RAW_LOG_VIEW.get(self._as_message(ctx, selector), selector)

    def _as_message(self, ctx: Ctx, selector: Selector) -> Ctx:
        """`ctx` to read or edit `selector` through: with the record as a
        message when the selector names a record value."""
        if not _reads_record(selector):
            return ctx
        record: LeanRecord = ctx.record
        return Ctx(ctx.resource, ctx.scope, record.message())

    def _store(self, ctx: Ctx, selector: Selector) -> None:
        if _reads_record(selector):
            record: LeanRecord = ctx.record
            record.store()

    def set_string(self, ctx: Ctx, selector: Selector, value: str) -> None:
        RAW_LOG_VIEW.set_string(self._as_message(ctx, selector), selector, value)
        self._store(ctx, selector)

    def remove(self, ctx: Ctx, selector: Selector) -> bool:
        removed = RAW_LOG_VIEW.remove(self._as_message(ctx, selector), selector)
        if removed:  # nothing there (or empty): the record stays as it came
            self._store(ctx, selector)
        return removed

    def rename(self, ctx: Ctx, source: Selector, to: str, upsert: bool) -> bool:
        renamed = RAW_LOG_VIEW.rename(self._as_message(ctx, source), source, to, upsert)
        if renamed:
            self._store(ctx, source)
        return renamed


LEAN_LOG_VIEW = LeanLogView()
"""The view of every :data:`LeanLogsRequest` batch (stateless, shared)."""
