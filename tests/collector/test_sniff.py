"""Go's ``http.DetectContentType``, with cases of Go's own sniff tests."""

from __future__ import annotations

import pytest

from sluice.collector.sniff import detect_content_type


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"", "text/plain; charset=utf-8"),
        (b"\x01\x02\x03", "application/octet-stream"),
        (b"<HtMl><bOdY>blah blah blah</body></html>", "text/html; charset=utf-8"),
        (b"<HTML></HTML>", "text/html; charset=utf-8"),
        (b"   <!DOCTYPE HTML>...", "text/html; charset=utf-8"),
        (b"\r\n<html>...", "text/html; charset=utf-8"),
        (b"<htmlx>", "text/plain; charset=utf-8"),  # no tag-terminating byte
        (b"<p", "text/plain; charset=utf-8"),  # too short for one
        ("This is not HTML. It has ☃ though.".encode(), "text/plain; charset=utf-8"),
        (b"\n<?xml!", "text/xml; charset=utf-8"),
        (b"%PDF-1.7", "application/pdf"),
        (b"\xef\xbb\xbfhello", "text/plain; charset=utf-8"),
        (b"\x00\x00\x01\x00", "image/x-icon"),
        (b"BM...", "image/bmp"),
        (b"GIF87a", "image/gif"),
        (b"\x89PNG\x0d\x0a\x1a\x0a", "image/png"),
        (b"\xff\xd8\xff", "image/jpeg"),
        (b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom<\x06t\xbfmdat", "video/mp4"),
        ("RIFF,O\n\x00AVI LISTÀ".encode(), "video/avi"),
        (b"\x00\x01\x00\x00\x00\x17\x01\x00\x00\x04\x01`\x00\x00\x00\x03\x00\x00", "font/ttf"),
        (b"wOFF\x00\x01\x00\x00\x00\x00\x30\x54\x00\x0d\x00\x00", "font/woff"),
        (b"\x1f\x8b\x08\x00", "application/x-gzip"),
        (b"\x00asm\x01\x00", "application/wasm"),
        (b"ALL OK", "text/plain; charset=utf-8"),
        (b'{"status":"up"}', "text/plain; charset=utf-8"),
        (b"ok\x1bbinary", "text/plain; charset=utf-8"),  # ESC is text to Go
        (b"ok\x1abinary", "application/octet-stream"),
    ],
)
def test_detects_as_go(body: bytes, content_type: str) -> None:
    assert detect_content_type(body) == content_type.encode()


def test_only_the_first_512_bytes_count() -> None:
    assert detect_content_type(b"a" * 512 + b"\x00") == b"text/plain; charset=utf-8"
    assert detect_content_type(b"a" * 511 + b"\x00") == b"application/octet-stream"
