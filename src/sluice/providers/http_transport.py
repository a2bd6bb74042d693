"""The sync protocol over HTTP: one ``POST`` per sync on a fresh connection,
with one deadline for the whole exchange and a cap on the response.

A socket timeout alone bounds each read, not the request: a server sending a
byte every few seconds would hold a sync (and shutdown) for as long as it
likes. Here every connect, send and receive gets only what is left of the
deadline, and the response body is refused once it passes
``max_response_bytes``, before it is buffered whole.

A :class:`SyncError` is raised outside any ``except`` block, so it chains no
lower-level exception (nor the connection that one's frames held), and the
connection is closed before the error leaves this module.
"""

from __future__ import annotations

import socket
import ssl
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

import httptools
from google.protobuf import json_format
from google.protobuf.message import DecodeError

from sluice import __version__
from sluice.logs import redact_url
from sluice.providers.config import DEFAULT_MAX_RESPONSE_BYTES
from sluice.providers.sync import (
    JSON,
    PROTOBUF,
    SyncError,
    SyncResult,
    SyncTransport,
    read_json_response,
    read_response,
)
from sluice.providers.wire import policy_pb2 as pb

_PROTOBUF_TYPES = (PROTOBUF, "application/protobuf")
MAX_HEADER_BYTES = 64 << 10
"""Status line and headers of a sync response."""
_READ_SIZE = 64 << 10


class _DeadlinePassed(Exception):
    """No time is left for the next socket operation."""


class _Refused(Exception):
    """The response broke a limit or the protocol; the message says how."""


@dataclass
class _Response:
    """httptools callbacks collecting one response, the body within a limit."""

    limit: int
    status: int = 0
    content_type: str = ""
    framed: bool = False
    """Content-Length or chunked; otherwise the body ends when the server closes."""
    pieces: list[bytes] = field(default_factory=list)
    size: int = 0
    received: int = 0
    """Bytes read off the socket so far."""
    headers_done: bool = False
    complete: bool = False
    too_large: bool = False
    parser: Any = None

    def on_header(self, name: bytes, value: bytes) -> None:
        name = name.lower()
        if name == b"content-type":
            self.content_type = value.decode("latin-1")
        elif name == b"transfer-encoding":
            self.framed = True
        elif name == b"content-length":
            self.framed = True
            if value.strip().isdigit() and int(value) > self.limit:
                self.too_large = True

    def on_headers_complete(self) -> None:
        self.status = self.parser.get_status_code()
        self.headers_done = True

    def on_body(self, data: bytes) -> None:
        self.size += len(data)
        if self.size > self.limit:
            self.too_large = True
        elif not self.too_large:
            self.pieces.append(data)

    def on_message_complete(self) -> None:
        if self.status < 200:  # an interim answer (100 Continue): the real one follows
            self.headers_done, self.content_type, self.framed = False, "", False
        else:
            self.complete = True


