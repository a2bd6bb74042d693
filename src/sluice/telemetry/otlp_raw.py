"""OTLP protobuf log records whose attributes stay raw ``KeyValue`` bytes.

Walking ``LogRecord.attributes`` through the protobuf runtime builds a Python
wrapper per ``KeyValue``, per ``AnyValue`` and per string: about half a
microsecond per attribute, a large part of a record's evaluation. So log records
are read with a copy of the OTLP logs schema in which ``attributes`` is
``repeated bytes``. The wire form of both is the same, so a record re-encodes to
the same bytes, and each attribute is one ``bytes`` object that a dictionary can
answer for when it repeats (``service.name=web`` in every record).

Reading is exact: :func:`split_kv` reads the layout every SDK writes (key field,
then value field, each once); anything else is parsed by the protobuf runtime.
Bytes that are not a valid ``KeyValue`` raise :class:`MalformedAttribute`.
Edits (transforms) turn the list into ``KeyValue`` messages, edit, and write the
list back.
"""

from __future__ import annotations

from collections.abc import Iterator, MutableSequence, Sequence
from contextlib import contextmanager
from typing import Any, Final

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue, KeyValueList
from opentelemetry.proto.logs.v1 import logs_pb2

from sluice.policy.model import Selector, Source
from sluice.policy.view import PRESENT, Ctx, MalformedRecord, Value
from sluice.telemetry.otlp_proto import (
    ProtoLogView,
    RawScan,
    ScanValue,
    find_kv,
    remove_attribute,
    rename_attribute,
    scan_any,
    set_attribute,
    typed_any,
)
from sluice.telemetry.reading import AttributeEntries, FirstEntries

_LOGS = "opentelemetry.proto.logs.v1."
_LEAN = "sluice.lean.logs.v1."
MEMO_LIMIT: Final = 4096
"""Distinct attribute byte strings remembered per reader; the memo is emptied when full."""


class MalformedAttribute(MalformedRecord):
    """Raw attribute bytes that are not a valid ``KeyValue``."""


def _lean_classes() -> tuple[Any, Any]:
    """ExportLogsServiceRequest and LogRecord over a copy of logs.proto in which
    ``ScopeLogs.log_records`` and ``LogRecord.attributes`` are ``repeated bytes``."""
    schema = descriptor_pb2.FileDescriptorProto()
    logs_pb2.DESCRIPTOR.CopyToProto(schema)
    schema.name = "sluice/lean/logs.proto"
    schema.package = _LEAN.rstrip(".")
    raw_fields = {("ScopeLogs", "log_records"), ("LogRecord", "attributes")}
    for message in schema.message_type:
        for field in message.field:
            if (message.name, field.name) in raw_fields:
                field.type = descriptor_pb2.FieldDescriptorProto.TYPE_BYTES
                field.ClearField("type_name")
            else:
                _to_lean_type(field)
    request = schema.message_type.add()
    request.CopyFrom(_request_proto())
    pool = descriptor_pool.Default()
    pool.Add(schema)
    return (
        message_factory.GetMessageClass(pool.FindMessageTypeByName(_LEAN + request.name)),
        message_factory.GetMessageClass(pool.FindMessageTypeByName(_LEAN + "LogRecord")),
    )


def _request_proto() -> descriptor_pb2.DescriptorProto:
    service = descriptor_pb2.FileDescriptorProto()
    logs_service_pb2.DESCRIPTOR.CopyToProto(service)
    request = next(m for m in service.message_type if m.name == "ExportLogsServiceRequest")
    for field in request.field:
        _to_lean_type(field)
    return request


def _to_lean_type(field: descriptor_pb2.FieldDescriptorProto) -> None:
    """Point a field that names a logs.proto message at its lean copy."""
    if field.type_name.startswith("." + _LOGS):
        field.type_name = "." + _LEAN + field.type_name[len(_LOGS) + 1 :]


_CLASSES = _lean_classes()
LeanLogsRequest: Any = _CLASSES[0]
LeanLogRecord: Any = _CLASSES[1]
"""ExportLogsServiceRequest, wire-compatible, whose log records are their wire
bytes (see :mod:`sluice.telemetry.otlp_lean`); and LogRecord, wire-compatible,
whose attributes are raw ``KeyValue`` bytes: what a record's bytes are parsed
into when the fast reader cannot read them or a transform edits them."""


