"""A Prometheus registry as an HTTP answer, for the collector's metrics
endpoint and Edge's ``/_metrics``: the text format, or OpenMetrics when the
scraper's ``Accept`` prefers it, gzipped when it accepts gzip, as
Prometheus' own handlers answer."""

from __future__ import annotations

import gzip

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder

from sluice.transport.http_message import Request, Response


def metrics_response(registry: CollectorRegistry, request: Request) -> Response:
    """`registry` rendered for the scraper that sent `request`."""
    accept = (request.header(b"accept") or b"").decode("latin-1")
    encoder, content_type = choose_encoder(accept)
    body = encoder(registry)
    encodings = (request.header(b"accept-encoding") or b"").decode("latin-1")
    if "gzip" in encodings:
        return Response(
            200,
            gzip.compress(body, compresslevel=1),
            [(b"Content-Encoding", b"gzip")],
            content_type.encode(),
        )
    return Response(200, body, content_type=content_type.encode())
