"""OTLP export responses: the partial success a server may report (records
it accepted the request for but rejected), logged as upstream does."""

from __future__ import annotations

import logging
from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from sluice.policy import Signal

RESPONSES: dict[Signal, Any] = {
    Signal.LOG: ExportLogsServiceResponse,
    Signal.METRIC: ExportMetricsServiceResponse,
    Signal.TRACE: ExportTraceServiceResponse,
}
"""The Export*ServiceResponse message of each signal."""
_FIELDS = {
    Signal.LOG: ("rejected_log_records", "rejectedLogRecords", "dropped_log_records"),
    Signal.METRIC: ("rejected_data_points", "rejectedDataPoints", "dropped_data_points"),
    Signal.TRACE: ("rejected_spans", "rejectedSpans", "dropped_spans"),
}
"""Per signal: the rejected count's protobuf field, its JSON key, upstream's log label."""


def from_message(signal: Signal, response: Any) -> tuple[str, int]:
    """(error message, rejected count) of a protobuf response."""
    partial = response.partial_success
    return str(partial.error_message), int(getattr(partial, _FIELDS[signal][0]))


def from_json(signal: Signal, document: Any) -> tuple[str, int]:
    """(error message, rejected count) of an OTLP JSON response (ValueError,
    TypeError or AttributeError when it does not have that shape). As
    upstream's reader: ``null`` is an empty response, and keys may be
    written as in JSON (``partialSuccess``) or as in the proto
    (``partial_success``)."""
    if document is None:
        return "", 0
    partial = _field(document, "partialSuccess", "partial_success") or {}
    message = _field(partial, "errorMessage", "error_message") or ""
    proto_key, json_key, _ = _FIELDS[signal]
    rejected = _field(partial, json_key, proto_key) or 0
    return str(message), int(rejected)


def _field(document: Any, json_name: str, proto_name: str) -> Any:
    found = document.get(json_name)
    return found if found is not None else document.get(proto_name)


def warn(signal: Signal, message: str, rejected: int, logger: logging.Logger) -> None:
    """Log a partial success, if the response reported one: upstream's
    message, with its ``message`` and ``dropped_<items>`` fields."""
    if message or rejected:
        fields = {"message": message, _FIELDS[signal][2]: rejected}
        logger.warning("Partial success response", extra={"fields": fields})
