"""Client authentication through an extension (``auth.authenticator``).

An authenticator extension that can sign outgoing requests implements
:class:`ClientAuthenticator`: the headers (HTTP) or metadata (gRPC) to add to
each request, asked for every request so a token re-read from its file is
used at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from sluice.collector.component import ComponentID, Host
from sluice.collector.exporterhelper.config import AuthSettings


@runtime_checkable
class ClientAuthenticator(Protocol):
    """An extension that authenticates the collector to a server."""

    def request_headers(self) -> Mapping[str, str]:
        """Header names and values for the next request."""
        ...


def resolve_authenticator(host: Host, auth: AuthSettings | None) -> ClientAuthenticator | None:
    """The configured authenticator among the host's extensions; raises
    ValueError in upstream's words when it is missing or not a client one."""
    if auth is None:
        return None
    try:
        wanted = ComponentID.parse(auth.authenticator)
    except ValueError as bad:
        raise ValueError(f"failed to resolve authenticator {auth.authenticator!r}: {bad}") from None
    extension = host.extensions.get(wanted)
    if extension is None:
        raise ValueError(f'failed to resolve authenticator "{wanted}": authenticator not found')
    if not isinstance(extension, ClientAuthenticator):
        raise ValueError(
            f'failed to resolve authenticator "{wanted}": '
            "requested authenticator is not a client authenticator"
        )
    return extension
