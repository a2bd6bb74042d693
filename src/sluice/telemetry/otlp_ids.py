"""An OTLP protobuf export request checked as the OpenTelemetry Collector's
pdata reads it: its gogoproto ``Unmarshal`` methods, whose first error (in
wire order) is the one upstream answers with.

Python's protobuf reads differently: a known field of the wrong wire type
is kept as an unknown field where gogo stops with ``proto: wrong wireType =
N for field Name``, its errors are worded otherwise (``unexpected EOF``,
``proto: integer overflow``...), a log record is kept as bytes nobody reads
(``otlp_raw``), and pdata holds an id in a fixed-size array: a ``trace_id``
must be empty or 16 bytes, a ``span_id`` or ``parent_span_id`` empty or 8
bytes (``unmarshal: invalid TraceID length``). So the request's wire is
walked once, every field of every message, as gogo walks it; the same walk
notes a resource's deprecated field 1000, which pdata moves (so that the
wire is searched once). The walk is done in C (``_ids.c``) when the
extension is built; :func:`walk` is its reference.

Messages nested deeper than :data:`MAX_DEPTH` are not looked into (Python's
protobuf refuses them).
"""

from __future__ import annotations

from typing import Any, Final

from sluice.policy import Signal, native

MAX_DEPTH: Final = 100
"""Nesting past which nothing is looked into: upb's default limit."""
VARINT: Final = 0
FIXED64: Final = 1
LENGTH: Final = 2
FIXED32: Final = 5
PACKED_FIXED64: Final = 8
"""A repeated 64-bit number: wire type 1, or 2 packed."""
PACKED_VARINT: Final = 9
"""A repeated varint: wire type 0, or 2 packed."""
TEXT: Final = -1
"""The action of a string or bytes field: stepped over."""
TRACE_ID: Final = -16
SPAN_ID: Final = -8

# The codes of a walk's problems (0 or SEEN_DEPRECATED when there is none).
UNEXPECTED_EOF: Final = -1
INTEGER_OVERFLOW: Final = -2
NEGATIVE_LENGTH: Final = -3
WRONG_WIRE_TYPE: Final = -4
ILLEGAL_TAG: Final = -5
END_GROUP_FOR_NON_GROUP: Final = -6
ILLEGAL_WIRE_TYPE: Final = -7
UNEXPECTED_END_OF_GROUP: Final = -9
SEEN_DEPRECATED: Final = 1
"""What a walk answers, when nothing is wrong, if some resource has a field 1000."""
DEPRECATED_SCOPES: Final = 1000
"""The field number of a resource's ``instrumentation_library_*`` list, which
senders before OTLP 0.19 write where ``scope_*`` now is."""
_INT64_MAX: Final = (1 << 63) - 1

