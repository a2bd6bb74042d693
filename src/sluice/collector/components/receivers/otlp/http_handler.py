"""OTLP/HTTP: the handler the shared HTTP server runs for the receiver.

Checks run in upstream's order, each with upstream's answer (CORS preflight
and authentication come first, in :mod:`sluice.collector.confighttp`: a
refused credential is a plain-text ``401 Unauthorized``): ``Content-Encoding`` (400, also when a
gzip or zlib header does not read: :mod:`.content_encoding`), the path (301
to the clean one, as Go's ``ServeMux``, when it has empty, ``.`` or ``..``
segments; 404: only the signals some pipeline uses have one), the method
(405), the media type (415), then the body is decompressed (within
``max_request_body_size``: 400 past it, as sent or decompressed; 400 with
Go's error when it is corrupt, or when the body could not be read whole:
cut short, timed out, badly chunked), decoded once into the pipeline's message
(400 with a ``google.rpc.Status`` when it is not an export request) and
exported. The answer is an export response, or a Status, in the request's
format.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from sluice.collector import pdata
from sluice.collector.components.receivers.otlp import content_encoding
from sluice.collector.components.receivers.otlp.config import HttpConfig, url_path
from sluice.collector.components.receivers.otlp.ingest import Ingest
from sluice.collector.components.receivers.otlp.status import (
    JSON,
    PROTOBUF,
    Refusal,
    code_for_http,
    status_body,
)
from sluice.collector.servemux import not_found, redirect_answer
from sluice.policy import Signal
from sluice.telemetry import compression, otlp_pbjson
from sluice.transport.http_message import Headers, Request, Response

EXPORT_RESPONSE = {PROTOBUF: b"\x0a\x00", JSON: b'{"partialSuccess":{}}'}
"""An Export*ServiceResponse with an empty partial success, as upstream writes it."""
BODY_TOO_LARGE = "http: request body too large"
"""Go's error for a body past ``max_request_body_size``, which upstream answers with 400."""
_FALLBACK = b'{"code": 13, "message": "failed to marshal error message"}'
"""Upstream's answer to an error it cannot encode (the request's media type is unknown)."""


class OtlpHttpHandler:
    """Serves ``POST <path>`` for each signal that has an :class:`Ingest`."""

    def __init__(self, config: HttpConfig, ingests: Mapping[Signal, Ingest]):
        paths = {
            Signal.TRACE: config.traces_url_path,
            Signal.METRIC: config.metrics_url_path,
            Signal.LOG: config.logs_url_path,
        }
        self._routes = {url_path(paths[signal]): ingest for signal, ingest in ingests.items()}
        self._limit = config.max_body_bytes
        self._encodings = frozenset(config.compression_algorithms)

    async def __call__(self, request: Request) -> Response:
        checked = self._check_head(
            request.method,
            request.path,
            request.headers,
            request.body,
            request.query,
            request.body_error,
        )
        if isinstance(checked, Response):
            return checked
        ingest, media, encoding = checked
        if request.body_error:  # upstream's read of the body fails: its 400
            return _error(media, 400, request.body_error)
        try:
            body = content_encoding.decompress(encoding, request.body, self._limit)
        except compression.BodyTooLarge:
            return _error(media, 400, BODY_TOO_LARGE)
        except compression.CorruptBody as problem:
            return _error(media, 400, str(problem))
        try:
            message = _decode(ingest.signal, media, body)
        except ValueError as problem:
            return _error(media, 400, str(problem))
        del body
        refusal = await ingest.export(message)
        if refusal is not None:
            return _refused(media, refusal)
        return Response(200, EXPORT_RESPONSE[media], content_type=media.encode())

    def too_large(self, method: str, path: str, headers: Mapping[bytes, bytes]) -> Response:
        """The answer to a request whose body, as sent, is past the limit:
        what the checks before the body give, else upstream's 400."""
        checked = self._check_head(method, path, headers)
        if isinstance(checked, Response):
            return checked
        return _error(checked[1], 400, BODY_TOO_LARGE)

    def _check_head(
        self,
        method: str,
        path: str,
        headers: Mapping[bytes, bytes],
        body: bytes | None = None,
        query: str | None = None,
        body_error: str = "",
    ) -> Response | tuple[Ingest, str, str]:
        """The checks made before the body is decoded, in upstream's order
        (those of its decompressor first, on the `body` when given, which
        `body_error` may have cut short): an error answer, or the signal's
        ingest, the media type and the encoding."""
        # Matched as written, as upstream does: `GZIP` and `identity` are not accepted.
        encoding = (headers.get(b"content-encoding") or b"").decode("latin-1").strip()
        if encoding not in self._encodings or encoding not in content_encoding.CODECS:
            return error_answer(headers, 400, f"unsupported Content-Encoding: {encoding}")
        opening = None if body is None else content_encoding.opening_problem(encoding, body)
        if opening in content_encoding.SHORT and body_error:
            opening = body_error  # the header's read met the body's error
        if opening is not None:
            return error_answer(headers, 400, opening)
        redirected = redirect_answer(method, path, query, self._routes)
        if redirected is not None:
            return redirected
        if "%" in path:
            path = unquote(path)
        ingest = self._routes.get(path)
        if ingest is None:
            return not_found()  # upstream's mux
        if method != "POST":
            return Response(
                405,
                b"405 method not allowed, supported: [POST]",
                [(b"Allow", b"POST")],
                content_type=b"text/plain",
            )
        media = _media_type(headers.get(b"content-type"))
        if media is None:
            return Response(
                415,
                b"415 unsupported media type, supported: [application/json, application/x-protobuf]",
                content_type=b"text/plain",
            )
        return ingest, media, encoding


