"""What a status request answers: the HTTP code and JSON body of an
aggregate status, as upstream serializes it.

``start_time`` (at the top only), ``healthy``, ``status``, ``error`` (when
there is one), ``status_time``, and with ``verbose`` the members under
``components`` (keys sorted, as Go marshals maps). Starting, stopping and
stopped answer 503, a fatal error 500, the rest 200; with
``component_health`` an unhealthy status answers 500.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from sluice.collector.component import Status
from sluice.collector.components.extensions.healthcheck.config import ResponseBody
from sluice.collector.components.extensions.healthcheck.responses import (
    server_status,
    static_status,
)
from sluice.collector.components.extensions.healthcheckv2.aggregator import (
    AggregateStatus,
    Event,
)
from sluice.collector.components.extensions.healthcheckv2.config import (
    ComponentHealthSettings,
)
from sluice.collector.gotext import go_json, go_time
from sluice.transport.http_message import Response

_UNAVAILABLE = frozenset({None, Status.STARTING, Status.STOPPING, Status.STOPPED})

Healthy = Callable[[Event], bool]


def status_code(status: Status | None) -> int:
    if status in _UNAVAILABLE:
        return 503
    return 500 if status is Status.FATAL_ERROR else 200


def always_healthy(event: Event) -> bool:
    """Without ``component_health``, ``healthy`` is always true (the code
    still says 500 for a fatal error), as upstream."""
    return True


def health_rule(settings: ComponentHealthSettings, now_ns: int) -> Healthy:
    """Errors are healthy unless opted in: a permanent one with
    ``include_permanent_errors``, a recoverable one with
    ``include_recoverable_errors`` once ``recovery_duration`` has passed since
    it began. A fatal error never is."""
    window_ns = int(settings.recovery_duration * 1e9)

    def healthy(event: Event) -> bool:
        if event.status is Status.PERMANENT_ERROR:
            return not settings.include_permanent_errors
        if event.status is Status.RECOVERABLE_ERROR and settings.include_recoverable_errors:
            return now_ns < event.timestamp_ns + window_ns
        return event.status is not Status.FATAL_ERROR

    return healthy


def serialize(
    status: AggregateStatus, verbose: bool, healthy: Healthy, start_ns: int | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if start_ns is not None:
        body["start_time"] = go_time(start_ns)
    event = status.event
    body["healthy"] = healthy(event)
    body["status"] = event.status_name
    if event.error:
        body["error"] = event.error
    body["status_time"] = go_time(event.timestamp_ns)
    if verbose and status.components:
        body["components"] = {
            key: serialize(status.components[key], verbose, healthy)
            for key in sorted(status.components)
        }
    return body


class StatusResponder:
    """The v2 answer: JSON status, code from the status (and health)."""

    def __init__(self, start_ns: int, component_health: ComponentHealthSettings | None):
        self.start_ns = start_ns
        self.component_health = component_health

    def respond(self, status: AggregateStatus, verbose: bool) -> Response:
        healthy = (
            health_rule(self.component_health, time.time_ns())
            if self.component_health is not None
            else always_healthy
        )
        body = serialize(status, verbose, healthy, self.start_ns)
        code = status_code(status.event.status)
        if not body["healthy"]:
            code = 500
        return Response(code, go_json(body))


class LegacyResponder(StatusResponder):
    """The v1 answer (``use_v2: false``), from the same aggregate status: 200
    while it is ok or a non-fatal error, 503 otherwise (a fatal error too);
    up since the extension was created."""

    def __init__(self, start_ns: int, response_body: ResponseBody | None):
        super().__init__(start_ns, None)
        self.response_body = response_body
        self._start_monotonic = time.monotonic_ns()

    def respond(self, status: AggregateStatus, verbose: bool) -> Response:
        available = status_code(status.event.status) == 200
        if self.response_body is not None:
            return static_status(available, self.response_body)
        uptime = time.monotonic_ns() - self._start_monotonic
        return server_status(available, self.start_ns, uptime)
