"""Reading the scalar fields of OTLP JSON records: ids, enums, strings and
bodies. A value of the wrong JSON type reads as absent (None)."""

from __future__ import annotations

from binascii import a2b_hex
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


ID_SIZES = {"traceId": 16, "spanId": 8, "parentSpanId": 8}
"""The size in bytes of each id an OTLP JSON record may hold, by JSON key."""

_HEX_BYTES = frozenset(b"0123456789abcdefABCDEF")


def pdata_id(text: str, size: int) -> bytes:
    """An id of `size` bytes as pdata's ``UnmarshalJSON`` of a trace or span
    id reads the string: without the quotes it may hold, empty as no id, of
    a length in bytes whose half is `size`, then Go's ``hex.Decode`` (no
    space); raises ValueError with their errors."""
    if len(text) == 2 * size and text.isascii() and text.isalnum():
        # Every id of a well-formed request: ASCII letters and digits only, so
        # fromhex (which would skip blanks) takes no more than hex.Decode does.
        try:
            return bytes.fromhex(text)
        except ValueError:
            pass  # a letter past f: worded below
    data = text.encode("utf-8")
    if len(data) >= 2 and data[0] == data[-1] == ord('"'):
        data = data[1:-1]
    if not data:
        return b""
    if len(data) // 2 != size:
        raise ValueError("invalid length for ID")
    wrong = next((byte for byte in data if byte not in _HEX_BYTES), None)
    if wrong is None and len(data) % 2 == 0:
        return bytes.fromhex(data.decode("ascii"))
    if wrong is None:
        problem = "encoding/hex: odd length hex string"
    else:
        # Go's %#U: the code point, and the character when it prints.
        shown = f" '{chr(wrong)}'" if chr(wrong).isprintable() else ""
        problem = f"encoding/hex: invalid byte: U+{wrong:04X}{shown}"
    source = data.decode("utf-8", "replace")
    raise ValueError(f"cannot unmarshal ID from string '{source}': {problem}")


def id_bytes(raw: Any, size: int) -> bytes | None:
    """A trace or span id's `size` bytes as pdata reads them; None when
    absent, all zeros, or what pdata refuses (a request it would not read,
    whose record is still evaluated)."""
    if not raw or raw.__class__ is not str:
        return None
    try:
        value = pdata_id(raw, size)
    except ValueError:
        return None
    return value if value.strip(b"\x00") else None


def hex_id(raw: Any, size: int) -> str | None:
    """A trace or span id as scanned: the lowercase hex of :func:`id_bytes`."""
    if raw.__class__ is str and len(raw) == 2 * size:
        # The usual id, without the calls: a2b_hex, unlike fromhex, takes hex
        # digits alone, as hex.Decode does.
        try:
            return raw.lower() if a2b_hex(raw).strip(b"\x00") else None
        except ValueError:
            return None
    value = id_bytes(raw, size)
    return None if value is None else value.hex()


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
