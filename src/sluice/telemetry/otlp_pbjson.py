"""OTLP JSON bodies to protobuf export requests and back, once per request.

OTLP JSON is the protobuf JSON mapping (lowerCamelCase keys) with two
differences the OTLP specification makes: trace and span ids are hex, not
base64, and enums are written as integers. Reading accepts what upstream's
decoder accepts: snake_case keys too, integers as integer numbers or decimal
strings (Go's strconv; ``scale`` and ``offset`` numbers only),
enums as integers or names, bytes as padded standard base64 (Go's), doubles
as numbers or strings as Go's ``strconv.ParseFloat`` reads them (``"NaN"``,
``"Infinity"``, ``"0x1p-2"``, ``"1_000"``); unknown keys are ignored,
``null`` is read as pdata reads it (refused for numbers, bools and enums,
an empty string, bytes or oneof choice, else no change), and a key given
twice counts twice, as jsoniter calls pdata back for each (lists joined,
messages read into one, the last scalar or oneof choice). The number ``-0``
is -0.0 for a double, 0 for a signed integer or an enum, and refused for an
unsigned integer, as jsoniter reads it. Writing follows pdata's
writer too: the message fields outside a oneof are written even when empty
(``"resource":{}``, ``"scope":{}``, ``"body":{}``, ``"status":{}``...), and
the trace and span ids always, an empty (or all-zero) one as ``""``; keys
come in the order of the ``.proto`` declarations (Go's struct order).

:func:`from_json` walks the parsed document once with a reader compiled per
message type from its descriptor, and builds the message in one constructor
call (the protobuf runtime fills nested messages from dicts in C): four to
five times faster than ``json_format.ParseDict``. :func:`to_json` walks the
message's set fields the same way, three times faster than
``json_format.MessageToDict`` (``bench/otlp_pbjson.py``).

Text that is not valid UTF-8 (invalid bytes, lone surrogate escapes) is read
as U+FFFD instead of failing the request: upstream's decoder does so for lone
surrogates and keeps invalid bytes, which a protobuf string here cannot hold.
A body is read as pdata reads it: ``null`` is an empty request, and nothing
after the first value is looked at. Everything else that is not an export
request raises ValueError.
"""

from __future__ import annotations

import base64
import json
import math
import re
from collections.abc import Callable
from typing import Any, Final, Protocol

import orjson
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from sluice.goencoding import std_base64
from sluice.gostrconv import parse_float
from sluice.policy import Signal, native
from sluice.telemetry import jsonbody
from sluice.telemetry.otlp_json.fields import pdata_id
from sluice.telemetry.otlp_raw import LeanLogsRequest

REQUESTS: dict[Signal, Any] = {
    Signal.LOG: ExportLogsServiceRequest,
    Signal.METRIC: ExportMetricsServiceRequest,
    Signal.TRACE: ExportTraceServiceRequest,
}
"""The standard request class of each signal (logs are read into it, then
re-parsed as :data:`LeanLogsRequest`)."""

ID_SIZES = {"trace_id": 16, "span_id": 8, "parent_span_id": 8}
"""Bytes fields written as hex in OTLP JSON, with their length (in every OTLP
message that has them: spans, links, log records, exemplars)."""

Convert = Callable[[Any, int], Any]
"""Reads one JSON value at a message nesting depth (scalars ignore it)."""


class Reader(Protocol):
    """Reads a JSON object at a message depth into constructor arguments (a
    new dict, or `into`: a message given again is read into the first)."""

    def __call__(
        self, document: Any, depth: int, into: dict[str, Any] | None = None
    ) -> dict[str, Any]: ...


Null = Callable[[], Any]
"""The value a JSON ``null`` gives a field (or raises ValueError)."""
Render = Callable[[Any], Any]
"""Writes one field value as JSON."""

MAX_DEPTH = 100
"""The deepest message nesting read (the request is depth 0): what the protobuf
runtime parses, so that everything read can be parsed again downstream."""

