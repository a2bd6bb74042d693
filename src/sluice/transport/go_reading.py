"""How Go's net/http server reads a request, where the httptools parser reads
it otherwise: the collector's servers answer as Go's do (Edge keeps the
parser's stricter reading).

Go's server (``conn.readRequest``, ``transfer.go``) serves some requests the
parser refuses (a method it does not know, Content-Length lines that repeat
one value), refuses some the parser reads (two Host lines, a transfer coding
other than one ``chunked``, an HTTP version other than 1.x), and answers
what it cannot read in plain text (:func:`go_unreadable`). The rules are
here; :mod:`sluice.transport.http_server` applies them.
"""

from __future__ import annotations

import contextlib
from typing import Final, NamedTuple

import httptools

from sluice.transport.http_message import REASONS, Headers, Response


def go_unreadable(status: int, detail: str = "", body: bytes | None = None) -> bytes:
    """How Go's net/http server answers a request it could not read (its
    ``conn.serve``): plain text without Date or length, the connection then
    closed. `detail` follows the reason in the status line and in the body,
    which is the status line's text unless `body` is given."""
    public = b"%d %s" % (status, REASONS[status])
    if detail:
        public += b": " + detail.encode("latin-1")
    return (
        b"HTTP/1.1 " + public + b"\r\nContent-Type: text/plain; charset=utf-8\r\n"
        b"Connection: close\r\n\r\n" + (public if body is None else body)
    )


HOST_BYTES: Final = frozenset(
    b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!$%&'()*+,-.:;=[]_~"
)
"""The bytes Go's server allows in a ``Host`` header (httpguts.ValidHostHeader)."""

TOKEN_BYTES: Final = frozenset(
    b"!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
)
"""The bytes of an HTTP token (RFC 9110 5.6.2), which a method is."""

UNSUPPORTED_CODINGS: Final = frozenset(
    {
        "Request has invalid `Transfer-Encoding`",
        # chunked before another coding, or a second Transfer-Encoding line
        "Invalid `Transfer-Encoding` header value",
    }
)
"""The parser's words for a Transfer-Encoding other than one ``chunked``,
which Go's server refuses as a coding it does not implement."""


def parse_error_answer(problem: httptools.HttpParserError) -> bytes:
    """Go's answer to a request the parser refused: 501 for a transfer
    coding other than chunked, else its bare 400 (Go words only the
    problems it finds after parsing)."""
    if str(problem) in UNSUPPORTED_CODINGS:
        return go_unreadable(501, body=b"Unsupported transfer encoding")
    return go_unreadable(400)


CHUNK_SIZE_ERRORS: Final = {
    "Chunk size overflow": "http chunk length too large",
    "Invalid character in chunk size": "invalid byte in chunk length",
    "Missing expected CR after chunk size": "invalid byte in chunk length",
    "Expected LF after chunk size": "invalid byte in chunk length",
}
"""The parser's words for a bad chunk-size line, and Go's chunked reader's."""


def chunked_body_error(problem: httptools.HttpParserError) -> str:
    """The error a Go handler's read of a chunked body meets where the
    parser refused it with `problem`: Go's words for a bad chunk size, else
    its ``malformed chunked encoding`` (data not ended by CRLF, and the rest)."""
    return CHUNK_SIZE_ERRORS.get(str(problem), "malformed chunked encoding")


def read_timeout_error(local: object, peer: object) -> str:
    """The error a Go handler's body read meets when the server's
    ``ReadTimeout`` expires (a *net.OpError): ``read tcp <local>-><peer>: i/o
    timeout``, from the socket's addresses as Python gives them."""
    return f"read tcp {_go_address(local)}->{_go_address(peer)}: i/o timeout"


def _go_address(address: object) -> str:
    """A TCP address as Go's TCPAddr.String writes it: IPv6 in brackets,
    an IPv4-mapped one as IPv4."""
    if not isinstance(address, tuple) or len(address) < 2:
        return "<nil>"
    host, port = str(address[0]), address[1]
    if host.startswith("::ffff:") and host.count(".") == 3:
        host = host[len("::ffff:") :]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def new_parser(protocol: object) -> httptools.HttpRequestParser:
    """A parser for `protocol` (its callbacks) that reads what Go's server
    reads: a chunked body whatever Content-Length says (the server then drops
    the Content-Length), HTTP/1.2 to 1.9 as HTTP/1.x (505 only for another
    major: :func:`refusal`), and blanks after a chunk's size."""
    parser = httptools.HttpRequestParser(protocol)
    parser.set_dangerous_leniencies(
        lenient_chunked_length=True,
        lenient_version=True,
        lenient_spaces_after_chunk_size=True,
    )
    return parser


class _Completions:
    """Parser callbacks that count the requests read to their end."""

    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0

    def on_message_complete(self) -> None:
        self.count += 1


def _completed(data: bytes | memoryview) -> int:
    counter = _Completions()
    with contextlib.suppress(httptools.HttpParserError):  # what follows the requests counted
        new_parser(counter).feed_data(data)
    return counter.count


