"""Content-Encoding codecs for request bodies: gzip, deflate, zstd.

Decompression is bounded: a body that inflates past the limit is refused as
too large (a zip bomb costs at most the limit), and a corrupt stream is an
error the caller answers with 400.

A gzip body may hold several members and a zstd body several frames, one
after the other (RFC 1952 section 2.2, RFC 8878 section 3): each is
decompressed and the results are concatenated, within one limit on the
total. Anything after the last member or frame that is not another one, and
anything after a deflate stream's end, makes the body corrupt: dropping it
would lose whatever it held without anyone noticing.
"""

from __future__ import annotations

import gzip
import zlib
from typing import Any, Final

import zstandard

SUPPORTED = ("gzip", "deflate", "zstd")


class CorruptBody(ValueError):
    """The body is not valid data for its Content-Encoding."""


class BodyTooLarge(ValueError):
    """The body inflates past the size limit."""


def too_large(limit: int) -> BodyTooLarge:
    """The error of a body that inflates past `limit` bytes."""
    return BodyTooLarge(f"decompressed body exceeds {limit} bytes")


def _feed(decompressor: zlib._Decompress, data: Any, room: int, limit: int) -> bytes:
    """What `data` inflates to, which may take `room` more bytes of `limit`."""
    try:
        out = decompressor.decompress(data, room + 1)
    except zlib.error as problem:
        raise CorruptBody(str(problem)) from None
    if len(out) > room or decompressor.unconsumed_tail:
        raise too_large(limit)
    return out


def _inflate(decompressor: zlib._Decompress, data: bytes, limit: int) -> bytes:
    """One deflate stream (zlib or raw), which must end exactly where `data` does."""
    out = _feed(decompressor, data, limit, limit)
    if not decompressor.eof:
        raise CorruptBody("truncated compressed body")
    if decompressor.unused_data:
        raise CorruptBody("data after the end of the compressed stream")
    return out


_FIRST_PIECE: Final = 256
_LARGEST_PIECE: Final = 1 << 16


def _gunzip(data: bytes, limit: int) -> bytes:
    """Every gzip member of `data`, concatenated.

    A member's end is only known once zlib reaches it, and zlib then copies out
    whatever input followed. So each member is fed in pieces that start small
    and double: a body of many tiny members costs each of them a small copy,
    not a copy of the rest of the body."""
    view = memoryview(data)
    size = len(data)
    out: list[bytes] = []
    room = limit
    position = 0
    while position < size:
        decompressor = zlib.decompressobj(wbits=31)
        piece = _FIRST_PIECE
        while not decompressor.eof:
            if position >= size:
                raise CorruptBody("truncated gzip member")
            chunk = view[position : position + piece]
            position += len(chunk)
            inflated = _feed(decompressor, chunk, room, limit)
            room -= len(inflated)
            out.append(inflated)
            piece = min(piece * 2, _LARGEST_PIECE)
        position -= len(decompressor.unused_data)  # the next member starts there
    if not out:
        raise CorruptBody("empty gzip body")
    return b"".join(out)


_ZSTD = zstandard.ZstdDecompressor()
_ZSTD_MAGIC: Final = 0xFD2FB528
_SKIPPABLE_MAGIC: Final = 0x184D2A50
"""Skippable frames carry metadata no decoder outputs; the low 4 bits vary."""


def _frame_end(data: bytes, start: int) -> int:
    """Where the zstd frame (or skippable frame) starting at `start` ends, from
    its header and block headers (RFC 8878 section 3.1), without decompressing."""
    size = len(data)
    if start + 8 > size:
        raise CorruptBody("truncated or not a zstd frame")
    magic = int.from_bytes(data[start : start + 4], "little")
    if magic & 0xFFFFFFF0 == _SKIPPABLE_MAGIC:
        end = start + 8 + int.from_bytes(data[start + 4 : start + 8], "little")
        if end > size:
            raise CorruptBody("truncated skippable zstd frame")
        return end
    if magic != _ZSTD_MAGIC:
        raise CorruptBody("not a zstd frame")
    descriptor = data[start + 4]
    single_segment = descriptor >> 5 & 1
    content_size_bytes = (single_segment, 2, 4, 8)[descriptor >> 6]
    dictionary_bytes = (0, 1, 2, 4)[descriptor & 3]
    position = start + 5 + (1 - single_segment) + dictionary_bytes + content_size_bytes
    last = 0
    while not last:
        if position + 3 > size:
            raise CorruptBody("truncated zstd frame")
        header = int.from_bytes(data[position : position + 3], "little")
        last = header & 1
        kind = header >> 1 & 3
        if kind == 3:
            raise CorruptBody("reserved zstd block type")
        position += 3 + (1 if kind == 1 else header >> 3)  # an RLE block holds one byte
    if descriptor >> 2 & 1:
        position += 4  # content checksum
    if position > size:
        raise CorruptBody("truncated zstd frame")
    return position


def _unzstd_frame(frame: bytes, limit: int) -> bytes:
    try:
        declared = zstandard.frame_content_size(frame)
    except zstandard.ZstdError as problem:
        raise CorruptBody(str(problem)) from None
    if declared > limit:
        raise too_large(limit)
    try:
        return bytes(_ZSTD.decompress(frame, max_output_size=limit))
    except zstandard.ZstdError as problem:
        # Either past the cap (size not declared) or corrupt: a bounded
        # streaming read tells which.
        try:
            produced = len(_ZSTD.stream_reader(frame).read(limit + 1))
        except zstandard.ZstdError:
            produced = 0
        if produced > limit:
            raise too_large(limit) from None
        raise CorruptBody(str(problem)) from None


def _unzstd(data: bytes, limit: int) -> bytes:
    """Every zstd frame of `data`, concatenated (skippable frames add nothing)."""
    out: list[bytes] = []
    room = limit
    start = 0
    size = len(data)
    while start < size or not out:
        end = _frame_end(data, start)
        if int.from_bytes(data[start : start + 4], "little") != _ZSTD_MAGIC:
            out.append(b"")
        else:
            frame = data if start == 0 and end == size else data[start:end]
            try:
                inflated = _unzstd_frame(frame, room)
            except BodyTooLarge:
                raise too_large(limit) from None
            room -= len(inflated)
            out.append(inflated)
        start = end
    return b"".join(out)


def decompress(encoding: str, data: bytes, limit: int) -> bytes:
    """Decode `data` for a Content-Encoding in SUPPORTED (or identity)."""
    if encoding in ("", "identity"):
        return data
    if encoding == "gzip":
        return _gunzip(data, limit)
    if encoding == "deflate":
        # RFC 9110 deflate is a zlib stream; some clients send raw deflate.
        zlib_header = (
            len(data) >= 2 and data[0] & 0x0F == 8 and int.from_bytes(data[:2], "big") % 31 == 0
        )
        wbits = 15 if zlib_header else -15
        return _inflate(zlib.decompressobj(wbits=wbits), data, limit)
    if encoding == "zstd":
        return _unzstd(data, limit)
    raise ValueError(f"unsupported Content-Encoding {encoding!r}")


def compress(encoding: str, data: bytes) -> bytes:
    """Encode `data` for a Content-Encoding in SUPPORTED (or identity)."""
    if encoding in ("", "identity"):
        return data
    if encoding == "gzip":
        return gzip.compress(data, compresslevel=5, mtime=0)
    if encoding == "deflate":
        return zlib.compress(data, 5)
    if encoding == "zstd":
        return zstandard.ZstdCompressor(level=3).compress(data)
    raise ValueError(f"unsupported Content-Encoding {encoding!r}")
