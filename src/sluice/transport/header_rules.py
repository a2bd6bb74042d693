"""What a request header and a gRPC metadata entry may hold, checked before
anything is sent: the policy providers check their ``headers`` at load, the
collector's periodic metric readers before each push."""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
"""A header name (RFC 9110 5.1: a token)."""
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
"""What a header value cannot hold (RFC 9110 5.5: control characters but tab)."""
_METADATA_KEY = re.compile(r"[0-9a-z\-_.]+")
"""A gRPC metadata key, lowercased (grpc-go's ``metadata.ValidatePair``)."""
_PRINTABLE = re.compile(r"[\x20-\x7e]*")
"""A gRPC metadata value of a key not ending in ``-bin``: printable ASCII."""


def valid_header_name(name: str) -> bool:
    return _TOKEN.fullmatch(name) is not None


def valid_header_value(value: str) -> bool:
    return _CONTROL.search(value) is None


def valid_metadata_key(key: str) -> bool:
    """`key` lowercased, as gRPC sends it."""
    return _METADATA_KEY.fullmatch(key) is not None


def valid_metadata_value(key: str, value: str) -> bool:
    """A ``-bin`` key's value goes as bytes: any text will do."""
    return key.endswith("-bin") or _PRINTABLE.fullmatch(value) is not None
