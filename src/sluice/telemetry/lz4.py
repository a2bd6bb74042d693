"""``Content-Encoding: lz4`` bodies: the LZ4 frame format (magic number, frame
descriptor, blocks, an end mark, optional xxHash32 checksums), which
upstream's receiver reads with Go's ``lz4.NewReader``. Frames may follow one
another; skippable frames are passed over.

Pure Python, as no LZ4 library is installed: a few MB/s, enough for a codec
senders rarely choose. Output is bounded by the caller's limit, and a body
that is not valid LZ4 frames (a bad header checksum, a block or content
checksum mismatch, a match reaching before the start) raises
:class:`~sluice.telemetry.compression.CorruptBody`.
"""

from __future__ import annotations

from typing import Final

from sluice.telemetry.compression import BodyTooLarge, CorruptBody
from sluice.telemetry.lz77 import copy_back

_MAGIC: Final = 0x184D2204
_SKIPPABLE_MAGIC: Final = 0x184D2A50
"""The low 4 bits of a skippable frame's magic number vary."""
_BLOCK_MAX: Final = {4: 64 << 10, 5: 256 << 10, 6: 1 << 20, 7: 4 << 20}
_MASK: Final = 0xFFFFFFFF
_P1: Final = 2654435761
_P2: Final = 2246822519
_P3: Final = 3266489917
_P4: Final = 668265263
_P5: Final = 374761393


def _rotl(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (32 - bits))) & _MASK


def xxh32(data: bytes, seed: int = 0) -> int:
    """xxHash32, the checksum LZ4 frames carry."""
    size = len(data)
    position = 0
    if size >= 16:
        v1 = (seed + _P1 + _P2) & _MASK
        v2 = (seed + _P2) & _MASK
        v3 = seed
        v4 = (seed - _P1) & _MASK
        last = size - 16
        while position <= last:
            a, b, c, d = (
                int.from_bytes(data[position + k : position + k + 4], "little")
                for k in (0, 4, 8, 12)
            )
            v1 = _rotl((v1 + a * _P2) & _MASK, 13) * _P1 & _MASK
            v2 = _rotl((v2 + b * _P2) & _MASK, 13) * _P1 & _MASK
            v3 = _rotl((v3 + c * _P2) & _MASK, 13) * _P1 & _MASK
            v4 = _rotl((v4 + d * _P2) & _MASK, 13) * _P1 & _MASK
            position += 16
        digest = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & _MASK
    else:
        digest = (seed + _P5) & _MASK
    digest = (digest + size) & _MASK
    while position + 4 <= size:
        word = int.from_bytes(data[position : position + 4], "little")
        digest = _rotl((digest + word * _P3) & _MASK, 17) * _P4 & _MASK
        position += 4
    while position < size:
        digest = _rotl((digest + data[position] * _P5) & _MASK, 11) * _P1 & _MASK
        position += 1
    digest ^= digest >> 15
    digest = digest * _P2 & _MASK
    digest ^= digest >> 13
    digest = digest * _P3 & _MASK
    return digest ^ (digest >> 16)


def _length(block: bytes, position: int, base: int) -> tuple[int, int]:
    """A length whose 4-bit field was 15: more bytes follow while they are 255."""
    length = base
    if base == 15:
        while True:
            if position >= len(block):
                raise CorruptBody("lz4: invalid source or destination buffer too short")
            byte = block[position]
            position += 1
            length += byte
            if byte != 255:
                break
    return length, position


