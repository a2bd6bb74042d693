"""Reading the scalar fields of OTLP JSON records: ids, enums, strings and
bodies. A value of the wrong JSON type reads as absent (None)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sluice.policy.view import PRESENT, _Present

ScanValue = str | _Present
"""What a scan sees of a value: its string, or PRESENT for one without text."""


def member(holder: Any, key: str) -> Any:
    """``holder[key]`` when `holder` is an object, else None."""
    return holder.get(key) if isinstance(holder, dict) else None


def nonempty(raw: Any) -> str | None:
    """`raw` when it is a non-empty string."""
    return raw if raw and isinstance(raw, str) else None


def hex_id(raw: Any) -> str | None:
    """A trace or span id as scanned: lowercase hex, None when absent or all zeros."""
    if not raw or not isinstance(raw, str) or raw.strip("0") == "":
        return None
    return raw.lower()


def id_bytes(raw: Any) -> bytes | None:
    """A trace or span id's bytes, None when absent, all zeros or not hex."""
    if not raw or not isinstance(raw, str):
        return None
    try:
        value = bytes.fromhex(raw)
    except ValueError:
        return None
    return value if value.strip(b"\x00") else None


def enum_name(raw: Any, prefix: str, names: Sequence[str]) -> str | None:
    """Short lowercase name of an OTLP enum given as its proto name or a JSON
    number (None for 0/unknown). As pdata's ``ReadEnumValue``, a string is
    only looked up among the names, spelt exactly: a number in a string
    ("2") is an unknown name, not a number."""
    if raw.__class__ is str:
        name = raw[len(prefix) :].lower() if raw.startswith(prefix) else ""
        return name if name in names and raw == prefix + name.upper() else None
    if raw.__class__ is int and 0 < raw < len(names) + 1:
        return names[raw - 1]
    return None


def body_value(body: Any) -> ScanValue | None:
    """What a scan sees of a (not null) body AnyValue: its string when
    non-empty, None for an empty string or an empty AnyValue, else PRESENT."""
    if body.__class__ is dict:
        text = body.get("stringValue")
        if text.__class__ is str:
            return text or None
        return PRESENT if body else None
    return PRESENT
