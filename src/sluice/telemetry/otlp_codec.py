"""OTLP/HTTP bodies: export requests in protobuf or JSON, and the empty export
responses a sender expects when every record was dropped."""

from __future__ import annotations

import json
from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from sluice.policy import RecordView, Signal
from sluice.telemetry import jsonbody
from sluice.telemetry.otlp_json import json_view
from sluice.telemetry.otlp_lean import LEAN_LOG_VIEW
from sluice.telemetry.otlp_proto import proto_view
from sluice.telemetry.otlp_raw import LeanLogsRequest

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
PROTOBUF_FORMS: dict[Signal, tuple[Any, RecordView]] = {
    # Log records stay wire bytes (see otlp_lean).
    Signal.LOG: (LeanLogsRequest, LEAN_LOG_VIEW),
    Signal.METRIC: (ExportMetricsServiceRequest, proto_view(Signal.METRIC)),
    Signal.TRACE: (ExportTraceServiceRequest, proto_view(Signal.TRACE)),
}
"""Per signal: the request class protobuf bodies are decoded into, and its
view (Edge's bodies and the collector's pipeline data)."""
_TOP_KEYS = {
    Signal.LOG: "resourceLogs",
    Signal.METRIC: "resourceMetrics",
    Signal.TRACE: "resourceSpans",
}


class UndecodableBody(ValueError):
    """The body is not a valid export request in its declared format."""


def decode(signal: Signal, media: str, body: bytes) -> tuple[Any, RecordView]:
    """The decoded request and the view that reads it."""
    if media == PROTOBUF:
        request_class, view = PROTOBUF_FORMS[signal]
        message = request_class()
        try:
            message.ParseFromString(body)
        except DecodeError as not_protobuf:
            raise UndecodableBody(f"not a protobuf export request: {not_protobuf}") from None
        return message, view
    doc = jsonbody.parse(body)
    if doc is jsonbody.UNPARSED:
        try:
            doc = jsonbody.check_depth(json.loads(body))
        except (ValueError, UnicodeDecodeError) as problem:
            raise UndecodableBody(f"not JSON: {problem}") from None
        except RecursionError:
            raise UndecodableBody("JSON nested too deeply") from None
    if not isinstance(doc, dict) or not isinstance(doc.get(_TOP_KEYS[signal], []), list):
        raise UndecodableBody(f"not an OTLP JSON export request (no {_TOP_KEYS[signal]} list)")
    return doc, json_view(signal)


def encode(media: str, batch: Any) -> bytes:
    if media == PROTOBUF:
        return bytes(batch.SerializeToString())
    return jsonbody.encode(batch)


def empty_response(media: str) -> bytes:
    """An empty Export*ServiceResponse (no partial success) in the request's format."""
    return b"" if media == PROTOBUF else b"{}"
