"""Listening for HTTP: one call that binds ``host:port``, serves a handler
with the shared server protocol and its limits, and stops gracefully. Every
HTTP port of the collector (OTLP/HTTP receiver, health checks, the Prometheus
endpoint) goes through it, so they all answer alike: as Go's net/http server
answers where HTTP leaves the choice open (upstream's servers are Go's)."""

from __future__ import annotations

import asyncio
import ipaddress
import os
import socket
import ssl
from collections.abc import Callable
from dataclasses import replace

from sluice.transport.connections import ConnectionTracker, ServerLimits
from sluice.transport.http_message import Handler, Response
from sluice.transport.http_server import HttpServerProtocol


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


class ListenError(OSError):
    """A port that cannot be listened on, in the words of Go's ``net.Listen``
    (a ``net.OpError``), as upstream's components report it:
    ``listen tcp 127.0.0.1:4318: bind: address already in use``. `errno`
    is the system's error number (None for a name that does not resolve)."""

    def __init__(self, message: str, errno: int | None = None):
        super().__init__(message)
        self.errno = errno


def go_errno_text(errno: int) -> str:
    """Go's words for a system error number (``syscall.Errno``): the C
    library's message with a lower-case first letter."""
    text = os.strerror(errno)
    return text[:1].lower() + text[1:]


def go_tcp_address(host: str, port: int) -> str:
    """How Go prints the TCP address it listens on (``net.TCPAddr``): the
    IP in its canonical form, IPv6 in brackets, no IP for all interfaces."""
    if not host:
        return f":{port}"
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return f"{host}:{port}"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is None:
            return f"[{ip}]:{port}"
        ip = ip.ipv4_mapped
    return f"{ip}:{port}"


def listen_host_port(endpoint: str) -> tuple[str, int]:
    """The host (empty for all interfaces, ``:port``) and port to listen on
    at `endpoint`; raises ValueError as :func:`parse_endpoint`."""
    host, port = parse_endpoint(endpoint)
    return ("" if endpoint.strip().startswith(":") else host), port


def bind(
    host: str, port: int, backlog: int = 1024, reuse_port: bool = False, network: str = "tcp"
) -> socket.socket:
    """A listening, non-blocking TCP socket on `host` (empty: all
    interfaces); `reuse_port` lets several processes share the port (Edge's
    workers). Raises ListenError in Go's words, naming `network` as the
    config did (``tcp4``)."""
    try:
        infos = socket.getaddrinfo(
            host or "0.0.0.0", port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except socket.gaierror as problem:
        why = "no such host" if problem.errno == socket.EAI_NONAME else problem.strerror
        raise ListenError(f"listen {network}: lookup {host}: {why}") from None
    family, kind, proto, _, address = infos[0]
    shown = f"{network} {go_tcp_address(host and str(address[0]), port)}"
    try:
        sock = socket.socket(family, kind, proto)
    except OSError as problem:
        raise _listen_error(shown, "socket", problem) from None
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    call = "bind"
    try:
        sock.bind(address)
        call = "listen"
        sock.listen(backlog)
    except OSError as problem:
        sock.close()
        raise _listen_error(shown, call, problem) from None
    sock.setblocking(False)
    return sock


def listen_problem(network: str, endpoint: str) -> ListenError | None:
    """Why `endpoint` cannot be listened on (for listeners that do not say,
    gRPC's): a probe that binds it and lets go at once; None when it can."""
    if network != "unix":
        try:
            bind(*listen_host_port(endpoint), network=network).close()
        except ListenError as problem:
            return problem
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(endpoint)
    except OSError as problem:
        return _listen_error(f"unix {endpoint}", "bind", problem)
    finally:
        sock.close()
    os.unlink(endpoint)
    return None


def _listen_error(shown: str, call: str, problem: OSError) -> ListenError:
    if problem.errno is None:
        return ListenError(f"listen {shown}: {call}: {problem}")
    return ListenError(f"listen {shown}: {call}: {go_errno_text(problem.errno)}", problem.errno)


GO_MAX_HEADER_BYTES = (1 << 20) + 4096
"""What Go's server reads of a request's line and headers before its 431:
``DefaultMaxHeaderBytes`` (1 MiB) and the 4096 bytes it allows on top."""


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
        """Bind `endpoint` and serve `handler` as Go's net/http serves (raises
        ListenError or ValueError); `too_large` answers bodies past the
        limit (see ConnectionTracker)."""
        sock = bind(*listen_host_port(endpoint))
        # Go's server bounds only the bytes of a request's line and headers
        # together (no separate count or target length).
        limits = replace(
            limits or ServerLimits(),
            max_header_size=GO_MAX_HEADER_BYTES,
            max_url_size=GO_MAX_HEADER_BYTES,
            max_header_count=GO_MAX_HEADER_BYTES,
        )
        tracker = ConnectionTracker(limits, too_large=too_large)
        loop = asyncio.get_running_loop()
        server = await loop.create_server(
            lambda: HttpServerProtocol(handler, limits, tracker, go_net_http=True),
            sock=sock,
            ssl=tls,
            backlog=1024,
        )
        return cls(server, tracker, sock.getsockname()[1])

    async def stop(self, drain_secs: float = 5.0) -> bool:
        """Stop accepting, close idle connections, wait for requests in
        flight (True when all were answered in time)."""
        self.server.close()
        return await self.tracker.drain(drain_secs)
