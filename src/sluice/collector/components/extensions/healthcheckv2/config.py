"""The ``healthcheckv2`` extension's config, as contrib's healthcheckv2extension:
the v1 keys at the top level (used while ``use_v2`` is false), and the v2
``http``, ``grpc`` and ``component_health`` sections (used once it is true)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated

from sluice.collector.component import ComponentConfig, Problem
from sluice.collector.components.extensions.healthcheck.config import (
    CheckCollectorPipeline,
    ResponseBody,
    endpoint_problems,
    tls_problems,
)
from sluice.collector.components.receivers.otlp.config import TCP_TRANSPORTS, GrpcConfig
from sluice.collector.confighttp import HttpServerConfig
from sluice.collector.confmap.decode import NIL_POINTER, Duration


@dataclass(frozen=True)
class PathSettings:
    enabled: bool
    path: str


@dataclass
class HttpSettings(HttpServerConfig):
    """Upstream's ``confighttp.ServerConfig`` keys (``tls``, ``auth``, ``cors``,
    ``response_headers``, timeouts...), applied to the server, and the paths."""

    endpoint: str = "localhost:13133"
    status: PathSettings = field(default_factory=lambda: PathSettings(True, "/status"))
    """Collector and pipeline status as JSON."""
    config: PathSettings = field(default_factory=lambda: PathSettings(False, "/config"))
    """The collector's effective config as JSON (secrets redacted; off by default)."""


@dataclass
class GrpcSettings(GrpcConfig):
    """The ``grpc.health.v1.Health`` service, with upstream's
    ``configgrpc.ServerConfig`` keys (``tls``, ``auth``, ``keepalive``,
    ``max_recv_msg_size_mib``, ``max_concurrent_streams``...), as the ``otlp``
    receiver's gRPC protocol applies them."""

    endpoint: str = "localhost:13132"
    transport: str = "tcp"
    """``tcp``, ``tcp4``, ``tcp6`` (``endpoint`` is ``host:port``) or ``unix``
    (a socket path)."""


IMMEDIATE = Duration(0)


@dataclass(frozen=True)
class ComponentHealthSettings:
    """Which component errors make the answer unhealthy (none by default)."""

    include_permanent_errors: bool = False
    include_recoverable_errors: bool = False
    recovery_duration: Duration = IMMEDIATE
    """How long a recoverable error may last before it counts."""


@dataclass
class HealthCheckV2Config(HttpServerConfig, ComponentConfig):
    """The top-level ``endpoint`` and the other server keys (upstream's
    squashed ``confighttp.ServerConfig``) serve the v1 mode."""

    endpoint: str = "localhost:13133"
    path: str = "/"
    response_body: Annotated[ResponseBody | None, NIL_POINTER] = None
    """Upstream's pointers (response_body, check_collector_pipeline,
    component_health), nil by default: a null leaves them unset; ``http``
    and ``grpc`` default to set upstream, so a null one is there with its
    defaults."""
    check_collector_pipeline: Annotated[CheckCollectorPipeline | None, NIL_POINTER] = None
    """Deprecated and ignored, as upstream."""
    use_v2: bool = False
    http: HttpSettings | None = None
    grpc: GrpcSettings | None = None
    component_health: Annotated[ComponentHealthSettings | None, NIL_POINTER] = None

    def validate(self) -> Iterator[Problem]:
        if not self.use_v2:
            yield from _named("endpoint", self.endpoint, "http endpoint required")
            yield from tls_problems("tls", self.tls)
            yield from _middleware_problems("", self)
            if not self.path.startswith("/"):
                yield "path", "path must start with /"
            return
        if self.http is None and self.grpc is None:
            yield "", "must specify at least one protocol"
        if self.http is not None:
            yield from _named("http::endpoint", self.http.endpoint, "http endpoint required")
            yield from tls_problems("http::tls", self.http.tls)
            yield from _middleware_problems("http::", self.http)
            for key, paths in (("status", self.http.status), ("config", self.http.config)):
                if paths.enabled and not paths.path.startswith("/"):
                    yield f"http::{key}::path", "path must start with /"
        if self.grpc is not None:
            yield from tls_problems("grpc::tls", self.grpc.tls)
            for key, message in GrpcConfig.validate(self.grpc):
                if key.partition("::")[0] not in ("endpoint", "tls"):
                    yield f"grpc::{key}", message
            if self.grpc.transport not in (*TCP_TRANSPORTS, "unix"):
                return  # named above
            if self.grpc.transport == "unix" and self.grpc.endpoint:
                return
            yield from _named("grpc::endpoint", self.grpc.endpoint, "grpc endpoint required")


def _middleware_problems(prefix: str, server: HttpServerConfig) -> Iterator[Problem]:
    """The server keys' problems besides the endpoint's and tls's (checked
    with upstream's wording above)."""
    for key, message in HttpServerConfig.validate(server):
        if key not in ("endpoint", "tls") and not key.startswith("tls::"):
            yield prefix + key, message


def _named(key: str, endpoint: str, missing: str) -> Iterator[Problem]:
    """Upstream's wording for a missing endpoint; the listener's for a bad one."""
    if not endpoint:
        yield key, missing
    else:
        yield from endpoint_problems(key, endpoint)