_INTEGERS = frozenset(
    {
        FieldDescriptor.TYPE_INT32,
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_UINT32,
        FieldDescriptor.TYPE_UINT64,
        FieldDescriptor.TYPE_SINT32,
        FieldDescriptor.TYPE_SINT64,
        FieldDescriptor.TYPE_FIXED32,
        FieldDescriptor.TYPE_FIXED64,
        FieldDescriptor.TYPE_SFIXED32,
        FieldDescriptor.TYPE_SFIXED64,
    }
)
_WIDE_INTEGERS = frozenset(
    {
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_UINT64,
        FieldDescriptor.TYPE_SINT64,
        FieldDescriptor.TYPE_FIXED64,
        FieldDescriptor.TYPE_SFIXED64,
    }
)
_FLOATS = frozenset({FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT})
_NOT_NULL = frozenset({FieldDescriptor.TYPE_BOOL, FieldDescriptor.TYPE_ENUM})
_SIGNED = frozenset(
    {
        FieldDescriptor.TYPE_INT32,
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_SINT32,
        FieldDescriptor.TYPE_SINT64,
        FieldDescriptor.TYPE_SFIXED32,
        FieldDescriptor.TYPE_SFIXED64,
    }
)
_SIGNED_TEXT = re.compile(r"[+-]?[0-9]+")
_UNSIGNED_TEXT = re.compile(r"[0-9]+")


# -- reading -----------------------------------------------------------------------


def from_json(signal: Signal, body: bytes) -> Any:
    """The export request an OTLP JSON body holds: ``LeanLogsRequest`` for
    logs, ``Export{Metrics,Trace}ServiceRequest`` otherwise. Raises ValueError
    naming the problem."""
    document = _parse(body)
    if document is None:  # pdata reads a null request as an empty one
        document = {}
    request_class = REQUESTS[signal]
    try:
        fields = _reader(request_class.DESCRIPTOR)(document, 0)
        message = request_class(**fields)
    except (TypeError, AttributeError) as problem:  # the runtime refusing a value
        raise ValueError(f"not an OTLP JSON export request: {problem}") from None
    if signal is Signal.LOG:
        return LeanLogsRequest.FromString(message.SerializeToString())
    return message


class _NegativeZero:
    """The JSON number ``-0``, which pdata reads as a double's -0.0, an
    integer's 0, and refuses where an unsigned integer is due."""

    def __repr__(self) -> str:
        return "-0"


NEGATIVE_ZERO: Final = _NegativeZero()


def _parse(body: bytes) -> Any:
    """The first JSON value of the body, with text that is not valid UTF-8
    read as U+FFFD, as pdata's jsoniter reader takes it: after space, tab, CR
    and LF (a byte order mark or a UTF-16 body is not JSON), and never looking
    past the end of that value.

    jsoniter calls back for every key of an object, a key given twice
    included: objects are read as a tuple of their (key, value) pairs, and
    the number ``-0`` as :data:`NEGATIVE_ZERO`, by ``json``. orjson, four
    times faster, reads the rest: a body with neither (``_jsonscan.c`` tells
    it in one pass) reads the same into dicts, and integers past 64 bits, the
    one other difference for OTLP, are refused either way. orjson refuses
    invalid UTF-8, lone surrogate escapes and content after the value, which
    ``json`` then reads (not its ``NaN`` and ``Infinity``, which are not
    JSON)."""
    try:
        document = orjson.loads(body)
        if _scan is not None and not _scan.needs_exact_read(body):
            return document
    except orjson.JSONDecodeError:
        pass
    text = body.decode("utf-8", "replace")
    start = len(text) - len(text.lstrip(" \t\r\n"))
    try:
        document, _end = _FIRST_VALUE.raw_decode(text, start)
        return _without_surrogates(jsonbody.check_depth(document))
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    except ValueError as problem:
        raise ValueError(f"not JSON: {problem}") from None


_scan: Final[Any] = native.extension("sluice.telemetry._jsonscan")
"""Tells whether a body needs the exact read (see ``_jsonscan.c``); None
without it, when every body gets that read."""


def _not_json(constant: str) -> Any:
    # `json` reads NaN and Infinity (orjson and jsoniter do not): refused.
    raise ValueError(f"{constant} is not a JSON value")


def _integer(text: str) -> Any:
    return NEGATIVE_ZERO if text == "-0" else int(text)


_FIRST_VALUE = json.JSONDecoder(
    parse_constant=_not_json, parse_int=_integer, object_pairs_hook=tuple
)


def _without_surrogates(value: Any) -> Any:
    """`value` with every lone surrogate (from a ``\\ud800`` escape) as U+FFFD."""
    if isinstance(value, str):
        if value.isascii():
            return value
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return value
    if isinstance(value, (tuple, list)):
        return type(value)(_without_surrogates(item) for item in value)
    return value


_READERS: dict[str, Reader] = {}


