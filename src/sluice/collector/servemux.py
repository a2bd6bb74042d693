"""Go's ``http.ServeMux`` routing rules, which upstream's HTTP servers route
with (the otlp receiver, and the ``health_check``, ``zpages`` and ``pprof``
extensions): a pattern ending in ``/`` serves its whole subtree, any other
exactly its path, and before routing a request is redirected (301, query
kept) when its path has empty, ``.`` or ``..`` segments (to the clean path)
or names a subtree's root without its slash (to the root with the slash).
A path no pattern serves gets Go's ``http.NotFound``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Generic, TypeVar
from urllib.parse import quote, unquote

from sluice.transport.http_message import Headers, Request, Response

T = TypeVar("T")

HTML = b"text/html; charset=utf-8"
TEXT_PLAIN = b"text/plain; charset=utf-8"
NOSNIFF = (b"X-Content-Type-Options", b"nosniff")
"""What Go's ``http.Error`` adds to its plain-text answer."""
_GO_HTML = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&#34;", "'": "&#39;"})


def go_error(status: int, message: str) -> Response:
    """Go's ``http.Error``: the message and a line break as plain text."""
    return Response(status, f"{message}\n".encode(), [NOSNIFF], content_type=TEXT_PLAIN)


def not_found() -> Response:
    """Go's ``http.NotFound``, a ``ServeMux``'s answer for a path no pattern serves."""
    return go_error(404, "404 page not found")


class ServeMux(Generic[T]):
    """A ``ServeMux`` of fixed patterns, each with what serves it."""

    def __init__(self, routes: Iterable[tuple[str, T]]):
        self._routes = sorted(routes, key=lambda route: len(route[0]), reverse=True)
        """Longest pattern first: the one Go picks among those that serve a path."""
        self._patterns = frozenset(pattern for pattern, _ in self._routes)

    def route(self, request: Request) -> T | Response:
        """What serves `request`, or the mux's own answer: its redirect, or
        :func:`not_found`."""
        redirected = redirect_answer(request.method, request.path, request.query, self._patterns)
        if redirected is not None:
            return redirected
        for pattern, served_by in self._routes:
            if pattern_matches(pattern, request.path):
                return served_by
        return not_found()


def clean_path(path: str) -> str:
    """The path Go's ``ServeMux`` routes a request by (its ``cleanPath``):
    rooted, without empty, ``.`` or ``..`` segments, a trailing ``/`` kept."""
    segments: list[str] = []
    for segment in path.split("/"):
        if segment == "..":
            if segments:
                segments.pop()
        elif segment not in ("", "."):
            segments.append(segment)
    clean = "/" + "/".join(segments)
    return clean + "/" if path.endswith("/") and clean != "/" else clean


def pattern_matches(pattern: str, path: str) -> bool:
    """Whether a ``ServeMux`` `pattern` serves the (clean) `path`: its
    subtree when it ends in ``/`` (``/`` serves every path), else exactly it."""
    return path.startswith(pattern) if pattern.endswith("/") else path == pattern


def redirect_answer(
    method: str, path: str, query: str | None, patterns: Collection[str]
) -> Response | None:
    """Go's ``ServeMux`` redirect for a request (`path` as sent, escaped) to
    a server with `patterns`, or None when it routes the request as it is. A
    subtree's root without the slash goes to the root, else an unclean path
    to the clean one; CONNECT and ``*`` are not cleaned, as there. The
    location keeps a query, but not a ``?`` with nothing after it (Go builds
    it from the path and the raw query)."""
    if method == "CONNECT" or path == "*":
        return None
    query = query or ""
    clean = clean_path(path)
    if not clean.endswith("/"):
        plain = unquote(clean) if "%" in clean else clean
        if plain + "/" in patterns and plain not in patterns:
            return redirect(method, quote(plain, safe="$&+,/:;=@") + "/", query)
    if clean != path:
        # Go writes the escaped clean path as a URL's path, so it is escaped again.
        return redirect(method, quote(clean, safe="$&+,/:;=@"), query)
    return None


def redirect(method: str, location: str, query: str) -> Response:
    """``http.Redirect``'s 301 to `location` (an escaped path) with `query`:
    its small HTML body for GET (its Content-Type for HEAD too)."""
    location += f"?{query}" if query else ""
    headers: Headers = [(b"Location", location.encode("latin-1"))]
    if method not in ("GET", "HEAD"):
        return Response(301, b"", headers, content_type=None)
    body = f'<a href="{location.translate(_GO_HTML)}">Moved Permanently</a>.\n\n'
    return Response(301, body.encode() if method == "GET" else b"", headers, content_type=HTML)
