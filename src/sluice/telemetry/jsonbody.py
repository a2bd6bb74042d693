"""JSON request bodies parsed by orjson, with the standard library's parser
as the definition of what is accepted and what it means.

orjson parses the documents agents send two to three times faster than
``json``. It accepts less (NaN and Infinity, lone surrogate escapes, numbers
past the double range, UTF-16 bodies) and gives the same values for what it
accepts, with one exception: an integer beyond 64 bits becomes a float. So
when orjson refuses a body, or its document holds a float and the body a run
of 19 digits (the only way to write such an integer), :func:`parse` does not
answer and the caller parses with ``json`` as before. Results and errors are
therefore exactly the standard library's, except that a document nested
deeper than :data:`MAX_DEPTH` is refused (:class:`TooDeep`, a ValueError).

:func:`encode` writes a document back. A string may hold a lone surrogate
(``"\\ud800"`` parses to one), which UTF-8 cannot carry: it is written as the
same ``\\uXXXX`` escape, so the upstream gets what the sender wrote. A number
JSON cannot carry is refused (:class:`NotFinite`): the standard library reads
``NaN`` and ``Infinity``, and a number past the double range such as ``1e400``
as infinity, and would write ``Infinity`` back, which no JSON reader takes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Final

import orjson


class _Unparsed:
    """The sentinel type of :data:`UNPARSED`."""


UNPARSED: Final = _Unparsed()
"""Returned by :func:`parse` when the standard library must decide."""

_DIGITS_ONLY = bytes(0x31 if 0x30 <= byte <= 0x39 else 0x30 for byte in range(256))
"""Maps ASCII digits to ``1`` and every other byte to ``0``."""
_LONG_RUN = b"1" * 19


MAX_DEPTH: Final = 512
"""The deepest nesting of arrays and objects read. Writing a document back
recurses once per level, so what is read must stay well inside the
interpreter's recursion limit; real telemetry nests a few dozen levels."""


class TooDeep(ValueError):
    """The document nests deeper than :data:`MAX_DEPTH`."""


def _walk(value: Any, depth: int) -> bool:
    """Whether `value`, a container at nesting level `depth`, holds a float
    anywhere; raises :class:`TooDeep` past :data:`MAX_DEPTH`."""
    items: Iterable[Any]
    if isinstance(value, dict):
        items = value.values()
    elif isinstance(value, list):
        items = value
    else:
        return isinstance(value, float)
    if depth > MAX_DEPTH:
        raise TooDeep(f"JSON nested deeper than {MAX_DEPTH} levels")
    found = False
    for item in items:
        if isinstance(item, float) or (isinstance(item, (dict, list)) and _walk(item, depth + 1)):
            found = True
    return found


def check_depth(document: Any) -> Any:
    """`document`, when it nests no deeper than :data:`MAX_DEPTH`; else raises
    :class:`TooDeep`."""
    _walk(document, 1)
    return document


def parse(body: bytes) -> Any:
    """The document `body` holds, or UNPARSED when ``json`` must parse it.
    Raises :class:`TooDeep` for a document nested too deeply to handle."""
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError:
        return UNPARSED
    if _walk(document, 1) and _LONG_RUN in body.translate(_DIGITS_ONLY):
        return UNPARSED  # the float may be an integer orjson could not hold
    return document


class NotFinite(ValueError):
    """The document holds NaN or an infinity, which JSON has no number for."""


def dumps(document: Any, allow_nan: bool = False) -> str:
    """`document` as compact JSON text, non-ASCII characters as themselves.
    Raises :class:`NotFinite` for NaN or an infinity in it, unless `allow_nan`
    (then written ``NaN``, ``Infinity``, as the standard library reads them)."""
    try:
        return json.dumps(document, ensure_ascii=False, separators=(",", ":"), allow_nan=allow_nan)
    except ValueError:
        raise NotFinite(
            "a number JSON cannot carry (NaN, Infinity, or past the double range such as 1e400)"
        ) from None


def to_utf8(text: str) -> bytes:
    """JSON text from :func:`dumps` (or a body's own text) as UTF-8, a lone
    surrogate as its ``\\uXXXX`` escape.

    Outside strings JSON text is ASCII, so the one thing UTF-8 can refuse is a
    lone surrogate inside a string, and its backslash escape is the JSON escape
    of the same code point."""
    return text.encode("utf-8", "backslashreplace")


def encode(document: Any, allow_nan: bool = False) -> bytes:
    """`document` as a compact UTF-8 JSON body (never fails on lone surrogates;
    NaN and infinities as :func:`dumps` writes them)."""
    return to_utf8(dumps(document, allow_nan))
