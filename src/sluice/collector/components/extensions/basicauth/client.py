"""The client side of ``basicauth``: every request an exporter sends carries
``Authorization: Basic base64(username:password)``.

The header is built once, at start and whenever ``username_file`` or
``password_file`` changes, so a request only reads it.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Mapping

from sluice.collector.component import Component, Host
from sluice.collector.components.extensions.basicauth.config import (
    INVALID_FORMAT,
    ClientAuthSettings,
)
from sluice.collector.credentialsfile import CredentialsFile


class BasicAuthClient(Component):
    requires_transport_security = True
    """As upstream's per-RPC credentials: a password never goes out over plaintext gRPC."""

    def __init__(self, settings: ClientAuthSettings, logger: logging.Logger):
        self._username = settings.username
        self._password = settings.password.reveal()
        self._files = [
            CredentialsFile(path, parse, logger)
            for path, parse in (
                (settings.username_file, self._read_username),
                (settings.password_file, self._read_password),
            )
            if path
        ]
        self._headers: Mapping[str, str] = {}

    async def start(self, host: Host) -> None:
        """Read the files (raises ValueError when one cannot be used)."""
        for started, file in enumerate(self._files):
            try:
                await file.start()
            except ValueError:
                for running in self._files[:started]:
                    await running.stop()
                raise
        self._sign()

    async def shutdown(self) -> None:
        for file in self._files:
            await file.stop()

    def request_headers(self) -> Mapping[str, str]:
        return self._headers

    def check_signing(self) -> None:
        """Refuse a username holding ``:`` when an exporter starts with this
        extension, as upstream's RoundTripper and PerRPCCredentials do."""
        if ":" in self._username:
            raise ValueError(INVALID_FORMAT)

    def _read_username(self, content: bytes) -> None:
        username = _value(content)
        if ":" in username:
            raise ValueError(INVALID_FORMAT)
        self._username = username
        self._sign()

    def _read_password(self, content: bytes) -> None:
        self._password = _value(content)
        self._sign()

    def _sign(self) -> None:
        pair = f"{self._username}:{self._password}".encode()
        self._headers = {"Authorization": "Basic " + base64.b64encode(pair).decode("ascii")}


def _value(content: bytes) -> str:
    """A file's value: its text without surrounding blanks, not empty."""
    try:
        value = content.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise ValueError("it is not UTF-8 text") from None
    if not value:
        raise ValueError("it is empty")
    return value
