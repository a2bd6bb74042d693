"""htpasswd entries (``user:hash`` lines) as upstream's htpasswd library
reads them, each hash tried in its order: MD5-crypt (``$apr1$``, ``$1$``),
SHA-1 (``{SHA}``), bcrypt (``$2y$``, ``$2a$``, ``$2b$``, ``$2x$``), salted
SHA-1 (``{SSHA}``), SHA-crypt (``$5$``, ``$6$``, with ``rounds=``), and
anything else as the plain password (which also matches ``{PLAIN}`` followed
by it, as nginx writes them).

Blank lines are skipped; a later line for a user replaces an earlier one. A
line that is not an entry is reported (line number and reason, never its
text, which holds a hash) and skipped, as upstream skips it.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

import bcrypt

from sluice.collector.components.extensions.basicauth.crypt import (
    DEFAULT_ROUNDS,
    SHA_CRYPTS,
    md5_crypt,
    sha_crypt,
)
from sluice.goencoding import std_base64


class Entry:
    """A user's stored password. `slow` ones (bcrypt, the crypt family) are
    checked off the event loop."""

    slow: ClassVar[bool] = False

    def matches(self, password: bytes) -> bool:
        raise NotImplementedError


@dataclass(frozen=True)
class Plain(Entry):
    stored: bytes

    def matches(self, password: bytes) -> bool:
        # Both compared, so the time does not tell which form is stored.
        bare = hmac.compare_digest(password, self.stored)
        return hmac.compare_digest(b"{PLAIN}" + password, self.stored) | bare


@dataclass(frozen=True)
class Sha1(Entry):
    """``{SHA}`` base64(sha1(password)); ``{SSHA}`` base64(sha1(password + salt) + salt)."""

    digest: bytes
    salt: bytes = b""

    def matches(self, password: bytes) -> bool:
        return hmac.compare_digest(hashlib.sha1(password + self.salt).digest(), self.digest)


BCRYPT_KEY_BYTES = 72


@dataclass(frozen=True)
class Bcrypt(Entry):
    slow = True
    stored: bytes

    def matches(self, password: bytes) -> bool:
        # Go's bcrypt reads only a password's first 72 bytes (the Blowfish
        # key schedule takes no more); this library refuses a longer one.
        try:
            return bcrypt.checkpw(password[:BCRYPT_KEY_BYTES], self.stored)
        except ValueError:  # a malformed hash
            return False


@dataclass(frozen=True)
class Md5Crypt(Entry):
    slow = True
    magic: bytes
    salt: bytes
    hashed: str

    def matches(self, password: bytes) -> bool:
        return hmac.compare_digest(md5_crypt(password, self.salt, self.magic), self.hashed)


@dataclass(frozen=True)
class ShaCrypt(Entry):
    slow = True
    prefix: str
    rounds: int
    salt: bytes
    hashed: str

    def matches(self, password: bytes) -> bool:
        computed = sha_crypt(self.prefix, password, self.salt, self.rounds)
        return hmac.compare_digest(computed, self.hashed)


_BCRYPT_PREFIXES = ("$2y$", "$2a$", "$2b$", "$2x$")
_ROUNDS = re.compile(r"rounds=(\d+)")


def parse_entry(encoded: str) -> Entry:
    """The entry for a hash (the text after ``user:``); raises ValueError
    with a reason that does not quote it."""
    raw = encoded.encode("utf-8", "surrogateescape")
    for magic in ("$apr1$", "$1$"):
        if encoded.startswith(magic):
            salt, sep, hashed = encoded[len(magic) :].partition("$")
            if not sep:
                raise ValueError("malformed md5 password")
            return Md5Crypt(magic.encode(), salt.encode("utf-8", "surrogateescape"), hashed)
    if encoded.startswith("{SHA}"):
        digest = _base64(encoded[5:], "sha1")
        if len(digest) != 20:
            raise ValueError("malformed sha1: wrong length")
        return Sha1(digest)
    if encoded.startswith(_BCRYPT_PREFIXES):
        return Bcrypt(raw)
    if encoded.startswith("{SSHA}"):
        decoded = _base64(encoded[6:], "ssha")
        if len(decoded) < 20:
            raise ValueError("malformed ssha: wrong length")
        return Sha1(decoded[:20], decoded[20:])
    for prefix in SHA_CRYPTS:
        if encoded.startswith(prefix):
            return _sha_crypt(prefix, encoded[len(prefix) :])
    return Plain(raw)


def _base64(text: str, what: str) -> bytes:
    try:
        return std_base64(text)
    except ValueError:
        raise ValueError(f"malformed {what}: not base64") from None


def _sha_crypt(prefix: str, rest: str) -> ShaCrypt:
    parts = rest.split("$", 2)
    if len(parts) < 2:
        raise ValueError("malformed crypt-SHA password")
    rounds = DEFAULT_ROUNDS
    if len(parts) == 3:
        given = _ROUNDS.fullmatch(parts[0])
        if given is None:
            raise ValueError("malformed crypt-SHA password: rounds")
        rounds = int(given.group(1))
        parts = parts[1:]
    salt, hashed = parts
    return ShaCrypt(prefix, rounds, salt.encode("utf-8", "surrogateescape")[:16], hashed)


@dataclass(frozen=True)
class BadLine:
    source: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.source} line {self.line}: {self.reason}; entry skipped"


def parse_lines(text: str, source: str, table: dict[str, Entry]) -> Iterator[BadLine]:
    """Add `text`'s entries to `table` (later lines win); yield the lines
    that are not entries."""
    for number, raw_line in enumerate(text.split("\n"), 1):
        line = raw_line.strip()
        if not line:
            continue
        user, sep, encoded = line.partition(":")
        if not sep:
            yield BadLine(source, number, "malformed line, no colon")
            continue
        try:
            table[user] = parse_entry(encoded)
        except ValueError as problem:
            yield BadLine(source, number, str(problem))
