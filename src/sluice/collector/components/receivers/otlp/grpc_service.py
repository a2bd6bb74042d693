"""OTLP/gRPC: the three ``Export`` methods on a ``grpc.aio`` server running in
the service's event loop (uvloop included).

Only the services of signals some pipeline uses are registered; any other
answers ``UNIMPLEMENTED`` in grpc-go's words, as upstream. Requests are
decoded straight into the pipeline's message classes (``INTERNAL`` when they
do not decode, as Go's gRPC server answers); a refusal ends the call with its
status (``UNAVAILABLE`` for retryable ones, ``INTERNAL`` for permanent ones).
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Mapping
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from sluice.collector import pdata
from sluice.collector.client import NO_METADATA, AuthData, Info, Metadata, metadata_of, serving
from sluice.collector.components.receivers.otlp.config import GrpcConfig
from sluice.collector.components.receivers.otlp.ingest import Ingest
from sluice.collector.configauth import AuthenticationError, ServerAuthenticator
from sluice.collector.configgrpc import SERVER_MAX_HEADER_LIST_SIZE, channel_arguments, listen
from sluice.collector.configtls import TLSError, TLSServerConfig
from sluice.collector.internal.warning import warn_on_unspecified_host
from sluice.gostrconv import quoted
from sluice.policy import Signal

SERVICES = {
    Signal.TRACE: "opentelemetry.proto.collector.trace.v1.TraceService",
    Signal.METRIC: "opentelemetry.proto.collector.metrics.v1.MetricsService",
    Signal.LOG: "opentelemetry.proto.collector.logs.v1.LogsService",
}
EXPORT_RESPONSE = b"\x0a\x00"
"""An Export*ServiceResponse with an empty partial success, already serialized."""
_STATUS = {status.value[0]: status for status in grpc.StatusCode}


class OtlpGrpcServer:
    """A started gRPC server; `port` is the bound TCP port (0 for a unix socket)."""

    def __init__(self, server: grpc.aio.Server, port: int):
        self.server = server
        self.port = port

    @classmethod
    async def start(
        cls,
        config: GrpcConfig,
        ingests: Mapping[Signal, Ingest],
        authenticator: ServerAuthenticator | None,
        log: logging.Logger,
    ) -> OtlpGrpcServer:
        """Bind and serve; raises ListenError when the address cannot be bound
        and TLSError when the certificate does not load."""
        if config.transport != "unix":
            warn_on_unspecified_host(log, config.endpoint)
        server = grpc.aio.server(options=server_options(config))
        server.add_generic_rpc_handlers(
            (
                *(
                    grpc.method_handlers_generic_handler(
                        SERVICES[signal],
                        {"Export": _export_handler(ingest, authenticator, config.include_metadata)},
                    )
                    for signal, ingest in ingests.items()
                ),
                _Unserved(frozenset(SERVICES[signal] for signal in ingests)),
            )
        )
        if config.tls is None:
            add_port = server.add_insecure_port
        else:
            credentials = _credentials(config.tls, log)
            add_port = functools.partial(server.add_secure_port, server_credentials=credentials)
        log.info("Starting GRPC server", extra={"fields": {"endpoint": config.endpoint}})
        port = listen(add_port, config.transport, config.endpoint)
        await server.start()
        return cls(server, port)

    async def stop(self, grace: float) -> None:
        """Refuse new calls, let calls under way finish within `grace` seconds."""
        await self.server.stop(grace)


def server_options(config: GrpcConfig) -> list[tuple[str, Any]]:
    """gRPC channel arguments for the config (``read_buffer_size`` and
    ``write_buffer_size`` have no gRPC core equivalent and are not applied).
    Values upstream takes past a C int are capped there. The port is not
    shared (grpcio's default is SO_REUSEPORT): as with Go's listener, a
    port another process serves is in use. Calls' metadata is taken up to
    grpc-go's limit."""
    options: list[tuple[str, Any]] = [
        ("grpc.max_receive_message_length", config.max_message_bytes),
        ("grpc.so_reuseport", 0),
        ("grpc.max_metadata_size", SERVER_MAX_HEADER_LIST_SIZE),
        ("grpc.absolute_max_metadata_size", SERVER_MAX_HEADER_LIST_SIZE),
    ]
    if config.max_concurrent_streams > 0:
        options.append(("grpc.max_concurrent_streams", config.max_concurrent_streams))
    keepalive = config.keepalive
    if keepalive is not None and keepalive.server_parameters is not None:
        parameters = keepalive.server_parameters
        for key, seconds in (
            ("grpc.max_connection_idle_ms", parameters.max_connection_idle),
            ("grpc.max_connection_age_ms", parameters.max_connection_age),
            ("grpc.max_connection_age_grace_ms", parameters.max_connection_age_grace),
            ("grpc.keepalive_time_ms", parameters.time),
            ("grpc.keepalive_timeout_ms", parameters.timeout),
        ):
            if seconds > 0:
                options.append((key, int(seconds * 1000)))
    if keepalive is not None and keepalive.enforcement_policy is not None:
        policy = keepalive.enforcement_policy
        if policy.min_time > 0:
            options.append(
                ("grpc.http2.min_recv_ping_interval_without_data_ms", int(policy.min_time * 1000))
            )
        options.append(("grpc.keepalive_permit_without_calls", int(policy.permit_without_stream)))
    return channel_arguments(options)


class _Unserved(grpc.GenericRpcHandler):  # type: ignore[misc]
    """Any other method, consulted last: ``UNIMPLEMENTED`` in grpc-go's
    words (``unknown service ...``, ``unknown method ... for service ...``)
    rather than grpcio's ``Method not found!``."""

    def __init__(self, services: frozenset[str]):
        self._services = services

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler:
        name: str = handler_call_details.method
        path = name.removeprefix("/")
        service, slash, method = path.rpartition("/")
        if not slash:
            text = f"malformed method name: {quoted(name)}"
        elif service in self._services:
            text = f"unknown method {method} for service {service}"
        else:
            text = f"unknown service {service}"

        async def refuse(requests: Any, context: grpc.aio.ServicerContext) -> None:
            await context.abort(grpc.StatusCode.UNIMPLEMENTED, text)

        return grpc.stream_stream_rpc_method_handler(refuse)


def _export_handler(
    ingest: Ingest, authenticator: ServerAuthenticator | None, include_metadata: bool
) -> grpc.RpcMethodHandler:
    async def export(wire: bytes, context: grpc.aio.ServicerContext) -> bytes:
        try:
            request = pdata.parse(ingest.signal, wire)
        except (DecodeError, pdata.PdataError) as problem:
            await context.abort(
                grpc.StatusCode.INTERNAL, f"grpc: error unmarshalling request: {problem}"
            )
        del wire
        # After decoding, as grpc-go runs upstream's auth interceptor.
        auth = await authenticate_call(authenticator, context)
        client = Info(
            peer_address(context.peer()),
            call_metadata(context) if include_metadata else NO_METADATA,
            auth,
        )
        with serving(client):
            refusal = await ingest.export(request)
        if refusal is not None:
            await context.abort(_STATUS[int(refusal.code)], refusal.message)
        return EXPORT_RESPONSE

    # Decoded in the handler rather than by gRPC, so that a malformed request
    # is INTERNAL (upstream's answer), not UNKNOWN with a logged traceback.
    return grpc.unary_unary_rpc_method_handler(export)


async def authenticate_call(
    authenticator: ServerAuthenticator | None, context: grpc.aio.ServicerContext[Any, Any]
) -> AuthData | None:
    """What `authenticator` finds in a call's (text) metadata; a refusal
    ends the call ``UNAUTHENTICATED`` with the reason."""
    if authenticator is None:
        return None
    headers: dict[str, str] = {}
    for key, value in context.invocation_metadata() or ():
        if isinstance(value, str):
            headers.setdefault(key, value)  # a key's first value, as upstream reads it
    try:
        return await authenticator.authenticate(headers)
    except AuthenticationError as refused:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, str(refused))
        raise  # not reached: abort raises, though grpc's types do not say so