def _media_type(content_type: bytes | None) -> str | None:
    """PROTOBUF or JSON, None for anything else: upstream's
    ``mime.ParseMediaType``, so parameters must parse (:func:`go_media_type`)."""
    if content_type is None:
        return None
    media = go_media_type(content_type.decode("latin-1"))
    return media if media in (PROTOBUF, JSON) else None


_TOKEN = r"[!#$%&'*+\-.^_`{|}~0-9A-Za-z]+"
_MEDIA = re.compile(rf"{_TOKEN}(?:/{_TOKEN})?")
_PARAMETER = re.compile(
    rf"""\s*;\s*({_TOKEN})\s*=\s*(?:({_TOKEN})|"((?:[^"\\\r\n]|\\[()<>@,;:\\"/\[\]?=]|\\)*+)")"""
)
"""``; name=value``, the value a token or a quoted string (a backslash escapes
only a special character, as in Go's ``mime`` package)."""
_ESCAPED = re.compile(r'\\([()<>@,;:\\"/\[\]?=])')


def go_media_type(value: str) -> str | None:
    """The lowercased media type of a ``Content-Type`` value, as Go's
    ``mime.ParseMediaType`` reads it, or None where Go reports an error: a
    type that is not ``token[/token]``, a parameter that is not ``;
    name=value`` (a trailing ``;`` is allowed), or a name given twice with
    different values."""
    media, separator, rest = value.partition(";")
    media = media.lower().strip()
    if not _MEDIA.fullmatch(media):
        return None
    rest = separator + rest
    seen: dict[str, str] = {}
    while rest.strip():
        parameter = _PARAMETER.match(rest)
        if parameter is None:
            return None if rest.strip() != ";" else media
        name, token, quoted = parameter.groups()
        text = token if token is not None else _ESCAPED.sub(r"\1", quoted)
        if seen.setdefault(name.lower(), text) != text:
            return None
        rest = rest[parameter.end() :]
    return media


def error_answer(request: Request | Mapping[bytes, bytes], status: int, message: str) -> Response:
    """An error answered before the media type is checked (an unaccepted
    ``Content-Encoding``), from the request or its
    lowered headers: a Status in the request's format, JSON when it names
    none (upstream's error handler, which the receiver also gives its
    confighttp server)."""
    headers = request.headers if isinstance(request, Request) else request
    content_type = headers.get(b"content-type")
    return _error(JSON if not content_type else _media_type(content_type), status, message)


def _decode(signal: Signal, media: str, body: bytes) -> Any:
    if media == JSON:
        return otlp_pbjson.from_json(signal, body)
    try:
        return pdata.parse(signal, body)
    except pdata.PdataError as problem:
        raise ValueError(str(problem)) from None
    except Exception as problem:  # DecodeError: not an export request
        raise ValueError(f"not a protobuf export request: {problem}") from None


def _error(media: str | None, status: int, message: str) -> Response:
    """An HTTP-level error as a Status in the request's format."""
    if media is None:
        return Response(500, _FALLBACK, content_type=JSON.encode())
    return Response(
        status, status_body(media, code_for_http(status), message), content_type=media.encode()
    )


def _refused(media: str, refusal: Refusal) -> Response:
    headers: Headers = []
    # COLLECTOR.md section 2: back-pressure is 503 or 429 with Retry-After
    # (upstream sends none), whenever the delay is known: a refusal of our
    # own, or a backend's answer an exporter without a queue passes on.
    if refusal.retry_after is not None and refusal.http_status in (429, 503):
        seconds = max(1, math.ceil(refusal.retry_after))
        headers.append((b"Retry-After", str(seconds).encode()))
    return Response(
        refusal.http_status,
        status_body(media, refusal.code, refusal.message),
        headers,
        content_type=media.encode(),
    )
