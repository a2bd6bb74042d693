"""The data that flows between components: one OTLP export request message
per call, decoded once at the receiver and encoded once at the exporter.

- logs: :data:`~sluice.telemetry.otlp_raw.LeanLogsRequest`, wire-identical to
  ``ExportLogsServiceRequest`` with each log record kept as its wire bytes
  (the policy processor reads them as Edge does; kept records leave byte for
  byte). A component that edits record fields converts with
  :func:`full_logs` / :func:`lean_logs`.
- metrics: ``ExportMetricsServiceRequest``; traces: ``ExportTraceServiceRequest``.

Items are what upstream counts: log records, metric data points, spans.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import message_factory, unknown_fields
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from sluice.policy import Signal
from sluice.telemetry import otlp_ids
from sluice.telemetry.otlp_codec import PROTOBUF_FORMS
from sluice.telemetry.otlp_raw import LeanLogsRequest

MESSAGE_TYPES: dict[Signal, Any] = {signal: form[0] for signal, form in PROTOBUF_FORMS.items()}
"""The request class of each signal's data (Edge decodes the same)."""
RESOURCES = {
    Signal.LOG: "resource_logs",
    Signal.METRIC: "resource_metrics",
    Signal.TRACE: "resource_spans",
}
SCOPES = {Signal.LOG: "scope_logs", Signal.METRIC: "scope_metrics", Signal.TRACE: "scope_spans"}
RECORDS = {Signal.LOG: "log_records", Signal.METRIC: "metrics", Signal.TRACE: "spans"}
POINT_KINDS = ("gauge", "sum", "histogram", "exponential_histogram", "summary")


class PdataError(ValueError):
    """A request that upstream's pdata does not decode either, in its words."""


def new(signal: Signal) -> Any:
    """An empty request of the signal."""
    return MESSAGE_TYPES[signal]()


def parse(signal: Signal, wire: bytes) -> Any:
    """A protobuf export request; raises :class:`PdataError` with gogo's
    error where pdata's decoder stops (:mod:`~sluice.telemetry.otlp_ids`),
    and ``google.protobuf.message.DecodeError`` for what only Python's
    protobuf refuses."""
    problem, deprecated = otlp_ids.scan(signal, wire)
    if problem is not None:
        raise PdataError(problem)
    message = MESSAGE_TYPES[signal]()
    message.ParseFromString(wire)
    if deprecated:
        _migrate(signal, message)
    return message


def _migrate(signal: Signal, message: Any) -> None:
    """Upstream's ``otlp.Migrate*``, run on every protobuf request: a resource
    with no scopes takes those of the deprecated field (each must decode),
    which is then dropped with the resource's other unknown fields (pdata
    keeps none)."""
    for resource in getattr(message, RESOURCES[signal]):
        found = [
            unknown
            for unknown in unknown_fields.UnknownFieldSet(resource)
            if unknown.field_number == otlp_ids.DEPRECATED_SCOPES
        ]
        if not found:
            continue
        scopes = getattr(resource, SCOPES[signal])
        scope_class = message_factory.GetMessageClass(
            resource.DESCRIPTOR.fields_by_name[SCOPES[signal]].message_type
        )
        deprecated = []
        for unknown in found:
            if unknown.wire_type != 2:
                raise PdataError(
                    f"proto: wrong wireType = {unknown.wire_type} for field Deprecated"
                    + scope_class.DESCRIPTOR.name
                )
            deprecated.append(scope_class.FromString(unknown.data))
        resource.DiscardUnknownFields()
        if not scopes:
            scopes.extend(deprecated)


def copy(data: Any) -> Any:
    """A deep copy (for a fan-out consumer that edits its data)."""
    duplicate = type(data)()
    duplicate.CopyFrom(data)
    return duplicate


def metric_points(metric: Any) -> int:
    """How many data points a metric holds."""
    kind = metric.WhichOneof("data")
    return len(getattr(metric, kind).data_points) if kind else 0


def item_count(signal: Signal, data: Any) -> int:
    """Log records, metric data points or spans in a request."""
    if signal is Signal.METRIC:
        return sum(
            metric_points(metric)
            for resource in data.resource_metrics
            for scope in resource.scope_metrics
            for metric in scope.metrics
        )
    records = RECORDS[signal]
    return sum(
        len(getattr(scope, records))
        for resource in getattr(data, RESOURCES[signal])
        for scope in getattr(resource, SCOPES[signal])
    )


