"""The collector's HTTP listener against raw clients: where HTTP/1.1 leaves
the answer open, it answers as Go's net/http server (which serves every
upstream HTTP endpoint) does."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from email.utils import parsedate_to_datetime

import pytest

from sluice.transport.http_message import Request, Response
from sluice.transport.listener import HttpListener
from tests.collector.background import background_loop, head_of, http_get


async def echo(request: Request) -> Response:
    """The request's method, path and body, as plain text."""
    text = f"{request.method} {request.path} {len(request.body)}".encode()
    return Response(200, text, content_type=b"text/plain; charset=utf-8")


@pytest.fixture
def port() -> Iterator[int]:
    with background_loop() as loop:
        listener: HttpListener = loop.run(HttpListener.start(echo, "127.0.0.1:0"))
        yield listener.port
        loop.run(listener.stop())


def exchange(port: int, raw: bytes) -> bytes:
    """Send `raw`, then read until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(raw)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
        return received


def answers_to(port: int, raw: bytes) -> list[tuple[str, dict[str, str], bytes]]:
    """Each answer (as :func:`head_of` reads it) to the pipelined requests in
    `raw`, in order; the last must close the connection."""
    return [head_of(b"HTTP/1.1 " + a) for a in exchange(port, raw).split(b"HTTP/1.1 ")[1:]]


def test_every_answer_is_dated(port: int) -> None:
    """Go's server adds Date to every answer a handler writes."""
    status, headers, body = http_get(port, "/x")
    assert (status, body) == (200, b"GET /x 0")
    assert parsedate_to_datetime(headers["date"]).tzname() == "UTC"
    assert headers["date"].endswith(" GMT")


GO_ERROR_HEADERS = "Content-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"


def go_unreadable(status_line: str, body: str | None = None) -> bytes:
    """Go's answer to a request its server could not read: written as is,
    without Date or Content-Length, and the connection closed."""
    return f"HTTP/1.1 {status_line}\r\n{GO_ERROR_HEADERS}{body or status_line}".encode()


@pytest.mark.parametrize(
    ("request_head", "status_line"),
    [
        ("GET / HTTP/1.1\r\n\r\n", "400 Bad Request: missing required Host header"),
        ("GET / HTTP/1.1\r\nHost: a b\r\n\r\n", "400 Bad Request: malformed Host header"),
        ("GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", "400 Bad Request: malformed Host header"),
    ],
)
def test_host_is_required_of_http_1_1(port: int, request_head: str, status_line: str) -> None:
    """Go's readRequest: an HTTP/1.1 request names exactly one valid Host."""
    assert exchange(port, request_head.encode()) == go_unreadable(status_line)


@pytest.mark.parametrize(
    "request_head",
    [
        "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: a\r\nHost: b\r\nTransfer-Encoding: gzip\r\n\r\n",
    ],
)
def test_two_host_headers_are_an_unworded_400(port: int, request_head: str) -> None:
    """Go's readRequest refuses a second Host line as it reads the header
    block (a plain error, so its bare 400), before it looks at the body's
    transfer coding."""
    assert exchange(port, request_head.encode()) == go_unreadable("400 Bad Request")


@pytest.mark.parametrize(
    "request_head",
    [
        "GET / HTTP/1.0\r\n\r\n",
        "GET / HTTP/1.1\r\nHost:\r\nConnection: close\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: [::1]:4318\r\nConnection: close\r\n\r\n",
    ],
)
def test_host_that_go_accepts(port: int, request_head: str) -> None:
    status, _, body = head_of(exchange(port, request_head.encode()))
    assert (status.split(" ", 1)[1], body) == ("200 OK", b"GET / 0")


@pytest.mark.parametrize(
    "request_head",
    [
        "NOT HTTP\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nBad Name: v\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: x\r\n\r\n",
    ],
)
def test_malformed_request_is_a_bare_400(port: int, request_head: str) -> None:
    assert exchange(port, request_head.encode()) == go_unreadable("400 Bad Request")