# Every message kind (by index, the same in _ids.c): its name and, per field
# number, the field's Go name, its wire kind and its action (the kind of the
# message it holds, TEXT, TRACE_ID or SPAN_ID), from pdata's protogen.
_V, _D, _F, _L = VARINT, FIXED64, FIXED32, LENGTH
KINDS: Final[list[tuple[str, dict[int, tuple[str, int, int]]]]] = [
    ("ExportTraceServiceRequest", {1: ("ResourceSpans", _L, 3)}),  # 0
    ("ExportLogsServiceRequest", {1: ("ResourceLogs", _L, 4)}),  # 1
    ("ExportMetricsServiceRequest", {1: ("ResourceMetrics", _L, 5)}),  # 2
    (
        "ResourceSpans",  # 3
        {
            1: ("Resource", _L, 27),
            2: ("ScopeSpans", _L, 6),
            3: ("SchemaUrl", _L, TEXT),
            1000: ("DeprecatedScopeSpans", _L, 6),
        },
    ),
    (
        "ResourceLogs",  # 4
        {
            1: ("Resource", _L, 27),
            2: ("ScopeLogs", _L, 7),
            3: ("SchemaUrl", _L, TEXT),
            1000: ("DeprecatedScopeLogs", _L, 7),
        },
    ),
    (
        "ResourceMetrics",  # 5
        {
            1: ("Resource", _L, 27),
            2: ("ScopeMetrics", _L, 8),
            3: ("SchemaUrl", _L, TEXT),
            1000: ("DeprecatedScopeMetrics", _L, 8),
        },
    ),
    (
        "ScopeSpans",  # 6
        {1: ("Scope", _L, 28), 2: ("Spans", _L, 9), 3: ("SchemaUrl", _L, TEXT)},
    ),
    (
        "ScopeLogs",  # 7
        {1: ("Scope", _L, 28), 2: ("LogRecords", _L, 13), 3: ("SchemaUrl", _L, TEXT)},
    ),
    (
        "ScopeMetrics",  # 8
        {1: ("Scope", _L, 28), 2: ("Metrics", _L, 14), 3: ("SchemaUrl", _L, TEXT)},
    ),
    (
        "Span",  # 9
        {
            1: ("TraceId", _L, TRACE_ID),
            2: ("SpanId", _L, SPAN_ID),
            3: ("TraceState", _L, TEXT),
            4: ("ParentSpanId", _L, SPAN_ID),
            5: ("Name", _L, TEXT),
            6: ("Kind", _V, 0),
            7: ("StartTimeUnixNano", _D, 0),
            8: ("EndTimeUnixNano", _D, 0),
            9: ("Attributes", _L, 29),
            10: ("DroppedAttributesCount", _V, 0),
            11: ("Events", _L, 10),
            12: ("DroppedEventsCount", _V, 0),
            13: ("Links", _L, 11),
            14: ("DroppedLinksCount", _V, 0),
            15: ("Status", _L, 12),
            16: ("Flags", _F, 0),
        },
    ),
    (
        "Event",  # 10
        {
            1: ("TimeUnixNano", _D, 0),
            2: ("Name", _L, TEXT),
            3: ("Attributes", _L, 29),
            4: ("DroppedAttributesCount", _V, 0),
        },
    ),
    (
        "Link",  # 11
        {
            1: ("TraceId", _L, TRACE_ID),
            2: ("SpanId", _L, SPAN_ID),
            3: ("TraceState", _L, TEXT),
            4: ("Attributes", _L, 29),
            5: ("DroppedAttributesCount", _V, 0),
            6: ("Flags", _F, 0),
        },
    ),
    ("Status", {2: ("Message", _L, TEXT), 3: ("Code", _V, 0)}),  # 12
    (
        "LogRecord",  # 13
        {
            1: ("TimeUnixNano", _D, 0),
            2: ("SeverityNumber", _V, 0),
            3: ("SeverityText", _L, TEXT),
            5: ("Body", _L, 30),
            6: ("Attributes", _L, 29),
            7: ("DroppedAttributesCount", _V, 0),
            8: ("Flags", _F, 0),
            9: ("TraceId", _L, TRACE_ID),
            10: ("SpanId", _L, SPAN_ID),
            11: ("ObservedTimeUnixNano", _D, 0),
        },
    ),
    (
        "Metric",  # 14
        {
            1: ("Name", _L, TEXT),
            2: ("Description", _L, TEXT),
            3: ("Unit", _L, TEXT),
            5: ("Gauge", _L, 15),
            7: ("Sum", _L, 16),
            9: ("Histogram", _L, 17),
            10: ("ExponentialHistogram", _L, 18),
            11: ("Summary", _L, 19),
            12: ("Metadata", _L, 29),
        },
    ),
    ("Gauge", {1: ("DataPoints", _L, 20)}),  # 15
    (
        "Sum",  # 16
        {
            1: ("DataPoints", _L, 20),
            2: ("AggregationTemporality", _V, 0),
            3: ("IsMonotonic", _V, 0),
        },
    ),
    ("Histogram", {1: ("DataPoints", _L, 21), 2: ("AggregationTemporality", _V, 0)}),  # 17
    (
        "ExponentialHistogram",  # 18
        {1: ("DataPoints", _L, 22), 2: ("AggregationTemporality", _V, 0)},
    ),
    ("Summary", {1: ("DataPoints", _L, 24)}),  # 19
    (
        "NumberDataPoint",  # 20
        {
            2: ("StartTimeUnixNano", _D, 0),
            3: ("TimeUnixNano", _D, 0),
            4: ("AsDouble", _D, 0),
            5: ("Exemplars", _L, 26),
            6: ("AsInt", _D, 0),
            7: ("Attributes", _L, 29),
            8: ("Flags", _V, 0),
        },
    ),
    (
        "HistogramDataPoint",  # 21
        {
            2: ("StartTimeUnixNano", _D, 0),
            3: ("TimeUnixNano", _D, 0),
            4: ("Count", _D, 0),
            5: ("Sum", _D, 0),
            6: ("BucketCounts", PACKED_FIXED64, 0),
            7: ("ExplicitBounds", PACKED_FIXED64, 0),
            8: ("Exemplars", _L, 26),
            9: ("Attributes", _L, 29),
            10: ("Flags", _V, 0),
            11: ("Min", _D, 0),
            12: ("Max", _D, 0),
        },
    ),
    (
        "ExponentialHistogramDataPoint",  # 22
        {
            1: ("Attributes", _L, 29),
            2: ("StartTimeUnixNano", _D, 0),
            3: ("TimeUnixNano", _D, 0),
            4: ("Count", _D, 0),
            5: ("Sum", _D, 0),
            6: ("Scale", _V, 0),
            7: ("ZeroCount", _D, 0),
            8: ("Positive", _L, 23),
            9: ("Negative", _L, 23),
            10: ("Flags", _V, 0),
            11: ("Exemplars", _L, 26),
            12: ("Min", _D, 0),
            13: ("Max", _D, 0),
            14: ("ZeroThreshold", _D, 0),
        },
    ),
    ("Buckets", {1: ("Offset", _V, 0), 2: ("BucketCounts", PACKED_VARINT, 0)}),  # 23
    (
        "SummaryDataPoint",  # 24
        {
            2: ("StartTimeUnixNano", _D, 0),
            3: ("TimeUnixNano", _D, 0),
            4: ("Count", _D, 0),
            5: ("Sum", _D, 0),
            6: ("QuantileValues", _L, 25),
            7: ("Attributes", _L, 29),
            8: ("Flags", _V, 0),
        },
    ),
    ("ValueAtQuantile", {1: ("Quantile", _D, 0), 2: ("Value", _D, 0)}),  # 25
    (
        "Exemplar",  # 26
        {
            2: ("TimeUnixNano", _D, 0),
            3: ("AsDouble", _D, 0),
            4: ("SpanId", _L, SPAN_ID),
            5: ("TraceId", _L, TRACE_ID),
            6: ("AsInt", _D, 0),
            7: ("FilteredAttributes", _L, 29),
        },
    ),
    ("Resource", {1: ("Attributes", _L, 29), 2: ("DroppedAttributesCount", _V, 0)}),  # 27
    (
        "InstrumentationScope",  # 28
        {
            1: ("Name", _L, TEXT),
            2: ("Version", _L, TEXT),
            3: ("Attributes", _L, 29),
            4: ("DroppedAttributesCount", _V, 0),
        },
    ),
    ("KeyValue", {1: ("Key", _L, TEXT), 2: ("Value", _L, 30)}),  # 29
    (
        "AnyValue",  # 30
        {
            1: ("StringValue", _L, TEXT),
            2: ("BoolValue", _V, 0),
            3: ("IntValue", _V, 0),
            4: ("DoubleValue", _D, 0),
            5: ("ArrayValue", _L, 31),
            6: ("KvlistValue", _L, 32),
            7: ("BytesValue", _L, TEXT),
        },
    ),
    ("ArrayValue", {1: ("Values", _L, 30)}),  # 31
    ("KeyValueList", {1: ("Values", _L, 29)}),  # 32
]
RESOURCES: Final = frozenset({3, 4, 5})
"""The kinds of a resource, where a field 1000 (deprecated scopes) is noted."""
_SIGNALS: Final = (Signal.TRACE, Signal.LOG, Signal.METRIC)
"""The order of ``_ids.c``'s requests (kinds 0, 1 and 2)."""
_ACCEPTS: Final = {
    VARINT: (0,),
    FIXED64: (1,),
    LENGTH: (2,),
    FIXED32: (5,),
    PACKED_FIXED64: (1, 2),
    PACKED_VARINT: (0, 2),
}
_TABLES: Final = [
    {number: (_ACCEPTS[wire], wire, action) for number, (_, wire, action) in fields.items()}
    for _, fields in KINDS
]
_native: Final[Any] = native.extension("sluice.telemetry._ids")


