"""Datadog metric intake as record views: series in JSON (``/api/v1/series``,
``/api/v2/series``) and in the Agent's protobuf (``/api/v2/series``), and the
Agent's sketches (``/api/beta/sketches``).

A series (or sketch) is a record: its points share one name, tag set and
host, so a metric policy keeps or drops the whole series. The mapping is the
same for every form:

* ``metric_field: name`` is ``metric``; ``unit`` is ``unit``;
* ``metric_type`` is the Datadog type as the OTLP type policies name: gauge
  is ``gauge``, count and rate are ``sum`` (sketches have none);
* attributes (``datapoint_attribute``, ``resource_attribute``) are the tags
  (``key:value``, a bare ``key`` has the value ``""``), then the resources by
  type (``host`` is the v2 host resource, the v1 ``host`` field, a sketch's
  ``host``); ``host.name`` also reads ``host``, ``service.name`` the tag
  ``service``. Scope attributes are absent.

Protobuf payloads are read through the lean messages of
:mod:`sluice.telemetry.agent_payload` and, when a series is dropped,
serialized again with the fields policies do not read carried as they came.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import DecodeError

from sluice.policy.model import METRIC_TYPE, Selector, Source
from sluice.policy.view import Ctx, Value
from sluice.telemetry import jsonbody
from sluice.telemetry.agent_payload import (
    LeanMetricPayload,
    LeanMetricSeries,
    LeanSketch,
    LeanSketchPayload,
)
from sluice.telemetry.datadog import FlatRecordView, NotAnArray, parse_document, scalar

SERIES_TYPES: dict[Any, str] = {
    1: "sum",
    2: "sum",
    3: "gauge",
    "count": "sum",
    "rate": "sum",
    "gauge": "gauge",
}
"""Datadog series types (v2: numbers, v1 JSON: names) as the OTLP metric types
policies name."""
ATTRIBUTE_ALIASES = {"host.name": "host", "service.name": "service"}
"""OTel attribute names read from their Datadog counterparts when absent (as
for logs, EDGE.md section 3)."""

Getter = Callable[[Any, dict[str, Any]], Any]
"""Reads one selector off a record; the dict holds what a record's selectors
share (its parsed tags)."""


def _find_tag(tags: list[Any], key: str) -> str | None:
    """The value of the first tag ``key:value`` (or bare ``key``, value "")
    in `tags`; entries that are not strings are skipped. A series has a few
    tags and a policy set reads a few keys, so scanning beats building a
    dict of every tag."""
    size = len(key)
    for tag in tags:
        if tag.__class__ is str and tag.startswith(key):
            if len(tag) == size:
                return ""
            if tag[size] == ":":
                return tag[size + 1 :]
    return None


class _SeriesView(FlatRecordView):
    """What every metric form shares: the getters of the mapping above, over
    four accessors a form defines."""

    def _name(self, record: Any) -> Any:
        """The metric name; None when absent (protobuf: empty)."""
        raise NotImplementedError

    def _type(self, record: Any) -> Any:
        """The Datadog type (None when the form has none)."""
        return None

    def _unit(self, record: Any) -> Any:
        return None

    def _tags(self, record: Any) -> list[Any]:
        """The ``key:value`` tags, as a list (read once per record)."""
        raise NotImplementedError

    def _resource(self, record: Any, kind: str) -> str | None:
        """The name of the first resource of type `kind`."""
        raise NotImplementedError

    def _lookup(self, record: Any, tags: list[Any], key: str) -> str | None:
        """An attribute: the tag `key`, else the resource of that type. A key
        holding ``:`` cannot be a tag's key (that ends at the first ``:``)."""
        value = None if ":" in key else _find_tag(tags, key)
        return self._resource(record, key) if value is None else value

    def _getter(self, selector: Selector) -> Getter:
        if selector.source is Source.FIELD:
            name = selector.name
            if name == "name":
                return lambda record, cache: self._name(record)
            if name == METRIC_TYPE:
                return lambda record, cache: SERIES_TYPES.get(self._type(record))
            if name == "unit":
                return lambda record, cache: self._unit(record)
            return lambda record, cache: None
        if selector.source is Source.SCOPE_ATTRIBUTE:
            return lambda record, cache: None
        key = ".".join(selector.path)
        alias = ATTRIBUTE_ALIASES.get(key, key)

        def attribute(record: Any, cache: dict[str, Any]) -> Any:
            tags = cache.get("tags")
            if tags is None:
                tags = cache["tags"] = self._tags(record)
            value = self._lookup(record, tags, key)
            if value is None and alias != key:
                value = self._lookup(record, tags, alias)
            return value

        return attribute

    def _raw(self, record: Any, selector: Selector, cache: dict[str, Any] | None = None) -> Any:
        if record.__class__ is not self.record_class:
            return None
        return self._getter(selector)(record, {} if cache is None else cache)

    def get(self, ctx: Ctx, selector: Selector) -> Value | None:
        return scalar(self._raw(ctx.record, selector))


