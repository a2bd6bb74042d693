"""Sending batches to an OTLP/HTTP endpoint: one POST per batch through
Edge's pooled HTTP/1.1 client (:class:`~sluice.transport.http_client.UpstreamPool`).

The pool sends a request again on its own in one case only: a pooled
connection closed before a byte of the answer arrived (an idle close that
crossed the request), once, on a fresh connection. Any other failure is an
error here, and only the retry policy sends the batch again, after its
backoff.

A 307 or 308 answer is followed as Go's client follows it: the same POST,
body and headers (the configured ones and the authenticator's, which Go's
round trippers add to every hop) to the ``Location``, relative to the URL
that answered, at most 10 times in a row. Go turns a POST answered with 301,
302 or 303 into a GET without the body, which no OTLP server accepts (or, if
it answers 2xx, loses the batch unnoticed): those are permanent errors here,
naming the ``Location``.
"""

from __future__ import annotations

import base64
import logging
import ssl
import string
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

from sluice.collector.component import SIGNAL_NAMES, Host, Settings
from sluice.collector.components.exporters.otlphttp import body, response
from sluice.collector.components.exporters.otlphttp.config import OtlpHttpConfig
from sluice.collector.configauth import ClientAuthenticator, client_authenticator
from sluice.collector.confmap.decode import reveal
from sluice.collector.exporterhelper import Attempt, ExportError, Sender
from sluice.collector.exporterhelper.exporter import USER_AGENT, user_agent
from sluice.collector.gotext import go_client_reason, go_header_problem
from sluice.gostrconv import quoted
from sluice.policy import Signal
from sluice.transport.http_client import (
    UpstreamError,
    UpstreamPool,
    UpstreamResponse,
    UpstreamTimeout,
)

MAX_REDIRECTS = 10
"""Redirects followed in a row, as Go's default client."""
MAX_POOLS = 16
"""Origins with open pools; past it, the redirect targets' pools are closed."""
_FOLLOWED = frozenset((307, 308))
"""Redirects that keep the method and the body."""
_REDIRECTS = frozenset((301, 302, 303, 307, 308))

_MANAGED_HEADERS = frozenset((b"host", b"content-length", b"transfer-encoding", b"connection"))
"""Headers the client writes itself; configured values for them are ignored."""


def _header_block(headers: dict[str, str]) -> bytes:
    """Header lines; values are written as UTF-8, as Go writes its strings."""
    return b"".join(
        b"%s: %s\r\n" % (name.encode("latin-1"), value.encode("utf-8"))
        for name, value in headers.items()
        if name.encode("latin-1").lower() not in _MANAGED_HEADERS
    )


_HOST_CHARS = frozenset(string.ascii_letters + string.digits + "!$%&'()*+,-.:;=[]_~")
"""What Go's client allows in a ``Host`` header (httpguts.ValidHostHeader)."""


def _unsendable(headers: dict[str, str]) -> str | None:
    """Why Go's client refuses every request carrying `headers` (a name that
    is not a token, a value with a control character, a bad ``Host``), as
    it words it; None when they can be sent. Upstream loads such a config
    and fails each request, so does Sluice."""
    for name, value in headers.items():
        problem = go_header_problem(name, value)
        if problem is not None:
            return problem
    if not set(headers.get("Host", "")) <= _HOST_CHARS:
        return "http: invalid Host header"
    return None


_CLIENT_TIMEOUT = "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
"""What Go's client says of a request that ran out of time."""


def _request_failed(url: str, problem: str, redact: bool = True) -> ExportError:
    """A request that got no answer, as upstream words it (Go's client
    errors read ``Post "<url>": <problem>``, the URL's password redacted
    unless `redact` is false): retryable."""
    named = _redacted(url) if redact else url
    return ExportError(
        f"failed to make an HTTP request: Post {quoted(named)}: {problem}", retryable=True
    )


def _redacted(url: str) -> str:
    """`url` with its userinfo's password as Go's client errors write it
    (stripPassword: the unescaped username, then ``:***@``); unchanged
    without a password."""
    scheme, slashes, rest = url.partition("://")
    authority_end = min((i for i in map(rest.find, "/?#") if i >= 0), default=len(rest))
    userinfo, at, host = rest[:authority_end].rpartition("@")
    if not slashes or not at or ":" not in userinfo:
        return url
    username = unquote(userinfo.partition(":")[0])
    return f"{scheme}://{username}:***@{host}{rest[authority_end:]}"


