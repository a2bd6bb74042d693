"""What upstream's ``configgrpc`` settings become for grpcio (shared by the
gRPC servers and the gRPC exporter; grpc itself is not imported here)."""

from __future__ import annotations

from typing import Any

C_INT_MAX = (1 << 31) - 1
"""The largest integer channel argument grpcio takes (a C int). Go takes
larger sizes, counts and durations (``max_recv_msg_size_mib: 4096``,
``max_concurrent_streams`` up to 2^32 - 1, a keepalive of ``720h``); for
gRPC's sizes, counts and milliseconds this cap is as good as no limit."""


def channel_arguments(options: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """`options` with integer values capped at what grpcio takes (a larger
    one makes grpcio raise OverflowError when the server or channel is made)."""
    return [
        (key, min(value, C_INT_MAX) if isinstance(value, int) else value) for key, value in options
    ]
