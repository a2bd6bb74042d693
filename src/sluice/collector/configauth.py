"""``auth: {authenticator: <extension id>}``: how a receiver finds the
extension that checks its requests (upstream ``configauth``).

An extension that authenticates servers' requests implements
:class:`ServerAuthenticator`; the receiver resolves it once, at start, from
the host's extensions.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from sluice.collector.component import ComponentID, Host, Problem


class AuthenticationError(Exception):
    """The request's credentials are missing or wrong; the message says which."""


@runtime_checkable
class ServerAuthenticator(Protocol):
    """Checks a request's headers (HTTP headers or gRPC metadata, names in
    lower case, first value of each)."""

    async def authenticate(self, headers: Mapping[str, str]) -> None:
        """Return to accept; raise :class:`AuthenticationError` to refuse."""
        ...


@dataclass
class AuthConfig:
    """An ``auth:`` section of a server."""

    authenticator: str = ""

    def validate(self) -> Iterator[Problem]:
        try:
            ComponentID.parse(self.authenticator)
        except ValueError as problem:
            yield "authenticator", str(problem) if self.authenticator else "id must not be empty"

    def server_authenticator(self, host: Host) -> ServerAuthenticator:
        """The extension named by `authenticator`; raises ValueError with
        upstream's wording when it is missing or cannot authenticate."""
        extension = host.extensions.get(ComponentID.parse(self.authenticator))
        if extension is None:
            raise ValueError(
                f'failed to resolve authenticator "{self.authenticator}": authenticator not found'
            )
        if not isinstance(extension, ServerAuthenticator):
            raise ValueError("requested authenticator is not a server authenticator")
        return extension
