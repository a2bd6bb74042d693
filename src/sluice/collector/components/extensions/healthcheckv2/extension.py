"""The ``healthcheckv2`` extension: collector, pipeline and component status
over HTTP (and the standard gRPC health service), from the status reports of
every component.

Until the service reports ``collector`` ``StatusOK`` (every component
started), only ``StatusStarting`` reports are recorded and the others wait,
so that the status does not flap between starting and ok while components
start one by one; then they are recorded in order, and every later report at
once. With ``use_v2: false`` it serves upstream's v1 answer on the top-level
``endpoint`` and ``path`` instead, from the same status.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs

from sluice.collector.component import Component, Host, Status
from sluice.collector.components.extensions.healthcheck.extension import (
    COLLECTOR,
    listen,
    server_tls,
)
from sluice.collector.components.extensions.healthcheckv2.aggregator import (
    PIPELINE,
    ErrorPriority,
    Event,
    StatusAggregator,
)
from sluice.collector.components.extensions.healthcheckv2.config import HealthCheckV2Config
from sluice.collector.components.extensions.healthcheckv2.grpc_health import GrpcHealthServer
from sluice.collector.components.extensions.healthcheckv2.responses import (
    LegacyResponder,
    StatusResponder,
)
from sluice.collector.configauth import server_authenticator
from sluice.collector.confighttp import HttpServerConfig, ServerMiddleware
from sluice.collector.gotext import go_json
from sluice.collector.servemux import ServeMux
from sluice.transport.http_message import Request, Response
from sluice.transport.listener import HttpListener


class HealthCheckV2Extension(Component):
    """The status tree, fed by the host's reports, and the services that
    answer from it (HTTP and, when configured, gRPC)."""

    def __init__(self, config: HealthCheckV2Config, logger: logging.Logger):
        self.config = config
        self.logger = logger
        self.start_ns = time.time_ns()
        """Reported as ``start_time`` (upstream: when the extension was made)."""
        health = config.component_health if config.use_v2 else None
        only_recoverable = (
            health is not None
            and health.include_recoverable_errors
            and not health.include_permanent_errors
        )
        self.aggregator = StatusAggregator(
            ErrorPriority.RECOVERABLE if only_recoverable else ErrorPriority.PERMANENT
        )
        self.responder: StatusResponder
        routes: list[tuple[str, str]] = []  # (path pattern, "status" or "config")
        self.server: HttpServerConfig | None = None
        """The HTTP server's settings (v1 mode: the top-level keys)."""
        if not config.use_v2:
            self.responder = LegacyResponder(self.start_ns, config.response_body)
            self.server = config
            routes.append((config.path, "status"))
        else:
            self.responder = StatusResponder(self.start_ns, health)
            if config.http is not None:
                self.server = config.http
                for route, paths in (
                    ("status", config.http.status),
                    ("config", config.http.config),
                ):
                    if paths.enabled:
                        routes.append((paths.path, route))
        self._mux = ServeMux(routes)
        self.grpc = (
            GrpcHealthServer(config.grpc, self.aggregator, health)
            if config.use_v2 and config.grpc is not None
            else None
        )
        self.listener: HttpListener | None = None
        self.collector_config: bytes | None = None
        self._host: Host | None = None
        self._waiting: list[tuple[str, Event]] | None = []
        """Reports held until the collector is ready; None once it is."""

    async def start(self, host: Host) -> None:
        self._host = host
        # Upstream's service makes every extension before starting any and
        # hands each status report to all of them: the reports made so far
        # (the extensions started earlier, this one's StatusStarting) count.
        earlier = sorted(host.statuses.items(), key=lambda report: report[1].timestamp_ns)
        for instance, report in earlier:
            self._on_event(instance, Event(report.status, report.error, report.timestamp_ns))
        host.status_listeners.append(self.on_status)
        try:
            if self.server is not None:
                server = self.server
                handler = ServerMiddleware.for_host(server, self.handle, host, self.logger)
                tls = server_tls(server.tls, self.logger)
                self.listener = await listen(handler, server.endpoint, server.server_limits(), tls)
            if self.grpc is not None:
                await self.grpc.start(server_authenticator(self.grpc.settings.auth, host))
        except BaseException:
            await self.shutdown()
            raise

    async def shutdown(self) -> None:
        if self._host is not None:
            self._host.status_listeners.remove(self.on_status)
            self._host = None
        if self.grpc is not None:
            await self.grpc.stop()
        if self.listener is not None:
            await self.listener.stop()
            self.listener = None

    def notify_config(self, config: Mapping[str, Any]) -> None:
        """The collector's effective config, served at ``http.config.path``
        (upstream's ConfigWatcher; the service calls it after loading)."""
        self.collector_config = go_json(config, sort_keys=True)

    def on_status(self, instance: str, status: Status, error: str) -> None:
        self._on_event(instance, Event.now(status, error))

    def _on_event(self, instance: str, event: Event) -> None:
        if instance.startswith(PIPELINE):
            return  # a pipeline's status is its components'
        if instance == COLLECTOR:
            if event.status is Status.OK and self._waiting is not None:
                waiting, self._waiting = self._waiting, None
                for held in waiting:
                    self._record(*held)
            return
        if self._waiting is not None and event.status is not Status.STARTING:
            self._waiting.append((instance, event))
        else:
            self._record(instance, event)

    def _record(self, instance: str, event: Event) -> None:
        pipelines = self._host.pipelines if self._host is not None else {}
        member_of = [p for p, members in pipelines.items() if instance in members]
        self.aggregator.record(instance, event, member_of)

    async def handle(self, request: Request) -> Response:
        route = self._mux.route(request)
        if isinstance(route, Response):
            return route
        if route == "status":
            query = parse_qs(request.query, keep_blank_values=True)
            verbose = "verbose" in query and query["verbose"][0] != "false"
            status = self.aggregator.find(query.get("pipeline", [""])[0])
            if status is None:
                return Response(404, content_type=None)
            return self.responder.respond(status, verbose)
        if self.collector_config is None:  # the "config" route
            return Response(503, content_type=None)
        return Response(200, self.collector_config)
