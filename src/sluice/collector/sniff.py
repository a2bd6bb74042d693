"""Go's ``http.DetectContentType``: the ``Content-Type`` Go's HTTP server
gives an answer whose handler set none, from the first 512 bytes of its
body (the WHATWG MIME sniffing rules, as Go implements them).

Upstream handlers that write a configured text without a type (the health
check's ``response_body``) are answered with this type: ``text/plain`` for
ordinary text, ``text/html`` when it starts with an HTML tag, and so on.
"""

from __future__ import annotations

from collections.abc import Callable

SNIFF_LEN = 512
"""Go reads at most this much of the body."""

_WHITESPACE = b"\t\n\x0c\r "
_TAG_END = b" >"

_HTML_TAGS = (
    b"<!DOCTYPE HTML",
    b"<HTML",
    b"<HEAD",
    b"<SCRIPT",
    b"<IFRAME",
    b"<H1",
    b"<DIV",
    b"<FONT",
    b"<TABLE",
    b"<A",
    b"<STYLE",
    b"<TITLE",
    b"<B",
    b"<BODY",
    b"<BR",
    b"<P",
    b"<!--",
)

_Sniffer = Callable[[bytes, int], str]


def _html(tag: bytes) -> _Sniffer:
    """A tag, letters in any case, then a space or ``>``, after whitespace."""

    def match(data: bytes, first: int) -> str:
        data = data[first:]
        if len(data) < len(tag) + 1:
            return ""
        for want, got in zip(tag, data, strict=False):
            if ord("A") <= want <= ord("Z"):
                got &= 0xDF
            if want != got:
                return ""
        return "text/html; charset=utf-8" if data[len(tag)] in _TAG_END else ""

    return match


def _masked(mask: bytes, pattern: bytes, content_type: str, skip_ws: bool = False) -> _Sniffer:
    def match(data: bytes, first: int) -> str:
        if skip_ws:
            data = data[first:]
        if len(data) < len(pattern):
            return ""
        for m, p, d in zip(mask, pattern, data, strict=False):
            if d & m != p:
                return ""
        return content_type

    return match


def _exact(prefix: bytes, content_type: str) -> _Sniffer:
    def match(data: bytes, first: int) -> str:
        return content_type if data.startswith(prefix) else ""

    return match


def _mp4(data: bytes, first: int) -> str:
    if len(data) < 12:
        return ""
    box_size = int.from_bytes(data[:4], "big")
    if len(data) < box_size or box_size % 4 != 0 or data[4:8] != b"ftyp":
        return ""
    for start in range(8, box_size, 4):
        if start != 12 and data[start : start + 3] == b"mp4":
            return "video/mp4"
    return ""


_BINARY = frozenset([*range(0x00, 0x09), 0x0B, *range(0x0E, 0x1B), *range(0x1C, 0x20)])


def _text(data: bytes, first: int) -> str:
    if any(byte in _BINARY for byte in data[first:]):
        return ""
    return "text/plain; charset=utf-8"


_FF4 = b"\xff" * 4
_SIGNATURES: tuple[_Sniffer, ...] = (
    *(_html(tag) for tag in _HTML_TAGS),
    _masked(b"\xff" * 5, b"<?xml", "text/xml; charset=utf-8", skip_ws=True),
    _exact(b"%PDF-", "application/pdf"),
    _exact(b"%!PS-Adobe-", "application/postscript"),
    # byte order marks
    _masked(b"\xff\xff\x00\x00", b"\xfe\xff\x00\x00", "text/plain; charset=utf-16be"),
    _masked(b"\xff\xff\x00\x00", b"\xff\xfe\x00\x00", "text/plain; charset=utf-16le"),
    _masked(b"\xff\xff\xff\x00", b"\xef\xbb\xbf\x00", "text/plain; charset=utf-8"),
    # images
    _exact(b"\x00\x00\x01\x00", "image/x-icon"),
    _exact(b"\x00\x00\x02\x00", "image/x-icon"),
    _exact(b"BM", "image/bmp"),
    _exact(b"GIF87a", "image/gif"),
    _exact(b"GIF89a", "image/gif"),
    _masked(_FF4 + b"\x00" * 4 + b"\xff" * 6, b"RIFF\x00\x00\x00\x00WEBPVP", "image/webp"),
    _exact(b"\x89PNG\x0d\x0a\x1a\x0a", "image/png"),
    _exact(b"\xff\xd8\xff", "image/jpeg"),
    # audio and video
    _masked(_FF4, b".snd", "audio/basic"),
    _masked(_FF4 + b"\x00" * 4 + _FF4, b"FORM\x00\x00\x00\x00AIFF", "audio/aiff"),
    _masked(b"\xff" * 3, b"ID3", "audio/mpeg"),
    _masked(b"\xff" * 5, b"OggS\x00", "application/ogg"),
    _masked(b"\xff" * 8, b"MThd\x00\x00\x00\x06", "audio/midi"),
    _masked(_FF4 + b"\x00" * 4 + _FF4, b"RIFF\x00\x00\x00\x00AVI ", "video/avi"),
    _masked(_FF4 + b"\x00" * 4 + _FF4, b"RIFF\x00\x00\x00\x00WAVE", "audio/wave"),
    _mp4,
    _exact(b"\x1a\x45\xdf\xa3", "video/webm"),
    # fonts
    _masked(b"\x00" * 34 + b"\xff\xff", b"\x00" * 34 + b"LP", "application/vnd.ms-fontobject"),
    _exact(b"\x00\x01\x00\x00", "font/ttf"),
    _exact(b"OTTO", "font/otf"),
    _exact(b"ttcf", "font/collection"),
    _exact(b"wOFF", "font/woff"),
    _exact(b"wOF2", "font/woff2"),
    # archives
    _exact(b"\x1f\x8b\x08", "application/x-gzip"),
    _exact(b"PK\x03\x04", "application/zip"),
    _exact(b"Rar!\x1a\x07\x00", "application/x-rar-compressed"),
    _exact(b"Rar!\x1a\x07\x01\x00", "application/x-rar-compressed"),
    _exact(b"\x00\x61\x73\x6d", "application/wasm"),
    _text,
)


def detect_content_type(body: bytes) -> bytes:
    """The type Go's server sends for `body` (``application/octet-stream``
    when nothing matches)."""
    data = body[:SNIFF_LEN]
    first = 0
    while first < len(data) and data[first] in _WHITESPACE:
        first += 1
    for signature in _SIGNATURES:
        found = signature(data, first)
        if found:
            return found.encode()
    return b"application/octet-stream"
