"""Request bodies' ``Content-Encoding``, decoded as upstream's confighttp
decompressor decodes them, and refused with the errors of Go's readers,
which upstream answers with 400 and a Status holding the error's text
(``gzip: invalid header``, ``invalid input: magic number mismatch``...).

Go's gzip and zlib readers read their header when they are opened, which
upstream's decompressor does before the request reaches the receiver's
handler (:func:`opening_problem`); everything else is found while the body
is read (:func:`decompress`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from sluice.telemetry import compression, framed
from sluice.telemetry.compression import CorruptBody

CODECS: Final = {
    "": "",
    "gzip": "gzip",
    "zstd": "zstd",
    "deflate": "deflate",
    "zlib": "deflate",
    "snappy": "snappy",
    "lz4": "lz4",
}
"""``compression_algorithms`` names this receiver decodes, as
:mod:`sluice.telemetry.compression` names them, or as ``_FRAMED`` does."""
_FRAMED: dict[str, Callable[[bytes, int], bytes]] = {
    "snappy": framed.decompress_snappy,
    "lz4": framed.decompress_lz4,
}
"""Codecs of the collector's receiver only (Edge forwards them as they came)."""

_EOF: Final = "EOF"
_UNEXPECTED_EOF: Final = "unexpected EOF"
_GZIP_HEADER: Final = "gzip: invalid header"
_ZSTD_MAGIC: Final = b"\x28\xb5\x2f\xfd"
_ZSTD_SKIPPABLE: Final = b"\x2a\x4d\x18"
"""The last three bytes of a skippable frame's magic (the first is 0x5?)."""
SHORT: Final = frozenset({_EOF, _UNEXPECTED_EOF})
"""What :func:`opening_problem` says of a body too short for the header."""
_MAGIC_MISMATCH: Final = "invalid input: magic number mismatch"
_GO_TEXTS: Final = {
    "gzip": (
        ("truncated gzip member", _UNEXPECTED_EOF),
        ("incorrect data check", "gzip: invalid checksum"),
        ("incorrect length check", "gzip: invalid checksum"),
        ("incorrect header check", _GZIP_HEADER),
        ("unknown compression method", _GZIP_HEADER),
    ),
    "deflate": (
        ("truncated compressed body", _UNEXPECTED_EOF),
        ("incorrect data check", "zlib: invalid checksum"),
    ),
    "zstd": (("not a zstd frame", _MAGIC_MISMATCH),),
}
"""Go's error for a problem Sluice's decoders name (by a part of their text)."""


def opening_problem(encoding: str, body: bytes) -> str | None:
    """Go's error when the reader for `encoding` (a key of CODECS) is opened
    on `body`, None when it opens: gzip and zlib read their header first."""
    codec = CODECS[encoding]
    if codec == "gzip":
        if len(body) < 10:
            return _UNEXPECTED_EOF if body else _EOF
        if body[:3] != b"\x1f\x8b\x08":
            return _GZIP_HEADER
    elif codec == "deflate":
        if len(body) < 2:
            return _UNEXPECTED_EOF
        if body[0] & 0x0F != 8 or body[0] >> 4 > 7 or int.from_bytes(body[:2], "big") % 31:
            return "zlib: invalid header"
        if body[1] & 0x20:  # a preset dictionary, of which upstream has none
            if len(body) < 6:
                return _UNEXPECTED_EOF
            if int.from_bytes(body[2:6], "big") != 1:  # Adler-32 of no dictionary
                return "zlib: invalid dictionary"
    return None


def decompress(encoding: str, body: bytes, limit: int) -> bytes:
    """`body` decoded for `encoding` (a key of CODECS), within `limit` bytes.
    Raises BodyTooLarge, or CorruptBody with Go's text where it is known."""
    codec = CODECS[encoding]
    if codec == "zstd":
        problem = _zstd_start_problem(body)
        if problem is not None:
            raise CorruptBody(problem)
        if not body:
            return b""  # Go's zstd reader: end of stream at once
    decode = _FRAMED.get(codec)
    try:
        if decode is not None:
            return decode(body, limit)
        return compression.decompress(codec, body, limit)
    except CorruptBody as problem:
        text = str(problem)
        for part, go_text in _GO_TEXTS.get(codec, ()):
            if part in text:
                raise CorruptBody(go_text) from None
        raise


def _zstd_start_problem(body: bytes) -> str | None:
    """Go's error for the first frame's magic number."""
    if not body:
        return None
    if len(body) < 4:
        return _UNEXPECTED_EOF
    if body[:4] != _ZSTD_MAGIC and (body[0] & 0xF0 != 0x50 or body[1:4] != _ZSTD_SKIPPABLE):
        return _MAGIC_MISMATCH
    return None
