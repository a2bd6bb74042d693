"""``service::telemetry::metrics::readers``: the schema upstream reads them
with (go.opentelemetry.io/contrib/config v0.10.0, which core v0.115 pins),
and what its meter provider refuses when the service starts.

A reader is ``pull`` (a Prometheus endpoint, :mod:`sluice.collector.selfmetrics`)
or ``periodic`` (pushes every ``interval`` ms over OTLP or prints to stdout,
:mod:`sluice.collector.periodicreader`). As upstream, the config only has
to decode (unknown keys and values of the wrong type are config errors);
an unsupported protocol, compression or temporality, a reader without an
exporter it can use, or a Prometheus exporter without host or port pass
``validate`` and stop the collector at start (:func:`reader_problem`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Annotated, Any
from urllib.parse import urlsplit

from sluice.collector.confmap.decode import NIL_POINTER
from sluice.gostrconv import quoted

HTTP_PROTOBUF = "http/protobuf"
GRPC_PROTOBUF = "grpc/protobuf"
"""The OTLP protocols upstream's periodic reader takes (``grpc`` alone is not one)."""
COMPRESSIONS = ("gzip", "none")
TEMPORALITIES = ("cumulative", "delta", "lowmemory")
DEFAULT_INTERVAL_MS = 60_000
DEFAULT_TIMEOUT_MS = 30_000
"""The SDK's periodic reader defaults (also for a value of 0 or less)."""
DEFAULT_OTLP_TIMEOUT_MS = 10_000
"""The OTLP exporters' own default timeout per request."""
NO_VALID_EXPORTER = "no valid metric exporter"


@dataclass
class IncludeExclude:
    included: list[str] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)


@dataclass
class Prometheus:
    """A pull reader's exporter; only ``host`` and ``port`` are used (as
    upstream, which fixes the other options itself)."""

    host: str | None = None
    port: int | None = None
    without_units: bool | None = None
    without_type_suffix: bool | None = None
    without_scope_info: bool | None = None
    with_resource_constant_labels: Annotated[IncludeExclude | None, NIL_POINTER] = None


@dataclass
class OtlpMetric:
    """A periodic reader's OTLP exporter. As upstream's: the endpoint's
    scheme decides TLS (``http://`` or no scheme: plain), ``insecure``,
    ``client_certificate``, ``client_key`` and
    ``default_histogram_aggregation`` are read but not used, and
    ``certificate`` is used by gRPC over ``https://`` only."""

    protocol: str = ""
    endpoint: str = ""
    certificate: str | None = None
    client_certificate: str | None = None
    client_key: str | None = None
    compression: str | None = None
    default_histogram_aggregation: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    insecure: bool | None = None
    temporality_preference: str | None = None
    timeout: int | None = None
    """Milliseconds per request (default :data:`DEFAULT_OTLP_TIMEOUT_MS`)."""

    @property
    def timeout_secs(self) -> float | None:
        """The limit per request; None (0 or less given) for none, as the
        OTLP exporters set no deadline then (only the reader's bounds a
        push)."""
        if self.timeout is None:
            return DEFAULT_OTLP_TIMEOUT_MS / 1000
        return self.timeout / 1000 if self.timeout > 0 else None


@dataclass
class MetricExporter:
    console: dict[str, Any] | None = None
    """Present (``console: {}``): print to stdout; null is not present."""
    otlp: Annotated[OtlpMetric | None, NIL_POINTER] = None
    prometheus: Annotated[Prometheus | None, NIL_POINTER] = None


@dataclass
class PullReader:
    exporter: MetricExporter = field(default_factory=MetricExporter)


@dataclass
class PeriodicReader:
    exporter: MetricExporter = field(default_factory=MetricExporter)
    interval: int | None = None
    """Milliseconds between pushes (default :data:`DEFAULT_INTERVAL_MS`)."""
    timeout: int | None = None
    """Milliseconds a push may take (default :data:`DEFAULT_TIMEOUT_MS`)."""

    @property
    def interval_secs(self) -> float:
        ms = self.interval if self.interval is not None and self.interval > 0 else None
        return (ms or DEFAULT_INTERVAL_MS) / 1000

    @property
    def timeout_secs(self) -> float:
        ms = self.timeout if self.timeout is not None and self.timeout > 0 else None
        return (ms or DEFAULT_TIMEOUT_MS) / 1000