def peer_address(peer: str) -> str:
    """The IP address of a gRPC peer (``ipv4:10.0.0.1:4317``,
    ``ipv6:[::1]:4317``); empty for a Unix socket."""
    kind, _, rest = peer.partition(":")
    if kind == "ipv4":
        return rest.rpartition(":")[0]
    if kind == "ipv6":
        return rest.rpartition(":")[0].strip("[]")
    return ""


def call_metadata(context: grpc.aio.ServicerContext) -> Metadata:
    """A call's metadata (upstream's ``include_metadata``). Upstream adds
    ``host`` from the call's ``:authority``, which grpcio does not give a
    server: there is none here unless the client sent one."""
    return metadata_of(
        (key, value if isinstance(value, str) else value.decode("utf-8", "replace"))
        for key, value in context.invocation_metadata() or ()
    )


def _credentials(tls: TLSServerConfig, log: logging.Logger) -> grpc.ServerCredentials:
    """Server credentials; with `reload_interval`, the certificate and key are
    read again for new connections once the interval has passed."""
    client_ca = tls.client_ca_pem()
    cert, key = tls.certificate_pem()
    if not tls.reload_interval:
        return grpc.ssl_server_credentials(
            [(key, cert)], root_certificates=client_ca, require_client_auth=client_ca is not None
        )
    due = time.monotonic() + tls.reload_interval

    def fetch() -> Any:
        nonlocal due
        if time.monotonic() < due:
            return None  # keep the current certificate
        due = time.monotonic() + tls.reload_interval
        try:
            cert, key = tls.certificate_pem()
        except TLSError as problem:
            log.error("reloading the gRPC server certificate failed: %s", problem)
            return None
        return grpc.ssl_server_certificate_configuration([(key, cert)], root_certificates=client_ca)

    return grpc.dynamic_ssl_server_credentials(
        grpc.ssl_server_certificate_configuration([(key, cert)], root_certificates=client_ca),
        fetch,
        require_client_authentication=client_ca is not None,
    )
