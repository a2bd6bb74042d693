"""What Edge does with each request (EDGE.md section 2).

Filtered routes decode, evaluate against the registry's current snapshot and
forward what survives in the format and encoding it arrived in; everything
else is proxied unchanged. Fail open: a body that cannot be read, or a policy
that fails at run time, means the original bytes go upstream untouched.
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any

from sluice.edge import datadog_intake as intake
from sluice.edge.config import EdgeConfig
from sluice.edge.filtering import (
    Decoder,
    Verdict,
    datadog_decoder,
    decode_agent_sketches,
    filter_body,
    otlp_decoder,
    unknown_media,
)
from sluice.edge.group import WorkerGroup
from sluice.edge.metrics import TELEMETRY_TYPES, EdgeMetrics
from sluice.edge.status import EdgeStatus
from sluice.logs import redact_url
from sluice.policy import Signal
from sluice.providers import PolicyRegistry, Provider
from sluice.telemetry import otlp_codec
from sluice.transport.http_client import UpstreamError, UpstreamPool, UpstreamTimeout, relay_headers
from sluice.transport.http_message import Request, Response, json_error

log = logging.getLogger(__name__)

OTLP_ROUTES = {"/v1/logs": Signal.LOG, "/v1/metrics": Signal.METRIC, "/v1/traces": Signal.TRACE}
AGENT_CONNECTIVITY_CHECK = b"{}"
"""What the Agent's logs pipeline posts at start-up to check that it can reach
its intake (an object, where logs are an array)."""
_MEDIA = {
    b"application/x-protobuf": otlp_codec.PROTOBUF,
    b"application/protobuf": otlp_codec.PROTOBUF,
    b"application/json": otlp_codec.JSON,
}


def _media(request: Request) -> str | None:
    raw = request.header(b"content-type")
    if raw is None:
        return None
    return _MEDIA.get(raw.split(b";", 1)[0].strip().lower())


def _datadog_media(request: Request, default: str) -> str | None:
    """The media type of a Datadog intake request: `default` when it names
    none (what the route's clients send), None when it names one Edge does
    not read (text/plain and logplex log lines are raw messages to the intake)."""
    if request.header(b"content-type") is None:
        return default
    return _media(request)


def _encoding(request: Request) -> str:
    raw = request.header(b"content-encoding")
    return raw.decode("latin-1").strip().lower() if raw else ""


DATADOG_ACCEPTED = Response(202, b"{}")
"""Datadog's answer to an accepted intake request (also when every record is dropped)."""
_LOCAL_ONLY = json_error(
    405, "answered by Edge itself, never proxied: use GET or HEAD", [(b"Allow", b"GET, HEAD")]
)
"""The answer to another method on a local route (EDGE.md section 2: answered
locally, never proxied)."""
_OTLP_EMPTY = {
    media: Response(200, otlp_codec.empty_response(media), content_type=media.encode())
    for media in set(_MEDIA.values())
}


class Exchange:
    """What one request did, for the debug line: records before and after the
    policies (-1: not evaluated) and the upstream's status (0: not called, or
    no answer)."""

    def __init__(self) -> None:
        self.records_in = -1
        self.records_out = -1
        self.upstream_status = 0

    def fields(self, route: str, status: int, seconds: float) -> dict[str, Any]:
        """The debug line's fields: no bodies, no headers, no query (keys may be there)."""
        fields: dict[str, Any] = {"route": route, "status": status}
        if self.records_in >= 0:
            fields["records_in"] = self.records_in
            fields["records_out"] = self.records_out
        if self.upstream_status:
            fields["upstream_status"] = self.upstream_status
        fields["duration_ms"] = round(seconds * 1000, 3)
        return fields


class Edge:
    """The request handler: routes, filtering, forwarding; the local routes
    (health, readiness, policies, metrics) are :class:`EdgeStatus`'s."""

    def __init__(
        self,
        config: EdgeConfig,
        registry: PolicyRegistry,
        providers: list[Provider],
        metrics: EdgeMetrics | None = None,
        distribution: str = "sluice-edge",
        group: WorkerGroup | None = None,
    ):
        self.config = config
        self.registry = registry
        self.providers = providers
        self.metrics = metrics or EdgeMetrics()
        self.distribution = distribution
        pools: dict[str, UpstreamPool] = {}

        def pool(url: str) -> UpstreamPool:
            if url not in pools:
                pools[url] = UpstreamPool(
                    url, config.upstream_timeout_secs, max_response_size=config.max_response_size
                )
            return pools[url]

        self.upstream = pool(config.upstream_url)
        self.logs_upstream = pool(config.datadog_logs_url)
        self.metrics_upstream = pool(config.datadog_metrics_url)
        self.api_upstream = pool(config.datadog_api_url)
        self.pools = list(pools.values())
        if config.datadog_routing:
            log.info(
                "Datadog intake: logs to %s, metrics to %s, other API calls to %s",
                redact_url(config.datadog_logs_url),
                redact_url(config.datadog_metrics_url),
                redact_url(config.datadog_api_url),
            )
        self.dd_api_key = os.environ.get("DD_API_KEY", "").encode()
        self.status = EdgeStatus(config, registry, providers, self.metrics, distribution, group)
        self.local = {
            "/_health": ("health", self.status.health),
            "/_ready": ("ready", self.status.ready),
            "/_policies": ("policies", self.status.policies),
            "/_metrics": ("metrics", self.status.metrics),
        }
        self.debug = log.isEnabledFor(logging.DEBUG)
        """Log one line per request (decided once: the check costs on every request)."""

    # -- entry point ---------------------------------------------------------------

    async def handle(self, request: Request) -> Response:
        started = time.perf_counter() if self.debug else 0.0
        exchange = Exchange()
        path, method = request.path, request.method
        local = self.local.get(path)
        if local is not None:
            route = local[0]
            response = local[1](request) if method in ("GET", "HEAD") else _LOCAL_ONLY
        elif method == "POST" and path in OTLP_ROUTES:
            route = path
            response = await self.otlp(request, OTLP_ROUTES[path], exchange)
        elif path == intake.LOGS_PATH:
            route = path
            response = await self.datadog_logs(request, exchange)
        elif path in intake.METRICS_PATHS:
            route = path
            response = await self.datadog_metrics(request, exchange)
        elif path.startswith(intake.API_PREFIXES):
            route = "datadog_api"
            response = await self.forward_datadog(self.api_upstream, request, exchange)
        elif path.startswith(intake.LEGACY_LOGS_PREFIX):
            route = "datadog_logs_legacy"
            response = await self.forward_datadog(self.logs_upstream, request, exchange)
        else:
            route = "passthrough"
            response = await self.forward(self.upstream, request, request.body, exchange)
        self.metrics.request(route, response.status)
        if self.debug:
            fields = exchange.fields(route, response.status, time.perf_counter() - started)
            log.debug("%s %s", method, intake.loggable_path(path), extra={"fields": fields})
        return response

    # -- forwarding ----------------------------------------------------------------

    async def forward(
        self,
        pool: UpstreamPool,
        request: Request,
        body: bytes,
        exchange: Exchange,
        extra: bytes = b"",
    ) -> Response:
        headers = request.forwarded + extra if extra else request.forwarded
        started = time.monotonic()
        try:
            answer = await pool.request(request.method, request.path, request.query, headers, body)
        except UpstreamTimeout as timeout:
            self.metrics.upstream_error("timeout")
            return json_error(504, str(timeout))
        except UpstreamError as failure:
            self.metrics.upstream_error("failed")
            return json_error(502, str(failure))
        self.metrics.upstream_latency(time.monotonic() - started)
        exchange.upstream_status = answer.status
        head = request.method == "HEAD"  # its Content-Length is the upstream's, as it came
        relayed, content_type = relay_headers(answer.headers, head)
        return Response(answer.status, answer.body, relayed, content_type, head)

    def _fail_open(self, request: Request, why: str) -> None:
        self.metrics.fail_open(request.path)
        log.warning("forwarding %s unevaluated: %s", intake.loggable_path(request.path), why)

    async def _filter(
        self,
        request: Request,
        signal: Signal,
        pool: UpstreamPool,
        telemetry_type: str,
        decode: Decoder,
        all_dropped: Response,
        exchange: Exchange,
        extra: bytes = b"",
        encoding: str | None = None,
    ) -> Response:
        """The filtered-route pipeline shared by OTLP and Datadog (see
        :func:`filter_body`), against one snapshot: answer locally (refused, or
        all dropped), forward the original bytes (unchanged, or failing open)
        or forward the re-encoded batch in the encoding it arrived in
        (`encoding`: the codec of its Content-Encoding, when the route names
        codecs its own way)."""
        snapshot = self.registry.snapshot  # one snapshot for the whole request
        if not snapshot.count(signal):
            # nothing to apply
            return await self.forward(pool, request, request.body, exchange, extra)
        filtered = filter_body(
            snapshot,
            signal,
            decode,
            request.body,
            _encoding(request) if encoding is None else encoding,
            self.config.max_body_size,
        )
        verdict = filtered.verdict
        if verdict is Verdict.TOO_LARGE:
            return json_error(413, filtered.reason)
        if verdict is Verdict.CORRUPT:
            return json_error(400, filtered.reason)
        if verdict is Verdict.UNREADABLE or verdict is Verdict.FAILED:
            self._fail_open(request, filtered.reason)
            return await self.forward(pool, request, request.body, exchange, extra)
        outcome = filtered.outcome
        assert outcome is not None
        self.metrics.outcome(telemetry_type, outcome)
        exchange.records_in = outcome.records
        exchange.records_out = outcome.records - outcome.dropped
        if verdict is Verdict.DROPPED:
            return all_dropped
        if verdict is Verdict.UNCHANGED:
            return await self.forward(pool, request, request.body, exchange, extra)
        # Only the new body is needed now: free the original before waiting on
        # the upstream.
        request.body = b""
        return await self.forward(pool, request, filtered.body, exchange, extra)

    # -- OTLP ----------------------------------------------------------------------

    async def otlp(self, request: Request, signal: Signal, exchange: Exchange) -> Response:
        media = _media(request)
        decode = otlp_decoder(signal, media)
        all_dropped = _OTLP_EMPTY[media or otlp_codec.JSON]
        telemetry_type = TELEMETRY_TYPES[signal]
        return await self._filter(
            request, signal, self.upstream, telemetry_type, decode, all_dropped, exchange
        )

    # -- Datadog -------------------------------------------------------------------

    def _datadog_key(self, request: Request) -> bytes:
        """The environment's API key as an extra header, for a request without one."""
        if self.dd_api_key and request.header(b"dd-api-key") is None:
            return b"DD-API-KEY: " + self.dd_api_key + b"\r\n"
        return b""

    async def forward_datadog(
        self, pool: UpstreamPool, request: Request, exchange: Exchange
    ) -> Response:
        """A Datadog call no policy applies to, forwarded unchanged to its family's upstream."""
        extra = self._datadog_key(request)
        return await self.forward(pool, request, request.body, exchange, extra)

    async def datadog_logs(self, request: Request, exchange: Exchange) -> Response:
        """``/api/v2/logs``: a POSTed log array is filtered; the Agent's
        connectivity check and other methods are forwarded as they came."""
        if request.method != "POST" or request.body == AGENT_CONNECTIVITY_CHECK:
            return await self.forward_datadog(self.logs_upstream, request, exchange)
        media = _datadog_media(request, otlp_codec.JSON)
        decode = datadog_decoder(Signal.LOG) if media == otlp_codec.JSON else unknown_media
        return await self.datadog(request, Signal.LOG, self.logs_upstream, decode, exchange)

    async def datadog_metrics(self, request: Request, exchange: Exchange) -> Response:
        """The metrics family: POSTed series (JSON, or the Agent's protobuf) and
        sketches are filtered; check runs, distribution points and other
        methods are forwarded."""
        path = request.path
        if request.method != "POST" or path in intake.METRICS_UNFILTERED:
            return await self.forward_datadog(self.metrics_upstream, request, exchange)
        decode: Decoder
        if path == intake.SKETCHES:
            media = _datadog_media(request, otlp_codec.PROTOBUF)
            decode = decode_agent_sketches if media == otlp_codec.PROTOBUF else unknown_media
        else:
            media = _datadog_media(request, otlp_codec.JSON)
            decode = unknown_media if media is None else datadog_decoder(Signal.METRIC, media)
        return await self.datadog(request, Signal.METRIC, self.metrics_upstream, decode, exchange)

    async def datadog(
        self,
        request: Request,
        signal: Signal,
        pool: UpstreamPool,
        decode: Decoder,
        exchange: Exchange,
    ) -> Response:
        """A Datadog payload through the policies of `signal`, counted under
        its telemetry type as OTLP's is, to `pool`."""
        return await self._filter(
            request,
            signal,
            pool,
            TELEMETRY_TYPES[signal],
            decode,
            DATADOG_ACCEPTED,
            exchange,
            self._datadog_key(request),
            intake.codec(_encoding(request)),
        )

    def close(self) -> None:
        for pool in self.pools:
            pool.close()