def message_end(data: bytes | memoryview, count: int) -> int:
    """Where the `count`-th request of `data`, which begins with a request,
    ends: for a pipelined request the parser refused, so that it is read
    again from its first byte as the first of a read is. (The parser tells
    no positions: the shortest prefix that holds `count` requests is
    searched for, on this rare path only.)"""
    low, high = 0, len(data)
    while low < high:
        middle = (low + high) // 2
        if _completed(data[:middle]) >= count:
            high = middle
        else:
            low = middle + 1
    return low


class Reread(NamedTuple):
    """A request the parser refused, rewritten for it to read as Go's server
    does: `data` to feed a new parser, and the method the request really has
    when the parser is to read it as POST (else ``b""``)."""

    data: bytes
    method: bytes


def reread(data: bytes | memoryview, problem: httptools.HttpParserError) -> Reread:
    """`data`, which begins with a request the parser refused with `problem`,
    as Go's server reads it; raises `problem` (or a parser error) when Go
    refuses it too."""
    if isinstance(problem, httptools.HttpParserInvalidMethodError):
        return _with_known_method(bytes(data))
    if str(problem) == "Duplicate Content-Length":
        return Reread(_without_repeated_length(bytes(data), problem), b"")
    raise problem


def _with_known_method(raw: bytes) -> Reread:
    """A request whose method the parser does not know, that method read as
    POST (the parser frames every method's body alike but CONNECT's). Go's
    server hands any method that is a token to the handler."""
    start = len(raw) - len(raw.lstrip(b"\r\n"))  # the parser skips empty lines first
    end = raw.find(b" ", start)
    method = raw[start:end] if end > start else b""
    if not method or not TOKEN_BYTES.issuperset(method):
        raise httptools.HttpParserError("invalid method")
    return Reread(b"POST" + raw[end:], method)


def _without_repeated_length(raw: bytes, problem: httptools.HttpParserError) -> bytes:
    """`raw`, which begins with a request head (whole) that repeats its
    Content-Length, with the repeats left out: Go's server reads a request
    whose Content-Length lines agree as if it had one (and refuses one
    whose lines differ: `problem` is raised)."""
    end = raw.find(b"\r\n\r\n")
    if end < 0:
        raise problem
    kept = []
    length: bytes | None = None
    for line in raw[:end].split(b"\r\n"):
        name, colon, value = line.partition(b":")
        if colon and name.lower() == b"content-length":
            if length is not None:
                if value.strip(b" \t") != length:
                    raise problem
                continue
            length = value.strip(b" \t")
        kept.append(line)
    return b"\r\n".join(kept) + raw[end:]


class Refusal(NamedTuple):
    """How Go's server refuses a request it has read the head of: the status,
    the problem in Sluice's words, and the answer (Go's plain text, or a
    :class:`Response`)."""

    status: int
    problem: str
    wire: bytes | None
    answer: Response | None = None


def refusal(
    version: str, method: bytes, headers: Headers, lowered: dict[bytes, bytes]
) -> Refusal | None:
    """Go's refusal of a request head (its readRequest and serve, in their
    order), or None when it serves it. `headers` are the lines as sent,
    `lowered` the first value of each lowercased name."""
    if not version.startswith("1."):
        return Refusal(505, "", go_unreadable(505, "unsupported protocol version"))
    hosts = [value for name, value in headers if name.lower() == b"host"]
    if len(hosts) > 1:  # refused while reading, before the body's framing, and unworded
        return Refusal(400, "too many Host headers", go_unreadable(400))
    codings = [value for name, value in headers if name.lower() == b"transfer-encoding"]
    if codings and version == "1.0" and b"content-length" in lowered:
        # Go frames it by its Content-Length (1.0 has no transfer codings),
        # which the parser, taking it as chunked, cannot do.
        return Refusal(400, "", go_unreadable(400))
    chunked_only = len(codings) == 1 and codings[0].strip().lower() == b"chunked"
    if codings and version != "1.0" and not chunked_only:  # Go ignores it in HTTP/1.0
        return Refusal(501, "", go_unreadable(501, body=b"Unsupported transfer encoding"))
    problem = ""
    if not hosts and version != "1.0" and method != b"CONNECT":
        problem = "missing required Host header"
    elif hosts and not HOST_BYTES.issuperset(hosts[0].strip()):
        problem = "malformed Host header"
    if problem:
        return Refusal(400, problem, go_unreadable(400, problem))
    expect = lowered.get(b"expect", b"").strip()
    if expect and b"100-continue" not in {token.strip() for token in expect.lower().split(b",")}:
        return Refusal(417, "", None, Response(417, content_type=None))
    return None


def body_follows(version: str, declared: int, lowered: dict[bytes, bytes]) -> bool:
    """Whether Go's server would send ``100 Continue``: for an HTTP/1.1
    request with a body (a declared length, or chunked)."""
    has_body = declared > 0 or b"transfer-encoding" in lowered
    return has_body and version != "1.0"