def decode_block(block: bytes, out: bytearray, room: int) -> None:
    """Append one LZ4 block's content to `out` (earlier content may be
    referred to), at most `room` bytes."""
    size = len(block)
    start = len(out)
    position = 0
    while True:
        if position >= size:
            raise CorruptBody("lz4: invalid source or destination buffer too short")
        token = block[position]
        count, position = _length(block, position + 1, token >> 4)
        if position + count > size:
            raise CorruptBody("lz4: invalid source or destination buffer too short")
        out += block[position : position + count]
        position += count
        if position == size:
            break  # the last sequence has literals only
        if position + 2 > size:
            raise CorruptBody("lz4: invalid source or destination buffer too short")
        offset = block[position] | block[position + 1] << 8
        count, position = _length(block, position + 2, token & 15)
        count += 4
        if offset == 0 or offset > len(out):
            raise CorruptBody("lz4: invalid source or destination buffer too short")
        if len(out) - start + count > room:
            raise BodyTooLarge("")
        copy_back(out, offset, count)
        if position == size:
            break  # ending on a match breaks the format's rule, but Go's decoder takes it
    if len(out) - start > room:
        raise BodyTooLarge("")


def _frame(data: bytes, position: int, out: bytearray, limit: int) -> int:
    """Decode the frame at `position` (its magic number read) into `out`;
    where the next frame starts."""
    size = len(data)
    header_start = position
    if position + 3 > size:
        raise CorruptBody("lz4: truncated frame header")
    flags, descriptor = data[position], data[position + 1]
    if flags >> 6 != 1 or flags & 2 or descriptor & 0x8F or descriptor >> 4 & 7 not in _BLOCK_MAX:
        raise CorruptBody("lz4: invalid frame descriptor")
    block_max = _BLOCK_MAX[descriptor >> 4 & 7]
    block_checksums, content_checksum = flags & 0x10, flags & 0x04
    position += 2 + (8 if flags & 0x08 else 0) + (4 if flags & 0x01 else 0)
    if position >= size:
        raise CorruptBody("lz4: truncated frame header")
    if xxh32(data[header_start:position]) >> 8 & 0xFF != data[position]:
        raise CorruptBody("lz4: invalid header checksum")
    position += 1
    content_start = len(out)
    while True:
        if position + 4 > size:
            raise CorruptBody("lz4: truncated frame")
        word = int.from_bytes(data[position : position + 4], "little")
        position += 4
        if word == 0:
            break  # end mark
        stored, length = word >> 31, word & 0x7FFFFFFF
        if length > block_max or position + length > size:
            raise CorruptBody("lz4: invalid block")
        block = data[position : position + length]
        position += length
        if block_checksums:
            checksum = int.from_bytes(data[position : position + 4], "little")
            position += 4
            if xxh32(block) != checksum:
                raise CorruptBody("lz4: invalid block checksum")
        room = limit - len(out)
        if stored:
            if length > room:
                raise BodyTooLarge("")
            out += block
        else:
            decode_block(block, out, min(room, block_max))
    if content_checksum:
        if position + 4 > size:
            raise CorruptBody("lz4: truncated frame")
        checksum = int.from_bytes(data[position : position + 4], "little")
        position += 4
        if xxh32(bytes(out[content_start:])) != checksum:
            raise CorruptBody("lz4: invalid frame checksum")
    return position


def decompress_frames(data: bytes, limit: int) -> bytes:
    """Every LZ4 frame of `data`, concatenated (at most `limit` bytes)."""
    out = bytearray()
    position = 0
    size = len(data)
    if not size:
        raise CorruptBody("lz4: empty body")
    try:
        while position < size:
            if position + 4 > size:
                raise CorruptBody("lz4: bad magic number")
            magic = int.from_bytes(data[position : position + 4], "little")
            position += 4
            if magic & 0xFFFFFFF0 == _SKIPPABLE_MAGIC:
                if position + 4 > size:
                    raise CorruptBody("lz4: truncated skippable frame")
                position += 4 + int.from_bytes(data[position : position + 4], "little")
                continue
            if magic != _MAGIC:
                raise CorruptBody("lz4: bad magic number")
            position = _frame(data, position, out, limit)
    except BodyTooLarge:
        raise BodyTooLarge(f"decompressed body exceeds {limit} bytes") from None
    if len(out) > limit:
        raise BodyTooLarge(f"decompressed body exceeds {limit} bytes")
    return bytes(out)
