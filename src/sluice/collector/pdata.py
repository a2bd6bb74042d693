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

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from sluice.policy import Signal
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


def new(signal: Signal) -> Any:
    """An empty request of the signal."""
    return MESSAGE_TYPES[signal]()


def parse(signal: Signal, wire: bytes) -> Any:
    """A protobuf export request (raises ``google.protobuf.message.DecodeError``)."""
    message = MESSAGE_TYPES[signal]()
    message.ParseFromString(wire)
    return message


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
    as upstream's batch processor splits: every request but the last holds
    exactly `max_items`; a resource, scope or metric cut in two appears in
    both requests with all its own fields (metrics are cut between data
    points). `data` itself comes back when it fits (or `max_items` <= 0)."""
    if max_items <= 0 or item_count(signal, data) <= max_items:
        return [data]
    return _Splitter(signal, max_items).split(data)


class _Splitter:
    """Walks a request's tree in order, copying whole containers that fit
    the room left in the current request and cutting the one that does not.
    A container cut across requests is re-created in each from a shell
    (its fields without its children), made only when needed."""

    def __init__(self, signal: Signal, max_items: int):
        self.signal = signal
        self.max_items = max_items
        self.children = (RESOURCES[signal], SCOPES[signal], RECORDS[signal])
        """Children field of each level: request, resource, scope."""
        self.leaf = 3 if signal is Signal.METRIC else 2
        """The level whose children are items (a metric's data points)."""
        self.parts: list[Any] = []
        self.room = 0
        self.sources: list[Any] = [None] * (self.leaf + 1)
        """The source container being cut at each level."""
        self.open: list[Any] = []
        """The copies of `sources` in the current request, by level."""

    def split(self, data: Any) -> list[Any]:
        self.sources[0] = data
        self._next_part()
        self._walk(0)
        return self.parts

    def _next_part(self) -> None:
        self.parts.append(new(self.signal))
        self.open = [self.parts[-1]]
        self.room = self.max_items

    def _items(self, level: int, container: Any) -> Any:
        """The children of a container at `level` (a metric's data points)."""
        if level < 3:
            return getattr(container, self.children[level])
        kind = container.WhichOneof("data")
        return getattr(container, kind).data_points if kind else ()

    def _count(self, level: int, container: Any) -> int:
        """Items under a container that is a child of `level`."""
        if level + 1 == self.leaf:
            return len(self._items(level + 1, container))
        return sum(self._count(level + 1, child) for child in self._items(level + 1, container))

    def _dest(self, level: int) -> Any:
        """The current request's copy of ``sources[level]``, made on first use."""
        if level < len(self.open):
            return self.open[level]
        source = self.sources[level]
        siblings = self._items(level - 1, self._dest(level - 1))
        if level == 3:  # a metric: its data points are one level further down
            kind = source.WhichOneof("data") or ""
            shell = _shell(source, kind)
            if kind:
                points = getattr(shell, kind)
                points.SetInParent()
                points.CopyFrom(_shell(getattr(source, kind), "data_points"))
        else:
            shell = _shell(source, self.children[level])
        siblings.append(shell)
        self.open.append(siblings[-1])
        return self.open[level]

    def _walk(self, level: int) -> None:
        children = self._items(level, self.sources[level])
        if level == self.leaf:
            start = 0
            while start < len(children):
                if not self.room:
                    self._next_part()
                taken = min(self.room, len(children) - start)
                self._items(level, self._dest(level)).extend(children[start : start + taken])
                self.room -= taken
                start += taken
            return
        for child in children:
            if not self.room:
                self._next_part()
            count = self._count(level, child)
            if count <= self.room:
                self._items(level, self._dest(level)).append(child)
                self.room -= count
            else:
                self.sources[level + 1] = child
                del self.open[level + 1 :]
                self._walk(level + 1)


def _shell(message: Any, children: str) -> Any:
    """A copy of `message` without its `children` field."""
    shell = type(message)()
    for field, value in message.ListFields():
        if field.name == children:
            continue
        if field.is_repeated:
            getattr(shell, field.name).extend(value)
        elif field.message_type is not None:
            getattr(shell, field.name).CopyFrom(value)
        else:
            setattr(shell, field.name, value)
    return shell


def full_logs(lean: Any) -> ExportLogsServiceRequest:
    """Lean logs as a full ``ExportLogsServiceRequest`` (for field edits)."""
    full: ExportLogsServiceRequest = ExportLogsServiceRequest.FromString(lean.SerializeToString())
    return full


def lean_logs(full: ExportLogsServiceRequest) -> Any:
    return LeanLogsRequest.FromString(full.SerializeToString())
