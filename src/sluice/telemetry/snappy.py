"""``Content-Encoding: snappy`` bodies: the Snappy framing format (a stream
identifier, then chunks of compressed or stored data, each with a masked
CRC-32C of its content), which upstream's receiver reads with Go's
``snappy.NewReader``.

Pure Python, as no Snappy library is installed: about 10 MB/s, enough for a
codec senders rarely choose. Output is bounded by the caller's limit, and a
stream that is not valid framed Snappy (a bad chunk, a checksum mismatch, a
copy reaching before the start) raises
:class:`~sluice.telemetry.compression.CorruptBody`.
"""

from __future__ import annotations

from typing import Final

from sluice.telemetry.compression import BodyTooLarge, CorruptBody
from sluice.telemetry.lz77 import copy_back

_STREAM_ID: Final = b"sNaPpY"
_MAX_CHUNK: Final = 65536
"""Largest uncompressed content of one chunk."""
_CRC_MASK_DELTA: Final = 0xA282EAD8


def _crc_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1  # Castagnoli, reflected
        table.append(crc)
    return table


_CRC_TABLE: Final = _crc_table()


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    table = _CRC_TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc(data: bytes) -> int:
    """The checksum a chunk carries: CRC-32C rotated right by 15 bits plus a constant."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + _CRC_MASK_DELTA) & 0xFFFFFFFF


def decode_block(block: bytes) -> bytes:
    """One raw Snappy block: a varint length, then literals and back-copies."""
    length = shift = position = 0
    while True:
        if position >= len(block) or shift > 28:
            raise CorruptBody("snappy: corrupt input")
        byte = block[position]
        position += 1
        length |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            break
    if length > _MAX_CHUNK:
        raise CorruptBody("snappy: corrupt input")
    out = bytearray()
    size = len(block)
    while position < size:
        tag = block[position]
        kind = tag & 3
        if kind == 0:  # literal
            count = tag >> 2
            if count >= 60:
                extra = count - 59
                if position + 1 + extra > size:
                    raise CorruptBody("snappy: corrupt input")
                count = int.from_bytes(block[position + 1 : position + 1 + extra], "little")
                position += extra
            position += 1
            count += 1
            if position + count > size:
                raise CorruptBody("snappy: corrupt input")
            out += block[position : position + count]
            position += count
            continue
        width = (0, 1, 2, 4)[kind]
        if position + 1 + width > size:
            raise CorruptBody("snappy: corrupt input")
        if kind == 1:
            count = 4 + (tag >> 2 & 7)
            offset = (tag >> 5) << 8 | block[position + 1]
        else:
            count = 1 + (tag >> 2)
            offset = int.from_bytes(block[position + 1 : position + 1 + width], "little")
        position += 1 + width
        if offset <= 0 or offset > len(out) or len(out) + count > length:
            raise CorruptBody("snappy: corrupt input")
        copy_back(out, offset, count)
    if len(out) != length:
        raise CorruptBody("snappy: corrupt input")
    return bytes(out)


def decompress_framed(data: bytes, limit: int) -> bytes:
    """Every chunk of a framed Snappy stream, concatenated (at most `limit` bytes)."""
    out: list[bytes] = []
    total = 0
    position = 0
    size = len(data)
    seen_identifier = False
    while position < size:
        if position + 4 > size:
            raise CorruptBody("snappy: corrupt input")
        kind = data[position]
        length = int.from_bytes(data[position + 1 : position + 4], "little")
        body = data[position + 4 : position + 4 + length]
        position += 4 + length
        if len(body) != length:
            raise CorruptBody("snappy: corrupt input")
        if kind == 0xFF:
            if body != _STREAM_ID:
                raise CorruptBody("snappy: corrupt input")
            seen_identifier = True
            continue
        if not seen_identifier:
            raise CorruptBody("snappy: corrupt input")
        if kind in (0x00, 0x01):
            if length < 4:
                raise CorruptBody("snappy: corrupt input")
            content = decode_block(body[4:]) if kind == 0x00 else body[4:]
            if len(content) > _MAX_CHUNK:
                raise CorruptBody("snappy: corrupt input")
            if masked_crc(content) != int.from_bytes(body[:4], "little"):
                raise CorruptBody("snappy: corrupt input")
            total += len(content)
            if total > limit:
                raise BodyTooLarge(f"decompressed body exceeds {limit} bytes")
            out.append(content)
        elif kind < 0x80:
            raise CorruptBody("snappy: unsupported input")  # reserved, unskippable
        # 0x80-0xfe: padding and reserved skippable chunks carry nothing.
    return b"".join(out)