@pytest.mark.parametrize("sent", [b"GE", b"GET / HTTP/1.1\r\n", b"GET / HTTP/1.1\r\nHost: x\r\n"])
def test_a_head_cut_short_by_the_client_is_a_bare_400(port: int, sent: bytes) -> None:
    """A client that half-closes inside a request head gets Go's bare 400
    (its readRequest meets an unexpected EOF); one that sent nothing gets
    nothing."""
    for head, answer in ((sent, go_unreadable("400 Bad Request")), (b"", b"")):
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(head)
            sock.shutdown(socket.SHUT_WR)
            received = b""
            while chunk := sock.recv(65536):
                received += chunk
            assert received == answer


def test_header_block_is_limited_as_go_limits_it(port: int) -> None:
    """Go's DefaultMaxHeaderBytes (1 MiB, and 4096 bytes of slack): a
    200 KiB header is read; past the limit, Go's 431."""
    big = "a" * (200 << 10)
    request_head = f"GET / HTTP/1.1\r\nHost: x\r\nX-Big: {big}\r\nConnection: close\r\n\r\n"
    assert head_of(exchange(port, request_head.encode()))[0] == "HTTP/1.1 200 OK"
    huge = "a" * ((1 << 20) + 8192)
    request_head = f"GET / HTTP/1.1\r\nHost: x\r\nX-Big: {huge}\r\n\r\n"
    status_line = "431 Request Header Fields Too Large"
    assert exchange(port, request_head.encode()) == go_unreadable(status_line)


def test_request_line_past_go_s_limit_is_431(port: int) -> None:
    """Go has no limit of its own for the request target: a line past its
    header limit is the header block's 431, not a 414."""
    target = "/" + "a" * ((1 << 20) + 8192)
    request_head = f"GET {target} HTTP/1.1\r\nHost: x\r\n\r\n"
    status_line = "431 Request Header Fields Too Large"
    assert exchange(port, request_head.encode()) == go_unreadable(status_line)


@pytest.mark.parametrize(
    "codings",
    [
        "Transfer-Encoding: gzip",
        "Transfer-Encoding: gzip, chunked",
        "Transfer-Encoding: identity",
        "Transfer-Encoding: chunked, gzip",
        "Transfer-Encoding: chunked, chunked",
        "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked",
        "Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip",
    ],
)
def test_unsupported_transfer_encoding_is_501(port: int, codings: str) -> None:
    """Go reads only one ``Transfer-Encoding: chunked`` line (its
    readTransfer); anything else, chunked not last or a second line
    included, is 501, the coding not echoed back."""
    request_head = f"POST / HTTP/1.1\r\nHost: x\r\n{codings}\r\n\r\n"
    answer = go_unreadable("501 Not Implemented", "Unsupported transfer encoding")
    assert exchange(port, request_head.encode()) == answer


def test_repeated_content_length_that_agrees_is_read_as_one(port: int) -> None:
    """Go's fixLength reads Content-Length lines that agree as one (and
    refuses ones that differ); the next request starts after that length."""
    first = (
        b"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nX-A: b\r\n"
        b"Content-Length:  3 \r\n\r\nabc"
    )
    second = b"GET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    answers = answers_to(port, first + second)
    assert [answer[::2] for answer in answers] == [
        ("HTTP/1.1 200 OK", b"POST /a 3"),
        ("HTTP/1.1 200 OK", b"GET /b 0"),
    ]
    differing = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd"
    assert exchange(port, differing) == go_unreadable("400 Bad Request")


def test_chunked_wins_over_content_length(port: int) -> None:
    """Go's readTransfer reads a chunked body whatever Content-Length says,
    and drops the Content-Length (so the next request starts after the
    last chunk): no smuggling, and no refusal either."""
    first = (
        b"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
    )
    second = b"GET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    answers = answers_to(port, first + second)
    assert [answer[::2] for answer in answers] == [
        ("HTTP/1.1 200 OK", b"POST /a 3"),
        ("HTTP/1.1 200 OK", b"GET /b 0"),
    ]


