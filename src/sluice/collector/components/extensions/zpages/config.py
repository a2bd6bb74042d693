"""The ``zpages`` extension's config, as core's zpagesextension: upstream's
HTTP server settings (``confighttp.ServerConfig``, squashed at the top level)
and ``expvar``.

The CORS and auth sections are the otlp receiver's types (the same
``confighttp`` keys upstream), so the two read them alike.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from sluice.collector.component import ComponentConfig, Problem
from sluice.collector.components.extensions.healthcheck.config import tls_problems
from sluice.collector.components.receivers.otlp.config import (
    COMPRESSION_ALGORITHMS,
    TCP_TRANSPORTS,
    CorsConfig,
    HttpAuthConfig,
)
from sluice.collector.configtls import TLSServerConfig
from sluice.collector.confmap.decode import Duration
from sluice.transport.listener import parse_endpoint

DEFAULT_ENDPOINT = "localhost:55679"
"""Upstream's: local clients only."""
NO_TIME = Duration(0)


@dataclass(frozen=True)
class ExpvarConfig:
    enabled: bool = False
    """Serve ``/debug/expvarz`` (the process's variables as JSON)."""


@dataclass(frozen=True)
class ZPagesConfig(ComponentConfig):
    endpoint: str = DEFAULT_ENDPOINT
    transport: str = "tcp"
    """Newer upstream versions' ``confignet`` key; only TCP is served."""
    tls: TLSServerConfig | None = None
    cors: CorsConfig | None = None
    auth: HttpAuthConfig | None = None
    max_request_body_size: int = 0
    include_metadata: bool = False
    """Accepted; no page reads client metadata."""
    response_headers: dict[str, str] = field(default_factory=dict)
    compression_algorithms: list[str] = field(default_factory=lambda: list(COMPRESSION_ALGORITHMS))
    """Accepted and checked; pages read no request bodies to decompress."""
    read_timeout: Duration = NO_TIME
    read_header_timeout: Duration = NO_TIME
    write_timeout: Duration = NO_TIME
    """Accepted; answers are written at once."""
    idle_timeout: Duration = NO_TIME
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
            try:
                parse_endpoint(self.endpoint)
            except ValueError as bad:
                yield "endpoint", str(bad)
        for name in self.compression_algorithms:
            if name not in COMPRESSION_ALGORITHMS:
                yield "compression_algorithms", f'unsupported compression algorithm "{name}"'
        yield from tls_problems("tls", self.tls)
        if self.auth is not None:
            for below, message in self.auth.validate():
                yield f"auth::{below}", message
