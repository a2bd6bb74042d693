"""The ``zpages`` extension: live pages about the running collector on
``/debug/servicez``, ``/debug/pipelinez``, ``/debug/extensionz`` and
``/debug/featurez`` (and ``/debug/expvarz`` with ``expvar.enabled``).

Each page is built from the host when it is asked for (nothing is kept or
computed between requests), as HTML, or as JSON with ``?format=json`` or an
``Accept`` header that prefers ``application/json``. The server settings
upstream's ``confighttp`` applies are applied here too: TLS, ``auth`` (401
before any page), ``cors``, ``response_headers`` and the timeouts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from urllib.parse import parse_qs, urlencode

from sluice.collector.component import Component, Host
from sluice.collector.components.extensions.healthcheck.extension import server_tls
from sluice.collector.components.extensions.healthcheck.responses import TEXT_PLAIN, page_not_found
from sluice.collector.components.extensions.zpages import expvar, pages, render
from sluice.collector.components.extensions.zpages.config import ZPagesConfig
from sluice.collector.components.receivers.otlp.cors import CorsPolicy
from sluice.collector.configauth import AuthenticationError, ServerAuthenticator
from sluice.transport.http_server import Headers, Request, Response, ServerLimits
from sluice.transport.listener import HttpListener

PREFIX = "/debug/"
HTML = b"text/html; charset=utf-8"
JSON = b"application/json"
_NOSNIFF = (b"X-Content-Type-Options", b"nosniff")


class ZPagesExtension(Component):
    """Serves the pages from start to shutdown."""

    def __init__(self, config: ZPagesConfig, logger: logging.Logger):
        self.config = config
        self.logger = logger
        self.listener: HttpListener | None = None
        self._host = Host()
        self._authenticator: ServerAuthenticator | None = None
        self._cors = (
            CorsPolicy(config.cors) if config.cors and config.cors.allowed_origins else None
        )
        self._extra: Headers = [
            (name.encode("latin-1"), value.encode("latin-1"))
            for name, value in config.response_headers.items()
        ]
        self.pages = pages.PAGES + (("expvarz",) if config.expvar.enabled else ())
        self._routes: dict[str, Callable[[dict[str, str]], pages.Page]] = {
            "servicez": lambda _: pages.service_page(self._host, self.pages),
            "pipelinez": lambda query: pages.pipelines_page(self._host, query),
            "extensionz": lambda query: pages.extensions_page(self._host, query),
            "featurez": lambda _: pages.features_page(),
        }

    async def start(self, host: Host) -> None:
        self._host = host
        if self.config.auth is not None:
            self._authenticator = self.config.auth.server_authenticator(host)
        tls = server_tls(self.config.tls, self.logger)
        self.listener = await HttpListener.start(
            self.handle, self.config.endpoint, self._limits(), tls=tls
        )
        self.logger.info(
            "Starting zPages extension on %s (%s)",
            self.config.endpoint,
            ", ".join(PREFIX + p for p in self.pages),
        )

    def _limits(self) -> ServerLimits:
        defaults = ServerLimits()
        config = self.config
        return replace(
            defaults,
            max_body_size=config.max_request_body_size or defaults.max_body_size,
            header_timeout=config.read_header_timeout or defaults.header_timeout,
            body_timeout=config.read_timeout or defaults.body_timeout,
            idle_timeout=config.idle_timeout or defaults.idle_timeout,
        )

    async def shutdown(self) -> None:
        if self.listener is not None:
            await self.listener.stop()
            self.listener = None

    async def handle(self, request: Request) -> Response:
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

    async def _answer(self, request: Request) -> Response:
        if self._authenticator is not None:
            try:
                await self._authenticator.authenticate(self._auth_headers(request))
            except AuthenticationError as refused:
                self.logger.debug("zPages request refused by the authenticator: %s", refused)
                return Response(401, b"Unauthorized\n", [_NOSNIFF], content_type=TEXT_PLAIN)
        name = request.path[len(PREFIX) :] if request.path.startswith(PREFIX) else ""
        if name == "expvarz" and self.config.expvar.enabled:
            return Response(
                200, expvar.variables(), content_type=b"application/json; charset=utf-8"
            )
        route = self._routes.get(name)
        if route is None:
            return page_not_found()
        query = {k: v[0] for k, v in parse_qs(request.query, keep_blank_values=True).items()}
        page = route(query)
        if _wants_json(query, request.header(b"accept")):
            return Response(200, render.json_body(page), content_type=JSON)
        title, body = render.html(page)
        json_link = "?" + urlencode({**query, "format": "json"})
        return Response(200, render.document(title, self.pages, body, json_link), content_type=HTML)

    def _auth_headers(self, request: Request) -> dict[str, str]:
        """The request's headers, and the ``auth.request_params`` query
        parameters as headers (upstream hands both to the authenticator)."""
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in request.headers.items()}
        params = self.config.auth.request_params if self.config.auth else []
        if params and request.query:
            for key, values in parse_qs(request.query).items():
                if key in params:
                    headers[key.lower()] = values[0]
        return headers


def _wants_json(query: dict[str, str], accept: bytes | None) -> bool:
    """``?format=json`` (``?format=html`` forces HTML), else an ``Accept``
    header that names JSON before (or without) HTML."""
    wanted = query.get("format", "").lower()
    if wanted in ("json", "html"):
        return wanted == "json"
    if not accept:
        return False
    text = accept.decode("latin-1").lower()
    at_json = text.find("application/json")
    at_html = text.find("text/html")
    return at_json >= 0 and (at_html < 0 or at_json < at_html)
