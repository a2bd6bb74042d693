"""An HTTP server's settings as upstream's ``confighttp.ServerConfig`` reads
them, and what they do to every request, whichever component serves: CORS
preflights answered first, the ``auth`` authenticator (a refusal is v0.115's
plain-text ``401 Unauthorized``), the ``response_headers`` on
every answer, and the shared server's limits from the body size and timeouts.
The otlp receiver's HTTP protocol and the zpages extension serve through it;
the collector's HTTP servers route as Go's ServeMux (:mod:`.servemux`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Annotated
from urllib.parse import parse_qs

from sluice.collector.client import NO_METADATA, Info, Metadata, metadata_of, serving
from sluice.collector.component import Host, Problem, section_problems
from sluice.collector.configauth import (
    AuthConfig,
    AuthenticationError,
    ServerAuthenticator,
    server_authenticator,
)
from sluice.collector.configtls import TLSServerConfig
from sluice.collector.confmap.decode import NIL_POINTER, Duration, Int64, Opaque
from sluice.collector.cors import CorsConfig, CorsPolicy
from sluice.collector.internal.warning import warn_on_unspecified_host
from sluice.collector.servemux import go_error
from sluice.transport.connections import ServerLimits
from sluice.transport.http_message import Handler, Headers, Request, Response
from sluice.transport.listener import parse_endpoint

MIB = 1 << 20
NO_TIME = Duration(0)
DEFAULT_MAX_REQUEST_BODY_SIZE = 20 * MIB
"""confighttp's limit when ``max_request_body_size`` is 0 or less."""
COMPRESSION_ALGORITHMS = ("", "gzip", "zstd", "zlib", "snappy", "deflate", "lz4")
"""confighttp's default ``compression_algorithms`` (and every name it knows)."""


@dataclass
class HttpAuthConfig(AuthConfig):
    request_params: list[str] = field(default_factory=list)
    """Query parameters handed to the authenticator as headers (the query wins)."""


@dataclass
class HttpServerConfig:
    """``confighttp.ServerConfig``'s keys (a component sets its own default
    ``endpoint`` and adds its keys in a subclass)."""

    endpoint: str = ""
    tls: Annotated[TLSServerConfig | None, NIL_POINTER] = None
    """Upstream's pointers, nil by default: a null leaves them unset."""
    cors: Annotated[CorsConfig | None, NIL_POINTER] = None
    auth: Annotated[HttpAuthConfig | None, NIL_POINTER] = None
    max_request_body_size: Int64 = 0
    """Largest body in bytes, before and after decompression; 0: 20 MiB."""
    include_metadata: bool = False
    response_headers: dict[str, Opaque] = field(default_factory=dict)
    """Headers on every answer; the values are secrets (configopaque.String)."""
    compression_algorithms: list[str] = field(default_factory=lambda: list(COMPRESSION_ALGORITHMS))
    read_timeout: Duration = NO_TIME
    read_header_timeout: Duration = NO_TIME
    write_timeout: Duration = NO_TIME
    idle_timeout: Duration = NO_TIME

    def validate(self) -> Iterator[Problem]:
        try:
            parse_endpoint(self.endpoint)
        except ValueError as problem:
            yield "endpoint", str(problem)
        for name in self.compression_algorithms:
            if name not in COMPRESSION_ALGORITHMS:
                yield "compression_algorithms", f'unsupported compression algorithm "{name}"'
        yield from section_problems("tls", self.tls)
        yield from section_problems("auth", self.auth)

    @property
    def max_body_bytes(self) -> int:
        if self.max_request_body_size <= 0:
            return DEFAULT_MAX_REQUEST_BODY_SIZE
        return self.max_request_body_size

    def server_limits(self) -> ServerLimits:
        """The shared server's limits for these settings: the body limit, and
        the timeouts where they are set (0 keeps the server's own)."""
        defaults = ServerLimits()
        return replace(
            defaults,
            max_body_size=self.max_body_bytes,
            # The bodies held at once stay bounded whatever the per-request
            # limit: one request may go over the budget when nothing else is
            # being handled (see ConnectionTracker), so one largest body always fits.
            body_budget=defaults.body_budget,
            header_timeout=self.read_header_timeout or defaults.header_timeout,
            body_timeout=self.read_timeout or defaults.body_timeout,
            idle_timeout=self.idle_timeout or defaults.idle_timeout,
        )