class _Route:
    """Where one signal's batches go."""

    def __init__(self, url: str, pool: UpstreamPool):
        parts = urlsplit(url)
        self.url = url
        self.pool = pool
        self.path = parts.path or "/"
        # Go's URL keeps a ``?`` with nothing after it (ForceQuery); urlsplit does not.
        self.query = parts.query or ("" if "?" in url.partition("#")[0] else None)
        self.basic_auth = _basic_auth(parts.netloc)


def _basic_auth(netloc: str) -> bytes:
    """The Authorization line Go's client adds for a URL's userinfo
    (``user:password@``, unescaped) when the request has none; b"" without."""
    userinfo, at, _ = netloc.rpartition("@")
    if not at:
        return b""
    username, _, password = userinfo.partition(":")
    credentials = f"{unquote(username)}:{unquote(password)}".encode()
    return b"Authorization: Basic %s\r\n" % base64.b64encode(credentials)


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    return (parts.scheme, parts.hostname or "", parts.port)


class OtlpHttpSender(Sender):
    def __init__(self, config: OtlpHttpConfig, signals: frozenset[Signal], settings: Settings):
        self.config = config
        self.loggers = {signal: settings.signal_logger(signal) for signal in signals}
        """Each signal's, as upstream makes an exporter per signal."""
        for signal in signals:
            if not config.signal_url(signal):
                name = SIGNAL_NAMES[signal]
                raise ValueError(f"either endpoint or {name}_endpoint must be specified")
        self.signals = signals
        self._use_headers(USER_AGENT)
        self.routes: dict[Signal, _Route] = {}
        self.pools: dict[tuple[str, str, int | None], UpstreamPool] = {}
        """One pool per origin: the signals' URLs and the redirects' targets."""
        self.tls: ssl.SSLContext | None = None
        self.authenticator: ClientAuthenticator | None = None

    def _use_headers(self, agent: str) -> None:
        """The headers of every request, with `agent` as the User-Agent.
        A configured header replaces the exporter's own of the same name (Go
        canonicalizes names: `user-agent` is `User-Agent`), as upstream;
        Content-Encoding stays the one that matches the body."""
        config = self.config
        written = {name: reveal(value) for name, value in config.headers.items()}
        configured = {
            name: value for name, value in written.items() if name.lower() != "content-encoding"
        }
        named = {name.lower() for name in configured}
        headers = {
            name: value
            for name, value in (
                ("Content-Type", body.content_type(config.encoding)),
                ("User-Agent", agent),
            )
            if name.lower() not in named
        }
        if body.is_compressed(config.compression):
            headers["Content-Encoding"] = config.compression
        headers.update(configured)
        self.unsendable = _unsendable(written)
        self.headers = b"" if self.unsendable else _header_block(headers)
        self.header_values = headers
        self.header_names = frozenset(name.lower() for name in headers)
        self.host_header = "" if self.unsendable else written.get("Host", "")

    async def start(self, host: Host) -> None:
        # Upstream names the running distribution (its BuildInfo).
        self._use_headers(user_agent(host.build_info))
        self.authenticator = client_authenticator(self.config.auth, host, "HTTP")
        # `insecure` does not apply to HTTP: the URL's scheme says whether TLS
        # is used, as upstream. Raises TLSError (a ValueError).
        self.tls = self.config.tls.https_context()
        for signal in self.signals:
            url = self.config.signal_url(signal)
            self.routes[signal] = _Route(url, self._pool(url))

    def _pool(self, url: str) -> UpstreamPool:
        """The pool of `url`'s origin (raises ValueError for a URL that is
        not http(s) with a host)."""
        origin = _origin(url)
        pool = self.pools.get(origin)
        if pool is None:
            parts = urlsplit(url)
            pool = self.pools[origin] = UpstreamPool(
                f"{parts.scheme}://{parts.netloc}",
                # Go's client has a deadline only for a timeout above 0.
                self.config.timeout if self.config.timeout > 0 else 365 * 86400.0,
                max_idle=self.config.max_idle_conns_per_host or 64,
                tls=self.tls,
                server_name=self.config.tls.server_name_override,
                # Upstream's header round tripper sets the request's Host from
                # a header configured as exactly "Host", on every hop.
                host_header=self.host_header,
            )
        return pool

    async def prepare(self, signal: Signal, data: Any) -> Attempt:
        try:
            encoded = body.encode(signal, data, self.config.encoding)
        except (ValueError, TypeError) as unencodable:
            raise ExportError(f"cannot encode the batch: {unencodable}", retryable=False) from None
        del data  # only the bytes are needed from here on: free the message
        payload = await body.compress(self.config.compression, encoded)
        del encoded
        route = self.routes[signal]

        async def attempt() -> None:
            await self._post(signal, route, payload)

        return attempt

    def _signed(self, signed: Mapping[str, str]) -> bytes:
        """The header block with the authenticator's headers, which replace
        configured ones of the same name (upstream's auth round tripper sets
        its header after the headers round tripper has set the configured)."""
        replaced = {name.lower() for name in signed}
        if replaced.isdisjoint(self.header_names):
            return self.headers + _header_block(dict(signed))
        kept = {k: v for k, v in self.header_values.items() if k.lower() not in replaced}
        return _header_block(kept) + _header_block(dict(signed))

    async def _post(self, signal: Signal, route: _Route, payload: bytes) -> None:
        logger = self.loggers[signal]
        if logger.isEnabledFor(logging.DEBUG):  # as upstream, before each request
            fields = {"url": route.url}
            logger.debug("Preparing to make HTTP request", extra={"fields": fields})
        if self.unsendable:
            raise _request_failed(route.url, self.unsendable)
        headers, named = self.headers, self.header_names
        if self.authenticator is not None:
            signed = self.authenticator.request_headers()
            headers = self._signed(signed)
            named = named | {name.lower() for name in signed}
        # Go's client writes a URL's credentials before the round trippers
        # that set the configured and the authenticator's headers.
        from_url = "authorization" not in named
        redirects = 0
        while True:
            sent = headers + route.basic_auth if from_url else headers
            try:
                answer = await route.pool.request("POST", route.path, route.query, sent, payload)
            except UpstreamTimeout:
                raise _request_failed(route.url, _CLIENT_TIMEOUT) from None
            except UpstreamError as problem:
                reason = go_client_reason(route.pool.host, problem)
                raise _request_failed(route.url, reason) from None
            if 200 <= answer.status <= 299:
                response.check_partial_success(signal, answer, logger)
                return
            if answer.status not in _REDIRECTS:
                raise response.failure(route.url, answer)
            if redirects == MAX_REDIRECTS:
                # Go's client names the Location it did not follow, as sent
                # (its url.Error's URL is set to it, not stripped).
                location = response.header(answer, b"location")
                raise _request_failed(
                    location, f"stopped after {MAX_REDIRECTS} redirects", redact=False
                )
            redirects += 1
            route = self._redirected(route, answer)

    def _redirected(self, route: _Route, answer: UpstreamResponse) -> _Route:
        """Where a 307 or 308 `answer` sends the batch; raises the
        ExportError of a redirect that is not followed."""
        location = response.header(answer, b"location")
        if not location:
            raise response.failure(route.url, answer)
        if answer.status not in _FOLLOWED:
            note = f"Location={location} (only 307 and 308 redirects are followed)"
            raise response.failure(route.url, answer, note)
        url = urljoin(route.url, location)
        if _origin(url) not in self.pools and len(self.pools) >= MAX_POOLS:
            self._forget_redirect_pools()
        try:
            return _Route(url, self._pool(url))
        except ValueError:
            note = f"Location={location} (not an http or https URL)"
            raise response.failure(route.url, answer, note) from None

    def _forget_redirect_pools(self) -> None:
        """Close the pools that only redirects use."""
        kept = {_origin(route.url) for route in self.routes.values()}
        for origin in [o for o in self.pools if o not in kept]:
            self.pools.pop(origin).close()

    async def close(self) -> None:
        for pool in self.pools.values():
            pool.close()
