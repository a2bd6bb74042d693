"""Sending batches over OTLP/gRPC: the unary ``Export`` method of each
signal's service on one ``grpc.aio`` channel, the request serialized once.

An error status is retryable as upstream decides: ``CANCELLED``,
``DEADLINE_EXCEEDED``, ``ABORTED``, ``OUT_OF_RANGE``, ``UNAVAILABLE``,
``DATA_LOSS``, and ``RESOURCE_EXHAUSTED`` only when the status carries a
``RetryInfo`` detail (even one naming no delay); a RetryInfo's delay is the
least wait, and the error then reads as upstream's throttle error
(``Throttle (5s), error: rpc error: ...``).
Every other status is permanent.

grpc is imported when the exporter starts, not at module load (it costs
~20 MiB of RSS a collector without gRPC exporters should not pay).
"""

from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from sluice.collector.component import Host, Settings
from sluice.collector.components.exporters.otlp.config import (
    GRPC_COMPRESSIONS,
    SENT_AS_GZIP,
    OtlpGrpcConfig,
)
from sluice.collector.configauth import (
    TRANSPORT_SECURITY_REQUIRED,
    ClientAuthenticator,
    client_authenticator,
    requires_transport_security,
)
from sluice.collector.configgrpc import channel_arguments
from sluice.collector.confmap.decode import reveal
from sluice.collector.exporterhelper import Attempt, ExportError, Sender, partial_success
from sluice.collector.exporterhelper.exporter import user_agent
from sluice.collector.exporterhelper.retry import throttled
from sluice.collector.gotext import errno_of, go_connect_error, go_errno
from sluice.collector.rpc_status import parse_status, status_error_text
from sluice.gostrconv import quoted
from sluice.policy import Signal

if TYPE_CHECKING:
    import grpc

METHODS = {
    Signal.LOG: "/opentelemetry.proto.collector.logs.v1.LogsService/Export",
    Signal.METRIC: "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export",
    Signal.TRACE: "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
}
RETRYABLE_CODES = frozenset(
    ("CANCELLED", "DEADLINE_EXCEEDED", "ABORTED", "OUT_OF_RANGE", "UNAVAILABLE", "DATA_LOSS")
)
_STATUS_DETAILS = "grpc-status-details-bin"
_GRPCIO_CONNECT_FAILED = re.compile(
    r"failed to connect to all addresses; last error: [A-Z_]+: ipv[46]:(?P<address>\S+): "
    r"Failed to connect to remote host: (?P<reason>[^:]+)"
)
"""grpcio's details of a call on a channel whose connect failed."""
_CONTEXT_DEADLINE = "context deadline exceeded"
"""Go's text of a context whose deadline passed (grpcio says ``Deadline Exceeded``)."""
_CODES = {
    name: number
    for number, name in enumerate(
        (
            "OK",
            "CANCELLED",
            "UNKNOWN",
            "INVALID_ARGUMENT",
            "DEADLINE_EXCEEDED",
            "NOT_FOUND",
            "ALREADY_EXISTS",
            "PERMISSION_DENIED",
            "RESOURCE_EXHAUSTED",
            "FAILED_PRECONDITION",
            "ABORTED",
            "OUT_OF_RANGE",
            "UNIMPLEMENTED",
            "INTERNAL",
            "UNAVAILABLE",
            "DATA_LOSS",
            "UNAUTHENTICATED",
        )
    )
}
"""``google.rpc.Code`` numbers by name (grpc is not imported at module load)."""


def channel_options(config: OtlpGrpcConfig, agent: str) -> list[tuple[str, Any]]:
    """The channel's arguments; `agent` is its User-Agent (grpc adds its own name)."""
    options: list[tuple[str, Any]] = [("grpc.primary_user_agent", agent)]
    if config.balancer_name:
        options.append(("grpc.lb_policy_name", config.balancer_name))
    if config.authority:
        options.append(("grpc.default_authority", config.authority))
    if config.tls.server_name_override:
        options.append(("grpc.ssl_target_name_override", config.tls.server_name_override))
    if config.keepalive is not None:
        options += [
            ("grpc.keepalive_time_ms", int(config.keepalive.time * 1000)),
            ("grpc.keepalive_timeout_ms", int(config.keepalive.timeout * 1000)),
            ("grpc.keepalive_permit_without_calls", int(config.keepalive.permit_without_stream)),
        ]
    return channel_arguments(options)


def dial_failure(details: str) -> str:
    """grpcio's `details` of a call on a channel that could not connect
    (``... ipv4:127.0.0.1:4317: Failed to connect to remote host:
    Connection refused``) as grpc-go words it: its transport's error around
    Go's dialer's, ``connection error: desc = "transport: Error while
    dialing: dial tcp 127.0.0.1:4317: connect: connection refused"``.
    Other details are returned as they are."""
    failed = _GRPCIO_CONNECT_FAILED.fullmatch(details)
    number = errno_of(failed["reason"]) if failed else None
    if failed is None or number is None:
        return details
    dialled = go_connect_error(unquote(failed["address"]), go_errno(number, failed["reason"]))
    return f'connection error: desc = "transport: Error while dialing: {dialled}"'


def classify(code: str, details: str, trailers: Any) -> ExportError:
    """The ExportError for a failed call (`code` is the status code's name),
    carrying that code."""
    retry_delay = None
    for key, value in trailers or ():
        if key == _STATUS_DETAILS and isinstance(value, bytes):
            status = parse_status(value)
            retry_delay = status.retry_delay if status is not None else None
    message = status_error_text(_CODES.get(code, 2), details)
    retryable = code in RETRYABLE_CODES or (
        code == "RESOURCE_EXHAUSTED" and retry_delay is not None
    )
    if retryable and retry_delay:
        # Upstream returns exporterhelper's throttle error, which names the delay.
        message = throttled(message, retry_delay)
    return ExportError(
        message, retryable=retryable, retry_after=retry_delay or None, code=_CODES.get(code)
    )