class ServerMiddleware:
    """Wraps a component's handler with what the settings do to every
    request, in upstream's order: a CORS preflight is answered at once,
    then the authenticator decides (a refusal is logged at debug and
    answered as v0.115's ``authInterceptor`` answers it, whatever the
    component: Go's ``http.Error`` with ``Unauthorized``, the reason kept
    out of the answer), then the handler
    answers, with the client's :class:`~sluice.collector.client.Info` (its
    address, its headers with ``include_metadata``, what the authenticator
    found) current; CORS and ``response_headers`` go on every answer."""

    def __init__(
        self,
        config: HttpServerConfig,
        handler: Handler,
        authenticator: ServerAuthenticator | None,
        log: logging.Logger,
    ):
        self._handler = handler
        self._cors = (
            CorsPolicy(config.cors) if config.cors and config.cors.allowed_origins else None
        )
        self._authenticator = authenticator
        self._request_params = tuple(config.auth.request_params) if config.auth else ()
        self._include_metadata = config.include_metadata
        self._extra: Headers = [
            (name.encode("latin-1"), value.encode("latin-1"))
            for name, value in config.response_headers.items()
        ]
        self._log = log

    @classmethod
    def for_host(
        cls,
        config: HttpServerConfig,
        handler: Handler,
        host: Host,
        log: logging.Logger,
    ) -> ServerMiddleware:
        """With the authenticator ``auth`` names among the host's extensions
        (raises ValueError with upstream's wording when it is missing or
        does not check requests). Logs upstream's warnings about the settings,
        as its ``ToServer`` does."""
        warn_on_unspecified_host(log, config.endpoint)
        if config.cors and not config.cors.allowed_origins and config.cors.allowed_headers:
            log.warning(
                "The CORS configuration specifies allowed headers but no allowed origins,"
                " and is therefore ignored."
            )
        authenticator = server_authenticator(config.auth, host)
        return cls(config, handler, authenticator, log)

    async def __call__(self, request: Request) -> Response:
        cors = self._cors
        if cors is not None and cors.is_preflight(request):
            response = cors.preflight(request)
        else:
            response = await self._answer(request)
            if cors is not None:
                cors.decorate(request, response)
        if self._extra:
            response.headers[:0] = self._extra
        return response

    def with_response_headers(self, response: Response) -> Response:
        """`response` with ``response_headers`` added: for answers the HTTP
        layer writes itself on the component's behalf."""
        if self._extra:
            response.headers[:0] = self._extra
        return response

    async def _answer(self, request: Request) -> Response:
        auth = None
        if self._authenticator is not None:
            try:
                auth = await self._authenticator.authenticate(self._auth_headers(request))
            except AuthenticationError as refused:
                self._log.debug("request refused by the authenticator: %s", refused)
                return go_error(401, "Unauthorized")
        metadata = request_metadata(request) if self._include_metadata else NO_METADATA
        with serving(Info(request.peer, metadata, auth)):
            return await self._handler(request)

    def _auth_headers(self, request: Request) -> dict[str, str]:
        headers = {
            name.decode("latin-1"): value.decode("latin-1")
            for name, value in request.headers.items()
        }
        if self._request_params and request.query:
            # As Go's URL.Query(): empty values count, and the authenticator
            # reads a parameter's first value.
            query = parse_qs(request.query, keep_blank_values=True)
            for name in self._request_params:
                if name in query:
                    headers[name.lower()] = query[name][0]
        return headers


def request_metadata(request: Request) -> Metadata:
    """Every header line of `request` (upstream's ``include_metadata``: Go's
    header map, in which ``Host`` is the request's host)."""
    return metadata_of(
        (name.decode("latin-1"), value.decode("utf-8", "replace")) for name, value in request.lines
    )