@pytest.mark.parametrize("size_line", [b"3 ", b"3\t", b"3 \t "])
def test_blanks_after_a_chunk_size_are_ignored(port: int, size_line: bytes) -> None:
    """Go's chunked reader trims the blanks that end a chunk-size line."""
    raw = (
        b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        + size_line
        + b"\r\nabc\r\n0\r\n\r\n"
    )
    assert head_of(exchange(port, raw))[::2] == ("HTTP/1.1 200 OK", b"POST / 3")


def test_chunked_request_does_not_show_its_content_length() -> None:
    """Go deletes the Content-Length of a chunked request: handlers do not
    see it."""
    seen: list[list[bytes]] = []

    async def names(request: Request) -> Response:
        seen.append([name.lower() for name, _ in request.lines])
        seen.append(list(request.headers))
        return Response(200, b"", content_type=None)

    raw = (
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n"
        b"Connection: close\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
    )
    with background_loop() as loop:
        listener: HttpListener = loop.run(HttpListener.start(names, "127.0.0.1:0"))
        try:
            assert exchange(listener.port, raw).startswith(b"HTTP/1.1 200 OK\r\n")
        finally:
            loop.run(listener.stop())
    expected = [b"host", b"transfer-encoding", b"connection"]
    assert seen == [expected, expected]


@pytest.mark.parametrize("version", ["0.9", "2.0", "3.0"])
def test_other_major_versions_are_505(port: int, version: str) -> None:
    request_head = f"GET / HTTP/{version}\r\nHost: x\r\n\r\n"
    status_line = "505 HTTP Version Not Supported: unsupported protocol version"
    assert exchange(port, request_head.encode()) == go_unreadable(status_line)


@pytest.mark.parametrize("version", ["1.2", "1.9"])
def test_later_minor_versions_are_http_1_1(port: int, version: str) -> None:
    """Go's ParseHTTPVersion takes any one-digit minor version: HTTP/1.2 is
    served, answered in HTTP/1.1 and kept alive."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(f"GET /a HTTP/{version}\r\nHost: x\r\n\r\n".encode())
        status, headers, body = head_of(sock.recv(1000))
        assert (status, body) == ("HTTP/1.1 200 OK", b"GET /a 0")
        assert "connection" not in headers
        sock.sendall(f"GET /b HTTP/{version}\r\nHost: x\r\n\r\n".encode())
        assert sock.recv(1000).startswith(b"HTTP/1.1 200 OK\r\n")


@pytest.mark.parametrize("version", ["1.10", "10.1", "1"])
def test_malformed_versions_are_a_bare_400(port: int, version: str) -> None:
    request_head = f"GET / HTTP/{version}\r\nHost: x\r\n\r\n"
    assert exchange(port, request_head.encode()) == go_unreadable("400 Bad Request")


def test_an_expectation_other_than_100_continue_fails(port: int) -> None:
    """Go's server answers 417 to an Expect it does not know, and closes."""
    request_head = b"POST / HTTP/1.1\r\nHost: x\r\nExpect: foo\r\nContent-Length: 3\r\n\r\nabc"
    status, headers, body = head_of(exchange(port, request_head))
    assert (status, body) == ("HTTP/1.1 417 Expectation Failed", b"")
    assert headers["connection"] == "close" and headers["content-length"] == "0"
    assert "content-type" not in headers and "date" in headers


def test_100_continue_only_for_a_body(port: int) -> None:
    """Go sends ``100 Continue`` when an HTTP/1.1 request with a body is
    read, and never for one without."""
    with_body = b"POST /b HTTP/1.1\r\nHost: x\r\nExpect: 100-Continue\r\nContent-Length: 3\r\n\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(with_body)
        assert sock.recv(100) == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(b"abc")
        assert sock.recv(1000).startswith(b"HTTP/1.1 200 OK\r\n")
    without = b"GET / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n"
    assert exchange(port, without).startswith(b"HTTP/1.1 200 OK\r\n")


