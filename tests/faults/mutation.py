"""Structure-aware mutation of request bodies, for the decoder fuzzing
(``tests/faults/fuzzing.py``).

JSON bodies are parsed, then values anywhere in the document are deleted,
duplicated, retyped (a wrong type at any key: numbers past 64 bits, lone
surrogates, deep nesting, objects where strings belong...), renamed or
swapped, and the document is written back; now and then the text itself is
cut or a byte flipped. Protobuf bodies are split into a tree of wire fields
(length-delimited payloads that parse as messages become subtrees), fields are
deleted, duplicated, retyped or given odd payloads at any depth, and the tree
is written back with its lengths recomputed, so most mutants stay readable on
the outside and are broken inside a record; now and then bits are flipped or
the bytes cut.
"""

from __future__ import annotations

import copy
import json
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sluice.telemetry.otlp_raw import read_varint, varint

DEEP = 600
"""Deepest nesting inserted: past what Edge reads (512), short of orjson's 1024."""

JSON_KEYS = [
    "key", "value", "values", "stringValue", "intValue", "doubleValue", "boolValue",
    "bytesValue", "arrayValue", "kvlistValue", "attributes", "body", "severityText",
    "severityNumber", "traceId", "spanId", "parentSpanId", "eventName", "name", "kind",
    "status", "code", "events", "links", "traceState", "resource", "scope", "version",
    "schemaUrl", "logRecords", "scopeLogs", "resourceLogs", "spans", "scopeSpans",
    "resourceSpans", "metrics", "scopeMetrics", "resourceMetrics", "gauge", "sum",
    "histogram", "summary", "exponentialHistogram", "dataPoints", "aggregationTemporality",
    "message", "msg", "log", "level", "service", "hostname", "ddtags", "ddsource", "series",
    "metric", "type", "tags", "resources", "unit", "description",
]  # fmt: skip
"""Keys the readers know, to rename keys to and to add."""


def _deep(depth: int) -> Any:
    """A value nested `depth` levels deep, lists and objects in turn."""
    value: Any = "bottom"
    for n in range(depth):
        value = [value] if n % 2 else {"values": value}
    return value


ODD_JSON: list[Callable[[random.Random], Any]] = [
    lambda rng: None,
    lambda rng: rng.choice([True, False]),
    lambda rng: rng.choice([0, -1, 7, 500, 2**63, 2**64 + 1, -(2**63) - 1, 10**30]),
    lambda rng: rng.choice([1.5, -0.0, 1e308, 2.5e-308, 3.0, math.inf, -math.inf, math.nan]),
    lambda rng: rng.choice(["", "x", "DEBUG", "INFO", "ERROR", "4111-1111-1111-1111"]),
    lambda rng: rng.choice(["\ud800", "a\udfffb", "\udbff\ud800", "😀", "Ärger 12", "\x00"]),
    lambda rng: rng.choice(["12", "1e3", "NaN", "-Infinity", "0x10", "²", "٣", "AAE=", "!!"]),
    lambda rng: rng.choice(["SPAN_KIND_SERVER", "STATUS_CODE_ERROR", "5", "deadbeef" * 4]),
    lambda rng: rng.choice([[], {}, [1, "a", None], {"k": "v"}]),
    lambda rng: {"stringValue": rng.choice(["x", "", 3, None, ["x"], "\ud800"])},
    lambda rng: {"intValue": rng.choice(["12", 12, "1e3", 1.5, True, "9" * 30, None])},
    lambda rng: {"doubleValue": rng.choice(["NaN", 2, 10**400, "x", False])},
    lambda rng: {"boolValue": rng.choice(["true", 1, True])},
    lambda rng: {"bytesValue": rng.choice(["AAE=", "!!", 5, "ä"])},
    lambda rng: {"kvlistValue": rng.choice([{"values": 5}, {"values": [5]}, 7, None])},
    lambda rng: {"arrayValue": {"values": [{"intValue": "1"}, 5]}},
    lambda rng: [{"key": rng.choice([None, 5, "", "k"]), "value": {"stringValue": "v"}}],
    lambda rng: _deep(rng.randint(1, DEEP)),
]
"""Values of unusual types and shapes, one generator per kind."""


def _paths(value: Any, path: tuple[Any, ...], out: list[tuple[Any, ...]]) -> None:
    out.append(path)
    if isinstance(value, dict):
        for key, item in value.items():
            _paths(item, (*path, key), out)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _paths(item, (*path, index), out)


