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
from tests.collector.background import background_loop, http_get


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


def head_of(answer: bytes) -> tuple[str, dict[str, str], bytes]:
    """The status line, headers (lowercased names) and body of one answer."""
    head, _, body = answer.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.lower()] = value.strip()
    return status, headers, body


def test_every_answer_is_dated(port: int) -> None:
    """Go's server adds Date to every answer a handler writes."""
    status, headers, body = http_get(port, "/x")
    assert (status, body) == (200, b"GET /x 0")
    assert parsedate_to_datetime(headers["date"]).tzname() == "UTC"
    assert headers["date"].endswith(" GMT")
