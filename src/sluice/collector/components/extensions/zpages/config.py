"""The ``zpages`` extension's config, as core's zpagesextension: upstream's
HTTP server settings (``confighttp.ServerConfig``, squashed at the top level)
and ``expvar``."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from sluice.collector.component import ComponentConfig, Problem
from sluice.collector.components.receivers.otlp.config import TCP_TRANSPORTS
from sluice.collector.confighttp import HttpServerConfig

DEFAULT_ENDPOINT = "localhost:55679"
"""Upstream's: local clients only."""


@dataclass
class ExpvarConfig:
    enabled: bool = False
    """Serve ``/debug/expvarz`` (the process's variables as JSON)."""


@dataclass
class ZPagesConfig(HttpServerConfig, ComponentConfig):
    endpoint: str = DEFAULT_ENDPOINT
    transport: str = "tcp"
    """Newer upstream versions' ``confignet`` key; only TCP is served."""
    expvar: ExpvarConfig = field(default_factory=ExpvarConfig)

    def validate(self) -> Iterator[Problem]:
        if not self.endpoint:
            # Upstream's one check, and its wording.
            yield "", '"endpoint" is required when using the "zpages" extension'
        elif self.transport not in TCP_TRANSPORTS:
            yield (
                "transport",
                f'unsupported transport "{self.transport}" (zpages listens on tcp, tcp4 or tcp6)',
            )
        else:
            yield from super().validate()
