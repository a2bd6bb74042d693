"""OTLP JSON encoding of export request messages (the OTLP/HTTP JSON form:
lowerCamelCase keys, enums as integers, trace and span ids as hex).

Placeholder written by the exporters branch: the receiver branch owns this
module and its ``from_json``; only ``to_json``'s signature is relied on.
"""

from __future__ import annotations

import base64
from typing import Any

import orjson
from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from sluice.policy import Signal

_ID_KEYS = frozenset(("traceId", "spanId", "parentSpanId"))


def _hex_ids(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            key: base64.b64decode(value).hex() if key in _ID_KEYS else _hex_ids(value)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_hex_ids(item) for item in node]
    return node


def to_json(signal: Signal, message: Any) -> bytes:
    """`message` (lean logs, or a metrics or traces export request) as OTLP JSON."""
    full = (
        ExportLogsServiceRequest.FromString(message.SerializeToString())
        if signal is Signal.LOG
        else message
    )
    document = json_format.MessageToDict(full, use_integers_for_enums=True)
    return orjson.dumps(_hex_ids(document))
