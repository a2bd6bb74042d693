"""The server side of ``basicauth``: requests must carry
``Authorization: Basic base64(user:password)`` matching an htpasswd entry.

bcrypt and the crypt hashes cost milliseconds to ~100 ms by design, so a
verified credential is remembered: the SHA-256 of the header value it came
in is kept in a bounded LRU map with its username (never the header
itself), and a request bearing it again costs one hash and one lookup. Slow
checks run in a worker thread, one per distinct credential however many
requests wait on it; a wrong password is never remembered, so each guess
pays the full price. The entries are read once, at start, as upstream does.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path

from sluice.collector.client import AuthData
from sluice.collector.component import Component, Host
from sluice.collector.components.extensions.basicauth.config import (
    INVALID_FORMAT,
    HtpasswdSettings,
)
from sluice.collector.components.extensions.basicauth.htpasswd import Entry, parse_lines
from sluice.collector.configauth import AuthenticationError
from sluice.goencoding import std_base64

REMEMBERED = 4096
"""Verified credentials kept (32-byte digests: ~0.5 MiB at most)."""
_PREFIX = "basic "


class BasicAuthServer(Component):
    def __init__(
        self, settings: HtpasswdSettings, logger: logging.Logger, remembered: int = REMEMBERED
    ):
        self._settings = settings
        self._logger = logger
        self._entries: dict[str, Entry] = {}
        self._verified: OrderedDict[bytes, str] = OrderedDict()
        self._remembered = remembered
        self._checking: dict[bytes, asyncio.Future[bool]] = {}

    async def start(self, host: Host) -> None:
        """Read the file, then the inline entries; raises ValueError when the
        file cannot be read."""
        entries: dict[str, Entry] = {}
        if self._settings.file:
            path = self._settings.file
            try:
                text = Path(path).read_bytes().decode("utf-8", "surrogateescape")
            except IsADirectoryError:
                # Go opens a directory; the library's scanner fails reading it.
                raise ValueError(
                    f"read htpasswd content: Error scanning htpasswd file: read {path}: "
                    "is a directory"
                ) from None
            except OSError as problem:
                reason = (problem.strerror or str(problem)).lower()
                raise ValueError(f"open htpasswd file: open {path}: {reason}") from None
            _check_line_lengths(text)
            for bad in parse_lines(text, path, entries):
                self._logger.warning("htpasswd %s", bad)
        _check_line_lengths(self._settings.inline)
        for bad in parse_lines(self._settings.inline, "htpasswd.inline", entries):
            self._logger.warning("%s", bad)
        self._entries = entries

    async def authenticate(self, headers: Mapping[str, str]) -> AuthData:
        """The client's ``username``, and ``raw``: the base64 credentials as
        sent (upstream's auth attributes)."""
        header = headers.get("authorization")
        if not header:
            raise AuthenticationError("no basic auth provided")
        key = hashlib.sha256(header.encode("utf-8", "surrogateescape")).digest()
        username = self._verified.get(key)
        if username is not None:
            self._verified.move_to_end(key)
            return {"username": username, "raw": header[len(_PREFIX) :]}
        username, password = _credentials(header)
        entry = self._entries.get(username)
        if entry is None or not await self._check(key, entry, password):
            raise AuthenticationError("invalid credentials")
        # Attribute values must be valid UTF-8; the lookup above kept the bytes.
        username = username.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        self._verified[key] = username
        if len(self._verified) > self._remembered:
            self._verified.popitem(last=False)
        return {"username": username, "raw": header[len(_PREFIX) :]}

    async def _check(self, key: bytes, entry: Entry, password: bytes) -> bool:
        if not entry.slow:
            return entry.matches(password)
        pending = self._checking.get(key)
        if pending is None:
            pending = asyncio.ensure_future(asyncio.to_thread(entry.matches, password))
            self._checking[key] = pending
            pending.add_done_callback(lambda _: self._checking.pop(key, None))
        return await asyncio.shield(pending)


LONGEST_LINE = 64 * 1024 - 1
"""The longest line (in bytes, without its newline) upstream's htpasswd
library reads: its bufio.Scanner holds at most 64 KiB."""


def _check_line_lengths(text: str) -> None:
    """Fail as upstream's start does when a line is longer than its scanner takes."""
    for line in text.split("\n"):
        # A character is at most 4 bytes: a shorter line cannot be too long.
        long = len(line) * 4 > LONGEST_LINE
        if long and len(line.encode("utf-8", "surrogateescape")) > LONGEST_LINE:
            raise ValueError(
                "read htpasswd content: Error scanning htpasswd file: bufio.Scanner: token too long"
            )


def _credentials(header: str) -> tuple[str, bytes]:
    """(username, password) of a Basic header, as Go's net/http reads it."""
    if header[: len(_PREFIX)].lower() != _PREFIX:
        raise AuthenticationError("invalid authorization scheme prefix")
    try:
        decoded = std_base64(header[len(_PREFIX) :])
    except ValueError:
        raise AuthenticationError(INVALID_FORMAT) from None
    username, sep, password = decoded.partition(b":")
    if not sep:
        raise AuthenticationError(INVALID_FORMAT)
    return username.decode("utf-8", "surrogateescape"), password
