"""``otlphttp`` exporter config: upstream's ``confighttp.ClientConfig`` keys
plus the per-signal endpoints, ``encoding``, ``sending_queue`` and
``retry_on_failure``."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated
from urllib.parse import urlsplit

from sluice.collector.component import SIGNAL_NAMES, ComponentConfig, Problem, section_problems
from sluice.collector.configauth import AuthConfig
from sluice.collector.configtls import TLSClientConfig
from sluice.collector.confmap.decode import NIL_POINTER, Compression, Duration, Opaque
from sluice.collector.exporterhelper import QueueSettings, RetrySettings
from sluice.policy import Signal

COMPRESSIONS = ("gzip", "zstd", "deflate", "zlib", "snappy", "lz4", "none", "")
"""What request bodies can be compressed with ("" and none: not at all), as upstream."""
ENCODINGS = ("proto", "json")
_TIMEOUT = Duration(30.0)
_NO_DURATION = Duration(0.0)


@dataclass
class CookiesSettings:
    enabled: bool = False


@dataclass
class OtlpHttpConfig(ComponentConfig):
    endpoint: str = ""
    """Base URL; each signal goes to ``<endpoint>/v1/<signal>``."""
    traces_endpoint: str = ""
    metrics_endpoint: str = ""
    logs_endpoint: str = ""
    encoding: str = "proto"
    """``proto`` or ``json``; anything else is upstream's ``invalid encoding type``."""
    compression: Compression = "gzip"
    headers: dict[str, Opaque] = field(default_factory=dict)
    """Sent with every request; the values are secrets (configopaque.String)."""
    timeout: Duration = _TIMEOUT
    """For one request, from connecting to the end of the answer; 0 or
    less: none (Go's http.Client.Timeout, which upstream does not validate)."""
    tls: TLSClientConfig = field(default_factory=TLSClientConfig)
    auth: Annotated[AuthConfig | None, NIL_POINTER] = None
    """Upstream's pointers (auth, cookies), nil by default: a null leaves them unset."""
    retry_on_failure: RetrySettings = field(default_factory=RetrySettings)
    sending_queue: QueueSettings = field(default_factory=QueueSettings)
    proxy_url: str = ""
    read_buffer_size: int = 0
    write_buffer_size: int = 524288
    max_idle_conns: int | None = None
    max_idle_conns_per_host: int | None = None
    max_conns_per_host: int | None = None
    idle_conn_timeout: Duration | None = None
    disable_keep_alives: bool = False
    http2_read_idle_timeout: Duration = _NO_DURATION
    http2_ping_timeout: Duration = _NO_DURATION
    cookies: Annotated[CookiesSettings | None, NIL_POINTER] = None

    def signal_url(self, signal: Signal) -> str:
        """Where `signal` goes: its own endpoint, else the base one's
        ``v1/<signal>`` ("" when neither is set)."""
        name = SIGNAL_NAMES[signal]
        own: str = getattr(self, f"{name}_endpoint")
        if own:
            return own
        if not self.endpoint:
            return ""
        return self.endpoint + ("" if self.endpoint.endswith("/") else "/") + f"v1/{name}"

    def validate(self) -> Iterator[Problem]:
        keys = ("endpoint", "traces_endpoint", "metrics_endpoint", "logs_endpoint")
        if not any(getattr(self, key) for key in keys):
            yield "", "at least one endpoint must be specified"
        for key in keys:
            url = getattr(self, key)
            if url and not _is_http_url(url):
                yield key, f"{key} must be a valid URL (http:// or https://, with a host)"
        if self.encoding not in ENCODINGS:
            yield "encoding", f"invalid encoding type: {self.encoding}"
        if self.compression not in COMPRESSIONS:
            yield "compression", f'unsupported compression type "{self.compression}"'
        if self.proxy_url:
            yield "proxy_url", "an HTTP proxy is not supported by Sluice's otlphttp exporter"
        if self.cookies is not None and self.cookies.enabled:
            yield "cookies::enabled", "cookies are not supported by Sluice's otlphttp exporter"
        yield from section_problems("tls", self.tls)
        yield from section_problems("auth", self.auth)
        yield from self.retry_on_failure.problems()
        yield from self.sending_queue.problems()


def _is_http_url(url: str) -> bool:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)
