"""Where policies come from: files (hot-reloaded) and policy servers (HTTP and
gRPC sync), merged into one registry whose compiled snapshot is swapped
atomically."""

from __future__ import annotations

from sluice.providers.config import ConfigError, ProviderConfig, parse_providers
from sluice.providers.file import FileProvider
from sluice.providers.provider import Provider, stop_all
from sluice.providers.registry import PolicyRegistry
from sluice.providers.remote import RemoteProvider
from sluice.providers.sync import ClientIdentity

__all__ = [
    "ClientIdentity",
    "ConfigError",
    "FileProvider",
    "PolicyRegistry",
    "Provider",
    "ProviderConfig",
    "RemoteProvider",
    "make_providers",
    "parse_providers",
    "stop_all",
]


def make_providers(
    configs: list[ProviderConfig],
    registry: PolicyRegistry,
    identity: ClientIdentity | None = None,
) -> list[Provider]:
    """One provider per configuration entry, in configuration order (which
    breaks ties when two providers of the same kind deliver the same id)."""
    providers: list[Provider] = []
    for order, config in enumerate(configs):
        if config.type == "file":
            providers.append(FileProvider(config, registry, order))
        else:
            providers.append(RemoteProvider(config, registry, order, identity))
    return providers
