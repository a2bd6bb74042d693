"""LZ77 back-references, the step the Snappy and LZ4 decoders share."""

from __future__ import annotations


def copy_back(out: bytearray, offset: int, count: int) -> None:
    """Append `count` bytes starting `offset` bytes before the end of `out`
    (0 < offset <= len(out)): where `count` is larger than `offset`, the copy
    repeats the bytes it has just written."""
    start = len(out) - offset
    while count > 0:
        piece = out[start : start + min(count, offset)]
        out += piece
        count -= len(piece)
