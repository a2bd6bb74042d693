"""``auth: {authenticator: <extension id>}``: how a receiver or an exporter
finds the extension that authenticates its requests (upstream ``configauth``
and ``extensionauth``).

Both sides share the config section and resolve the extension once, at
start, from the host's extensions:

* a receiver asks a :class:`ServerAuthenticator` to check each request's
  headers (a refusal is HTTP ``401`` / gRPC ``UNAUTHENTICATED``);
* an exporter asks a :class:`ClientAuthenticator` for the headers (HTTP) or
  metadata (gRPC) to add to each request, every attempt, so that a credential
  re-read from its file is used at once.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from sluice.collector.client import AuthData
from sluice.collector.component import Component, ComponentID, Host, Problem


class AuthenticationError(Exception):
    """The request's credentials are missing or wrong; the message says which
    (it goes back to the client, so it never holds a secret)."""


@runtime_checkable
class ServerAuthenticator(Protocol):
    """Checks a request's headers (HTTP headers or gRPC metadata, names in
    lower case, first value of each)."""

    async def authenticate(self, headers: Mapping[str, str]) -> AuthData | None:
        """Return to accept, with what the credentials say of the client
        (upstream's ``client.AuthData``, which ``from_context: auth.<name>``
        reads), if anything; raise :class:`AuthenticationError` to refuse."""
        ...


@runtime_checkable
class ClientAuthenticator(Protocol):
    """Signs the collector's outgoing requests.

    An authenticator whose credentials must not cross a plaintext connection
    sets the class attribute ``requires_transport_security = True``: a gRPC
    client then refuses to start without TLS, as grpc-go does for upstream's
    per-RPC credentials.

    One that may be unable to sign (a setting upstream checks only when an
    exporter asks for its round tripper or per-RPC credentials) has a
    ``check_signing()`` method, raising ValueError with upstream's reason:
    the exporter's start then fails, the extension's does not.
    """

    def request_headers(self) -> Mapping[str, str]:
        """Header names and values for the next request."""
        ...


TRANSPORT_SECURITY_REQUIRED = (
    "grpc: the credentials require transport level security "
    "(use grpc.WithTransportCredentials() to set)"
)
"""grpc-go's refusal of such credentials on a plaintext channel."""


def requires_transport_security(authenticator: ClientAuthenticator) -> bool:
    return bool(getattr(authenticator, "requires_transport_security", False))


@dataclass
class AuthConfig:
    """An ``auth:`` section of a server or a client."""

    authenticator: str = ""

    def validate(self) -> Iterator[Problem]:
        try:
            ComponentID.parse(self.authenticator)
        except ValueError as problem:
            yield "authenticator", str(problem) if self.authenticator else "id must not be empty"

    def server_authenticator(self, host: Host) -> ServerAuthenticator:
        """The extension named by `authenticator`; raises ValueError with
        upstream's wording when it is missing or cannot authenticate."""
        extension = self._extension(host)
        if not isinstance(extension, ServerAuthenticator):
            raise ValueError("requested authenticator is not a server authenticator")
        return extension

    def client_authenticator(self, host: Host, transport: str) -> ClientAuthenticator:
        """The extension named by `authenticator` for a `transport` (``HTTP``
        or ``gRPC``) client; raises ValueError with upstream's wording when it
        is missing or cannot sign requests."""
        extension = self._extension(host)
        if not isinstance(extension, ClientAuthenticator):
            raise ValueError(f"requested authenticator is not a {transport} client authenticator")
        check_signing = getattr(extension, "check_signing", None)
        if check_signing is not None:
            check_signing()
        return extension

    def _extension(self, host: Host) -> Component:
        wanted = ComponentID.parse(self.authenticator)
        extension = host.extensions.get(wanted)
        if extension is None:
            raise ValueError(f'failed to resolve authenticator "{wanted}": authenticator not found')
        return extension


def client_authenticator(
    auth: AuthConfig | None, host: Host, transport: str
) -> ClientAuthenticator | None:
    """An exporter's authenticator, None without an ``auth`` section."""
    return None if auth is None else auth.client_authenticator(host, transport)


def server_authenticator(auth: AuthConfig | None, host: Host) -> ServerAuthenticator | None:
    """A receiver's authenticator, None without an ``auth`` section."""
    return None if auth is None else auth.server_authenticator(host)
