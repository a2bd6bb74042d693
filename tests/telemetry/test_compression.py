"""Content-Encoding decoding: every gzip member and zstd frame, one size cap on
the total, and nothing after the end of the data but more members or frames."""

from __future__ import annotations

import gzip
import os
import zlib

import pytest
import zstandard
from hypothesis import given
from hypothesis import strategies as st

from sluice.telemetry.compression import BodyTooLarge, CorruptBody, decompress

LIMIT = 1 << 20
SKIPPABLE = (0x184D2A5E).to_bytes(4, "little") + (3).to_bytes(4, "little") + b"abc"


def _zstd(part: bytes, how: int) -> bytes:
    if how == 0:
        return zstandard.ZstdCompressor().compress(part)
    if how == 1:  # no content size in the header
        unsized = zstandard.ZstdCompressor(write_content_size=False, write_checksum=True)
        return unsized.compress(part)
    streaming = zstandard.ZstdCompressor().compressobj()  # several blocks, size unknown
    return streaming.compress(part) + streaming.flush()


@given(st.lists(st.binary(max_size=3000), min_size=1, max_size=4), st.integers(0, 2))
def test_every_member_and_frame_is_decompressed(parts: list[bytes], how: int) -> None:
    whole = b"".join(parts)
    members = b"".join(gzip.compress(part) for part in parts)
    assert decompress("gzip", members, LIMIT) == whole == gzip.decompress(members)
    frames = SKIPPABLE.join(_zstd(part, how) for part in parts)
    assert decompress("zstd", frames, LIMIT) == whole


def test_large_members_and_frames() -> None:
    data = os.urandom(300_000)
    assert decompress("gzip", gzip.compress(data) + gzip.compress(b"end"), LIMIT) == data + b"end"
    assert decompress("zstd", _zstd(data, 2) + _zstd(b"end", 0), LIMIT) == data + b"end"


@pytest.mark.parametrize("encoding", ["gzip", "zstd"])
def test_the_size_cap_is_on_the_total(encoding: str) -> None:
    def body(*sizes: int) -> bytes:
        if encoding == "gzip":
            return b"".join(gzip.compress(b"a" * size) for size in sizes)
        return b"".join(_zstd(b"a" * size, 1) for size in sizes)

    assert len(decompress(encoding, body(600, 400), 1000)) == 1000
    with pytest.raises(BodyTooLarge):
        decompress(encoding, body(600, 401), 1000)
    with pytest.raises(BodyTooLarge):
        decompress(encoding, body(1001), 1000)


@pytest.mark.parametrize(
    "encoding,data",
    [
        ("gzip", gzip.compress(b"data") + b"garbage"),
        ("gzip", gzip.compress(b"data") + b"\x00\x00"),
        ("gzip", gzip.compress(b"data") + gzip.compress(b"more")[:-3]),
        ("gzip", b""),
        ("zstd", _zstd(b"data", 0) + b"garbage!"),
        ("zstd", _zstd(b"data", 0) + _zstd(b"more" * 100, 2)[:-2]),
        ("zstd", _zstd(b"data", 0) + SKIPPABLE[:-1]),
        ("zstd", b""),
        ("deflate", zlib.compress(b"data") + b"x"),
    ],
    ids=[
        "gzip-garbage",
        "gzip-zero-padding",
        "gzip-truncated-member",
        "gzip-empty",
        "zstd-garbage",
        "zstd-truncated-frame",
        "zstd-truncated-skippable",
        "zstd-empty",
        "deflate-trailing",
    ],
)
def test_anything_else_after_the_data_is_corrupt(encoding: str, data: bytes) -> None:
    with pytest.raises(CorruptBody):
        decompress(encoding, data, LIMIT)


def test_raw_deflate_and_zlib_deflate_are_both_read() -> None:
    raw = zlib.compressobj(wbits=-15)
    assert decompress("deflate", raw.compress(b"data") + raw.flush(), LIMIT) == b"data"
    assert decompress("deflate", zlib.compress(b"data"), LIMIT) == b"data"
