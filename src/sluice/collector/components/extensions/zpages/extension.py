"""The ``zpages`` extension: live pages about the running collector on
``/debug/servicez``, ``/debug/pipelinez``, ``/debug/extensionz`` and
``/debug/featurez`` (and ``/debug/expvarz`` with ``expvar.enabled``), and
an always-empty ``/debug/tracez`` unless the collector's traces level is
``none``, as upstream.

Each page is built from the host when it is asked for (nothing is kept or
computed between requests), as HTML, or as JSON with ``?format=json`` or an
``Accept`` header that prefers ``application/json``. The server settings
upstream's ``confighttp`` applies are applied here too: TLS, ``auth`` (401
before any page), ``cors``, ``response_headers`` and the timeouts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from urllib.parse import parse_qs, urlencode

from sluice.collector.component import Component, Host
from sluice.collector.components.extensions.healthcheck.extension import server_tls
from sluice.collector.components.extensions.zpages import expvar, pages, render
from sluice.collector.components.extensions.zpages.config import ZPagesConfig
from sluice.collector.confighttp import ServerMiddleware
from sluice.collector.servemux import not_found, redirect_answer
from sluice.transport.http_message import Request, Response
from sluice.transport.listener import HttpListener

PREFIX = "/debug/"
HTML = b"text/html; charset=utf-8"
JSON = b"application/json"


class ZPagesExtension(Component):
    """Serves the pages from start to shutdown."""

    def __init__(self, config: ZPagesConfig, logger: logging.Logger):
        self.config = config
        self.logger = logger
        self.listener: HttpListener | None = None
        self._host = Host()
        self.pages = pages.PAGES + (("expvarz",) if config.expvar.enabled else ())
        self._routes: dict[str, Callable[[dict[str, str]], pages.Page]] = {
            "servicez": lambda _: pages.service_page(self._host, self.pages),
            "pipelinez": lambda query: pages.pipelines_page(self._host, query),
            "extensionz": lambda query: pages.extensions_page(self._host, query),
            "featurez": lambda _: pages.features_page(),
        }
        self._optional_routes: dict[str, Callable[[], pages.Page | None]] = {
            "tracez": lambda: pages.traces_page(self._host),
        }

    async def start(self, host: Host) -> None:
        self._host = host
        handler = ServerMiddleware.for_host(self.config, self.handle, host, self.logger)
        tls = server_tls(self.config.tls, self.logger)
        self.listener = await HttpListener.start(
            handler, self.config.endpoint, self.config.server_limits(), tls=tls
        )
        self.logger.info(
            "Starting zPages extension on %s (%s)",
            self.config.endpoint,
            ", ".join(PREFIX + p for p in self.pages),
        )

    async def shutdown(self) -> None:
        if self.listener is not None:
            await self.listener.stop()
            self.listener = None

    async def handle(self, request: Request) -> Response:
        """A page (authentication, CORS and response headers are applied
        around this, by :class:`ServerMiddleware`), or the redirect of
        upstream's ``ServeMux`` for a path that is not clean (every page is
        an exact path there)."""
        redirected = redirect_answer(request.method, request.path, request.query, ())
        if redirected is not None:
            return redirected
        name = request.path[len(PREFIX) :] if request.path.startswith(PREFIX) else ""
        if name == "expvarz" and self.config.expvar.enabled:
            return Response(
                200, expvar.variables(), content_type=b"application/json; charset=utf-8"
            )
        query = {k: v[0] for k, v in parse_qs(request.query, keep_blank_values=True).items()}
        route = self._routes.get(name)
        optional = self._optional_routes.get(name)
        page = route(query) if route is not None else optional() if optional is not None else None
        if page is None:
            return not_found()
        if _wants_json(query, request.header(b"accept")):
            return Response(200, render.json_body(page), content_type=JSON)
        title, body = render.html(page)
        json_link = "?" + urlencode({**query, "format": "json"})
        return Response(200, render.document(title, self.pages, body, json_link), content_type=HTML)


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
