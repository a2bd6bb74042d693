"""The Datadog Agent's protobuf metric payloads, in the lean form Edge reads.

``MetricPayload`` (``/api/v2/series``) and ``SketchPayload``
(``/api/beta/sketches``) are generated from
``proto/datadog/agentpayload/agent_payload.proto`` into
:mod:`sluice.telemetry.wire.agent_payload_pb2`. Policies read only a series'
or a sketch's name, tags, resources, host, type and unit, while most of a
payload's bytes are its points and sketch bins. So Edge parses bodies with
copies of those messages that leave the bulky fields out: protobuf keeps a
field it does not know as its raw wire bytes (an unknown field) and writes it
back when the message is serialized, so nothing is lost, and the points are
never turned into messages.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from sluice.telemetry.wire import agent_payload_pb2

_FULL = "datadog.agentpayload."
_LEAN = "sluice.lean.agentpayload."
_SKIPPED = {
    "MetricSeries": {"points", "source_type_name", "interval", "metadata"},
    "Sketch": {"distributions", "dogsketches", "metadata"},
    "SketchPayload": {"metadata"},
}
"""Per message, the fields the lean copy leaves to be carried as unknown bytes."""


def _lean(message: descriptor_pb2.DescriptorProto) -> None:
    skipped = _SKIPPED.get(message.name, set())
    kept = [field for field in message.field if field.name not in skipped]
    del message.field[:]
    for field in kept:
        if field.type_name.startswith("." + _FULL):
            field.type_name = "." + _LEAN + field.type_name[len(_FULL) + 1 :]
        message.field.add().CopyFrom(field)
    for nested in message.nested_type:
        _lean(nested)


def _lean_classes() -> tuple[Any, Any]:
    schema = descriptor_pb2.FileDescriptorProto()
    agent_payload_pb2.DESCRIPTOR.CopyToProto(schema)
    schema.name = "sluice/lean/agent_payload.proto"
    schema.package = _LEAN.rstrip(".")
    for message in schema.message_type:
        _lean(message)
    pool = descriptor_pool.Default()
    pool.Add(schema)
    return (
        message_factory.GetMessageClass(pool.FindMessageTypeByName(_LEAN + "MetricPayload")),
        message_factory.GetMessageClass(pool.FindMessageTypeByName(_LEAN + "SketchPayload")),
    )


_CLASSES = _lean_classes()
LeanMetricPayload: Any = _CLASSES[0]
"""``MetricPayload``, wire-compatible, whose series carry only ``resources``,
``metric``, ``tags``, ``type`` and ``unit`` as fields (the rest as unknown bytes)."""
LeanSketchPayload: Any = _CLASSES[1]
"""``SketchPayload``, wire-compatible, whose sketches carry only ``metric``,
``host`` and ``tags`` as fields (the rest as unknown bytes)."""
LeanMetricSeries: Any = LeanMetricPayload.MetricSeries
LeanSketch: Any = LeanSketchPayload.Sketch