def _reader(descriptor: Descriptor) -> Reader:
    """A function from a JSON object (and its message depth) to the
    constructor arguments of the message `descriptor` describes (nested
    messages as dicts).

    Every occurrence of a key counts, as pdata's reader calls back for each:
    a list given twice is one list, a message given twice (outside a oneof)
    one message read from both, and a scalar or a oneof's choice takes the
    last value (a oneof's last choice, set last, is the one it keeps)."""
    known = _READERS.get(descriptor.full_name)
    if known is not None:
        return known
    table: dict[str, tuple[str, Convert, Null | None, int]] = {}
    message_name = descriptor.full_name

    def read(document: Any, depth: int, into: dict[str, Any] | None = None) -> dict[str, Any]:
        pairs: Any
        if type(document) is dict:
            pairs = document.items()
        elif type(document) is tuple:
            pairs = document
        else:
            raise ValueError(f"{message_name}: expected a JSON object, got {_kind(document)}")
        if depth > MAX_DEPTH:
            raise ValueError(f"OTLP JSON nested too deeply (over {MAX_DEPTH} messages)")
        arguments: dict[str, Any] = {} if into is None else into
        for key, value in pairs:
            spec = table.get(key)
            if spec is None:
                continue
            name, convert, null, kind = spec
            if value is None:
                if null is not None:
                    arguments.pop(name, None)
                    arguments[name] = null()
                continue
            if kind == _SET:
                arguments[name] = convert(value, depth + 1)
            elif kind == _CHOICE:
                arguments.pop(name, None)  # set last: the constructor keeps it
                arguments[name] = convert(value, depth + 1)
            elif name not in arguments:
                arguments[name] = convert(value, depth + 1)
            elif kind == _APPENDED:
                arguments[name] = arguments[name] + convert(value, depth + 1)
            else:  # _MERGED: read into the message given before
                _READERS[table_types[name]](value, depth + 1, arguments[name])
        return arguments

    _READERS[message_name] = read  # before the fields: messages nest themselves
    table_types: dict[str, str] = {}
    for field in descriptor.fields:
        kind = _SET
        if field.is_repeated:
            kind = _APPENDED
        elif field.containing_oneof is not None:
            kind = _CHOICE
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            kind = _MERGED
            table_types[field.name] = field.message_type.full_name
        entry = (field.name, _field_reader(field), _null_reader(field), kind)
        table[field.json_name] = table[field.name] = entry
    return read


_SET, _CHOICE, _APPENDED, _MERGED = 0, 1, 2, 3
"""How a field takes a key given again: the last value, the last value set
last (a oneof's choice, or a proto3 optional), the lists joined, or the
messages read into one."""


def _null_reader(field: FieldDescriptor) -> Null | None:
    """What a JSON ``null`` gives `field`, as pdata reads it (None: the field
    keeps what it has): a number, a bool or an enum is refused; a string,
    bytes or an id is empty (jsoniter's ``ReadString`` reads null as ""); a
    message that is one of a oneof's choices (an ``AnyValue``'s, a data
    point's or a metric's) is set to its empty value; a list or another
    message is left as it is (null is an empty list or object to jsoniter)."""
    where = f"{field.containing_type.name}.{field.json_name}"
    if field.is_repeated:
        return None
    if field.type in _INTEGERS or field.type in _FLOATS or field.type in _NOT_NULL:

        def refuse() -> Any:
            raise ValueError(f"{where}: expected a value, got null")

        return refuse
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        oneof = field.containing_oneof
        return dict if oneof is not None and not oneof.name.startswith("_") else None
    return str if field.type == FieldDescriptor.TYPE_STRING else bytes


def _field_reader(field: FieldDescriptor) -> Convert:
    where = f"{field.containing_type.name}.{field.json_name}"
    convert: Convert
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        convert = _reader(field.message_type)
    elif field.type == FieldDescriptor.TYPE_ENUM:
        convert = _enum_reader(field, where)
    elif field.type in _INTEGERS:
        convert = _integer_reader(where, field.type)
    elif field.type in _FLOATS:
        convert = _float_reader(where)
    elif field.type == FieldDescriptor.TYPE_BOOL:
        convert = _bool_reader(where)
    elif field.type == FieldDescriptor.TYPE_STRING:
        convert = _string_reader(where)
    elif field.name in ID_SIZES:
        operation = _ID_OPERATIONS.get(field.containing_type.name, where)
        operation = operation.format(field.json_name)
        convert = _id_reader(f"{operation}: parse {field.name}:", ID_SIZES[field.name])
    else:
        convert = _bytes_reader(where)
    if not field.is_repeated:
        return convert

    messages = field.type == FieldDescriptor.TYPE_MESSAGE

    def each(values: Any, depth: int) -> list[Any]:
        if type(values) is not list:
            raise ValueError(f"{where}: expected a JSON array, got {_kind(values)}")
        # A null element of a list of messages is an empty message, as pdata reads it.
        return [{} if value is None and messages else convert(value, depth) for value in values]

    return each


