"""Components on a uvloop event loop in a background thread, driven from the
test thread with ordinary blocking clients (http.client, grpc)."""

from __future__ import annotations

import asyncio
import http.client
import threading
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import uvloop

T = TypeVar("T")


class BackgroundLoop:
    def __init__(self) -> None:
        self.loop = uvloop.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float = 10.0) -> T:
        """Run `coroutine` on the loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def call(self, function: Callable[..., T], *args: Any) -> T:
        """Call `function` on the loop's thread (where components expect
        status reports and other calls) and wait for its result."""

        async def call() -> T:
            return function(*args)

        return self.run(call())

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        self.loop.close()


@contextmanager
def background_loop() -> Iterator[BackgroundLoop]:
    loop = BackgroundLoop()
    try:
        yield loop
    finally:
        loop.close()


def head_of(answer: bytes) -> tuple[str, dict[str, str], bytes]:
    """The status line, headers (lowercased names) and body of one answer."""
    head, _, body = answer.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.lower()] = value.strip()
    return status, headers, body


def go_redirect(location: str) -> tuple[int, str, str, bytes]:
    """Go's ServeMux 301 to `location`, as (status, Location, Content-Type,
    body)."""
    return (
        301,
        location,
        "text/html; charset=utf-8",
        f'<a href="{location}">Moved Permanently</a>.\n\n'.encode(),
    )


def http_get(
    port: int, target: str, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    """GET ``http://127.0.0.1:<port><target>``: status, headers (lowercased
    names), body."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request("GET", target, headers=headers or {})
        response = connection.getresponse()
        found = {name.lower(): value for name, value in response.getheaders()}
        return response.status, found, response.read()
    finally:
        connection.close()