@pytest.mark.parametrize("method", ["FOO", "PURGE", "BREW", "X-Custom_1"])
def test_any_token_is_a_method(port: int, method: str) -> None:
    """Go's server takes any token as a method and hands the request, its
    body read as any other's, to the handler."""
    raw = f"{method} /m HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nab"
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(raw.encode())
        assert head_of(sock.recv(1000))[::2] == ("HTTP/1.1 200 OK", f"{method} /m 2".encode())
        sock.sendall(b"GET /next HTTP/1.1\r\nHost: x\r\n\r\n")
        assert head_of(sock.recv(1000))[::2] == ("HTTP/1.1 200 OK", b"GET /next 0")


def test_a_token_method_with_repeated_content_length_keeps_its_method(port: int) -> None:
    """Both of Go's readings at once: the parser refuses the method, then
    the repeated Content-Length; the handler still sees the method sent."""
    raw = b"BREW /m HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nab"
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(raw)
        assert head_of(sock.recv(1000))[::2] == ("HTTP/1.1 200 OK", b"BREW /m 2")


@pytest.mark.parametrize(
    "second",
    [
        b"BREW /m HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nab",
        b"POST /m HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nab",
    ],
)
@pytest.mark.parametrize(
    "first",
    [
        b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n",
        b"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc",
        b"POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        b"PURGE /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc",
        b"CONNECT a:1 HTTP/1.1\r\nHost: a:1\r\n\r\n",
    ],
)
def test_a_pipelined_request_is_read_as_a_first_one(port: int, first: bytes, second: bytes) -> None:
    """Go reads each request of a connection alike: a method it takes, or
    Content-Length lines that agree, behind other requests in the same read."""
    third = b"GET /c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    answers = answers_to(port, first + second + third)
    method = second.split(b" ")[0]
    assert [answer[0] for answer in answers] == ["HTTP/1.1 200 OK"] * 3
    assert answers[1][2] == method + b" /m 2"
    assert answers[2][2] == b"GET /c 0"


@pytest.mark.parametrize("method", ["F@O", "F(O)", '"GET"'])
def test_a_method_that_is_no_token_is_a_bare_400(port: int, method: str) -> None:
    request_head = f"{method} / HTTP/1.1\r\nHost: x\r\n\r\n"
    assert exchange(port, request_head.encode()) == go_unreadable("400 Bad Request")


def test_options_asterisk_is_answered_by_the_server(port: int) -> None:
    """Go's server answers ``OPTIONS *`` itself (no handler sees it): 200,
    no body, no type."""
    answer = exchange(port, b"OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    status, headers, body = head_of(answer)
    assert (status, body) == ("HTTP/1.1 200 OK", b"")
    assert headers["content-length"] == "0" and "content-type" not in headers
    assert "date" in headers


def test_connect_is_an_ordinary_request(port: int) -> None:
    """Go's server hands CONNECT to the handler like any request, and reads
    what follows as the next request (a tunnel needs a handler that hijacks
    the connection, which no collector handler does)."""
    first = b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"
    second = b"GET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    answers = answers_to(port, first + second)
    assert [answer[::2] for answer in answers] == [
        ("HTTP/1.1 200 OK", b"CONNECT example.com:443 0"),
        ("HTTP/1.1 200 OK", b"GET /b 0"),
    ]
    close = b"CONNECT example.com:443 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
    status, headers, body = head_of(exchange(port, close))
    assert (status, headers["connection"], body) == (
        "HTTP/1.1 200 OK",
        "close",
        b"CONNECT example.com:443 0",
    )


def test_http_1_0_is_answered_in_http_1_0(port: int) -> None:
    """Go's server answers an HTTP/1.0 request in HTTP/1.0: closing goes
    unsaid, a kept-alive connection says so."""
    status, headers, body = head_of(exchange(port, b"GET / HTTP/1.0\r\n\r\n"))
    assert (status, body) == ("HTTP/1.0 200 OK", b"GET / 0")
    assert "connection" not in headers
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(b"GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        status, headers, body = head_of(sock.recv(1000))
        assert (status, headers["connection"], body) == (
            "HTTP/1.0 200 OK",
            "keep-alive",
            b"GET /a 0",
        )
        sock.sendall(b"GET /b HTTP/1.0\r\n\r\n")
        assert sock.recv(1000).startswith(b"HTTP/1.0 200 OK\r\n")
