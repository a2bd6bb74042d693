"""Content-Encoding codecs for request bodies: gzip, deflate, zstd.

Decompression is bounded: a body that inflates past the limit is refused as
too large (a zip bomb costs at most the limit), and a corrupt stream is an
error the caller answers with 400.
"""

from __future__ import annotations

import gzip
import zlib

import zstandard

SUPPORTED = ("gzip", "deflate", "zstd")


class CorruptBody(ValueError):
    """The body is not valid data for its Content-Encoding."""


class BodyTooLarge(ValueError):
    """The body inflates past the size limit."""


def _inflate(decompressor: zlib._Decompress, data: bytes, limit: int) -> bytes:
    try:
        out = decompressor.decompress(data, limit + 1)
    except zlib.error as problem:
        raise CorruptBody(str(problem)) from None
    if len(out) > limit or decompressor.unconsumed_tail:
        raise BodyTooLarge(f"decompressed body exceeds {limit} bytes")
    if not decompressor.eof:
        raise CorruptBody("truncated compressed body")
    return out


_ZSTD = zstandard.ZstdDecompressor()


def _unzstd(data: bytes, limit: int) -> bytes:
    try:
        declared = zstandard.frame_content_size(data)
    except zstandard.ZstdError as problem:
        raise CorruptBody(str(problem)) from None
    if declared > limit:
        raise BodyTooLarge(f"decompressed body exceeds {limit} bytes")
    try:
        return bytes(_ZSTD.decompress(data, max_output_size=limit))
    except zstandard.ZstdError as problem:
        # Either past the cap (size not declared) or truncated/corrupt: a
        # bounded streaming read tells which.
        try:
            produced = len(_ZSTD.stream_reader(data).read(limit + 1))
        except zstandard.ZstdError:
            produced = 0
        if produced > limit:
            raise BodyTooLarge(f"decompressed body exceeds {limit} bytes") from None
        raise CorruptBody(str(problem)) from None


def decompress(encoding: str, data: bytes, limit: int) -> bytes:
    """Decode `data` for a Content-Encoding in SUPPORTED (or identity)."""
    if encoding in ("", "identity"):
        return data
    if encoding == "gzip":
        return _inflate(zlib.decompressobj(wbits=31), data, limit)
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
