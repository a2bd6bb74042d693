"""The ``bearertokenauth`` extension: a server authenticator that accepts a
request whose header holds ``<scheme> <token>`` for one of the configured
tokens, and a client authenticator that sends the first of them.

The accepted header values are built once (at start and when the token file
changes) and swapped as one tuple; a request costs a dictionary lookup and
one constant-time comparison per token. No token is ever logged or put in
an error message (upstream's refusal quotes the token it got; this one does
not).
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Mapping

from sluice.collector.component import Component, Host
from sluice.collector.components.extensions.bearertokenauth.config import (
    TOKEN_TEXT,
    BearerTokenAuthConfig,
    is_token,
)
from sluice.collector.configauth import AuthenticationError
from sluice.collector.credentialsfile import CredentialsFile


class BearerTokenAuth(Component):
    """Both sides of ``bearertokenauth`` (one instance may serve receivers and
    exporters, as upstream)."""

    requires_transport_security = True
    """As upstream's per-RPC credentials: a token never goes out over plaintext gRPC."""

    def __init__(self, config: BearerTokenAuthConfig, logger: logging.Logger):
        self._config = config
        self._logger = logger
        self._header = config.header
        self._key = config.header.lower()
        self._accepted: tuple[bytes, ...] = ()
        self._outgoing: Mapping[str, str] = {}
        self._file: CredentialsFile | None = None
        if config.filename:
            if config.token or config.tokens:
                logger.warning("a filename is specified. Configured token(s) is ignored!")
            self._file = CredentialsFile(config.filename, self._read_tokens, logger)
        else:
            self._use([t.reveal() for t in config.tokens] or [config.token.reveal()])

    def _use(self, tokens: list[str]) -> None:
        scheme = self._config.scheme
        values = [f"{scheme} {token}" if scheme else token for token in tokens]
        self._accepted = tuple(value.encode() for value in values)
        self._outgoing = {self._header: values[0]}

    def _read_tokens(self, content: bytes) -> None:
        """One token per line, blanks around them ignored; empty lines are
        skipped (upstream would accept an empty token from one)."""
        try:
            text = content.decode("ascii")
        except UnicodeDecodeError:
            raise ValueError(TOKEN_TEXT) from None
        tokens = [line.strip() for line in text.splitlines() if line.strip()]
        if not tokens:
            raise ValueError("it holds no token")
        if not all(is_token(token) for token in tokens):
            raise ValueError(TOKEN_TEXT)
        self._use(tokens)

    async def start(self, host: Host) -> None:
        if self._file is not None:
            retry = self._config.file_retry
            if retry.enabled:
                await self._file.start(retry.max_retries, retry.retry_interval)
            else:
                await self._file.start()

    async def shutdown(self) -> None:
        if self._file is not None:
            await self._file.stop()

    async def authenticate(self, headers: Mapping[str, str]) -> None:
        value = headers.get(self._key)
        if value is None:
            raise AuthenticationError(f"missing or empty authorization header: {self._header}")
        presented = _wire_bytes(value)
        matched = False
        for accepted in self._accepted:  # every one: the time does not tell which matched
            matched |= hmac.compare_digest(accepted, presented)
        if not matched:
            raise AuthenticationError("scheme or token does not match")

    def request_headers(self) -> Mapping[str, str]:
        return self._outgoing


def _wire_bytes(value: str) -> bytes:
    """The header's bytes as sent (HTTP headers arrive decoded as Latin-1;
    gRPC metadata is ASCII)."""
    try:
        return value.encode("latin-1")
    except UnicodeEncodeError:
        return value.encode("utf-8", "surrogateescape")