def split_kv(kv: bytes) -> tuple[bytes, bytes] | None:
    """(key, AnyValue bytes) of a KeyValue written as key field then value field,
    each once, the value no longer than 16 KiB; None for any other layout."""
    size = len(kv)
    if size < 2 or kv[0] != 0x0A or kv[1] > 0x7F:
        return None
    end = 2 + kv[1]
    if end == size:
        return kv[2:end], b""
    if end + 2 > size or kv[end] != 0x12:
        return None
    length = kv[end + 1]
    start = end + 2
    if length > 0x7F:
        if start >= size or kv[start] > 0x7F:
            return None
        length = (length & 0x7F) | kv[start] << 7
        start += 1
    if start + length != size:
        return None
    return kv[2:end], kv[start:]


def _key_value(kv: bytes) -> Any:
    try:
        return KeyValue.FromString(kv)
    except DecodeError as problem:
        raise MalformedAttribute(f"attribute is not a KeyValue: {problem}") from None


def _any_value(raw: bytes) -> Any:
    try:
        return AnyValue.FromString(raw)
    except DecodeError as problem:
        raise MalformedAttribute(f"attribute value is not an AnyValue: {problem}") from None


def _scan_value(raw: bytes) -> ScanValue:
    """What a scan sees of an AnyValue: its string if non-empty, else PRESENT."""
    size = len(raw)
    if size >= 2 and raw[0] == 0x0A and raw[1] < 0x80 and raw[1] + 2 == size:
        try:
            return raw[2:].decode() or PRESENT
        except UnicodeDecodeError as problem:
            raise MalformedAttribute(f"attribute value is not UTF-8: {problem}") from None
    return scan_any(_any_value(raw))


def key_and_value(kv: bytes) -> tuple[bytes, bytes]:
    """(key, AnyValue bytes) of any valid KeyValue."""
    split = split_kv(kv)
    if split is not None:
        return split
    message = _key_value(kv)
    return message.key.encode(), message.value.SerializeToString()


def _key_bytes(key: str) -> bytes:
    """A selector's attribute key as the UTF-8 bytes it is written as; a key
    holding a lone surrogate (possible in a policy's JSON) gets bytes no valid
    attribute key has."""
    return key.encode("utf-8", "surrogatepass")


def find_value(kvs: Sequence[bytes], path: Sequence[str]) -> Any:
    """The AnyValue message at `path` (first entry of the first key, then
    kvlists), or None."""
    first = _key_bytes(path[0])
    for kv in kvs:
        key, value = key_and_value(kv)
        if key != first:
            continue
        if len(path) == 1:
            return _any_value(value)
        return _nested(_any_value(value), path[1:])
    return None


def _nested(value: Any, rest: Sequence[str]) -> Any:
    if value.WhichOneof("value") != "kvlist_value":
        return None
    inner = find_kv(value.kvlist_value.values, rest)
    return None if inner is None else inner.value


@contextmanager
def editable(kvs: MutableSequence[bytes]) -> Iterator[Any]:
    """The raw list as a repeated KeyValue field to edit; written back on exit."""
    framed = b"".join(b"\n" + varint(len(kv)) + kv for kv in kvs)
    try:
        values = KeyValueList.FromString(framed).values
    except DecodeError as problem:
        raise MalformedAttribute(f"attributes are not KeyValues: {problem}") from None
    yield values
    kvs[:] = [kv.SerializeToString() for kv in values]


def varint(value: int) -> bytes:
    """`value` as a protobuf base-128 varint."""
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def read_varint(raw: bytes, i: int, end: int, bits: int = 35) -> tuple[int, int]:
    """(value, next offset) of the varint at `i` (before `end`, at most `bits`
    wide: 35, five bytes, for a length or a tag; 64 for any value); (-1, -1)
    when there is none."""
    value = 0
    shift = 0
    while i < end and shift < bits:
        byte = raw[i]
        i += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, i
        shift += 7
    return -1, -1


