"""The collector's own metrics as a Prometheus pull endpoint
(``service.telemetry.metrics``: ``http://<endpoint>/metrics``, default
``0.0.0.0:8888``).

Each scrape renders the service's registry (:mod:`sluice.collector.telemetry`)
in the format the scraper asks for (:mod:`sluice.transport.prometheus`).
Requests are routed as upstream's ``http.ServeMux`` routes them: other paths
get Go's ``http.NotFound``.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from sluice.collector.servemux import ServeMux
from sluice.transport.http_message import Request, Response
from sluice.transport.listener import HttpListener
from sluice.transport.prometheus import metrics_response

DEFAULT_ENDPOINT = "0.0.0.0:8888"
METRICS_PATH = "/metrics"


class SelfMetricsServer:
    """Serves `registry` at ``http://<endpoint>/metrics`` between
    :meth:`start` and :meth:`stop`."""

    def __init__(self, registry: CollectorRegistry, endpoint: str = DEFAULT_ENDPOINT):
        self.registry = registry
        self.endpoint = endpoint
        self.listener: HttpListener | None = None
        self._mux = ServeMux([(METRICS_PATH, None)])

    @property
    def port(self) -> int:
        """The bound port (the chosen one for port 0); 0 when not started."""
        return self.listener.port if self.listener is not None else 0

    async def start(self) -> None:
        """Bind and serve (raises OSError or ValueError for the endpoint)."""
        self.listener = await HttpListener.start(self.handle, self.endpoint)

    async def stop(self) -> None:
        if self.listener is not None:
            await self.listener.stop()
            self.listener = None

    async def handle(self, request: Request) -> Response:
        routed = self._mux.route(request)
        if isinstance(routed, Response):
            return routed
        return metrics_response(self.registry, request)
