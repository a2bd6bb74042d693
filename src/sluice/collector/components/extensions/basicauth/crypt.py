"""The salted, iterated hashes of ``crypt(3)`` that htpasswd files hold
besides bcrypt: MD5-crypt (``$1$``, Apache's ``$apr1$``) and SHA-crypt
(``$5$`` SHA-256, ``$6$`` SHA-512, Drepper's specification), each giving the
text after the last ``$`` of an entry.

Python's ``crypt`` module is deprecated (gone in 3.13) and depends on the C
library, so both are written out here. They run in pure Python (MD5-crypt
~1 ms, SHA-crypt ~5-15 ms at the default 5000 rounds), which is why the
server authenticator remembers credentials it has verified.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

_ALPHABET = b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _encode(digest: bytes, groups: Sequence[tuple[int, ...]]) -> str:
    """crypt's base-64: each group of byte indexes (most significant first)
    becomes 4 characters (fewer for a short last group), low bits first."""
    out = bytearray()
    for group in groups:
        value = 0
        for index in group:
            value = (value << 8) | digest[index]
        for _ in range(len(group) + 1):
            out.append(_ALPHABET[value & 0x3F])
            value >>= 6
    return out.decode()


_MD5_GROUPS = ((0, 6, 12), (1, 7, 13), (2, 8, 14), (3, 9, 15), (4, 10, 5), (11,))


def md5_crypt(password: bytes, salt: bytes, magic: bytes) -> str:
    """MD5-crypt of `password` with `salt` (used whole, as upstream's
    htpasswd library does); `magic` is ``$1$`` or ``$apr1$``."""
    alternate = hashlib.md5(password + salt + password).digest()
    context = hashlib.md5(password + magic + salt)
    for left in range(len(password), 0, -16):
        context.update(alternate[: min(left, 16)])
    length = len(password)
    while length:
        context.update(b"\0" if length & 1 else password[:1])
        length >>= 1
    digest = context.digest()
    for round_ in range(1000):
        step = hashlib.md5(password if round_ & 1 else digest)
        if round_ % 3:
            step.update(salt)
        if round_ % 7:
            step.update(password)
        step.update(digest if round_ & 1 else password)
        digest = step.digest()
    return _encode(digest, _MD5_GROUPS)


DEFAULT_ROUNDS = 5000
MIN_ROUNDS = 1000
MAX_ROUNDS = 999_999_999
_SHA256_GROUPS = (
    (0, 10, 20),
    (21, 1, 11),
    (12, 22, 2),
    (3, 13, 23),
    (24, 4, 14),
    (15, 25, 5),
    (6, 16, 26),
    (27, 7, 17),
    (18, 28, 8),
    (9, 19, 29),
    (31, 30),
)
_SHA512_GROUPS = (
    (0, 21, 42),
    (22, 43, 1),
    (44, 2, 23),
    (3, 24, 45),
    (25, 46, 4),
    (47, 5, 26),
    (6, 27, 48),
    (28, 49, 7),
    (50, 8, 29),
    (9, 30, 51),
    (31, 52, 10),
    (53, 11, 32),
    (12, 33, 54),
    (34, 55, 13),
    (56, 14, 35),
    (15, 36, 57),
    (37, 58, 16),
    (59, 17, 38),
    (18, 39, 60),
    (40, 61, 19),
    (62, 20, 41),
    (63,),
)
SHA_CRYPTS: dict[str, tuple[Callable[[bytes], Any], Sequence[tuple[int, ...]]]] = {
    "$5$": (hashlib.sha256, _SHA256_GROUPS),
    "$6$": (hashlib.sha512, _SHA512_GROUPS),
}


def _repeated(digest: bytes, length: int) -> bytes:
    return (digest * (length // len(digest) + 1))[:length]


def sha_crypt(prefix: str, password: bytes, salt: bytes, rounds: int = DEFAULT_ROUNDS) -> str:
    """SHA-crypt (`prefix` ``$5$`` or ``$6$``) of `password` with `salt`
    (its first 16 bytes) after `rounds` rounds (clamped as the
    specification says)."""
    new, groups = SHA_CRYPTS[prefix]
    salt = salt[:16]
    rounds = min(max(rounds, MIN_ROUNDS), MAX_ROUNDS)
    alternate = new(password + salt + password).digest()
    context = new(password + salt)
    context.update(_repeated(alternate, len(password)))
    length = len(password)
    while length:
        context.update(alternate if length & 1 else password)
        length >>= 1
    digest = context.digest()
    p_bytes = _repeated(new(password * len(password)).digest(), len(password))
    s_bytes = _repeated(new(salt * (16 + digest[0])).digest(), len(salt))
    for round_ in range(rounds):
        step = new(p_bytes if round_ & 1 else digest)
        if round_ % 3:
            step.update(s_bytes)
        if round_ % 7:
            step.update(p_bytes)
        step.update(digest if round_ & 1 else p_bytes)
        digest = step.digest()
    return _encode(digest, groups)
