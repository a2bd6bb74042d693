"""What an OTLP/HTTP server's answer means for the batch, as upstream reads it.

- 2xx: delivered. A partial success in the body (records the server
  rejected) is logged as a warning. A body whose ``Content-Type`` is exactly
  protobuf or JSON but that does not parse is a retryable error, as upstream
  (other types are not read).
- 429, 502, 503, 504: retryable (upstream's throttle error, ``Throttle (30s),
  error: …``). For 429 and 503, ``Retry-After`` in whole seconds (an HTTP
  date is ignored, as upstream) sets the least wait before the next attempt.
- 307 and 308 are followed by the sender; a 301, 302 or 303 names its
  ``Location``.
- Anything else: permanent. The error names the URL, the status and the
  ``google.rpc.Status`` message of the body when there is one, as the
  gRPC status error the HTTP status maps to (``rpc error: code = …``).
"""

from __future__ import annotations

import json
import re

from google.protobuf.message import DecodeError

from sluice.collector.component import ComponentLog
from sluice.collector.components.exporters.otlphttp.body import JSON, PROTOBUF
from sluice.collector.exporterhelper import ExportError, partial_success
from sluice.collector.exporterhelper.retry import throttled
from sluice.collector.rpc_status import code_for_http, parse_status, status_error_text
from sluice.policy import Signal
from sluice.transport.http_client import UpstreamResponse

_SECONDS = re.compile(r"[+-]?[0-9]+")
RETRYABLE_STATUSES = frozenset((429, 502, 503, 504))
THROTTLING_STATUSES = frozenset((429, 503))
"""The statuses whose ``Retry-After`` is honoured."""
MAX_BODY_READ = 64 * 1024
"""How much of a response body is read for a status or partial success."""


def header(response: UpstreamResponse, name: bytes) -> str:
    """The first value of header `name` (lower case), "" when absent."""
    for key, value in response.headers:
        if key.lower() == name:
            return value.decode("latin-1").strip()
    return ""


def retry_after(value: str) -> int:
    """The whole seconds of a ``Retry-After`` value as upstream reads it
    (``strconv.Atoi``: an optional sign and decimal digits); 0 for anything
    else, an HTTP date included."""
    if _SECONDS.fullmatch(value) is None:
        return 0
    seconds = int(value)
    return seconds if -(2**63) <= seconds < 2**63 else 0


def failure(url: str, response: UpstreamResponse, note: str = "") -> ExportError:
    """The ExportError for a non-2xx answer (`note`: why a redirect was not followed)."""
    status = response.status
    message = f"error exporting items, request to {url} responded with HTTP Status Code {status}"
    if note:
        message += f", {note}"
    message += _status_text(response)
    # Upstream returns it as the gRPC status its HTTP status maps to.
    code = code_for_http(status)
    message = status_error_text(code, message)
    if status not in RETRYABLE_STATUSES:
        return ExportError(message, retryable=False, code=code)
    seconds = 0
    if status in THROTTLING_STATUSES:
        seconds = retry_after(header(response, b"retry-after"))
    # Upstream returns it as exporterhelper's throttle error, whose text
    # names the delay (0s: none, the retry policy's own backoff).
    message = throttled(message, seconds)
    delay = float(seconds) if seconds > 0 else None
    return ExportError(message, retryable=True, retry_after=delay, code=code)


def _status_text(response: UpstreamResponse) -> str:
    """The Status in a 4xx/5xx body, as upstream reads it: protobuf whatever
    the ``Content-Type`` (no body is an empty Status); "" when it is not one."""
    if not 400 <= response.status <= 599:
        return ""
    status = parse_status(response.body[:MAX_BODY_READ])
    if status is None:
        return ""
    return f", Message={status.message}, Details={list(status.detail_types)}"


def check_partial_success(signal: Signal, response: UpstreamResponse, logger: ComponentLog) -> None:
    """Warn about records a 2xx answer says were rejected; raises a
    retryable ExportError when the body does not parse (upstream's ``error
    parsing <kind> response: <why>``). As upstream, the ``Content-Type`` must
    be exactly one of the two (no parameters)."""
    body = response.body[:MAX_BODY_READ]
    content_type = header(response, b"content-type")
    if not body or content_type not in (PROTOBUF, JSON):
        return
    try:
        if content_type == PROTOBUF:
            parsed = partial_success.RESPONSES[signal].FromString(body)
            message, rejected = partial_success.from_message(signal, parsed)
        else:
            # Upstream's reader stops after the first value: trailing bytes
            # do not make a delivered batch an error (and a duplicate).
            document, _ = json.JSONDecoder().raw_decode(body.decode("utf-8").lstrip())
            message, rejected = partial_success.from_json(signal, document)
    except (DecodeError, ValueError, TypeError, AttributeError) as unreadable:
        kind = "protobuf" if content_type == PROTOBUF else "json"
        raise ExportError(f"error parsing {kind} response: {unreadable}", retryable=True) from None
    partial_success.warn(signal, message, rejected, logger)
