"""``otlp`` (gRPC) exporter config: upstream's ``configgrpc.ClientConfig``
keys, ``timeout``, ``sending_queue``, ``retry_on_failure`` and ``batcher``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated

from sluice.collector.component import ComponentConfig, Problem, section_problems
from sluice.collector.configauth import AuthConfig
from sluice.collector.configtls import TLSClientConfig
from sluice.collector.confmap.decode import NIL_POINTER, Compression, Duration, Opaque
from sluice.collector.exporterhelper import QueueSettings, RetrySettings
from sluice.gostrconv import atoi
from sluice.transport.listener import split_host_port

COMPRESSIONS = ("gzip", "zlib", "deflate", "snappy", "zstd", "lz4", "none", "")
"""configcompression's types: the names a config loads with."""
GRPC_COMPRESSIONS = ("gzip", "snappy", "zstd")
"""The compressed types configgrpc's client dials with; another compressed
type loads but fails the exporter's start."""
SENT_AS_GZIP = ("zstd", "snappy")
"""Types grpcio cannot send (it has gzip and deflate only): gzip goes instead."""
BALANCERS = ("round_robin", "pick_first")
GRPCIO_MIN_VERSIONS = ("", "1.2")
GRPCIO_MAX_VERSIONS = ("", "1.3")
"""The TLS versions grpcio's channels allow (TLS 1.2 to 1.3, not settable):
a config asking for these (upstream's default min_version is 1.2) is served."""
_DNS_PREFIX = re.compile(r"^dns://[/]?")
_TEN_SECONDS = Duration(10.0)
_TIMEOUT = Duration(5.0)
_FLUSH_TIMEOUT = Duration(0.2)


def _port_problems(target: str) -> Iterator[Problem]:
    """Upstream's check of the endpoint: net.SplitHostPort's error as it is,
    then a port strconv.Atoi reads."""
    try:
        _, port = split_host_port(target)
    except ValueError as problem:
        yield "endpoint", str(problem)
        return
    try:
        atoi(port)
    except ValueError:
        yield "endpoint", f'invalid port "{port}"'


@dataclass
class KeepaliveSettings:
    time: Duration = _TEN_SECONDS
    timeout: Duration = _TEN_SECONDS
    permit_without_stream: bool = False


@dataclass
class BatcherSettings:
    """Upstream's experimental exporter-side batching: accepted, only off."""

    enabled: bool = False
    flush_timeout: Duration = _FLUSH_TIMEOUT
    min_size_items: int = 8192
    max_size_items: int = 0

    def validate(self) -> Iterator[Problem]:
        """exporterbatcher's checks, made whether or not it is enabled (the
        first failing one, as upstream reports it)."""
        if self.min_size_items < 0:
            yield "", "min_size_items must be greater than or equal to zero"
        elif self.max_size_items < 0:
            yield "", "max_size_items must be greater than or equal to zero"
        elif 0 < self.max_size_items < self.min_size_items:
            yield "", "max_size_items must be greater than or equal to min_size_items"
        elif self.flush_timeout <= 0:
            yield "", "timeout must be greater than zero"


@dataclass
class OtlpGrpcConfig(ComponentConfig):
    endpoint: str = ""
    """``host:port``; an ``https://`` prefix asks for TLS, ``http://`` and
    ``https://`` are stripped; a ``dns://`` target is dialled as written."""
    compression: Compression = "gzip"
    headers: dict[str, Opaque] = field(default_factory=dict)
    """Metadata sent with every call; the values are secrets (configopaque.String)."""
    timeout: Duration = _TIMEOUT
    tls: TLSClientConfig = field(default_factory=TLSClientConfig)
    keepalive: Annotated[KeepaliveSettings | None, NIL_POINTER] = None
    """None: no pings, as v0.115's exporter (a null leaves it so; ``keepalive:
    {}`` pings with the defaults)."""
    balancer_name: str = ""
    """"": gRPC's own default, ``pick_first``, as v0.115's exporter."""
    authority: str = ""
    wait_for_ready: bool = False
    read_buffer_size: int = 0
    write_buffer_size: int = 524288
    auth: Annotated[AuthConfig | None, NIL_POINTER] = None
    """Upstream's pointer, nil by default: a null leaves it unset."""
    retry_on_failure: RetrySettings = field(default_factory=RetrySettings)
    sending_queue: QueueSettings = field(default_factory=QueueSettings)
    batcher: BatcherSettings = field(default_factory=BatcherSettings)

    @property
    def target(self) -> str:
        """What gRPC dials, as configgrpc gives it: the endpoint without an
        ``http://`` or ``https://`` prefix (a ``dns://[authority]/`` target
        stays one, for gRPC's DNS resolver)."""
        for prefix in ("http://", "https://"):
            if self.endpoint.startswith(prefix):
                return self.endpoint[len(prefix) :]
        return self.endpoint

    @property
    def _validated_endpoint(self) -> str:
        """The ``host:port`` upstream's Validate checks: `target` without a
        ``dns://`` or ``dns:///`` prefix."""
        if self.endpoint.startswith("dns://"):
            return _DNS_PREFIX.sub("", self.endpoint)
        return self.target

    @property
    def uses_tls(self) -> bool:
        """TLS unless `insecure` (with no CA), or when the endpoint says ``https://``."""
        return not self.tls.insecure or self.tls.has_ca or self.endpoint.startswith("https://")

    def validate(self) -> Iterator[Problem]:
        target = self._validated_endpoint
        if not target:
            yield "", 'requires a non-empty "endpoint"'
        else:
            yield from _port_problems(target)
        if self.timeout < 0:
            # exporterhelper's TimeoutConfig, squashed into the exporter's keys.
            yield "", "'timeout' must be non-negative"
        if self.compression not in COMPRESSIONS:
            yield "compression", f'unsupported compression type "{self.compression}"'
        if self.balancer_name and self.balancer_name not in BALANCERS:
            yield "balancer_name", f"invalid balancer_name: {self.balancer_name}"
        if self.tls.insecure_skip_verify and self.uses_tls:
            yield (
                "tls::insecure_skip_verify",
                (
                    "not supported by Sluice's gRPC exporter (grpcio always verifies the "
                    "server); give the server's CA in ca_file"
                ),
            )
        if self.uses_tls and (
            self.tls.min_version not in GRPCIO_MIN_VERSIONS
            or self.tls.max_version not in GRPCIO_MAX_VERSIONS
        ):
            yield (
                "tls",
                (
                    "min_version and max_version are not supported by Sluice's gRPC exporter "
                    "beyond what grpcio does (min_version 1.2, max_version 1.3)"
                ),
            )
        if self.uses_tls and self.tls.cipher_suites:
            yield (
                "tls::cipher_suites",
                "not supported by Sluice's gRPC exporter (grpcio picks the suites)",
            )
        if self.batcher.enabled:
            yield "batcher::enabled", "not supported by Sluice; use the batch processor"
        yield from section_problems("batcher", self.batcher)
        yield from section_problems("tls", self.tls)
        yield from section_problems("auth", self.auth)
        yield from self.retry_on_failure.problems()
        yield from self.sending_queue.problems()
