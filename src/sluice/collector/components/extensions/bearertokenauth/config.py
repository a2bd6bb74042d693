"""The ``bearertokenauth`` extension's config, as contrib's
bearertokenauthextension: ``header``, ``scheme``, ``token`` or ``tokens``, or
``filename`` (which wins), and ``file_retry``."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from sluice.collector.component import ComponentConfig, Problem
from sluice.collector.confmap.decode import Duration, Opaque
from sluice.collector.exporterhelper.config import is_header_name, is_header_value

NO_TIME = Duration(0)
NO_SECRET = Opaque("")


@dataclass
class FileRetrySettings:
    """Start waits for a missing ``filename`` instead of failing at once."""

    enabled: bool = False
    max_retries: int = 0
    retry_interval: Duration = NO_TIME


@dataclass
class BearerTokenAuthConfig(ComponentConfig):
    header: str = "Authorization"
    scheme: str = "Bearer"
    token: Opaque = NO_SECRET
    tokens: list[Opaque] = field(default_factory=list)
    filename: str = ""
    """One token per line; re-read when it changes."""
    file_retry: FileRetrySettings = field(default_factory=FileRetrySettings)

    def validate(self) -> Iterator[Problem]:
        # Upstream's checks and words first, in upstream's order; upstream
        # reports the first that fails, and only that one.
        problem = self._upstream_problem()
        if problem is not None:
            yield problem
            return
        # What makes a header that cannot be sent, or smuggles another one.
        if not is_header_name(self.header):
            yield "header", f"{self.header!r} is not a valid header name"
        if not is_header_value(self.scheme) or " " in self.scheme:
            yield "scheme", "must be one word of ASCII text"
        if self.token and not is_token(self.token):
            yield "token", TOKEN_TEXT
        for i, token in enumerate(self.tokens):
            if not is_token(token):
                yield f"tokens[{i}]", TOKEN_TEXT

    def _upstream_problem(self) -> Problem | None:
        if not self.token and not self.tokens and not self.filename:
            return "", "no bearer token provided"
        if self.token and self.tokens:
            return "", "either tokens or token should be provided, not both"
        retry = self.file_retry
        if retry.enabled:
            if not self.filename:
                return "file_retry", "file_retry.enabled requires filename to be set"
            if retry.max_retries <= 0:
                return (
                    "file_retry::max_retries",
                    "file_retry.max_retries must be greater than 0 when file_retry.enabled is true",
                )
            if retry.retry_interval <= 0:
                return (
                    "file_retry::retry_interval",
                    "file_retry.retry_interval must be greater than 0 "
                    "when file_retry.enabled is true",
                )
        return None


TOKEN_TEXT = "a token must be ASCII text, not empty, without control characters"
"""Why a token is refused (never quoting it)."""


def is_token(token: str) -> bool:
    """Printable ASCII, not empty: what a header value can carry as it is."""
    return bool(token) and token.isascii() and token.isprintable()
