"""The ``otlp`` receiver: one instance for every pipeline that names it,
serving gRPC and/or HTTP (whichever is configured) for the signals its
pipelines use."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import Mapping

from sluice.collector.component import Component, Consumer, Host, Settings
from sluice.collector.components.receivers.otlp.config import HttpConfig, OtlpReceiverConfig
from sluice.collector.components.receivers.otlp.grpc_service import OtlpGrpcServer
from sluice.collector.components.receivers.otlp.http_handler import OtlpHttpHandler
from sluice.collector.components.receivers.otlp.ingest import Ingest
from sluice.collector.configauth import server_authenticator
from sluice.collector.confighttp import ServerMiddleware
from sluice.collector.configtls import TLSError, TLSServerConfig
from sluice.policy import Signal
from sluice.transport.http_message import Response
from sluice.transport.listener import HttpListener

SHUTDOWN_GRACE = 5.0
"""Seconds requests under way get to finish when the receiver stops."""


class OtlpReceiver(Component):
    """Listens on the configured protocols; `grpc_port` and `http_port` are
    the bound ports once started (useful with port 0)."""

    def __init__(
        self, settings: Settings, config: OtlpReceiverConfig, consumers: Mapping[Signal, Consumer]
    ):
        self._settings = settings
        self._config = config
        self._consumers = dict(consumers)
        self._log = settings.logger
        self._grpc: OtlpGrpcServer | None = None
        self._http: HttpListener | None = None
        self._reloading: asyncio.Task[None] | None = None
        self.grpc_port = 0
        self.http_port = 0

    def _ingests(self, transport: str) -> dict[Signal, Ingest]:
        metrics = self._settings.telemetry.receiver(str(self._settings.id), transport)
        return {
            signal: Ingest(
                signal, consumer, metrics.accepted[signal], metrics.refused[signal], self._log
            )
            for signal, consumer in self._consumers.items()
        }

    async def start(self, host: Host) -> None:
        """Bind every configured protocol; raises (OSError, ValueError) when
        one cannot start, after closing any that did."""
        protocols = self._config.protocols
        try:
            if protocols.grpc is not None:
                auth = server_authenticator(protocols.grpc.auth, host)
                self._grpc = await OtlpGrpcServer.start(
                    protocols.grpc, self._ingests("grpc"), auth, self._log
                )
                self.grpc_port = self._grpc.port
            if protocols.http is not None:
                await self._start_http(protocols.http, host)
        except BaseException:
            await self.shutdown()
            raise

    async def _start_http(self, config: HttpConfig, host: Host) -> None:
        otlp = OtlpHttpHandler(config, self._ingests("http"))
        handler = ServerMiddleware.for_host(config, otlp, host, self._log)

        def too_large(method: str, path: str, headers: dict[bytes, bytes]) -> Response:
            # A body past the limit as sent is refused by the HTTP layer
            # before the handler runs: answered as the handler would.
            return handler.with_response_headers(otlp.too_large(method, path, headers))

        tls = config.tls.ssl_context() if config.tls is not None else None
        self._log.info("Starting HTTP server", extra={"fields": {"endpoint": config.endpoint}})
        self._http = await HttpListener.start(
            handler, config.endpoint, config.server_limits(), tls, too_large
        )
        self.http_port = self._http.port
        if tls is not None and config.tls is not None and config.tls.reload_interval > 0:
            self._reloading = asyncio.get_running_loop().create_task(
                self._reload_certificate(tls, config.tls)
            )

    async def _reload_certificate(self, context: ssl.SSLContext, tls: TLSServerConfig) -> None:
        """Read the certificate and key again every ``reload_interval``: new
        connections get the new ones."""
        while True:
            await asyncio.sleep(tls.reload_interval)
            try:
                tls.load_certificate(context)
            except TLSError as problem:
                self._log.error("reloading the HTTP server certificate failed: %s", problem)

    async def shutdown(self) -> None:
        """Stop accepting, and give requests under way time to finish."""
        if self._reloading is not None:
            self._reloading.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reloading
            self._reloading = None
        http, grpc = self._http, self._grpc
        self._http = self._grpc = None
        await asyncio.gather(
            http.stop(SHUTDOWN_GRACE) if http is not None else asyncio.sleep(0),
            grpc.stop(SHUTDOWN_GRACE) if grpc is not None else asyncio.sleep(0),
        )
