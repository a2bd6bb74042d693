"""The answers of upstream's health check (v1), shared with ``healthcheckv2``
when it runs with its v1 settings: the JSON status body, the static
``response_body`` texts."""

from __future__ import annotations

from sluice.collector.components.extensions.healthcheck.config import ResponseBody
from sluice.collector.gotext import (
    ZERO_TIME,
    go_duration,
    go_json,
    go_time,
)
from sluice.collector.sniff import detect_content_type
from sluice.transport.http_message import Response


def server_status(available: bool, up_since_ns: int = 0, uptime_ns: int = 0) -> Response:
    """200 ``{"status":"Server available","upSince":...,"uptime":...}`` or
    503 ``{"status":"Server not available","upSince":"0001-01-01T00:00:00Z","uptime":""}``."""
    if available:
        body = {
            "status": "Server available",
            "upSince": go_time(up_since_ns),
            "uptime": go_duration(uptime_ns),
        }
        return Response(200, go_json(body))
    body = {"status": "Server not available", "upSince": ZERO_TIME, "uptime": ""}
    return Response(503, go_json(body))


def static_status(available: bool, texts: ResponseBody) -> Response:
    """The configured text for the state, with 200 or 503, typed as Go's
    server types a body its handler gave no type (none for an empty one)."""
    body = (texts.healthy if available else texts.unhealthy).encode()
    return Response(
        200 if available else 503, body, content_type=detect_content_type(body) if body else None
    )