def _kind(value: Any) -> str:
    if value is NEGATIVE_ZERO:
        return "-0"
    if isinstance(value, (dict, tuple)):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return json.dumps(value)[:40]


def _integer_reader(where: str, kind: int) -> Convert:
    """As pdata reads integers: a JSON number written as an integer (``1.0``
    and ``1e3`` are refused, as jsoniter refuses them), or a string in
    decimal as Go's ``strconv.ParseInt`` / ``ParseUint`` reads it; ``scale``
    and ``offset`` (the only ``sint32`` fields) as numbers only."""
    signed = kind in _SIGNED
    text = _SIGNED_TEXT if signed else _UNSIGNED_TEXT
    strings = kind != FieldDescriptor.TYPE_SINT32

    def integer(value: Any, _depth: int) -> int:
        if type(value) is int:
            return value
        if value is NEGATIVE_ZERO and signed:  # jsoniter's readUint* refuses the sign
            return 0
        if type(value) is str and strings and text.fullmatch(value):
            return int(value)
        raise ValueError(f"{where}: expected an integer, got {_kind(value)}")

    return integer


def _float_reader(where: str) -> Convert:
    def number(value: Any, _depth: int) -> float:
        parsed: float | None = None
        if type(value) is float:
            parsed = value
        elif value is NEGATIVE_ZERO:
            parsed = -0.0  # jsoniter's ReadFloat64 negates what follows the sign
        elif type(value) is int:
            try:
                parsed = float(value)
            except OverflowError:
                parsed = math.inf
        elif type(value) is str:
            parsed = parse_float(value)
        if parsed is None:
            raise ValueError(f"{where}: expected a number, got {_kind(value)}")
        if type(value) is not str and math.isinf(parsed):
            # A number past the largest double (JSON has no Infinity) is
            # ParseFloat's ErrRange for jsoniter, as it is in a string.
            raise ValueError(f"{where}: number out of range")
        return parsed

    return number


def _bool_reader(where: str) -> Convert:
    def boolean(value: Any, _depth: int) -> bool:
        if type(value) is bool:
            return value
        raise ValueError(f"{where}: expected true or false, got {_kind(value)}")

    return boolean


def _string_reader(where: str) -> Convert:
    def string(value: Any, _depth: int) -> str:
        if type(value) is str:
            return value
        raise ValueError(f"{where}: expected a string, got {_kind(value)}")

    return string


def _enum_reader(field: FieldDescriptor, where: str) -> Convert:
    numbers: dict[str, int] = {value.name: value.number for value in field.enum_type.values}

    def enum(value: Any, _depth: int) -> int:
        if type(value) is int:
            return value
        if value is NEGATIVE_ZERO:
            return 0
        if type(value) is str and value in numbers:
            return numbers[value]
        raise ValueError(f"{where}: unknown enum value {_kind(value)}")

    return enum


_ID_OPERATIONS = {
    "Span": "readSpan.{}",
    "Link": "readSpanLink",
    "LogRecord": "readLog.{}",
    "Exemplar": "exemplar.{}",
}
"""The operation pdata's reader of each message with ids reports a bad id
under (``{}``: the field's JSON name), before ``parse <field>:``."""


def _id_reader(prefix: str, size: int) -> Convert:
    def identifier(value: Any, _depth: int) -> bytes:
        if type(value) is not str:
            raise ValueError(f"{prefix} expected a hex string, got {_kind(value)}")
        try:
            return pdata_id(value, size)
        except ValueError as problem:
            raise ValueError(f"{prefix}{problem}") from None

    return identifier


def _bytes_reader(where: str) -> Convert:
    def data(value: Any, _depth: int) -> bytes:
        if type(value) is not str:
            raise ValueError(f"{where}: expected a base64 string, got {_kind(value)}")
        # As pdata (Go's base64.StdEncoding): not the URL-safe or unpadded
        # forms the protobuf JSON mapping also takes.
        try:
            return std_base64(value)
        except ValueError:
            raise ValueError(f"{where}: invalid base64 {_kind(value)}") from None

    return data


