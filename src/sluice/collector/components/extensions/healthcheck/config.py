"""The ``health_check`` extension's config, as contrib's healthcheckextension."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated

from sluice.collector.component import ComponentConfig, Problem
from sluice.collector.confighttp import HttpAuthConfig, HttpServerConfig
from sluice.collector.configtls import TLSServerConfig
from sluice.collector.confmap.decode import NIL_POINTER, Duration, Int64, Opaque, parse_duration
from sluice.collector.cors import CorsConfig
from sluice.transport.listener import parse_endpoint

NO_TIME = Duration(0)
DEFAULT_ENDPOINT = "0.0.0.0:13133"
"""All interfaces, so that an orchestrator's probe reaches it."""


@dataclass(frozen=True)
class ResponseBody:
    """Static bodies that replace the JSON status body."""

    healthy: str = ""
    unhealthy: str = ""


@dataclass(frozen=True)
class CheckCollectorPipeline:
    """Deprecated upstream (it never worked as documented); accepted, not used."""

    enabled: bool = False
    interval: str = "5m"
    exporter_failure_threshold: int = 5


@dataclass(frozen=True)
class HealthCheckConfig(ComponentConfig):
    endpoint: str = DEFAULT_ENDPOINT
    path: str = "/"
    response_body: Annotated[ResponseBody | None, NIL_POINTER] = None
    """Upstream's pointers (response_body, tls, cors, auth), nil by default:
    a null leaves them unset."""
    check_collector_pipeline: CheckCollectorPipeline = field(default_factory=CheckCollectorPipeline)
    tls: Annotated[TLSServerConfig | None, NIL_POINTER] = None
    """Serve HTTPS (a ``client_ca_file`` requires client certificates)."""
    # The rest of upstream's squashed ``confighttp.ServerConfig``. Upstream
    # swaps the server's handler for its own after building it, so the
    # middleware keys (cors, auth, response headers, metadata, compression,
    # body size) have no effect there; only a missing authenticator fails
    # start. The timeouts apply.
    cors: Annotated[CorsConfig | None, NIL_POINTER] = None
    auth: Annotated[HttpAuthConfig | None, NIL_POINTER] = None
    max_request_body_size: Int64 = 0
    include_metadata: bool = False
    response_headers: dict[str, Opaque] = field(default_factory=dict)
    compression_algorithms: list[str] = field(default_factory=list)
    read_timeout: Duration = NO_TIME
    read_header_timeout: Duration = NO_TIME
    write_timeout: Duration = NO_TIME
    idle_timeout: Duration = NO_TIME

    def server_settings(self) -> HttpServerConfig:
        """The server keys that apply here (the timeouts), for the listener."""
        return HttpServerConfig(
            endpoint=self.endpoint,
            read_timeout=self.read_timeout,
            read_header_timeout=self.read_header_timeout,
            write_timeout=self.write_timeout,
            idle_timeout=self.idle_timeout,
        )

    @property
    def unused_server_keys(self) -> list[str]:
        """The middleware keys set, which upstream ignores too."""
        set_keys = {
            "cors": self.cors is not None,
            "max_request_body_size": self.max_request_body_size != 0,
            "include_metadata": self.include_metadata,
            "response_headers": bool(self.response_headers),
            "compression_algorithms": bool(self.compression_algorithms),
        }
        return [key for key, used in set_keys.items() if used]

    def validate(self) -> Iterator[Problem]:
        # Upstream's checks and wording, in upstream's order.
        try:
            parse_duration(self.check_collector_pipeline.interval)
        except ValueError as bad:
            yield "check_collector_pipeline::interval", str(bad)
        yield from endpoint_problems("endpoint", self.endpoint)
        yield from tls_problems("tls", self.tls)
        if self.check_collector_pipeline.exporter_failure_threshold <= 0:
            yield (
                "check_collector_pipeline::exporter_failure_threshold",
                "bad config: exporter_failure_threshold expects a positive number",
            )
        if not self.path.startswith("/"):
            yield "path", "bad config: path must start with /"


def endpoint_problems(key: str, endpoint: str) -> Iterator[Problem]:
    """An empty endpoint (upstream's message) or one that does not parse."""
    if not endpoint:
        yield key, "bad config: endpoint must be specified"
        return
    try:
        parse_endpoint(endpoint)
    except ValueError as bad:
        yield key, str(bad)


def tls_problems(key: str, tls: TLSServerConfig | None) -> Iterator[Problem]:
    """A ``tls`` section's problems, under `key`."""
    if tls is not None:
        for below, message in tls.validate():
            yield (f"{key}::{below}" if below else key), message