def scan(signal: Signal, wire: bytes) -> tuple[str | None, bool]:
    """pdata's error for `wire` (the first, in wire order, that gogo's
    ``Unmarshal`` meets), or None; and whether a resource has a field 1000
    (the deprecated scopes pdata moves)."""
    kind = _SIGNALS.index(signal)
    if _native is not None:
        found: tuple[int, int, int, int] = _native.scan(kind, wire)
    else:
        found = walk(kind, wire)
    code = found[0]
    if code >= 0:
        return None, code == SEEN_DEPRECATED
    return problem_text(found), False


def problem_text(found: tuple[int, int, int, int]) -> str:
    """gogo's (or pdata's) words for a walk's answer `found`: (code, kind,
    field number, the wire type or the tag)."""
    code, kind, number, detail = found
    if code == UNEXPECTED_EOF:
        return "unexpected EOF"
    if code == INTEGER_OVERFLOW:
        return "proto: integer overflow"
    if code == NEGATIVE_LENGTH:
        return "proto: negative length found during unmarshaling"
    if code == UNEXPECTED_END_OF_GROUP:
        return "proto: unexpected end of group"
    if code == ILLEGAL_WIRE_TYPE:
        return f"proto: illegal wireType {detail}"
    if code == TRACE_ID:
        return "unmarshal: invalid TraceID length"
    if code == SPAN_ID:
        return "unmarshal: invalid SpanID length"
    name, fields = KINDS[kind]
    if code == WRONG_WIRE_TYPE:
        return f"proto: wrong wireType = {detail} for field {fields[number][0]}"
    if code == ILLEGAL_TAG:
        return f"proto: {name}: illegal tag {number} (wire type {detail})"
    return f"proto: {name}: wiretype end group for non-group"


