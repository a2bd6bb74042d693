"""Listening for HTTP: one call that binds ``host:port``, serves a handler
with the shared server protocol and its limits, and stops gracefully. Every
HTTP port of the collector (OTLP/HTTP receiver, health checks, the Prometheus
endpoint) goes through it, so they all behave as Edge's listener does."""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Callable

from sluice.transport.http_server import (
    ConnectionTracker,
    Handler,
    HttpServerProtocol,
    Response,
    ServerLimits,
)


def split_host_port(address: str) -> tuple[str, str]:
    """Go's ``net.SplitHostPort``: the host (without an IPv6 address's
    brackets) and the port text; raises ValueError with Go's words."""

    def problem(why: str) -> ValueError:
        return ValueError(f"address {address}: {why}")

    colon = address.rfind(":")
    if colon < 0:
        raise problem("missing port in address")
    start, end = 0, 0
    if address.startswith("["):
        close = address.find("]")
        if close < 0:
            raise problem("missing ']' in address")
        if close + 1 != colon:
            if close + 1 < len(address) and address[close + 1] == ":":
                raise problem("too many colons in address")
            raise problem("missing port in address")
        host = address[1:close]
        start, end = 1, close + 1
    else:
        host = address[:colon]
        if ":" in host:
            raise problem("too many colons in address")
    if "[" in address[start:]:
        raise problem("unexpected '[' in address")
    if "]" in address[end:]:
        raise problem("unexpected ']' in address")
    return host, address[colon + 1 :]


def parse_endpoint(endpoint: str) -> tuple[str, int]:
    """``host:port``, ``[v6]:port`` or ``:port`` (all interfaces) as upstream
    writes endpoints; raises ValueError naming the problem."""
    host, sep, port_text = endpoint.strip().rpartition(":")
    if not sep:
        raise ValueError(f"address {endpoint}: missing port in address")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        port = int(port_text)
    except ValueError:
        raise ValueError(f'address {endpoint}: invalid port "{port_text}"') from None
    if not 0 <= port <= 65535:
        raise ValueError(f"address {endpoint}: port {port} out of range")
    return host or "0.0.0.0", port


def bind(host: str, port: int, backlog: int = 1024, reuse_port: bool = False) -> socket.socket:
    """A listening, non-blocking TCP socket (raises OSError); `reuse_port`
    lets several processes share the port (Edge's workers)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind(address)
        sock.listen(backlog)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


class HttpListener:
    """A running HTTP server on one socket."""

    def __init__(self, server: asyncio.Server, tracker: ConnectionTracker, port: int):
        self.server = server
        self.tracker = tracker
        self.port = port

    @classmethod
    async def start(
        cls,
        handler: Handler,
        endpoint: str,
        limits: ServerLimits | None = None,
        tls: ssl.SSLContext | None = None,
        too_large: Callable[[str, str, dict[bytes, bytes]], Response] | None = None,
    ) -> HttpListener:
        """Bind `endpoint` and serve `handler` (raises OSError or ValueError);
        `too_large` answers bodies past the limit (see ConnectionTracker)."""
        host, port = parse_endpoint(endpoint)
        sock = bind(host, port)
        limits = limits or ServerLimits()
        tracker = ConnectionTracker(limits, too_large=too_large)
        loop = asyncio.get_running_loop()
        server = await loop.create_server(
            lambda: HttpServerProtocol(handler, limits, tracker), sock=sock, ssl=tls, backlog=1024
        )
        return cls(server, tracker, sock.getsockname()[1])

    async def stop(self, drain_secs: float = 5.0) -> bool:
        """Stop accepting, close idle connections, wait for requests in
        flight (True when all were answered in time)."""
        self.server.close()
        return await self.tracker.drain(drain_secs)
