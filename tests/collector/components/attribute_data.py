"""OTLP requests for the attributes and resource processor tests: items
(spans, log records, data points) with given attributes under resources and
scopes with given properties, and the attributes read back as pdata prints
them (``Str(x)``, ``Int(1)``...)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from sluice.collector import pdata
from sluice.collector.internal.attraction.values import any_value
from sluice.collector.internal.go_text import typed
from sluice.policy import Signal

Attributes = Sequence[tuple[str, Any]]


@dataclass
class Item:
    """A span, log record or metric (with one data point holding `attributes`)."""

    attributes: Attributes = ()
    name: str = ""
    """Span or metric name."""
    kind: int = 0
    """Span kind number."""
    body: Any = None
    severity_text: str = ""
    severity_number: int = 0


@dataclass
class Scope:
    items: list[Item]
    name: str = ""
    version: str = ""


@dataclass
class Resource:
    scopes: list[Scope]
    attributes: Attributes = field(default_factory=list)


def _put(kvs: Any, attributes: Attributes) -> None:
    for key, raw in attributes:
        kvs.add(key=key).value.CopyFrom(any_value(raw))


def request(signal: Signal, resources: Sequence[Resource]) -> Any:
    """The request of `signal` holding `resources` (lean logs for logs)."""
    message = ExportLogsServiceRequest() if signal is Signal.LOG else pdata.new(signal)
    for resource in resources:
        container = getattr(message, pdata.RESOURCES[signal]).add()
        _put(container.resource.attributes, resource.attributes)
        for scope in resource.scopes:
            holder = getattr(container, pdata.SCOPES[signal]).add()
            holder.scope.name, holder.scope.version = scope.name, scope.version
            for item in scope.items:
                _add_item(signal, holder, item)
    return pdata.lean_logs(message) if signal is Signal.LOG else message


def _add_item(signal: Signal, holder: Any, item: Item) -> None:
    if signal is Signal.TRACE:
        span = holder.spans.add(name=item.name, kind=item.kind)
        _put(span.attributes, item.attributes)
    elif signal is Signal.LOG:
        record = holder.log_records.add(
            severity_text=item.severity_text, severity_number=item.severity_number
        )
        if item.body is not None:
            record.body.CopyFrom(any_value(item.body))
        _put(record.attributes, item.attributes)
    else:
        metric = holder.metrics.add(name=item.name)
        _put(metric.gauge.data_points.add(as_int=1).attributes, item.attributes)


def one_item(signal: Signal, attributes: Attributes) -> Any:
    """A request with one item holding `attributes`, its resource holding them too."""
    return request(signal, [Resource([Scope([Item(attributes)])], attributes)])


def shown(kvs: Any) -> list[tuple[str, str]]:
    return [(kv.key, typed(kv.value)) for kv in kvs]


def item_attributes(signal: Signal, data: Any) -> list[list[tuple[str, str]]]:
    """Each item's attributes, in order (a metric's: its data points')."""
    if signal is Signal.LOG:
        data = pdata.full_logs(data)
    found = []
    for container in getattr(data, pdata.RESOURCES[signal]):
        for holder in getattr(container, pdata.SCOPES[signal]):
            for item in getattr(holder, pdata.RECORDS[signal]):
                if signal is Signal.METRIC:
                    found += [shown(p.attributes) for p in item.gauge.data_points]
                else:
                    found.append(shown(item.attributes))
    return found


def resource_attributes(signal: Signal, data: Any) -> list[list[tuple[str, str]]]:
    return [shown(c.resource.attributes) for c in getattr(data, pdata.RESOURCES[signal])]