def walk(kind: int, wire: bytes) -> tuple[int, int, int, int]:
    """The answer for a message of `kind` that is all of `wire`: (code, kind,
    field number, detail), code SEEN_DEPRECATED or 0 when gogo reads it,
    else the first problem met, in the message of that kind, at that field,
    with the wire type (or for ILLEGAL_TAG the whole tag) as detail."""
    found = [0, 0, 0, 0]
    found[0] = _message(kind, wire, 0, len(wire), 0, found)
    return found[0], found[1], found[2], found[3]


def _varint(wire: bytes, at: int, end: int) -> tuple[int, int]:
    """(value mod 2**64, next offset) of the varint at `at`, read as gogo reads
    it; the offset is INTEGER_OVERFLOW or UNEXPECTED_EOF when it does not read."""
    value = 0
    shift = 0
    while True:
        if shift >= 64:
            return 0, INTEGER_OVERFLOW
        if at >= end:
            return 0, UNEXPECTED_EOF
        byte = wire[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value & 0xFFFFFFFFFFFFFFFF, at
        shift += 7


def _message(kind: int, wire: bytes, at: int, end: int, depth: int, found: list[int]) -> int:
    """The code for the message of `kind` at ``wire[at:end]`` (see :func:`walk`),
    noting the kind, field number and detail of a problem in `found`."""
    table = _TABLES[kind]
    origin = at
    seen = 0
    while at < end:
        start = at
        tag, at = _varint(wire, at, end)
        if at < 0:
            return at
        wire_type = tag & 7
        number = (tag >> 3) & 0xFFFFFFFF  # Go's int32(wire >> 3)
        if number >= 1 << 31:
            number -= 1 << 32
        if wire_type == 4:
            found[1] = kind
            return END_GROUP_FOR_NON_GROUP
        if number <= 0:
            found[1], found[2], found[3] = kind, number, tag
            return ILLEGAL_TAG
        if number == DEPRECATED_SCOPES and kind in RESOURCES:
            seen = SEEN_DEPRECATED
        spec = table.get(number)
        if spec is None:
            at = _skip(wire, start, end, found)
            if at < 0:
                return at
            continue
        accepts, expected, action = spec
        if wire_type not in accepts:
            found[1], found[2], found[3] = kind, number, wire_type
            return WRONG_WIRE_TYPE
        if wire_type == 0:
            at = _varint(wire, at, end)[1]
            if at < 0:
                return at
        elif wire_type == 1 or wire_type == 5:
            at += 8 if wire_type == 1 else 4
            if at > end:
                return UNEXPECTED_EOF
        else:
            length, at = _varint(wire, at, end)
            if at < 0:
                return at
            if length > _INT64_MAX or at - origin + length > _INT64_MAX:
                return NEGATIVE_LENGTH
            post = at + length
            if post > end:
                return UNEXPECTED_EOF
            if expected == PACKED_FIXED64:
                # gogo reads whole numbers while before the end of the list,
                # each bounded only by the message's end.
                while at < post:
                    at += 8
                    if at > end:
                        return UNEXPECTED_EOF
                continue
            if expected == PACKED_VARINT:
                while at < post:
                    at = _varint(wire, at, end)[1]
                    if at < 0:
                        return at
                continue
            if action >= 0:
                if depth < MAX_DEPTH:
                    code = _message(action, wire, at, post, depth + 1, found)
                    if code < 0:
                        return code
                    seen |= code
            elif action != TEXT and length and length != -action:
                return action
            at = post
    return seen


def _skip(wire: bytes, at: int, end: int, found: list[int]) -> int:
    """The offset after the unknown field at `at` (gogo's ``skip*``), or the
    code of why it does not read (ILLEGAL_WIRE_TYPE: its wire type in `found`)."""
    start = at
    depth = 0
    while at < end:
        tag, at = _varint(wire, at, end)
        if at < 0:
            return at
        wire_type = tag & 7
        if wire_type == 0:
            at = _varint(wire, at, end)[1]
            if at < 0:
                return at
        elif wire_type == 1:
            at += 8
        elif wire_type == 2:
            length, at = _varint(wire, at, end)
            if at < 0:
                return at
            if length > _INT64_MAX or at - start + length > _INT64_MAX:
                return NEGATIVE_LENGTH
            at += length
        elif wire_type == 3:
            depth += 1
        elif wire_type == 4:
            if depth == 0:
                return UNEXPECTED_END_OF_GROUP
            depth -= 1
        elif wire_type == 5:
            at += 4
        else:
            found[3] = wire_type
            return ILLEGAL_WIRE_TYPE
        if depth == 0:
            return at if at <= end else UNEXPECTED_EOF
    return UNEXPECTED_EOF
