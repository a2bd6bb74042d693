"""What upstream's ``configgrpc`` settings become for grpcio (shared by the
gRPC servers and the gRPC exporter; grpc itself is not imported here), and
binding a gRPC server as upstream's ``confignet`` reports it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sluice.transport.listener import ListenError, listen_problem, parse_endpoint

C_INT_MAX = (1 << 31) - 1
"""The largest integer channel argument grpcio takes (a C int). Go takes
larger sizes, counts and durations (``max_recv_msg_size_mib: 4096``,
``max_concurrent_streams`` up to 2^32 - 1, a keepalive of ``720h``); for
gRPC's sizes, counts and milliseconds this cap is as good as no limit."""


SERVER_MAX_HEADER_LIST_SIZE = 16 << 20
"""The most bytes of headers (metadata) grpc-go's server takes in a call,
counted as HTTP/2 counts them (name, value and 32 bytes each): its default
``MaxHeaderListSize``, which upstream's configgrpc does not change. gRPC
core's own limits are 8 KiB (past which it refuses some calls) and 16 KiB."""


def channel_arguments(options: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """`options` with integer values capped at what grpcio takes (a larger
    one makes grpcio raise OverflowError when the server or channel is made)."""
    return [
        (key, min(value, C_INT_MAX) if isinstance(value, int) else value) for key, value in options
    ]


def listen(add_port: Callable[[str], int], transport: str, endpoint: str) -> int:
    """Bind a gRPC server to `endpoint` with `add_port` (its
    ``add_insecure_port``, or ``add_secure_port`` with the credentials) and
    return the port bound (0 for a unix socket). gRPC only says that binding
    failed: ListenError says why in Go's words, as upstream's
    ``confignet.Listen`` does (``listen tcp 127.0.0.1:4317: bind: address
    already in use``). A unix socket path that exists (a socket another
    server listens on, or one left behind) is in use, as for Go's
    listener; gRPC core would unlink it and take the path over."""
    if transport == "unix":
        problem = listen_problem(transport, endpoint)
        if problem is not None:
            raise problem
        address = f"unix:{endpoint}"
    else:
        host, port = parse_endpoint(endpoint)
        address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        return add_port(address)
    except RuntimeError as failed:
        problem = listen_problem(transport, endpoint)
        raise problem or ListenError(f"listen {transport} {endpoint}: {failed}") from None