def merge(signal: Signal, into: Any, data: Any) -> None:
    """Append `data`'s resources to `into` (copies them)."""
    getattr(into, RESOURCES[signal]).extend(getattr(data, RESOURCES[signal]))


def split(signal: Signal, data: Any, max_items: int) -> list[Any]:
    """`data` cut into requests of at most `max_items` items each, in order,
    as upstream's batch processor splits: the first `max_items` items are
    taken out, again and again, and what is left is the last request. A
    container cut in two stays whole, with all its fields, in the part that
    keeps its last items; the parts before it get a copy of only what
    upstream copies: the resource, the scope, a metric's name, description,
    unit, temporality and monotonicity (metrics are cut between data
    points). `data` itself comes back when it fits (or `max_items` <= 0)."""
    remaining = item_count(signal, data)
    if max_items <= 0 or remaining <= max_items:
        return [data]
    taker = _Taker(signal)
    parts = []
    while remaining > max_items:
        part = new(signal)
        taker.take(0, data, part, max_items)
        parts.append(part)
        remaining -= max_items
    parts.append(data)
    return parts


class _Taker:
    """Moves the first items of a request (or a resource, scope or metric)
    into another, as upstream's ``split*`` functions do: children that fit
    whole are moved whole, the first that does not is cut, and whatever
    follows stays behind."""

    def __init__(self, signal: Signal):
        self.children = (RESOURCES[signal], SCOPES[signal], RECORDS[signal])
        """Children field of each level: request, resource, scope."""
        self.leaf = 3 if signal is Signal.METRIC else 2
        """The level whose children are items (a metric's data points)."""

    def _items(self, level: int, container: Any) -> Any:
        """The children of a container at `level` (a metric's data points)."""
        if level < 3:
            return getattr(container, self.children[level])
        kind = container.WhichOneof("data")
        return getattr(container, kind).data_points if kind else ()

    def _count(self, level: int, container: Any, limit: int) -> int:
        """Items in a container at `level`, counted only until they pass
        `limit` (so that each cut reads about as many items as it takes)."""
        children = self._items(level, container)
        if level == self.leaf:
            return len(children)
        total = 0
        for child in children:
            total += self._count(level + 1, child, limit - total)
            if total > limit:
                break
        return total

    def take(self, level: int, source: Any, dest: Any, room: int) -> int:
        """Move up to `room` items of `source` (at `level`) into `dest`; how many."""
        children = self._items(level, source)
        into = self._items(level, dest)
        if level == self.leaf:
            taken = min(room, len(children))
            into.extend(children[:taken])
            del children[:taken]
            return taken
        taken = moved = 0
        for child in children:
            if taken == room:
                break
            count = self._count(level + 1, child, room - taken)
            if taken + count <= room:
                into.append(child)
                taken += count
                moved += 1
                continue
            into.append(_cut_copy(level + 1, child))
            taken += self.take(level + 1, child, into[-1], room - taken)
            break
        del children[:moved]
        return taken


def _cut_copy(level: int, source: Any) -> Any:
    """What upstream copies of a resource, scope or metric it cuts in two."""
    copy = type(source)()
    if level == 1:
        copy.resource.CopyFrom(source.resource)
    elif level == 2:
        copy.scope.CopyFrom(source.scope)
    else:
        copy.name, copy.description, copy.unit = source.name, source.description, source.unit
        kind = source.WhichOneof("data")
        if kind is not None:
            points = getattr(copy, kind)
            points.SetInParent()
            if kind != "gauge" and kind != "summary":
                points.aggregation_temporality = getattr(source, kind).aggregation_temporality
            if kind == "sum":
                points.is_monotonic = source.sum.is_monotonic
    return copy


def full_logs(lean: Any) -> ExportLogsServiceRequest:
    """Lean logs as a full ``ExportLogsServiceRequest`` (for field edits)."""
    full: ExportLogsServiceRequest = ExportLogsServiceRequest.FromString(lean.SerializeToString())
    return full


def lean_logs(full: ExportLogsServiceRequest) -> Any:
    return LeanLogsRequest.FromString(full.SerializeToString())