@dataclass
class MetricReader:
    """One reader; when both are given, ``pull`` is the one used, as upstream."""

    periodic: Annotated[PeriodicReader | None, NIL_POINTER] = None
    pull: Annotated[PullReader | None, NIL_POINTER] = None


def reader_problem(reader: MetricReader) -> str | None:
    """What upstream's meter provider says of `reader` when it makes it
    (the service then does not start); None when it can be made."""
    if reader.pull is not None:
        prometheus = reader.pull.exporter.prometheus
        if prometheus is None:
            return NO_VALID_EXPORTER
        if prometheus.host is None:
            return "host must be specified"
        if prometheus.port is None:
            return "port must be specified"
        return None
    if reader.periodic is not None:
        exporter = reader.periodic.exporter
        if exporter.console is not None:
            return None
        if exporter.otlp is not None:
            return otlp_problem(exporter.otlp)
        return NO_VALID_EXPORTER
    return "unsupported metric reader type {<nil> <nil>}"


def otlp_problem(otlp: OtlpMetric) -> str | None:
    """Upstream's checks of an OTLP exporter, in its order: the protocol,
    the endpoint, gRPC's certificate, the compression, the temporality."""
    if otlp.protocol not in (HTTP_PROTOBUF, GRPC_PROTOBUF):
        return f"unsupported protocol {otlp.protocol}"
    if otlp.endpoint:
        try:
            url = endpoint_url(otlp.endpoint)
        except ValueError as bad:
            return str(bad)
        if otlp.protocol == GRPC_PROTOBUF and url.startswith("https:") and otlp.certificate:
            problem = _certificate_problem(otlp.certificate)
            if problem is not None:
                return f"could not create client tls credentials: {problem}"
    if otlp.compression is not None and otlp.compression not in COMPRESSIONS:
        return f"unsupported compression {quoted(otlp.compression)}"
    preference = otlp.temporality_preference
    if preference is not None and preference not in TEMPORALITIES:
        return f"unsupported temporality preference {quoted(preference)}"
    return None


_HOST_CHARS = re.compile(r"[A-Za-z0-9\-_.~!$&'()*+,;=:\[\]<>\"%]*")
"""What Go's URL parser takes in a host (``%`` escapes aside)."""


def endpoint_url(endpoint: str) -> str:
    """`endpoint` as upstream reads it: ``http://`` is added unless it has
    an ``http://`` or ``https://`` scheme; raises ValueError in Go's
    ``url.ParseRequestURI`` words when the host or port does not parse."""
    url = endpoint if endpoint.startswith(("http://", "https://")) else "http://" + endpoint

    def invalid(problem: str) -> ValueError:
        return ValueError(f"parse {quoted(url)}: {problem}")

    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        raise invalid("net/url: invalid control character in URL")
    authority = url.partition("://")[2].split("/", 1)[0].split("?", 1)[0]
    host = authority.rpartition("@")[2]
    if host.startswith("["):
        end = host.find("]")
        if end < 0:
            raise invalid("missing ']' in host")
        name, port = host[: end + 1], host[end + 1 :]
    else:
        colon = host.rfind(":")
        name, port = (host[:colon], host[colon:]) if colon >= 0 else (host, "")
    if port and (port[0] != ":" or not port[1:].isdigit()) and port != ":":
        raise invalid(f"invalid port {quoted(port)} after host")
    for char in name:
        if not _HOST_CHARS.fullmatch(char):
            raise invalid(f"invalid character {quoted(char)} in host name")
    return url


def _certificate_problem(path: str) -> str | None:
    """Why Go's ``credentials.NewClientTLSFromFile`` refuses `path`."""
    try:
        with open(path, "rb") as file:
            pem = file.read()
    except OSError as problem:
        return f"open {path}: {(problem.strerror or str(problem)).lower()}"
    if b"-----BEGIN CERTIFICATE-----" not in pem:
        return "credentials: failed to append certificates"
    return None


def url_parts(url: str) -> tuple[str, str]:
    """(origin, path) of an endpoint URL made by :func:`endpoint_url`."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}", parts.path
