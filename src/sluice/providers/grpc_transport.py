"""The sync protocol over gRPC: the unary ``tero.policy.v1.PolicyService/Sync``
call. Its deadline covers the whole call, and the channel refuses a response
message larger than ``max_response_bytes`` before buffering it.

grpc is imported when a transport is made, not at module load: it costs
~20 MiB of RSS, which a sidecar without gRPC providers should not pay.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sluice.logs import redact_url
from sluice.providers.config import DEFAULT_MAX_RESPONSE_BYTES, grpc_target
from sluice.providers.sync import SYNC_METHOD, SyncError, SyncResult, SyncTransport, read_response
from sluice.providers.wire import policy_pb2 as pb


class GrpcSyncTransport(SyncTransport):
    """One channel per provider; headers go as metadata."""

    def __init__(
        self,
        target: str,
        headers: Sequence[tuple[str, str]] = (),
        tls: bool = False,
        ca_file: str = "",
        timeout: float = 10.0,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        reconnect_within: float = 60.0,
    ) -> None:
        """`reconnect_within`: the longest wait between the channel's attempts
        to reconnect (the provider's poll interval). gRPC's own backoff grows
        to 120 s, and every call fails at once while it waits, so a server
        back after a long outage would otherwise go unsynced for minutes."""
        import grpc

        self._grpc = grpc
        target, tls_scheme = grpc_target(target)
        tls = tls or tls_scheme
        self.target = target
        self.shown = redact_url(target)
        """The target as messages show it: no credentials."""
        # A "-bin" key's value goes as its bytes (grpcio takes only bytes there).
        self.metadata = tuple(
            (key, value.encode() if key.endswith("-bin") else value)
            for key, value in ((name.lower(), value) for name, value in headers)
        )
        self.timeout = timeout
        self.max_response_bytes = max_response_bytes
        longest = max(100, round(reconnect_within * 1000))
        options = [
            ("grpc.max_receive_message_length", max_response_bytes),
            ("grpc.initial_reconnect_backoff_ms", min(1000, longest)),
            ("grpc.max_reconnect_backoff_ms", longest),
        ]
        if tls:
            roots = open(ca_file, "rb").read() if ca_file else None  # noqa: SIM115
            credentials = grpc.ssl_channel_credentials(roots)
            self._channel = grpc.secure_channel(target, credentials, options=options)
        else:
            self._channel = grpc.insecure_channel(target, options=options)
        self._call = self._channel.unary_unary(
            SYNC_METHOD,
            request_serializer=lambda message: message.SerializeToString(),
            response_deserializer=pb.SyncResponse.FromString,
        )

    def sync(self, request: Any, timeout: float | None = None) -> SyncResult:
        seconds = self.timeout if timeout is None else timeout
        try:
            response = self._call(request, timeout=seconds, metadata=self.metadata)
        except self._grpc.RpcError as problem:
            code = problem.code() if hasattr(problem, "code") else "?"
            details = problem.details() if hasattr(problem, "details") else str(problem)
            details = str(details).replace(self.target, self.shown)  # gRPC names it too
            failure = f"gRPC {code} from {self.shown}: {details}"
            if code == self._grpc.StatusCode.DEADLINE_EXCEEDED:
                failure = f"sync with {self.shown} timed out after {seconds:g} s ({failure})"
            elif "larger than max" in str(details):
                failure = (
                    f"response is larger than max_response_bytes "
                    f"({self.max_response_bytes} bytes) from {self.shown}: {details}"
                )
        else:
            return read_response(response, self.cache)
        raise SyncError(failure)

    def close(self) -> None:
        self._channel.close()
