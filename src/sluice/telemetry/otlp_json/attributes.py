"""OTLP JSON AnyValues and attribute lists (``[{"key": ..., "value": {...}}]``):
reading a value, finding a key (nested keys walk ``kvlistValue``s), and the
edits transforms make. Only a key's first entry counts."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from typing import Any

from sluice.goencoding import std_base64
from sluice.gostrconv import atoi, parse_float
from sluice.policy.view import PRESENT, MalformedRecord, Scan, Value
from sluice.telemetry.otlp_json.fields import ScanValue

JsonObj = dict[str, Any]

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def typed_any(av: Any) -> Value:
    """The typed view of an OTLP JSON AnyValue (an attribute's value); a variant
    of the wrong JSON type is present without a typed value."""
    if not isinstance(av, dict):
        return PRESENT
    if "stringValue" in av:
        s = av["stringValue"]
        return s if isinstance(s, str) else PRESENT
    if "boolValue" in av:
        flag = av["boolValue"]
        return flag if isinstance(flag, bool) else PRESENT
    # Numbers in strings are read as upstream's OTLP JSON reader (pdata)
    # reads them, with Go's strconv; what it refuses has no typed value.
    if "intValue" in av:
        raw = av["intValue"]
        if raw.__class__ is str:
            try:
                return atoi(raw)
            except ValueError:  # not decimal digits, or past int64
                return PRESENT
        return raw if raw.__class__ is int and _INT64_MIN <= raw <= _INT64_MAX else PRESENT
    if "doubleValue" in av:
        raw = av["doubleValue"]
        number: float | None = None
        if raw.__class__ is str:
            number = parse_float(raw)
        elif raw.__class__ is float:
            # an infinity is a number past the double range (1e400), which pdata refuses
            number = raw if math.isfinite(raw) or math.isnan(raw) else None
        elif raw.__class__ is int:
            with contextlib.suppress(OverflowError):  # past the double range
                number = float(raw)
        return PRESENT if number is None else number
    if "bytesValue" in av:
        raw = av["bytesValue"]
        if raw.__class__ is str:
            try:
                return std_base64(raw)  # as pdata: Go's strict StdEncoding
            except ValueError:
                return PRESENT
        return PRESENT
    return PRESENT


def scan_any(av: Any) -> ScanValue:
    """The scan view of an attribute value: its string if non-empty, else PRESENT."""
    if isinstance(av, dict):
        s = av.get("stringValue")
        if s and isinstance(s, str):
            return s
    return PRESENT


def _kvlist_values(value: Any) -> Any:
    if isinstance(value, dict):
        kvlist = value.get("kvlistValue")
        if isinstance(kvlist, dict):
            return kvlist.get("values")
    return None


def find_kv(kvs: Any, path: Sequence[str]) -> JsonObj | None:
    """The KeyValue at `path` (first entry per segment; inner segments walk kvlists)."""
    for depth, key in enumerate(path):
        if not isinstance(kvs, list):
            return None
        found = None
        for kv in kvs:
            if isinstance(kv, dict) and kv.get("key") == key:
                found = kv
                break
        if found is None:
            return None
        if depth == len(path) - 1:
            return found
        kvs = _kvlist_values(found.get("value"))
    return None


def nested_hits(entries: tuple[tuple[Scan, tuple[str, ...]], ...], value: Any) -> tuple[int, ...]:
    """What an attribute's selectors that go deeper than its key (or share it)
    hit in its `value`."""
    hits: tuple[int, ...] = ()
    for scan, rest in entries:
        if rest:
            inner = find_kv(_kvlist_values(value), rest)
            if inner is None:
                continue
            found = scan(scan_any(inner.get("value")))
        else:
            found = scan(scan_any(value))
        if found:
            hits += found
    return hits


def writable(present: Any, key: str) -> None:
    """Raise unless `present`, found where a list or object belongs, is absent."""
    if present is not None:
        raise MalformedRecord(f"{key} is not a list or object; not overwritten")


def _parent_list(holder: JsonObj, path: Sequence[str], create: bool) -> list[Any] | None:
    """The attribute list that holds the last segment of `path`; with `create`,
    missing intermediate kvlists are made (and a missing top list). An
    ``attributes`` or kvlist ``values`` that holds something other than a list
    is never replaced: creating through it raises :class:`MalformedRecord`."""
    kvs = holder.get("attributes")
    if not isinstance(kvs, list):
        if not create:
            return None
        writable(kvs, "attributes")
        kvs = holder["attributes"] = []
    for key in path[:-1]:
        kv = find_kv(kvs, (key,))
        if kv is None:
            if not create:
                return None
            kv = {"key": key, "value": {"kvlistValue": {"values": []}}}
            kvs.append(kv)
        value = kv.get("value")
        inner = value.get("kvlistValue") if isinstance(value, dict) else None
        if not isinstance(inner, dict):
            if not create:
                return None
            inner = {"values": []}
            kv["value"] = {"kvlistValue": inner}
        if not isinstance(inner.get("values"), list):
            if not create:
                return None
            writable(inner.get("values"), "values")
            inner["values"] = []
        kvs = inner["values"]
    return kvs


def set_attribute(holder: JsonObj, path: Sequence[str], value: JsonObj) -> None:
    """Sets the attribute at `path` of `holder` (an object with ``attributes``)
    to the AnyValue `value`, creating the lists on the way."""
    kvs = _parent_list(holder, path, create=True)
    assert kvs is not None
    kv = find_kv(kvs, path[-1:])
    if kv is None:
        kvs.append({"key": path[-1], "value": value})
    else:
        kv["value"] = value


def remove_attribute(holder: JsonObj, path: Sequence[str]) -> bool:
    """Removes every entry of the attribute at `path`; whether there was one."""
    kvs = _parent_list(holder, path, create=False)
    if not kvs:
        return False
    key = path[-1]
    kept = [kv for kv in kvs if not (isinstance(kv, dict) and kv.get("key") == key)]
    if len(kept) == len(kvs):
        return False
    kvs[:] = kept
    return True


def rename_attribute(holder: JsonObj, path: Sequence[str], to: str, upsert: bool) -> bool:
    """Moves the attribute at `path` to key `to` in the same list (over an
    existing `to` only with `upsert`); whether the attribute was there."""
    kvs = _parent_list(holder, path, create=False)
    source = find_kv(kvs, path[-1:]) if kvs else None
    if source is None or kvs is None:
        return False
    if to == path[-1]:
        return True
    target = find_kv(kvs, (to,))
    if target is not None and not upsert:
        return True
    value = source.get("value", {})
    if target is not None:
        target["value"] = value
    kvs[:] = [kv for kv in kvs if not (isinstance(kv, dict) and kv.get("key") == path[-1])]
    if target is None:
        kvs.append({"key": to, "value": value})
    return True
