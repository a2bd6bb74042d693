"""The ``health_check`` extension: one HTTP path that answers 200 while the
collector runs and 503 before it is ready and once it shuts down.

Readiness comes from the service's status reports (upstream's pipeline
watcher): ``collector`` ``StatusOK`` once every component started, any other
``collector`` status (``StatusStopping`` at shutdown) ends it. Component
reports do not change the answer, as upstream's v1 ignores them.
"""

from __future__ import annotations

import logging
import ssl
import time

from sluice.collector.component import Component, Host, Status
from sluice.collector.components.extensions.healthcheck.config import HealthCheckConfig
from sluice.collector.components.extensions.healthcheck.responses import (
    server_status,
    static_status,
)
from sluice.collector.configauth import server_authenticator
from sluice.collector.configtls import TLSServerConfig
from sluice.collector.internal.warning import warn_on_unspecified_host
from sluice.collector.servemux import ServeMux
from sluice.transport.connections import ServerLimits
from sluice.transport.http_message import Handler, Request, Response
from sluice.transport.listener import HttpListener, ListenError

COLLECTOR = "collector"
"""The status instance the service reports its own lifecycle under."""


class HealthCheckExtension(Component):
    """Serves `config.path` on `config.endpoint` from start to shutdown."""

    def __init__(self, config: HealthCheckConfig, logger: logging.Logger):
        self.config = config
        self.logger = logger
        self.listener: HttpListener | None = None
        self._host: Host | None = None
        self._up_since_ns = 0
        """Wall-clock time the collector became ready; 0 while it is not."""
        self._up_since_monotonic = 0
        self._mux = ServeMux([(config.path, None)])
        """Upstream's ``ServeMux`` with the one ``path`` (a subtree when it ends in ``/``)."""

    @property
    def ready(self) -> bool:
        return self._up_since_ns != 0

    async def start(self, host: Host) -> None:
        if self.config.check_collector_pipeline.enabled:
            self.logger.warning("check_collector_pipeline is deprecated and ignored, as upstream")
        # Upstream's server would fail on a missing authenticator, then not use it.
        server_authenticator(self.config.auth, host)
        unused = self.config.unused_server_keys + (["auth"] if self.config.auth else [])
        if unused:
            self.logger.warning(
                "%s: not applied to the health check, as upstream", ", ".join(unused)
            )
        tls = server_tls(self.config.tls, self.logger)
        warn_on_unspecified_host(self.logger, self.config.endpoint)  # upstream's ToServer
        limits = self.config.server_settings().server_limits()
        self.listener = await listen(self.handle, self.config.endpoint, limits, tls)
        self._host = host
        host.status_listeners.append(self.on_status)
        self.logger.info(
            "Starting health_check extension on %s, path %s", self.config.endpoint, self.config.path
        )

    async def shutdown(self) -> None:
        if self._host is not None:
            self._host.status_listeners.remove(self.on_status)
            self._host = None
        if self.listener is not None:
            await self.listener.stop()
            self.listener = None

    def on_status(self, instance: str, status: Status, error: str) -> None:
        if instance != COLLECTOR:
            return
        if status is Status.OK:
            if not self.ready:
                self._up_since_ns = time.time_ns()
                self._up_since_monotonic = time.monotonic_ns()
            self._log_state("ready")
        elif self.ready or status is not Status.STARTING:
            # Upstream's NotReady comes at shutdown, ready before or not
            # (a failed start); nothing is called while starting.
            self._up_since_ns = 0
            self._log_state("unavailable")

    def _log_state(self, state: str) -> None:
        """Upstream's log line at every Ready and NotReady, the state as a field."""
        self.logger.info("Health Check state change", extra={"fields": {"status": state}})

    async def handle(self, request: Request) -> Response:
        """The status at ``path``; elsewhere the answers of upstream's ``ServeMux``."""
        routed = self._mux.route(request)
        if isinstance(routed, Response):
            return routed
        if self.config.response_body is not None:
            return static_status(self.ready, self.config.response_body)
        uptime = time.monotonic_ns() - self._up_since_monotonic
        return server_status(self.ready, self._up_since_ns, uptime)


async def listen(
    handler: Handler, endpoint: str, limits: ServerLimits, tls: ssl.SSLContext | None
) -> HttpListener:
    """Serve `handler` on `endpoint`; a bind failure is a :class:`ListenError`
    in upstream's words around ``net.Listen``'s (``failed to bind to address
    ...``)."""
    try:
        return await HttpListener.start(handler, endpoint, limits, tls=tls)
    except OSError as problem:
        raise ListenError(
            f"failed to bind to address {endpoint}: {problem}", problem.errno
        ) from None


def server_tls(tls: TLSServerConfig | None, logger: logging.Logger) -> ssl.SSLContext | None:
    """The HTTPS context of a ``tls`` section (raises ``TLSError``)."""
    if tls is None:
        return None
    if tls.reload_interval > 0:
        logger.warning(
            "tls::reload_interval is not applied: the certificate is read once, at start"
        )
    return tls.ssl_context()
