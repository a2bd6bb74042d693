"""Trace and span ids of an OTLP protobuf export request, checked as the
OpenTelemetry Collector's pdata reads them.

pdata holds an id in a fixed-size array: a ``trace_id`` must be empty or 16
bytes, a ``span_id`` or ``parent_span_id`` empty or 8 bytes, wherever it is
(spans, links, log records, exemplars, and scopes in a resource's deprecated
field 1000), or the request does not decode. Python's protobuf takes any
bytes, so the request's wire is walked once more: only down the fields that
lead to an id, stepping over every other field by its length. The same
walk notes a resource's deprecated scopes, which pdata moves (so that the
wire is searched once). The walk is
done in C (``_ids.c``) when the extension is built; :func:`walk` is its
reference.
"""

from __future__ import annotations

from typing import Any, Final

from sluice.policy import Signal, native
from sluice.telemetry.otlp_raw import read_varint

TRACE_ID: Final = -16
SPAN_ID: Final = -8
ERRORS: Final = {
    TRACE_ID: "unmarshal: invalid TraceID length",
    SPAN_ID: "unmarshal: invalid SpanID length",
}
"""pdata's error for an id of another length (``data.TraceID.Unmarshal``)."""

# Per message kind (its index): field number -> the kind of the message it
# holds, or TRACE_ID / SPAN_ID (minus the id's length).
_ENVELOPE: Final = [
    {1: 1},  # request: resources
    {2: 2, 1000: 2},  # resource: scopes, deprecated scopes
    {2: 3},  # scope: records
]
SCHEMAS: Final[dict[Signal, list[dict[int, int]]]] = {
    Signal.TRACE: [
        *_ENVELOPE,
        {1: TRACE_ID, 2: SPAN_ID, 4: SPAN_ID, 13: 4},  # span
        {1: TRACE_ID, 2: SPAN_ID},  # link
    ],
    Signal.LOG: [*_ENVELOPE, {9: TRACE_ID, 10: SPAN_ID}],  # log record
    Signal.METRIC: [
        *_ENVELOPE,
        {5: 4, 7: 4, 9: 5, 10: 6},  # metric: gauge, sum, histogram, exponential
        {1: 7},  # gauge or sum: number points
        {1: 8},  # histogram: its points
        {1: 9},  # exponential histogram: its points
        {5: 10},  # number point: exemplars
        {8: 10},  # histogram point: exemplars
        {11: 10},  # exponential histogram point: exemplars
        {4: SPAN_ID, 5: TRACE_ID},  # exemplar
    ],
}

RESOURCE: Final = 1
"""The kind of a resource, where a field 1000 (deprecated scopes) is noted."""
DEPRECATED_SCOPES: Final = 1000
"""The field number of a resource's ``instrumentation_library_*`` list, which
senders before OTLP 0.19 write where ``scope_*`` now is."""
SEEN_DEPRECATED: Final = 1
"""What a walk answers, when no id is wrong, if some resource has a field 1000."""
_SIGNALS: Final = (Signal.TRACE, Signal.LOG, Signal.METRIC)
"""The order of ``_ids.c``'s tables."""
_native: Final[Any] = native.extension("sluice.telemetry._ids")


def scan(signal: Signal, wire: bytes) -> tuple[str | None, bool]:
    """pdata's error for the first id of a wrong length in `wire` (a request
    that decodes), or None; and whether a resource has a field 1000 (the
    deprecated scopes pdata moves). Bytes that do not read as protobuf (a
    lean log record's, which nothing has parsed) are not looked into."""
    if _native is not None:
        found: int = _native.scan(_SIGNALS.index(signal), wire)
    else:
        found = walk(SCHEMAS[signal], 0, wire, 0, len(wire))
    if found < 0:
        return ERRORS[found], False
    return None, found == SEEN_DEPRECATED


def walk(schema: list[dict[int, int]], kind: int, wire: bytes, at: int, end: int) -> int:
    """TRACE_ID or SPAN_ID for the first id of a wrong length in the message of
    `kind` at ``wire[at:end]``; else SEEN_DEPRECATED if a resource in it has a
    field 1000, else 0. What does not read is not looked into."""
    fields = schema[kind]
    seen = 0
    while at < end:
        tag, at = read_varint(wire, at, end, 64)
        if at < 0:
            return seen
        wire_type = tag & 7
        if kind == RESOURCE and tag >> 3 == DEPRECATED_SCOPES:
            seen = SEEN_DEPRECATED
        if wire_type == 2:
            length, at = read_varint(wire, at, end, 64)
            if at < 0 or length > end - at:
                return seen
            action = fields.get(tag >> 3)
            if action is not None:
                if action < 0:
                    if length and length != -action:
                        return action
                else:
                    found = walk(schema, action, wire, at, at + length)
                    if found < 0:
                        return found
                    seen |= found
            at += length
        elif wire_type == 0:
            at = read_varint(wire, at, end, 64)[1]
            if at < 0:
                return seen
        elif wire_type == 1 or wire_type == 5:
            at += 8 if wire_type == 1 else 4
            if at > end:
                return seen
        else:
            return seen  # a group (only ever an unknown field): not looked into
    return seen
