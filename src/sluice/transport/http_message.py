"""HTTP/1.1 messages as the server, the client and every handler see them.

A parsed :class:`Request`, the :class:`Response` a handler returns and its
encoding on the wire, and the header rules a proxy needs (which headers are
hop-by-hop, which a ``Connection`` header adds, which Edge writes itself).
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from email.utils import formatdate
from http import HTTPStatus
from typing import Final

Headers = list[tuple[bytes, bytes]]

REASONS = {status.value: status.phrase.encode("latin-1") for status in HTTPStatus} | {
    413: b"Content Too Large",  # RFC 9110's names (Python's own from 3.13)
    414: b"URI Too Long",
    416: b"Range Not Satisfiable",
    422: b"Unprocessable Content",
}
"""The reason phrase of each status an answer may have, relayed ones too."""
HOP_BY_HOP = frozenset(
    {b"connection", b"keep-alive", b"transfer-encoding", b"te", b"upgrade", b"trailer"}
)
"""Hop-by-hop headers, never forwarded; nor is any ``Proxy-*`` header."""


def is_hop_by_hop(lowered_name: bytes) -> bool:
    return lowered_name in HOP_BY_HOP or lowered_name.startswith(b"proxy-")


def connection_options(values: list[bytes]) -> frozenset[bytes]:
    """The header names the ``Connection`` header `values` list, lowercased:
    hop-by-hop for this message (RFC 9110 7.6.1), so not relayed either.
    Names dropped anyway and the ``close`` option are left out, so that the
    usual ``keep-alive`` and ``close`` give an empty set."""
    names = set()
    for value in values:
        for token in value.split(b","):
            name = token.strip().lower()
            if name and name != b"close" and not is_hop_by_hop(name):
                names.add(name)
    return frozenset(names)


def origin_form(target: bytes) -> bytes:
    """A request target as ``/path?query``: an absolute-form one
    (``http://host:port/path?query``), which a server must accept (RFC 9112
    3.2.2), loses its scheme and authority; any other is left as it is."""
    if target.startswith(b"/"):
        return target
    scheme, found, rest = target.partition(b"://")
    if not found or scheme.lower() not in (b"http", b"https"):
        return target
    query = rest.find(b"?")
    path = rest.find(b"/", 0, query if query >= 0 else len(rest))
    if path >= 0:
        return rest[path:]
    return b"/" + rest[query:] if query >= 0 else b"/"


WRITTEN_BY_EDGE = frozenset({b"host", b"content-length", b"expect"})
"""Request headers Edge does not relay besides hop-by-hop ones: it writes
``Host`` and ``Content-Length`` itself and answers ``Expect: 100-continue`` on
its own (it has the whole body before forwarding)."""


@dataclass(slots=True)
class Request:
    """One parsed request. `headers` maps lowercased names to the first value
    sent; `forwarded` is the header block to relay upstream, already encoded
    (original case and order, without hop-by-hop headers, those ``Connection``
    names, ``Host``, ``Content-Length`` and ``Expect``)."""

    method: str
    path: str
    query: str | None
    """What follows the target's ``?``: None when it has none, ``""`` when it
    ends with one (a proxy forwards either as it came)."""
    headers: dict[bytes, bytes]
    forwarded: bytes
    body: bytes
    keep_alive: bool = True
    reserved: int = 0
    """Body bytes counted against the memory budget (given back when answered)."""
    lines: Headers = field(default_factory=list)
    """Every header line as sent (name as written), for what needs repeated ones."""
    peer: str = ""
    """The client's IP address (empty for a Unix socket)."""
    http_10: bool = False
    """Sent as HTTP/1.0."""
    body_error: str = ""
    """Why the body could not be read to its end, in the words of the error
    a Go handler's read meets (``unexpected EOF``, a read timeout, a
    malformed chunk): `body` then holds what arrived before it. Only the
    collector's servers hand such a request on (as Go's server does, the
    handler deciding the answer); the connection closes after it."""

    def header(self, lowered_name: bytes) -> bytes | None:
        return self.headers.get(lowered_name)


@dataclass(slots=True)
class Response:
    status: int
    body: bytes = b""
    headers: Headers = field(default_factory=list)
    content_type: bytes | None = b"application/json"
    length_in_headers: bool = False
    """An answer to HEAD whose `headers` carry the Content-Length to announce
    (a relayed one: the upstream's, or none if it sent none), not the body's."""


def json_error(status: int, message: str, headers: Headers | None = None) -> Response:
    """A short JSON error body, as clients (agents, collectors) expect."""
    return Response(status, json.dumps({"error": message}).encode(), headers or [])


CONTINUE: Final = b"HTTP/1.1 100 Continue\r\n\r\n"
"""The interim answer to ``Expect: 100-continue``."""
Handler = Callable[[Request], Awaitable[Response]]


BODILESS: Final = frozenset({204, 304})
"""Statuses whose answers end at their header block (RFC 9110 6.4.1); a 204
carries no Content-Length either (8.6), nor does a 304 here (it may, only as
what a 200 would carry, which Edge does not know)."""


_date_cache: list[tuple[int, bytes]] = [(0, b"")]
"""The last second :func:`http_date` wrote, and its text."""


def http_date() -> bytes:
    """Now as an HTTP ``Date`` value (IMF-fixdate, RFC 9110 5.6.7, which Go's
    ``http.TimeFormat`` writes), worked out once a second."""
    second = int(time.time())
    cached_second, text = _date_cache[0]
    if second != cached_second:
        text = formatdate(second, usegmt=True).encode("ascii")
        _date_cache[0] = (second, text)
    return text


def encode_response(
    response: Response,
    keep_alive: bool,
    head: bool = False,
    dated: bool = False,
    http_10: bool = False,
) -> bytes:
    """The answer on the wire; `dated` adds a ``Date`` header (as Go's
    net/http server does to every answer) unless the handler set one;
    `http_10` answers an HTTP/1.0 request as Go's server does: in HTTP/1.0,
    saying ``keep-alive`` when the connection stays open (1.0's default is
    to close, so closing goes unsaid)."""
    reason = REASONS.get(response.status, b"Status")
    bodiless = response.status in BODILESS
    version = b"1.0" if http_10 else b"1.1"
    parts = [b"HTTP/%s %d %s\r\n" % (version, response.status, reason)]
    for name, value in response.headers:
        parts.append(name + b": " + value + b"\r\n")
    if response.content_type is not None:
        parts.append(b"Content-Type: " + response.content_type + b"\r\n")
    if dated and not any(name.lower() == b"date" for name, _ in response.headers):
        parts.append(b"Date: " + http_date() + b"\r\n")
    if not ((head and response.length_in_headers) or bodiless):
        parts.append(b"Content-Length: %d\r\n" % len(response.body))
    if http_10:
        if keep_alive:
            parts.append(b"Connection: keep-alive\r\n")
    elif not keep_alive:
        parts.append(b"Connection: close\r\n")
    parts.append(b"\r\n")
    if not (head or bodiless):  # a HEAD answer announces the length but carries no body
        parts.append(response.body)
    return b"".join(parts)
