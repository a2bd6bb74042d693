"""A secret kept in a file (a bearer token, a password), read at start and
again whenever the file changes, without a restart (upstream watches such
files with fsnotify; the extensions' ``internal/credentialsfile``).

The file is checked every :data:`POLL_SECONDS` by reading it: a token file
is a few bytes, and reading it also catches what a notification can miss (a
Kubernetes secret swapped through symlinks, an edit within one timestamp
tick). A change that cannot be used (the file gone, unreadable, or refused
by the parser) is logged and the last good value kept. Neither the content
nor a parser's complaint about it is ever logged: only the path and why.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from pathlib import Path

POLL_SECONDS = 0.5
"""How often the file is read for changes."""


class CredentialsFileError(ValueError):
    """The file cannot be read, or holds nothing usable; the message names
    the file and the reason, never the content."""


Parse = Callable[[bytes], None]
"""Takes the file's content; raises ValueError (with a message that does not
quote the content) to refuse it."""


class CredentialsFile:
    """`path`, handed to `parse` at :meth:`start` and after each change."""

    def __init__(
        self, path: str, parse: Parse, logger: logging.Logger, poll: float = POLL_SECONDS
    ) -> None:
        self.path = path
        self._parse = parse
        self._logger = logger
        self._poll = poll
        self._content: bytes | None = None
        self._watching: asyncio.Task[None] | None = None

    def load(self) -> None:
        """Read and parse the file now; raises :class:`CredentialsFileError`."""
        try:
            content = Path(self.path).read_bytes()
        except OSError as problem:
            reason = (problem.strerror or str(problem)).lower()
            raise CredentialsFileError(
                f"failed to read credentials file {self.path!r}: {reason}"
            ) from None
        if content != self._content:
            try:
                self._parse(content)
            except ValueError as refused:
                raise CredentialsFileError(
                    f"credentials file {self.path!r} not used: {refused}"
                ) from None
            self._content = content

    async def start(self, retries: int = 0, retry_interval: float = 0.0) -> None:
        """The first read (tried `retries` more times, `retry_interval`
        seconds apart, while it fails), then watch for changes."""
        for attempt in range(retries + 1):
            try:
                self.load()
                break
            except CredentialsFileError as problem:
                if attempt == retries:
                    raise
                self._logger.warning(
                    "%s; retrying in %ss (%d of %d)", problem, retry_interval, attempt + 1, retries
                )
                await asyncio.sleep(retry_interval)
        self._watching = asyncio.get_running_loop().create_task(self._watch())

    async def stop(self) -> None:
        if self._watching is not None:
            self._watching.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watching
            self._watching = None

    async def _watch(self) -> None:
        failing = ""
        while True:
            await asyncio.sleep(self._poll)
            before = self._content
            try:
                self.load()
            except CredentialsFileError as problem:
                if str(problem) != failing:  # once per distinct problem, not twice a second
                    self._logger.error("%s; keeping the last value read", problem)
                failing = str(problem)
                continue
            if failing or self._content != before:
                self._logger.info("credentials file %r re-read", self.path)
            failing = ""
