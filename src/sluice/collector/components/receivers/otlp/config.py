"""The ``otlp`` receiver's config: upstream's ``protocols.grpc`` (configgrpc)
and ``protocols.http`` (confighttp plus the per-signal URL paths).

A protocol listens only when its key is present (``grpc:`` alone is enough);
its absent keys keep upstream's defaults.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated
from urllib.parse import unquote

from sluice.collector.component import ComponentConfig, Problem, section_problems
from sluice.collector.configauth import AuthConfig
from sluice.collector.confighttp import MIB, NO_TIME, HttpServerConfig
from sluice.collector.configtls import TLSServerConfig
from sluice.collector.confmap.decode import NIL_POINTER, Duration, Uint32
from sluice.gostrconv import quoted
from sluice.transport.listener import parse_endpoint

DEFAULT_MAX_RECV_MSG_SIZE_MIB = 4
"""gRPC's own limit, which upstream keeps when ``max_recv_msg_size_mib`` is 0."""
_GO_INT_MAX = (1 << 63) - 1
TCP_TRANSPORTS = ("tcp", "tcp4", "tcp6")
CONFIGNET_TRANSPORTS = frozenset(
    (*TCP_TRANSPORTS, "udp", "udp4", "udp6", "ip", "ip4", "ip6", "unix", "unixgram", "unixpacket")
)
"""The transport names upstream's ``confignet.TransportType`` reads; any
other is ``unsupported transport type "<name>"`` when the config loads."""


@dataclass
class KeepaliveServerParameters:
    max_connection_idle: Duration = NO_TIME
    max_connection_age: Duration = NO_TIME
    max_connection_age_grace: Duration = NO_TIME
    time: Duration = NO_TIME
    timeout: Duration = NO_TIME


@dataclass
class KeepaliveEnforcementPolicy:
    min_time: Duration = NO_TIME
    permit_without_stream: bool = False


@dataclass
class KeepaliveConfig:
    server_parameters: Annotated[KeepaliveServerParameters | None, NIL_POINTER] = None
    enforcement_policy: Annotated[KeepaliveEnforcementPolicy | None, NIL_POINTER] = None


@dataclass
class DialerConfig:
    timeout: Duration = NO_TIME


@dataclass
class GrpcConfig:
    """``protocols.grpc`` (upstream ``configgrpc.ServerConfig``)."""

    endpoint: str = "localhost:4317"
    transport: str = "tcp"
    """``tcp``, ``tcp4``, ``tcp6`` or ``unix`` (`endpoint` is then a socket path)."""
    dialer: DialerConfig = field(default_factory=DialerConfig)
    tls: Annotated[TLSServerConfig | None, NIL_POINTER] = None
    """Upstream's pointers (tls, keepalive, auth), nil by default: a null
    leaves them unset."""
    max_recv_msg_size_mib: int = 0
    """Largest request message in MiB; 0: gRPC's default, 4."""
    max_concurrent_streams: Uint32 = 0
    read_buffer_size: int = 512 * 1024
    write_buffer_size: int = 0
    keepalive: Annotated[KeepaliveConfig | None, NIL_POINTER] = None
    auth: Annotated[AuthConfig | None, NIL_POINTER] = None
    include_metadata: bool = False

    def validate(self) -> Iterator[Problem]:
        if not self.transport:
            yield "transport", 'invalid transport type ""'  # confignet's Validate
        elif self.transport not in CONFIGNET_TRANSPORTS:
            yield "transport", f"unsupported transport type {quoted(self.transport)}"
        elif self.transport not in (*TCP_TRANSPORTS, "unix"):
            # Names confignet reads that a gRPC server cannot listen on.
            yield (
                "transport",
                f'unsupported transport "{self.transport}" (valid: tcp, tcp4, tcp6, unix)',
            )
        elif self.transport != "unix":
            yield from _endpoint_problems(self.endpoint)
        elif not self.endpoint:
            yield "endpoint", "a unix socket path is required"
        if self._max_recv_msg_bytes < 0:
            yield (
                "max_recv_msg_size_mib",
                "invalid max_recv_msg_size_mib value, must be between 1 and "
                f"{_GO_INT_MAX // MIB}: {self.max_recv_msg_size_mib}",
            )
        for key in ("read_buffer_size", "write_buffer_size"):
            if getattr(self, key) < 0:
                yield key, f"invalid {key} value: {getattr(self, key)}"
        yield from section_problems("tls", self.tls)
        yield from section_problems("auth", self.auth)

    @property
    def _max_recv_msg_bytes(self) -> int:
        """``max_recv_msg_size_mib`` in bytes as upstream computes it, in Go's
        64-bit int: a product past its range wraps (negative: invalid)."""
        wrapped = (self.max_recv_msg_size_mib * MIB) & ((1 << 64) - 1)
        return wrapped - (1 << 64) if wrapped > _GO_INT_MAX else wrapped

    @property
    def max_message_bytes(self) -> int:
        """The largest request message; gRPC's default when the setting is
        0 (or its product wraps to 0, as upstream then sets nothing)."""
        if self.max_recv_msg_size_mib > 0 and self._max_recv_msg_bytes > 0:
            return self._max_recv_msg_bytes
        return DEFAULT_MAX_RECV_MSG_SIZE_MIB * MIB


