"""Who sent the data being processed (upstream's ``client.Info``): the peer's
address, the request's headers or gRPC metadata (with ``include_metadata``),
and what the server authenticator found out.

A receiver sets it for the duration of its call into the pipeline
(:func:`serving`); components read it with :func:`current`. It travels in a
:class:`~contextvars.ContextVar`, so it follows the ``await`` chain of one
request, and a task started while handling it (a batch's send) starts with it.
The ``batch`` processor replaces it with the metadata it batched by, or
nothing, as upstream's does.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import MappingProxyType

Metadata = Mapping[str, tuple[str, ...]]
"""Lower-cased names and every value each was sent with, in order."""

AuthData = Mapping[str, "str | tuple[str, ...]"]
"""An authenticator's attributes (``basicauth``: ``username`` and ``raw``)."""

NO_METADATA: Metadata = MappingProxyType({})


@dataclass(frozen=True)
class Info:
    address: str = ""
    """The peer's IP address (no port), as its socket gives it; empty for a
    Unix socket."""
    metadata: Metadata = field(default_factory=lambda: NO_METADATA)
    auth: AuthData | None = None

    def get(self, key: str) -> tuple[str, ...]:
        """The values of metadata `key`, whatever its case."""
        return self.metadata.get(key.lower(), ())

    def context_value(self, key: str) -> str | None:
        """What upstream's attribute actions read for ``from_context: key``:
        ``client.address``, ``metadata.<name>``, ``auth.<attribute>``, or
        (any other key) the metadata name itself; several values are
        joined with ``;``. None when there is nothing; ``client.address``
        is always there, as upstream (the empty string when unknown, as after
        a ``batch`` processor)."""
        values: Iterable[str]
        if key == "client.address":
            return go_ip(self.address)
        if key.startswith("metadata."):
            values = self.get(key[len("metadata.") :])
        elif key.startswith("auth."):
            found = None if self.auth is None else self.auth.get(key[len("auth.") :])
            if found is None or isinstance(found, str):
                return found
            values = found
        else:
            values = self.get(key)
        return ";".join(values) if values else None


def go_ip(address: str) -> str:
    """An IP address as Go's ``net.IP.String`` writes it: an IPv4-mapped IPv6
    address (an IPv4 client of a dual-stack listener) is its IPv4 address."""
    if address.startswith(("::ffff:", "::FFFF:")) and "." in address:
        return address[7:]
    return address


NOBODY = Info()

_CURRENT: ContextVar[Info] = ContextVar("sluice_client_info", default=NOBODY)


def current() -> Info:
    """The client whose data is being processed (:data:`NOBODY` when none is known)."""
    return _CURRENT.get()


@contextmanager
def serving(info: Info) -> Iterator[None]:
    """`info` is :func:`current` inside the block (and in tasks started there)."""
    token = _CURRENT.set(info)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def metadata_of(pairs: Iterable[tuple[str, str]]) -> Metadata:
    """Metadata from (name, value) pairs as sent: names lower-cased, repeated
    names keeping every value in order."""
    grouped: dict[str, list[str]] = {}
    for name, value in pairs:
        grouped.setdefault(name.lower(), []).append(value)
    return MappingProxyType({name: tuple(values) for name, values in grouped.items()})
