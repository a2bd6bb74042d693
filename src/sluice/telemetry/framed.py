"""``Content-Encoding: snappy`` and ``lz4`` bodies, as upstream's receiver
reads them: the Snappy framing format (Go's ``snappy.NewReader``) and LZ4
frames (``lz4.NewReader``), checksums checked, decoded natively by cramjam.

Decompression is bounded as :mod:`sluice.telemetry.compression`'s is: the
output buffer starts small and doubles up to the limit, so a body that
inflates past it is refused as too large having cost at most twice the
limit, and a corrupt stream is :class:`CorruptBody`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import cramjam

from sluice.telemetry.compression import CorruptBody, too_large

_FIRST_ROOM: Final = 64 * 1024
_OUT_OF_ROOM: Final = "failed to write whole buffer"
"""cramjam's error when the output buffer is too small (Rust's WriteZero)."""

Into = Callable[[bytes, bytearray], int]


def _bounded(decode_into: Into, data: bytes, limit: int) -> bytes:
    if not data:
        return b""  # as Go's readers: end of stream at once, no content
    room = min(max(_FIRST_ROOM, 4 * len(data)), limit + 1)
    while True:
        out = bytearray(room)
        try:
            written = decode_into(data, out)
        except cramjam.DecompressionError as problem:
            if _OUT_OF_ROOM not in str(problem):
                raise CorruptBody(str(problem)) from None
            if room > limit:
                raise too_large(limit) from None
            room = min(room * 2, limit + 1)
            continue
        if written > limit:
            raise too_large(limit)
        return bytes(out[:written])


def decompress_snappy(data: bytes, limit: int) -> bytes:
    """A framed Snappy stream's content (at most `limit` bytes)."""
    return _bounded(cramjam.snappy.decompress_into, data, limit)


def decompress_lz4(data: bytes, limit: int) -> bytes:
    """The content of one or more LZ4 frames (at most `limit` bytes)."""
    return _bounded(cramjam.lz4.decompress_into, data, limit)