_RESERVED_METADATA = frozenset(
    (
        "content-type",
        "user-agent",
        "grpc-message-type",
        "grpc-encoding",
        "grpc-message",
        "grpc-status",
        "grpc-timeout",
        "te",
    )
)
"""Headers grpc-go writes itself: configured ones are not sent."""
_METADATA_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_.")


def unsendable_metadata(metadata: tuple[tuple[str, str], ...]) -> str | None:
    """Why grpc-go refuses every call carrying `metadata` (lower-cased keys),
    in its words; None when it sends them. Upstream loads any header name
    and fails each call (``Internal``), so does Sluice."""
    for key, value in metadata:
        if not key:
            return "there is an empty key in the header"
        if key.startswith(":"):
            continue
        if not set(key) <= _METADATA_KEY_CHARS:
            return f"header key {quoted(key)} contains illegal characters not in [0-9a-z-_.]"
        if not key.endswith("-bin") and not all(" " <= c <= "~" for c in value):
            return f"header key {quoted(key)} contains value with non-printable ASCII characters"
    return None


def sent_metadata(metadata: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str | bytes], ...]:
    """What grpc-go sends of valid `metadata`: not the headers it writes
    itself (nor pseudo-headers), a ``-bin`` key's value as its bytes."""
    return tuple(
        (key, value.encode() if key.endswith("-bin") else value)
        for key, value in metadata
        if key not in _RESERVED_METADATA and not key.startswith(":")
    )


class OtlpGrpcSender(Sender):
    def __init__(self, config: OtlpGrpcConfig, signals: frozenset[Signal], settings: Settings):
        self.config = config
        self.signals = signals
        self.logger = settings.logger
        self.loggers = {signal: settings.signal_logger(signal) for signal in signals}
        """Each signal's, as upstream makes an exporter per signal."""
        configured = tuple((name.lower(), reveal(value)) for name, value in config.headers.items())
        self.unsendable = unsendable_metadata(configured)
        self.metadata = sent_metadata(configured)
        self.authenticator: ClientAuthenticator | None = None
        self.channel: grpc.aio.Channel | None = None
        self.calls: dict[Signal, Any] = {}
        self.timeout = float(config.timeout) or None

    async def start(self, host: Host) -> None:
        import grpc

        self._grpc = grpc
        if self.config.compression not in (*GRPC_COMPRESSIONS, "none", ""):
            # configgrpc's getGRPCCompressionName, the first of ToClientConn's checks.
            raise ValueError(f"unsupported compression type {quoted(self.config.compression)}")
        self.authenticator = client_authenticator(self.config.auth, host, "gRPC")
        if (
            self.authenticator is not None
            and requires_transport_security(self.authenticator)
            and not self.config.uses_tls
        ):
            raise ValueError(TRANSPORT_SECURITY_REQUIRED)
        compression = grpc.Compression.NoCompression
        if self.config.compression in SENT_AS_GZIP:
            self.logger.warning(
                "compression %s is not available to Sluice's gRPC client (grpcio has gzip "
                "and deflate only); sending gzip, which every OTLP gRPC server accepts",
                self.config.compression,
            )
        if self.config.compression in ("gzip", *SENT_AS_GZIP):
            compression = grpc.Compression.Gzip
        options = channel_options(self.config, user_agent(host.build_info))
        if self.config.uses_tls:
            self.channel = grpc.aio.secure_channel(
                self.config.target, self._credentials(), options, compression
            )
        else:
            self.channel = grpc.aio.insecure_channel(self.config.target, options, compression)
        for signal in self.signals:
            self.calls[signal] = self.channel.unary_unary(
                METHODS[signal], response_deserializer=partial_success.RESPONSES[signal].FromString
            )

    def _credentials(self) -> grpc.ChannelCredentials:
        """Raises TLSError (a ValueError) naming what does not load."""
        return self._grpc.ssl_channel_credentials(*self.config.tls.grpc_pem())

    async def prepare(self, signal: Signal, data: Any) -> Attempt:
        payload = bytes(data.SerializeToString())
        call = self.calls[signal]

        async def attempt() -> None:
            if self.unsendable:
                raise classify("INTERNAL", self.unsendable, None)
            metadata = self.metadata
            if self.authenticator is not None:
                # grpc-go writes the per-RPC credentials' metadata before the call's.
                signed = self.authenticator.request_headers().items()
                metadata = tuple((name.lower(), value) for name, value in signed) + metadata
            loop = asyncio.get_running_loop()
            started = loop.time()
            try:
                answer = await call(
                    payload,
                    timeout=self.timeout,
                    metadata=metadata,
                    wait_for_ready=self.config.wait_for_ready,
                )
            except self._grpc.aio.AioRpcError as failed:
                code, details = failed.code().name, failed.details() or ""
                if (
                    code == "DEADLINE_EXCEEDED"
                    and self.timeout is not None
                    and loop.time() - started >= self.timeout
                ):
                    # The call's own deadline passed: grpc-go's status of its
                    # context error (status.FromContextError).
                    details = _CONTEXT_DEADLINE
                elif code == "UNAVAILABLE":
                    details = dial_failure(details)
                raise classify(code, details, failed.trailing_metadata()) from None
            message, rejected = partial_success.from_message(signal, answer)
            partial_success.warn(signal, message, rejected, self.loggers[signal])

        return attempt

    async def close(self) -> None:
        if self.channel is not None:
            await self.channel.close()
