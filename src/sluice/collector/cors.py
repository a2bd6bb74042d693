"""Cross-origin requests, answered as upstream's confighttp does (rs/cors v1.11 with
``AllowCredentials``): a preflight (``OPTIONS`` with
``Access-Control-Request-Method``) is answered 204 at once, before
authentication; other requests from an allowed origin get
``Access-Control-Allow-Origin`` on their answer. A request that is not allowed
gets no CORS headers (the browser then refuses it)."""

from __future__ import annotations

from dataclasses import dataclass, field

from sluice.transport.http_message import Headers, Request, Response

_SIMPLE_METHODS = frozenset({"GET", "POST", "HEAD"})
_DEFAULT_HEADERS = ("accept", "content-type", "x-requested-with")
_ASKED_HEADERS = b"access-control-request-headers"
_OWS = b" \t"
_MOST_EMPTY_NAMES = 16
"""Empty elements rs/cors tolerates in ``Access-Control-Request-Headers``."""
_PREFLIGHT_VARY = b"Origin, Access-Control-Request-Method, Access-Control-Request-Headers"


@dataclass
class CorsConfig:
    """``cors``: applied when `allowed_origins` is not empty."""

    allowed_origins: list[str] = field(default_factory=list)
    allowed_headers: list[str] = field(default_factory=list)
    max_age: int = 0


class CorsPolicy:
    """Which origins, methods and request headers are allowed."""

    def __init__(self, config: CorsConfig):
        origins = [o.lower() for o in config.allowed_origins]
        self._any_origin = "*" in origins
        self._origins = frozenset(o for o in origins if "*" not in o)
        self._patterns = [tuple(o.split("*", 1)) for o in origins if "*" in o and o != "*"]
        headers = [h.lower() for h in config.allowed_headers]
        self._any_header = "*" in config.allowed_headers
        names = sorted(set(headers or _DEFAULT_HEADERS))
        self._header_rank = {name.encode("latin-1"): rank for rank, name in enumerate(names)}
        self._max_age = (
            str(config.max_age).encode()
            if config.max_age > 0
            else b"0"
            if config.max_age < 0
            else b""
        )

    @staticmethod
    def is_preflight(request: Request) -> bool:
        return request.method == "OPTIONS" and bool(
            request.header(b"access-control-request-method")
        )

    def preflight(self, request: Request) -> Response:
        headers: Headers = [(b"Vary", _PREFLIGHT_VARY)]
        response = Response(204, b"", headers, content_type=None)
        origin = request.header(b"origin")
        method = request.header(b"access-control-request-method") or b""
        asked = [value for name, value in request.lines if name.lower() == _ASKED_HEADERS]
        if not origin or not self._origin_allowed(origin):
            return response
        if method.decode("latin-1") not in _SIMPLE_METHODS and method != b"OPTIONS":
            return response
        if asked and not self._headers_allowed(asked):
            return response
        headers.append((b"Access-Control-Allow-Origin", self._allow_origin(origin)))
        headers.append((b"Access-Control-Allow-Methods", method))
        if asked and asked[0]:
            headers.extend((b"Access-Control-Allow-Headers", value) for value in asked)
        headers.append((b"Access-Control-Allow-Credentials", b"true"))
        if self._max_age:
            headers.append((b"Access-Control-Max-Age", self._max_age))
        return response

    def decorate(self, request: Request, response: Response) -> None:
        """Add the CORS headers an actual (not preflight) request's answer carries."""
        response.headers.append((b"Vary", b"Origin"))
        origin = request.header(b"origin")
        if not origin or not self._origin_allowed(origin):
            return
        if request.method not in _SIMPLE_METHODS and request.method != "OPTIONS":
            return
        response.headers.append((b"Access-Control-Allow-Origin", self._allow_origin(origin)))
        response.headers.append((b"Access-Control-Allow-Credentials", b"true"))

    def _allow_origin(self, origin: bytes) -> bytes:
        return b"*" if self._any_origin else origin

    def _origin_allowed(self, origin: bytes) -> bool:
        if self._any_origin:
            return True
        text = origin.decode("latin-1").lower()
        if text in self._origins:
            return True
        return any(
            len(text) >= len(prefix) + len(suffix)
            and text.startswith(prefix)
            and text.endswith(suffix)
            for prefix, suffix in self._patterns
        )

    def _headers_allowed(self, asked: list[bytes]) -> bool:
        """Whether the ``Access-Control-Request-Headers`` lines name allowed
        headers as rs/cors reads them: the list the Fetch standard defines
        (lowercase names, sorted, each once), at most one space or tab
        around each name, a few empty elements tolerated."""
        if self._any_header:
            return True
        last = -1
        empty = 0
        for line in asked:
            for element in line.split(b","):
                name = _trimmed(element)
                if name is None:
                    return False
                if not name:
                    empty += 1
                    if empty > _MOST_EMPTY_NAMES:
                        return False
                    continue
                rank = self._header_rank.get(name)
                if rank is None or rank <= last:
                    return False
                last = rank
        return True


def _trimmed(element: bytes) -> bytes | None:
    """`element` without the optional whitespace rs/cors tolerates around a
    name (one byte each side; an element of nothing else, up to two), or
    None when there is more."""
    name = element.strip(_OWS)
    if not name:
        return name if len(element) <= 2 else None
    if len(element) - len(element.rstrip(_OWS)) > 1 or len(element) - len(element.lstrip(_OWS)) > 1:
        return None
    return name
