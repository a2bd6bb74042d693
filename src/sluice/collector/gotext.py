"""The text forms upstream's health endpoints answer with, as Go writes them:
times as ``encoding/json`` marshals a ``time.Time`` (RFC 3339 with up to nine
fraction digits, local offset or ``Z``), durations as ``time.Duration.String``
(``1h2m3.5s``, ``1.5ms``, ``0s``), and JSON as ``encoding/json`` (compact,
HTML-safe escapes, raw UTF-8). Probes and dashboards parse these bodies, so
they keep Go's exact shape."""

from __future__ import annotations

import json
import os
import socket
from datetime import datetime
from typing import Any

from sluice.gostrconv import quoted
from sluice.transport.header_rules import valid_header_name, valid_header_value
from sluice.transport.http_client import UpstreamError, UpstreamUnreachable

ZERO_TIME = "0001-01-01T00:00:00Z"
"""Go's zero ``time.Time``: what an unset timestamp marshals to."""

_NS_PER_SECOND = 1_000_000_000


def _fraction(nanos: int, digits: int) -> str:
    """``.123`` for the first `digits` digits of `nanos`, trailing zeros cut."""
    text = str(nanos).rjust(digits, "0").rstrip("0")
    return "." + text if text else ""


def go_time(unix_ns: int) -> str:
    """A wall-clock time in nanoseconds since the epoch; 0 is Go's zero time."""
    if unix_ns == 0:
        return ZERO_TIME
    seconds, nanos = divmod(unix_ns, _NS_PER_SECOND)
    local = datetime.fromtimestamp(seconds).astimezone()
    offset = local.utcoffset()
    minutes = int(offset.total_seconds()) // 60 if offset else 0
    if minutes == 0:
        zone = "Z"
    else:
        sign = "+" if minutes > 0 else "-"
        zone = f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
    return local.strftime("%Y-%m-%dT%H:%M:%S") + _fraction(nanos, 9) + zone


def go_duration(ns: int) -> str:
    """``time.Duration(ns).String()``."""
    if ns == 0:
        return "0s"
    sign, ns = ("-", -ns) if ns < 0 else ("", ns)
    if ns < 1_000:
        return f"{sign}{ns}ns"
    if ns < 1_000_000:
        return f"{sign}{ns // 1_000}{_fraction(ns % 1_000, 3)}µs"
    if ns < _NS_PER_SECOND:
        return f"{sign}{ns // 1_000_000}{_fraction(ns % 1_000_000, 6)}ms"
    total_seconds, nanos = divmod(ns, _NS_PER_SECOND)
    hours, rest = divmod(total_seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    text = f"{seconds}{_fraction(nanos, 9)}s"
    if hours:
        return f"{sign}{hours}h{minutes}m{text}"
    if minutes:
        return f"{sign}{minutes}m{text}"
    return sign + text


_HTML_SAFE = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def go_json(value: Any, sort_keys: bool = False) -> bytes:
    """``json.Marshal(value)`` with Go's escapes (these characters only occur
    inside strings, so escaping after dumping is safe). Go sorts a map's keys
    and keeps a struct's fields in declaration order: build struct-like dicts
    in that order, or pass `sort_keys` when every dict is a map."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys)
    return text.translate(_HTML_SAFE).encode("utf-8", "replace")


_NOT_FOUND = frozenset((socket.EAI_NONAME, getattr(socket, "EAI_NODATA", socket.EAI_NONAME)))
"""getaddrinfo's answers for a name with no address: Go's ``no such host``."""


def go_errno(number: int | None, fallback: str) -> str:
    """A system error as Go's ``syscall.Errno`` writes it on Linux: the C
    library's message, first letter lower-cased (``connection refused``)."""
    if not number or number < 0:
        return fallback
    text = os.strerror(number)
    return text[:1].lower() + text[1:]


def go_dial_error(host: str, address: tuple[str, int] | None, cause: OSError) -> str:
    """What Go's TCP dialer returns when no connection could be made:
    ``dial tcp 127.0.0.1:4318: connect: connection refused`` for the first
    resolved `address` (`cause` its failure), or ``dial tcp: lookup <host>:
    no such host`` when `host` did not resolve (`address` None)."""
    if address is None:
        if isinstance(cause, socket.gaierror) and cause.errno in _NOT_FOUND:
            return f"dial tcp: lookup {host}: no such host"
        reason = str(cause.strerror or cause)
        return f"dial tcp: lookup {host}: {reason[:1].lower()}{reason[1:]}"
    ip, port = address
    joined = f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"
    return go_connect_error(joined, go_errno(cause.errno, str(cause)))


def go_connect_error(address: str, reason: str) -> str:
    """Go's dialer's error for a connect to `address` (``host:port``, an
    IPv6 host in brackets) that failed with `reason` (Go's errno text)."""
    return f"dial tcp {address}: connect: {reason}"


_ERRNO_TEXTS = {os.strerror(number): number for number in range(1, 134)}


def errno_of(text: str) -> int | None:
    """The errno whose C library message `text` is (None if none is)."""
    return _ERRNO_TEXTS.get(text)


def go_header_problem(name: str, value: str) -> str | None:
    """Go's ``net/http`` error for a request carrying the header `name`:
    `value` (the value never shown), or None when it can be sent."""
    if not valid_header_name(name):
        return f"net/http: invalid header field name {quoted(name)}"
    if not valid_header_value(value):
        canonical = "-".join(part[:1].upper() + part[1:].lower() for part in name.split("-"))
        return f"net/http: invalid header field value for {quoted(canonical)}"
    return None


def go_client_reason(host: str, failed: UpstreamError) -> str:
    """Why a request to `host` got no answer, as Go's client words it where
    Sluice knows its words: a connection that could not be made as Go's
    dialer (:func:`go_dial_error`), anything else as the pool says it."""
    if isinstance(failed, UpstreamUnreachable):
        return go_dial_error(host, failed.address, failed.cause)
    return str(failed)
