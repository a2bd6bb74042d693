"""The log context (upstream's ``ottllog``) over lean log records.

Records stay wire bytes in the pipeline (:mod:`sluice.telemetry.otlp_lean`);
a condition that reads one parses it once, with the protobuf runtime, into a
``LeanLogRecord`` whose attributes stay raw ``KeyValue`` bytes (parsing is
cheaper than the byte reader in pure Python and close to it compiled, and
one message answers every path).
"""

from __future__ import annotations

from typing import Any

from sluice.ottl.contexts.base import (
    COMMON,
    Context,
    Getter,
    Resolution,
    Resolved,
    leaf,
)
from sluice.ottl.errors import OttlRuntimeError
from sluice.ottl.syntax import Field
from sluice.ottl.values import (
    PMap,
    PSlice,
    RawPMap,
    as_string,
    from_any,
    index_map,
    index_slice,
    int64,
)
from sluice.policy.view import MalformedRecord
from sluice.telemetry.otlp_lean import parse_record

SEVERITIES = ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL")
ENUMS: dict[str, int] = {"SEVERITY_NUMBER_UNSPECIFIED": 0}
for _level, _name in enumerate(SEVERITIES):
    for _step in range(4):
        ENUMS[f"SEVERITY_NUMBER_{_name}{_step + 1 if _step else ''}"] = _level * 4 + _step + 1


class LogItem:
    """One log record with its containers (ResourceLogs `rc`, ScopeLogs `sc`),
    reused for every record of a batch."""

    __slots__ = ("hits", "parsed", "raw", "rc", "sc")

    def __init__(self) -> None:
        self.rc: Any = None
        self.sc: Any = None
        self.raw = b""
        self.parsed: Any = None
        self.hits: list[Any] = []

    def message(self) -> Any:
        parsed = self.parsed
        if parsed is None:
            try:
                parsed = self.parsed = parse_record(self.raw)
            except MalformedRecord as broken:
                raise OttlRuntimeError(str(broken)) from None
        return parsed


def _body(item: LogItem) -> Any:
    return from_any(item.message().body)


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


def _attributes(keys: tuple[str | int, ...]) -> Getter:
    if not keys:
        return lambda item: RawPMap(item.message().attributes)
    return lambda item: index_map(RawPMap(item.message().attributes), keys)


def _number(name: str) -> Getter:
    return lambda item: int64(getattr(item.message(), name))


def _text(name: str) -> Getter:
    return lambda item: getattr(item.message(), name)


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


def log_path(resolution: Resolution, fields: tuple[Field, ...]) -> Resolved:
    first = fields[0]
    name = first.name
    getter: Getter
    if name == "body":
        if len(fields) > 1:
            if fields[1].name != "string" or fields[1].keys or first.keys:
                raise resolution.error(fields[1].name)
            leaf(resolution, fields[1:])
            getter = lambda item: as_string(_body(item))  # noqa: E731
        else:
            getter = _body_key(first.keys) if first.keys else _body
    elif name in _IDS:
        if len(fields) < 2:
            raise resolution.unsupported(f"compare {name}.string (the id as hex) instead")
        if fields[1].name != "string":
            raise resolution.error(fields[1].name)
        leaf(resolution, fields[1:])
        getter = _hex_id(name, _IDS[name])
    else:
        last = leaf(resolution, fields, keys=name == "attributes")
        if name == "attributes":
            getter = _attributes(last.keys)
        elif name in _NUMBERS:
            getter = _number(name)
        elif name in ("severity_text", "event_name"):
            getter = _text(name)
        elif name in ("time", "observed_time"):
            raise resolution.unsupported("time values need converters outside Sluice's subset")
        else:
            raise resolution.error(name)
    return Resolved(getter, resolution.key(fields))


LOG = Context("log", "log", log_path, ENUMS, COMMON)
