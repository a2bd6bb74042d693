"""The standard gRPC health service (``grpc.health.v1.Health``) over the
status tree, as upstream's: ``Check`` and the ``Watch`` stream, with the
request's ``service`` naming the scope ("" for the collector, else a
pipeline id).

A scope answers ``SERVING`` while its status would answer HTTP 200 and is
healthy under ``component_health``, ``NOT_SERVING`` otherwise. ``Check`` on an
unknown scope fails with ``NOT_FOUND``; ``Watch`` sends ``SERVICE_UNKNOWN``
until the scope appears, then each change of serving status. In a ``Watch``,
a recoverable error stays ``SERVING`` until ``recovery_duration`` has passed
since the stream first saw it.

The two messages are built from their descriptor here, in a private pool:
grpcio-health-checking is not a dependency, and building them cannot clash
with it if it is installed.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import AsyncIterator
from typing import Any

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from sluice.collector.component import Status
from sluice.collector.components.extensions.healthcheckv2.aggregator import (
    AggregateStatus,
    StatusAggregator,
)
from sluice.collector.components.extensions.healthcheckv2.config import (
    ComponentHealthSettings,
    GrpcSettings,
)
from sluice.collector.components.extensions.healthcheckv2.responses import (
    health_rule,
    status_code,
)
from sluice.collector.components.receivers.otlp.grpc_service import (
    authenticate_call,
    server_options,
)
from sluice.collector.configauth import ServerAuthenticator
from sluice.collector.configgrpc import listen

SERVICE = "grpc.health.v1.Health"
SERVING, NOT_SERVING, SERVICE_UNKNOWN = 1, 2, 3
"""``HealthCheckResponse.ServingStatus`` values."""


def _messages() -> tuple[Any, Any]:
    proto = descriptor_pb2.FileDescriptorProto(
        name="grpc/health/v1/health.proto", package="grpc.health.v1", syntax="proto3"
    )
    field = descriptor_pb2.FieldDescriptorProto
    request = proto.message_type.add(name="HealthCheckRequest")
    request.field.add(name="service", number=1, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL)
    response = proto.message_type.add(name="HealthCheckResponse")
    serving = response.enum_type.add(name="ServingStatus")
    for number, name in enumerate(("UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN")):
        serving.value.add(name=name, number=number)
    response.field.add(
        name="status",
        number=1,
        type=field.TYPE_ENUM,
        type_name=".grpc.health.v1.HealthCheckResponse.ServingStatus",
        label=field.LABEL_OPTIONAL,
    )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return (
        message_factory.GetMessageClass(
            pool.FindMessageTypeByName("grpc.health.v1.HealthCheckRequest")
        ),
        message_factory.GetMessageClass(
            pool.FindMessageTypeByName("grpc.health.v1.HealthCheckResponse")
        ),
    )


HealthCheckRequest, HealthCheckResponse = _messages()


class GrpcHealthServer:
    """A ``grpc.aio`` server with the health service on ``grpc.endpoint``."""

    def __init__(
        self,
        settings: GrpcSettings,
        aggregator: StatusAggregator,
        component_health: ComponentHealthSettings | None,
    ):
        self.settings = settings
        self.aggregator = aggregator
        self.component_health = component_health or ComponentHealthSettings()
        self.server: grpc.aio.Server | None = None
        self.authenticator: ServerAuthenticator | None = None
        self.port = 0
        self._closing = asyncio.Event()

    async def start(self, authenticator: ServerAuthenticator | None = None) -> None:
        """Serve; `authenticator` (``grpc.auth``'s) checks every call first."""
        self.authenticator = authenticator
        server = grpc.aio.server(options=server_options(self.settings))
        server.add_generic_rpc_handlers((self._handlers(),))
        tls = self.settings.tls
        if tls is None:
            add_port = server.add_insecure_port
        else:
            client_ca = tls.client_ca_pem()
            credentials = grpc.ssl_server_credentials(
                [tuple(reversed(tls.certificate_pem()))],
                root_certificates=client_ca,
                require_client_auth=client_ca is not None,
            )
            add_port = functools.partial(server.add_secure_port, server_credentials=credentials)
        self.port = listen(add_port, self.settings.transport, self.settings.endpoint)
        await server.start()
        self.server = server

    async def stop(self) -> None:
        if self.server is None:
            return
        self._closing.set()
        self._wake_watchers()
        await self.server.stop(grace=1.0)
        self.server = None

    def _handlers(self) -> grpc.GenericRpcHandler:
        decode, encode = HealthCheckRequest.FromString, HealthCheckResponse.SerializeToString
        return grpc.method_handlers_generic_handler(
            SERVICE,
            {
                "Check": grpc.unary_unary_rpc_method_handler(
                    self.check, request_deserializer=decode, response_serializer=encode
                ),
                "Watch": grpc.unary_stream_rpc_method_handler(
                    self.watch, request_deserializer=decode, response_serializer=encode
                ),
            },
        )

    def serving_status(self, status: AggregateStatus) -> int:
        event = status.event
        healthy = health_rule(self.component_health, time.time_ns())(event)
        return SERVING if status_code(event.status) == 200 and healthy else NOT_SERVING

    async def check(self, request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        await authenticate_call(self.authenticator, context)
        status = self.aggregator.find(request.service)
        if status is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, "Service not found.")
        assert status is not None
        return HealthCheckResponse(status=self.serving_status(status))

    async def watch(
        self, request: Any, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[Any]:
        await authenticate_call(self.authenticator, context)
        changed = asyncio.Event()
        self.aggregator.watchers.append(changed.set)
        settings = self.component_health
        patient = settings.include_recoverable_errors and settings.recovery_duration > 0
        last: int | None = None
        failure_at: float | None = None
        """When a recoverable error seen by this stream stops being served."""
        try:
            changed.set()
            while not self._closing.is_set():
                timeout = None if failure_at is None else max(failure_at - time.monotonic(), 0)
                try:
                    await asyncio.wait_for(changed.wait(), timeout)
                except TimeoutError:
                    failure_at, serving = None, NOT_SERVING
                else:
                    changed.clear()
                    if self._closing.is_set():
                        break
                    status = self.aggregator.find(request.service)
                    if status is None:
                        serving = SERVICE_UNKNOWN
                    elif patient and status.event.status is Status.RECOVERABLE_ERROR:
                        if failure_at is None:
                            failure_at = time.monotonic() + settings.recovery_duration
                        serving = SERVING if last is None else last
                    else:
                        failure_at = None
                        serving = self.serving_status(status)
                if serving != last:
                    last = serving
                    yield HealthCheckResponse(status=serving)
            await context.abort(grpc.StatusCode.CANCELLED, "Server shutting down.")
        finally:
            self.aggregator.watchers.remove(changed.set)

    def _wake_watchers(self) -> None:
        for watcher in list(self.aggregator.watchers):
            watcher()