def _remaining(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise _DeadlinePassed
    return left


def _connect(host: str, port: int, deadline: float) -> socket.socket:
    """A connected socket to the first address of `host` that answers. Name
    resolution runs on a helper thread, the only way to bound it."""
    found: list[Any] = []
    done = threading.Event()

    def resolve() -> None:
        try:
            found.extend(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except OSError as problem:
            found.append(problem)
        finally:
            done.set()

    threading.Thread(target=resolve, name="sluice-resolve", daemon=True).start()
    if not done.wait(_remaining(deadline)):
        raise _DeadlinePassed
    if found and isinstance(found[0], OSError):
        raise found[0]
    error: OSError = OSError(f"no address for {host}")
    for family, kind, proto, _, address in found:
        sock = socket.socket(family, kind, proto)
        try:
            sock.settimeout(_remaining(deadline))
            sock.connect(address)
        except OSError as problem:
            sock.close()
            error = problem
        except _DeadlinePassed:
            sock.close()
            raise
        else:
            return sock
    raise error


class HttpSyncTransport(SyncTransport):
    """``POST`` to the sync URL, JSON by default or binary protobuf."""

    def __init__(
        self,
        url: str,
        headers: Sequence[tuple[str, str]] = (),
        encoding: str = "json",
        timeout: float = 10.0,
        ca_file: str = "",
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        self.url = url
        self.shown = redact_url(url)
        """The URL as messages show it: no credentials, no query."""
        self.headers = list(headers)
        self.encoding = encoding
        self.timeout = timeout
        self.max_response_bytes = max_response_bytes
        parts = urlsplit(url)
        self._tls = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port or (443 if self._tls else 80)
        host = f"[{self._host}]" if ":" in self._host else self._host
        self._authority = f"{host}:{parts.port}" if parts.port else host
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        self._target = quote(target, safe="!#$%&'()*+,/:;=?@[]~")
        self._context = ssl.create_default_context(cafile=ca_file or None) if self._tls else None

    def sync(self, request: Any, timeout: float | None = None) -> SyncResult:
        if self.encoding == "protobuf":
            body, content_type = request.SerializeToString(), PROTOBUF
        else:
            body = json_format.MessageToJson(request, indent=None).encode()
            content_type = JSON
        status, received_type, payload = self._exchange(
            self._request_bytes(body, content_type), timeout
        )
        if status != 200:
            detail = payload[:200].decode("utf-8", "replace").strip()
            raise SyncError(f"HTTP {status} from {self.shown}: {detail}")
        media = (received_type or content_type).split(";")[0].strip().lower()
        if media not in _PROTOBUF_TYPES:
            return read_json_response(payload, self.cache)
        message = pb.SyncResponse()
        try:
            message.ParseFromString(payload)
        except DecodeError as problem:
            failure = f"response is not a SyncResponse: {problem}"
        else:
            return read_response(message, self.cache)
        raise SyncError(failure)

    def _request_bytes(self, body: bytes, content_type: str) -> bytes:
        lines = [
            f"POST {self._target} HTTP/1.1",
            f"Host: {self._authority}",
            f"User-Agent: sluice/{__version__}",
            f"Content-Type: {content_type}",
            f"Accept: {content_type}",
            f"Content-Length: {len(body)}",
            "Connection: close",
        ]
        for name, value in self.headers:
            if any(c in name + value for c in "\r\n\0"):
                raise SyncError(f"header {name!r}: line breaks are not allowed")
            lines.append(f"{name}: {value}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace") + body

    def _exchange(self, request: bytes, timeout: float | None) -> tuple[int, str, bytes]:
        """Send `request` on a new connection and read the whole answer, all
        within `timeout` (default: the configured one): its status, content
        type and body. Raises SyncError."""
        seconds = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + seconds
        stage = "connecting"
        sock: socket.socket | None = None
        response = _Response(self.max_response_bytes)
        try:
            sock = _connect(self._host, self._port, deadline)
            if self._context is not None:
                stage = "in the TLS handshake"
                sock.settimeout(_remaining(deadline))
                sock = self._context.wrap_socket(sock, server_hostname=self._host)
            stage = "sending the request"
            view = memoryview(request)
            while view:
                sock.settimeout(_remaining(deadline))
                view = view[sock.send(view) :]
            stage = "waiting for the response"
            return self._read(sock, deadline, response)
        except (_DeadlinePassed, TimeoutError):
            if response.received:
                stage = f"{response.received} bytes of the response received"
            failure = f"sync with {self.shown} timed out after {seconds:.3g} s ({stage})"
        except _Refused as problem:
            failure = f"{problem} from {self.shown}"
        except OSError as problem:  # refused, unreachable, TLS, reset...
            reason = problem.strerror or problem
            failure = f"cannot reach {self.shown}: {reason}"
        finally:
            if sock is not None:
                sock.close()
        raise SyncError(failure)

    def _read(
        self, sock: socket.socket, deadline: float, response: _Response
    ) -> tuple[int, str, bytes]:
        parser = httptools.HttpResponseParser(response)
        response.parser = parser
        try:
            while not response.complete:
                sock.settimeout(_remaining(deadline))
                data = sock.recv(_READ_SIZE)
                if not data:
                    if response.headers_done and not response.framed:
                        break  # the body was delimited by the close
                    raise _Refused(
                        "connection closed mid-response"
                        if response.headers_done
                        else "connection closed before a complete response"
                    )
                response.received += len(data)
                try:
                    parser.feed_data(data)
                except httptools.HttpParserError as problem:
                    raise _Refused(f"bad HTTP response ({problem})") from None
                if response.too_large:
                    raise _Refused(
                        f"response is larger than max_response_bytes ({self.max_response_bytes} bytes)"
                    )
                if not response.headers_done and response.received > MAX_HEADER_BYTES:
                    raise _Refused(f"response headers are larger than {MAX_HEADER_BYTES} bytes")
        finally:
            response.parser = None  # a cycle: let the body go now, not at some later GC
        body = b"".join(response.pieces)  # one copy at the end, not one per growth step
        response.pieces.clear()
        return response.status, response.content_type, body
