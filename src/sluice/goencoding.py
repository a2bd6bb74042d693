"""What Sluice needs of Go's ``encoding`` packages: reading base64 as
``base64.StdEncoding`` does (pdata's bytes, htpasswd entries, Basic
credentials), where Python's decoders take more than Go does."""

from __future__ import annotations

import binascii


def std_base64(text: str) -> bytes:
    """`text` decoded as Go's ``base64.StdEncoding.DecodeString`` decodes it
    (line breaks skipped, whole 4-character groups, padding only at the end
    of the last one); raises ValueError where Go returns an error. Python's
    decoder alone takes more: '=' after the last group, for one."""
    text = text.replace("\r", "").replace("\n", "")
    if len(text) % 4 or text.endswith("==="):
        raise ValueError("illegal base64 data")
    try:
        return binascii.a2b_base64(text, strict_mode=True)
    except (binascii.Error, ValueError):
        raise ValueError("illegal base64 data") from None