# -- JSON -------------------------------------------------------------------------


@dataclass
class DatadogSeries:
    """A ``{"series": [...]}`` payload (v1 or v2 JSON); `document` is edited in place."""

    document: dict[str, Any]
    dropped: set[int] = field(default_factory=set)

    @classmethod
    def parse(cls, body: bytes) -> DatadogSeries:
        document = parse_document(body)
        if not isinstance(document, dict) or not isinstance(document.get("series"), list):
            raise NotAnArray('expected {"series": [...]}')
        return cls(document)

    @property
    def records(self) -> list[Any]:
        series = self.document.get("series")
        return series if isinstance(series, list) else []

    def encode(self) -> bytes:
        kept = [s for i, s in enumerate(self.records) if i not in self.dropped]
        return jsonbody.encode({**self.document, "series": kept})


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


class DatadogSeriesView(_SeriesView):
    """JSON series (v2 ``resources``, v1 ``host``); values keep their JSON type."""

    def _name(self, record: Any) -> Any:
        return record.get("metric")

    def _type(self, record: Any) -> Any:
        kind = record.get("type")
        return kind if kind.__class__ is int or kind.__class__ is str else None

    def _unit(self, record: Any) -> Any:
        return record.get("unit")

    def _tags(self, record: Any) -> list[Any]:
        return _list(record.get("tags"))

    def _resource(self, record: Any, kind: str) -> str | None:
        for resource in _list(record.get("resources")):
            if isinstance(resource, dict) and resource.get("type") == kind:
                name = resource.get("name", "")
                return name if name.__class__ is str else str(name)
        host = record.get("host") if kind == "host" else None
        return host if host.__class__ is str else None

    def _getter(self, selector: Selector) -> Getter:
        if selector.source is Source.FIELD and selector.name == "description":
            return lambda record, cache: record.get("description")
        return super()._getter(selector)


# -- protobuf ---------------------------------------------------------------------


class AgentPayload:
    """A decoded Agent ``MetricPayload`` or ``SketchPayload`` (lean): its
    records (series or sketches) and which of them are dropped."""

    __slots__ = ("dropped", "message", "records")

    def __init__(self, message: Any, records: Any) -> None:
        self.message = message
        self.records = records
        self.dropped: set[int] = set()

    @classmethod
    def parse_series(cls, body: bytes) -> AgentPayload:
        message = _parse(LeanMetricPayload, body)
        return cls(message, message.series)

    @classmethod
    def parse_sketches(cls, body: bytes) -> AgentPayload:
        message = _parse(LeanSketchPayload, body)
        return cls(message, message.sketches)

    def encode(self) -> bytes:
        """The payload without its dropped records, each run of consecutive
        drops deleted at once, from the end so that indexes stay valid."""
        records = self.records
        ordered = sorted(self.dropped, reverse=True)
        index = 0
        while index < len(ordered):
            stop = ordered[index] + 1
            start = stop - 1
            index += 1
            while index < len(ordered) and ordered[index] == start - 1:
                start -= 1
                index += 1
            del records[start:stop]
        return bytes(self.message.SerializeToString())


def _parse(message_class: Any, body: bytes) -> Any:
    message = message_class()
    try:
        message.ParseFromString(body)
    except DecodeError as problem:
        raise NotAnArray(f"not a protobuf {message_class.__name__}: {problem}") from None
    return message


class AgentSeriesView(_SeriesView):
    """Series of an Agent ``MetricPayload``."""

    record_class = LeanMetricSeries

    def _name(self, record: Any) -> Any:
        return record.metric or None

    def _type(self, record: Any) -> Any:
        return record.type

    def _unit(self, record: Any) -> Any:
        return record.unit or None

    def _tags(self, record: Any) -> list[Any]:
        return list(record.tags)

    def _resource(self, record: Any, kind: str) -> str | None:
        for resource in record.resources:
            if resource.type == kind:
                return resource.name  # type: ignore[no-any-return]
        return None


class AgentSketchView(_SeriesView):
    """Sketches (distributions) of an Agent ``SketchPayload``."""

    record_class = LeanSketch

    def _name(self, record: Any) -> Any:
        return record.metric or None

    def _tags(self, record: Any) -> list[Any]:
        return list(record.tags)

    def _resource(self, record: Any, kind: str) -> str | None:
        if kind == "host" and record.host:
            return record.host  # type: ignore[no-any-return]
        return None


SERIES_VIEW = DatadogSeriesView()
AGENT_SERIES_VIEW = AgentSeriesView()
AGENT_SKETCH_VIEW = AgentSketchView()