# -- writing -----------------------------------------------------------------------


def to_json(signal: Signal, message: Any) -> bytes:
    """OTLP JSON of an export request (lean logs are read as standard ones).
    Raises ValueError when the message holds bytes that are not valid for
    their field (a lean log record that does not parse)."""
    standard = REQUESTS[signal]
    if type(message) is not standard:
        try:
            message = standard.FromString(message.SerializeToString())
        except Exception as problem:  # DecodeError, or invalid UTF-8 in a record
            raise ValueError(f"cannot read the request's records: {problem}") from None
    return orjson.dumps(_document(message))


_WRITERS: dict[FieldDescriptor, tuple[str, bool, int, Render | None]] = {}
_MESSAGE, _CONVERTED, _AS_IS = 0, 1, 2
_SHAPES: dict[Descriptor, tuple[tuple[tuple[str, Any], ...], tuple[str, ...], bool]] = {}
"""Per message type, as pdata writes it: the keys written even when their
field is not set (with the value written then), every key in the order of
the declaration (Go's struct order), and whether that order is not the
fields' numbers' (the order ``ListFields`` gives)."""


def _document(message: Any) -> dict[str, Any]:
    document: dict[str, Any] = {}
    for field, value in message.ListFields():
        spec = _WRITERS.get(field)
        if spec is None:
            spec = _WRITERS[field] = _writer(field)
        key, repeated, kind, convert = spec
        if kind == _MESSAGE:
            document[key] = [_document(v) for v in value] if repeated else _document(value)
        elif kind == _CONVERTED and convert is not None:
            document[key] = [convert(v) for v in value] if repeated else convert(value)
        else:
            document[key] = list(value) if repeated else value
    shape = _SHAPES.get(message.DESCRIPTOR)
    if shape is None:
        shape = _SHAPES[message.DESCRIPTOR] = _shape(message.DESCRIPTOR)
    always, order, renumbered = shape
    reorder = renumbered
    for key, empty in always:
        if key not in document:
            document[key] = empty
            reorder = True
    if reorder:
        return {key: document[key] for key in order if key in document}
    return document


def _shape(descriptor: Descriptor) -> tuple[tuple[tuple[str, Any], ...], tuple[str, ...], bool]:
    """How pdata's writer (gogo's jsonpb over non-nullable fields) writes a
    message type: a message field outside a oneof (``resource``, ``scope``, a
    log record's ``body``, a span's ``status``, a key's ``value``...) even
    when empty, as ``{}``, a trace or span id always (``""`` when empty), and
    the keys in the declaration's order."""
    always: list[tuple[str, Any]] = []
    for field in descriptor.fields:
        if field.is_repeated or field.containing_oneof is not None:
            continue
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            always.append((field.json_name, {}))
        elif field.type == FieldDescriptor.TYPE_BYTES and field.name in ID_SIZES:
            always.append((field.json_name, ""))
    numbers = [field.number for field in descriptor.fields]
    order = tuple(field.json_name for field in descriptor.fields)
    return tuple(always), order, numbers != sorted(numbers)


def _writer(field: FieldDescriptor) -> tuple[str, bool, int, Render | None]:
    """(JSON key, repeated, kind, converter) of a field."""
    convert: Render | None = None
    kind = _CONVERTED
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        kind = _MESSAGE
    elif field.type in _WIDE_INTEGERS:
        convert = str  # the protobuf JSON mapping writes 64-bit integers as strings
    elif field.type == FieldDescriptor.TYPE_BYTES:
        convert = _id_hex if field.name in ID_SIZES else _base64
    elif field.type in _FLOATS:
        convert = _json_float
    else:
        kind = _AS_IS  # strings, bools, 32-bit integers, enums (as integers)
    return field.json_name, field.is_repeated, kind, convert


def _id_hex(data: bytes) -> str:
    """An id as pdata writes it: hex, and "" for an id of zeros (an empty
    id to pdata)."""
    return data.hex() if data.strip(b"\x00") else ""


def _base64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _json_float(value: float) -> float | str:
    if math.isfinite(value):
        return value
    if math.isnan(value):
        return "NaN"
    return "Infinity" if value > 0 else "-Infinity"
