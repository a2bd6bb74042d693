"""OTLP export responses: the partial success a server may report (records
it accepted the request for but rejected), logged as upstream does."""

from __future__ import annotations

import re
from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from sluice.collector.component import ComponentLog
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
_INT64_TEXT = re.compile(r"[+-]?[0-9]+")


def from_message(signal: Signal, response: Any) -> tuple[str, int]:
    """(error message, rejected count) of a protobuf response."""
    partial = response.partial_success
    return str(partial.error_message), int(getattr(partial, _FIELDS[signal][0]))


def from_json(signal: Signal, document: Any) -> tuple[str, int]:
    """(error message, rejected count) of an OTLP JSON response, read as
    pdata reads it: keys written as in JSON (``partialSuccess``) or as in
    the proto (``partial_success``), others skipped; ``null`` for an object
    or the message is empty; the count an int64 number or decimal text.
    Raises ValueError for anything else."""
    message, rejected = "", 0
    proto_key, json_key, _ = _FIELDS[signal]
    for key, partial in _object(document, "response").items():
        if key not in ("partialSuccess", "partial_success"):
            continue
        for name, value in _object(partial, key).items():
            if name in (json_key, proto_key):
                rejected = _int64(value, name)
            elif name in ("errorMessage", "error_message"):
                message = _text(value, name)
    return message, rejected


def _object(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{where}: expected an object, got {type(value).__name__}")
    return value


def _int64(value: Any, where: str) -> int:
    """pdata's ReadInt64: an integer number, or text Go's strconv.ParseInt
    reads (an optional sign and ASCII digits), within int64."""
    if type(value) is int:
        number = value
    elif type(value) is str and _INT64_TEXT.fullmatch(value):
        number = int(value)
    else:
        raise ValueError(f"{where}: expected an integer, got {value!r}")
    if not -(2**63) <= number < 2**63:
        raise ValueError(f"{where}: {value!r} is out of the int64 range")
    return number


def _text(value: Any, where: str) -> str:
    if value is None:
        return ""
    if type(value) is not str:
        raise ValueError(f"{where}: expected a string, got {value!r}")
    return value


def warn(signal: Signal, message: str, rejected: int, logger: ComponentLog) -> None:
    """Log a partial success, if the response reported one: upstream's
    message, with its ``message`` and ``dropped_<items>`` fields."""
    if message or rejected:
        fields = {"message": message, _FIELDS[signal][2]: rejected}
        logger.warning("Partial success response", extra={"fields": fields})