def _at(document: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        document = document[step]
    return document


def _mutate_document(rng: random.Random, document: Any) -> Any:
    paths: list[tuple[Any, ...]] = []
    _paths(document, (), paths)
    path = rng.choice(paths)
    if not path:
        return rng.choice(ODD_JSON)(rng) if rng.random() < 0.1 else document
    parent, step = _at(document, path[:-1]), path[-1]
    roll = rng.random()
    if roll < 0.2:
        del parent[step]
    elif roll < 0.3 and isinstance(parent, list):
        parent.insert(step, copy.deepcopy(parent[step]))
    elif roll < 0.7:
        parent[step] = rng.choice(ODD_JSON)(rng)
    elif roll < 0.8 and isinstance(parent, dict):
        parent[rng.choice(JSON_KEYS)] = parent.pop(step)
    elif roll < 0.9:
        target = _at(document, rng.choice(paths)[:-1]) if len(paths) > 1 else parent
        if isinstance(target, dict):
            target[rng.choice(JSON_KEYS)] = rng.choice(ODD_JSON)(rng)
        elif isinstance(target, list):
            target.insert(rng.randint(0, len(target)), rng.choice(ODD_JSON)(rng))
    else:
        other = rng.choice(paths)
        if other and other[: len(path)] != path and path[: len(other)] != other:
            holder, key = _at(document, other[:-1]), other[-1]
            parent[step], holder[key] = holder[key], parent[step]
    return document


def _cut_or_flip(rng: random.Random, data: bytes) -> bytes:
    if not data:
        return data
    position = rng.randrange(len(data))
    if rng.random() < 0.5:
        return data[:position]
    return (
        data[:position] + bytes([data[position] ^ (1 << rng.randrange(8))]) + data[position + 1 :]
    )


def mutate_json(rng: random.Random, seed: bytes) -> bytes:
    """A mutant of a JSON body."""
    document = json.loads(seed)
    try:
        for _ in range(rng.randint(1, 4)):
            document = _mutate_document(rng, document)
        # Now and then lone surrogates are written raw: then not UTF-8.
        text = json.dumps(document, ensure_ascii=rng.random() < 0.5)
    except RecursionError:  # deep nesting inside deep nesting: past what we write
        return seed
    data = text.encode("utf-8", "surrogatepass")
    return _cut_or_flip(rng, data) if rng.random() < 0.1 else data


# -- protobuf ------------------------------------------------------------------------


@dataclass
class WireField:
    """One field of a protobuf message as it is on the wire: `payload` is the
    value's bytes (a varint's value as an int), or `children` when a
    length-delimited payload parsed as a message."""

    number: int
    wire: int
    payload: int | bytes
    children: list[WireField] | None = field(default=None)


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value, i = read_varint(data, i, len(data), bits=64)
    if i < 0:
        raise ValueError("bad varint")
    return value, i


def parse_wire(data: bytes, depth: int = 0) -> list[WireField]:
    """`data` as wire fields; raises ValueError when it is not a message."""
    out: list[WireField] = []
    i = 0
    while i < len(data):
        tag, i = _varint(data, i)
        number, wire = tag >> 3, tag & 7
        if number == 0:
            raise ValueError("field 0")
        if wire == 0:
            value, i = _varint(data, i)
            out.append(WireField(number, wire, value))
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            if i + size > len(data):
                raise ValueError("truncated")
            out.append(WireField(number, wire, data[i : i + size]))
            i += size
        elif wire == 2:
            size, i = _varint(data, i)
            if i + size > len(data):
                raise ValueError("truncated")
            payload = data[i : i + size]
            i += size
            children = None
            if payload and depth < 12:
                try:
                    children = parse_wire(payload, depth + 1)
                except ValueError:
                    children = None
            out.append(WireField(number, wire, payload, children))
        else:
            raise ValueError(f"wire type {wire}")
    return out


def write_wire(fields: list[WireField]) -> bytes:
    """The wire bytes of `fields` (lengths recomputed)."""
    out = bytearray()
    for item in fields:
        out += varint(item.number << 3 | item.wire)
        if item.wire == 0:
            assert isinstance(item.payload, int)
            out += varint(item.payload & (1 << 64) - 1)
        elif item.wire == 2:
            payload = write_wire(item.children) if item.children is not None else item.payload
            assert isinstance(payload, bytes)
            out += varint(len(payload)) + payload
        else:
            assert isinstance(item.payload, bytes)
            out += item.payload
    return bytes(out)


ODD_PAYLOADS = [
    b"",
    b"\xff\xfe",
    b"\xed\xa0\x80",
    b"DEBUG",
    "Ärger 4111-1111-1111-1111".encode(),
    b"\x00" * 16,
    b"\x01" * 8,
    b"\x0a\x03key\x12\x02\x08\x05",
    b"\x0a\x01k\x12\x03\x0a\x01v\x0a\x01k",
    b"\x12\x80\x80\x04",
]
ODD_VARINTS = [0, 1, 2, 3, 5, 9, 17, 2**31, 2**63, 2**64 - 1]


def _all_fields(fields: list[WireField], out: list[tuple[list[WireField], int]]) -> None:
    for index, item in enumerate(fields):
        out.append((fields, index))
        if item.children is not None:
            _all_fields(item.children, out)


def _mutate_fields(rng: random.Random, fields: list[WireField]) -> None:
    places: list[tuple[list[WireField], int]] = []
    _all_fields(fields, places)
    if not places:
        return
    holder, index = rng.choice(places)
    item = holder[index]
    roll = rng.random()
    if roll < 0.2:
        del holder[index]
    elif roll < 0.35:
        holder.insert(index, copy.deepcopy(item))
    elif roll < 0.55:
        item.children = None
        item.wire = 2
        item.payload = rng.choice(ODD_PAYLOADS)
    elif roll < 0.65:
        item.children = None
        item.wire = 0
        item.payload = rng.choice(ODD_VARINTS)
    elif roll < 0.75:
        item.number = rng.choice([1, 2, 3, 5, 6, 9, 12, 15, 16, 99, 2**20])
    elif roll < 0.85 and item.children is None and isinstance(item.payload, bytes):
        item.payload = _cut_or_flip(rng, item.payload)
    else:
        other_holder, other = rng.choice(places)
        if other_holder is not holder or other != index:
            holder.insert(index, copy.deepcopy(other_holder[other]))


def mutate_protobuf(rng: random.Random, seed: bytes) -> bytes:
    """A mutant of a protobuf body."""
    if rng.random() < 0.15:
        data = seed
        for _ in range(rng.randint(1, 3)):
            data = _cut_or_flip(rng, data)
        return data
    fields = parse_wire(seed)
    for _ in range(rng.randint(1, 4)):
        _mutate_fields(rng, fields)
    return write_wire(fields)