@dataclass
class HttpConfig(HttpServerConfig):
    """``protocols.http`` (upstream ``confighttp.ServerConfig`` and URL paths)."""

    endpoint: str = "localhost:4318"
    traces_url_path: str = "/v1/traces"
    metrics_url_path: str = "/v1/metrics"
    logs_url_path: str = "/v1/logs"

    def validate(self) -> Iterator[Problem]:
        yield from super().validate()
        for key in ("traces_url_path", "metrics_url_path", "logs_url_path"):
            try:
                url_path(getattr(self, key))
            except ValueError as problem:
                yield key, str(problem)


@dataclass
class Protocols:
    grpc: GrpcConfig | None = None
    http: HttpConfig | None = None


@dataclass
class OtlpReceiverConfig(ComponentConfig):
    protocols: Protocols = field(default_factory=Protocols)

    def validate(self) -> Iterator[Problem]:
        grpc, http = self.protocols.grpc, self.protocols.http
        if grpc is None and http is None:
            yield "", "must specify at least one protocol when using the OTLP receiver"
        yield from section_problems("protocols::grpc", grpc)
        yield from section_problems("protocols::http", http)


_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


def url_path(text: str) -> str:
    """A configured URL path as upstream reads it (Go's ``url.Parse``): the
    path part of a URL, unescaped, with a leading ``/`` added when missing.
    Raises ValueError with upstream's wording."""

    def invalid(problem: str) -> ValueError:
        return ValueError(
            f"invalid HTTP URL path set for signal: parse {json.dumps(text)}: {problem}"
        )

    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
        raise invalid("net/url: invalid control character in URL")
    if text.startswith(":"):
        raise invalid("missing protocol scheme")
    rest = text.split("#", 1)[0].split("?", 1)[0]
    scheme = _SCHEME.match(rest)
    if scheme:
        rest = rest[scheme.end() :]
        if not rest.startswith("/"):
            return "/"  # an opaque URL (``mailto:x``) has no path
    elif ":" in rest.split("/", 1)[0]:
        raise invalid("first path segment in URL cannot contain colon")
    if rest.startswith("//") and (scheme or not rest.startswith("///")):
        rest = "/" + rest[2:].partition("/")[2]  # past the authority
    bad = _ESCAPE.search(rest)
    if bad:
        raise invalid(f'invalid URL escape "{rest[bad.start() : bad.start() + 3]}"')
    path = unquote(rest)
    return path if path.startswith("/") else "/" + path


def _endpoint_problems(endpoint: str) -> Iterator[Problem]:
    try:
        parse_endpoint(endpoint)
    except ValueError as problem:
        yield "endpoint", str(problem)
