"""Test support: OTLP JSON documents to protobuf messages and back.

OTLP JSON writes ids as hex, the protobuf JSON mapping as base64; everything
else is the standard mapping.
"""

from __future__ import annotations

import base64
import copy
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from sluice.policy import Signal

REQUESTS = {
    Signal.LOG: ExportLogsServiceRequest,
    Signal.METRIC: ExportMetricsServiceRequest,
    Signal.TRACE: ExportTraceServiceRequest,
}
_ID_KEYS = {"traceId", "spanId", "parentSpanId"}


def _map_ids(value: Any, convert: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: convert(v) if k in _ID_KEYS and isinstance(v, str) else _map_ids(v, convert)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_map_ids(v, convert) for v in value]
    return value


def to_proto(doc: dict[str, Any], signal: Signal) -> Any:
    converted = _map_ids(copy.deepcopy(doc), lambda h: base64.b64encode(bytes.fromhex(h)).decode())
    return json_format.ParseDict(converted, REQUESTS[signal](), ignore_unknown_fields=True)


_STANDARD = {request.DESCRIPTOR.name: request for request in REQUESTS.values()}


def to_json(message: Any) -> dict[str, Any]:
    """OTLP JSON of an export request. A request decoded with another schema of
    the same wire form (Edge's lean logs request) is read back as the standard one."""
    standard = _STANDARD[message.DESCRIPTOR.name]
    if type(message) is not standard:
        message = standard.FromString(message.SerializeToString())
    doc = json_format.MessageToDict(message)
    return _map_ids(doc, lambda b: base64.b64decode(b).hex())  # type: ignore[no-any-return]