class AttributeScanner:
    """Adds to `hits` the pattern ids that a record's raw attributes hit, for a
    plan's attribute `index` (key -> scan, or (scan, rest of path) pairs). Only
    the first entry of a key counts, as with message attributes. What each
    attribute's bytes hit is remembered (:data:`MEMO_LIMIT` of them)."""

    def __init__(self, index: dict[str, AttributeEntries]):
        self.by_key = {_key_bytes(key): entry for key, entry in index.items()}
        self.keys: tuple[bytes, ...] = tuple(self.by_key)
        """The keys some selector reads, as written on the wire."""
        self.memo: dict[bytes, tuple[bytes, tuple[int, ...] | None]] = {}

    def classify(self, kv: bytes) -> tuple[bytes, tuple[int, ...] | None]:
        """(key, ids hit) of one attribute; ids None when no selector reads the key."""
        key, value = key_and_value(kv)
        entry = self.by_key.get(key)
        if entry is None:
            return key, None
        if not isinstance(entry, tuple):
            return key, entry(_scan_value(value))
        message = _any_value(value)
        found: tuple[int, ...] = ()
        for scan, rest in entry:
            target = _nested(message, rest) if rest else message
            if target is not None:
                found += scan(scan_any(target))
        return key, found

    def remembered(self, kv: bytes) -> tuple[bytes, tuple[int, ...] | None]:
        """:meth:`classify`, remembered."""
        known = self.memo.get(kv)
        if known is None:
            known = self.classify(kv)
            if len(self.memo) >= MEMO_LIMIT:
                self.memo.clear()
            self.memo[kv] = known
        return known

    def found(self, kv: bytes) -> tuple[int, ...]:
        """The ids one attribute of a read key hits (the batch reader's scan)."""
        return self.remembered(kv)[1] or ()

    def __call__(self, kvs: Sequence[bytes], hits: tuple[int, ...]) -> tuple[int, ...]:
        by_key = self.by_key
        entries: FirstEntries | None = None
        for kv in kvs:
            known = self.memo.get(kv)
            if known is None:
                # Most attributes are read by no selector and many are unique (ids):
                # reject those written in the SDK layout here, without a call.
                size = len(kv)
                if size > 3 and kv[0] == 0x0A and kv[1] < 0x80:
                    end = 2 + kv[1]
                    if (
                        end + 1 < size
                        and kv[end] == 0x12
                        and end + 2 + kv[end + 1] == size
                        and kv[2:end] not in by_key
                    ):
                        continue
                known = self.remembered(kv)
            key, found = known
            if found is None:
                continue
            if entries is None:
                entries = FirstEntries()
            if not entries.add(key):  # only the first entry of a key counts
                continue
            if found:
                hits += found
        return hits


class RawLogView(ProtoLogView):
    """:class:`ProtoLogView` over :data:`LeanLogRecord` messages: record
    attributes are raw ``KeyValue`` bytes; everything else is the same message."""

    def raw_attribute_scanner(self, index: dict[str, AttributeEntries]) -> RawScan:
        return AttributeScanner(index)

    def get(self, ctx: Ctx, selector: Selector) -> Value | None:
        if selector.source is not Source.ATTRIBUTE:
            return super().get(ctx, selector)
        value = find_value(ctx.record.attributes, selector.path)
        return None if value is None else typed_any(value)

    def set_string(self, ctx: Ctx, selector: Selector, value: str) -> None:
        if selector.source is not Source.ATTRIBUTE:
            super().set_string(ctx, selector, value)
            return
        with editable(ctx.record.attributes) as kvs:
            set_attribute(kvs, selector.path, value)

    def remove(self, ctx: Ctx, selector: Selector) -> bool:
        if selector.source is not Source.ATTRIBUTE:
            return super().remove(ctx, selector)
        with editable(ctx.record.attributes) as kvs:
            return remove_attribute(kvs, selector.path)

    def rename(self, ctx: Ctx, source: Selector, to: str, upsert: bool) -> bool:
        if source.source is not Source.ATTRIBUTE:
            return super().rename(ctx, source, to, upsert)
        with editable(ctx.record.attributes) as kvs:
            return rename_attribute(kvs, source.path, to, upsert)


RAW_LOG_VIEW = RawLogView()
"""The view of records parsed into :data:`LeanLogRecord` (stateless, shared)."""
