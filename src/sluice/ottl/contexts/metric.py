"""The metric and data point contexts (upstream's ``ottlmetric`` and
``ottldatapoint``) over ``ExportMetricsServiceRequest`` messages."""

from __future__ import annotations

from typing import Any

from sluice.ottl.contexts.base import (
    COMMON,
    Context,
    Getter,
    Item,
    Resolution,
    Resolved,
    attributes_getter,
    leaf,
)
from sluice.ottl.syntax import Field
from sluice.ottl.values import Sequence, int64

METRIC_TYPES = {
    None: 0,
    "gauge": 1,
    "sum": 2,
    "histogram": 3,
    "exponential_histogram": 4,
    "summary": 5,
}
"""``pmetric.MetricType`` of each ``Metric.data`` field (0: empty)."""
ENUMS = {
    "AGGREGATION_TEMPORALITY_UNSPECIFIED": 0,
    "AGGREGATION_TEMPORALITY_DELTA": 1,
    "AGGREGATION_TEMPORALITY_CUMULATIVE": 2,
    "METRIC_DATA_TYPE_NONE": 0,
    "METRIC_DATA_TYPE_GAUGE": 1,
    "METRIC_DATA_TYPE_SUM": 2,
    "METRIC_DATA_TYPE_HISTOGRAM": 3,
    "METRIC_DATA_TYPE_EXPONENTIAL_HISTOGRAM": 4,
    "METRIC_DATA_TYPE_SUMMARY": 5,
}
DATAPOINT_ENUMS = {"FLAG_NONE": 0, "FLAG_NO_RECORDED_VALUE": 1, **ENUMS}
_TEMPORAL = ("sum", "histogram", "exponential_histogram")
_METRIC_PATHS = frozenset(
    {
        "name",
        "description",
        "unit",
        "type",
        "aggregation_temporality",
        "is_monotonic",
        "data_points",
    }
)
_POINT_TYPES = {
    "gauge": "pmetric.NumberDataPointSlice",
    "sum": "pmetric.NumberDataPointSlice",
    "histogram": "pmetric.HistogramDataPointSlice",
    "exponential_histogram": "pmetric.ExponentialHistogramDataPointSlice",
    "summary": "pmetric.SummaryDataPointSlice",
}


class MetricItem(Item):
    """One metric; `kind` is its ``data`` field (None when empty)."""

    __slots__ = ("kind", "metric")

    def __init__(self) -> None:
        super().__init__()
        self.metric: Any = None
        self.kind: str | None = None


class DataPointItem(MetricItem):
    """One data point of `metric` (of type `kind`)."""

    __slots__ = ("point",)

    def __init__(self) -> None:
        super().__init__()
        self.point: Any = None


def _temporality(item: MetricItem) -> Any:
    kind = item.kind
    if kind in _TEMPORAL:
        return getattr(item.metric, kind).aggregation_temporality
    return None


def _monotonic(item: MetricItem) -> Any:
    return item.metric.sum.is_monotonic if item.kind == "sum" else None


def _data_points(item: MetricItem) -> Any:
    kind = item.kind
    if kind is None:
        return None
    return Sequence(_POINT_TYPES[kind], getattr(item.metric, kind).data_points)


def metric_path(resolution: Resolution, fields: tuple[Field, ...]) -> Resolved:
    """The metric's own paths (also ``metric.*`` in the data point context)."""
    name = fields[0].name
    if name not in _METRIC_PATHS:
        raise resolution.error(name)
    leaf(resolution, fields)
    getter: Getter
    if name in ("name", "description", "unit"):
        getter = _metric_field(name)
    elif name == "type":
        getter = lambda item: METRIC_TYPES[item.kind]  # noqa: E731
    elif name == "aggregation_temporality":
        getter = _temporality
    elif name == "is_monotonic":
        getter = _monotonic
    else:
        return Resolved(_data_points, resolution.key(fields), sequence=True)
    return Resolved(getter, resolution.key(fields))


def _metric_field(name: str) -> Getter:
    return lambda item: getattr(item.metric, name)


def _number_value(field: str) -> Getter:
    """``value_int`` / ``value_double``: the point's value of that type, 0 when
    it holds the other, nil for points that are not number points."""

    def get(item: DataPointItem) -> Any:
        if item.kind not in ("gauge", "sum"):
            return None
        return getattr(item.point, field)

    return get


def _point_field(name: str, kinds: tuple[str, ...], convert: Any = None) -> Getter:
    def get(item: DataPointItem) -> Any:
        if item.kind not in kinds:
            return None
        value = getattr(item.point, name)
        return convert(value) if convert is not None else value

    return get


_ALL = ("gauge", "sum", "histogram", "exponential_histogram", "summary")
_HISTOGRAMS = ("histogram", "exponential_histogram", "summary")
_DATAPOINT_PATHS = frozenset(
    {
        "attributes",
        "start_time_unix_nano",
        "time_unix_nano",
        "flags",
        "value_int",
        "value_double",
        "count",
        "sum",
        "scale",
        "zero_count",
        "exemplars",
        "bucket_counts",
        "explicit_bounds",
        "quantile_values",
        "start_time",
        "time",
        "positive",
        "negative",
    }
)
_SEQUENCES = {
    "exemplars": (("gauge", "sum", "histogram", "exponential_histogram"), "pmetric.ExemplarSlice"),
    "bucket_counts": (("histogram",), "[]uint64"),
    "explicit_bounds": (("histogram",), "[]float64"),
    "quantile_values": (("summary",), "pmetric.SummaryDataPointValueAtQuantileSlice"),
}


def _point_sequence(name: str) -> Getter:
    kinds, type_name = _SEQUENCES[name]

    def get(item: DataPointItem) -> Any:
        if item.kind not in kinds:
            return None
        return Sequence(type_name, getattr(item.point, name))

    return get


def datapoint_path(resolution: Resolution, fields: tuple[Field, ...]) -> Resolved:
    name = fields[0].name
    if name not in _DATAPOINT_PATHS:
        raise resolution.error(name)
    if name in ("positive", "negative"):
        raise resolution.unsupported("exponential histogram buckets are outside Sluice's subset")
    last = leaf(resolution, fields, keys=name == "attributes")
    getter: Getter
    if name == "attributes":
        getter = attributes_getter(lambda item: item.point.attributes, last.keys)
    elif name in ("start_time_unix_nano", "time_unix_nano", "flags"):
        getter = _point_field(name, _ALL, int64)
    elif name == "value_int":
        getter = _number_value("as_int")
    elif name == "value_double":
        getter = _number_value("as_double")
    elif name == "count":
        getter = _point_field("count", _HISTOGRAMS, int64)
    elif name == "sum":
        getter = _point_field("sum", _HISTOGRAMS)
    elif name in ("scale", "zero_count"):
        getter = _point_field(name, ("exponential_histogram",), int64)
    elif name in _SEQUENCES:
        return Resolved(_point_sequence(name), resolution.key(fields), sequence=True)
    else:
        raise resolution.unsupported("time values need converters outside Sluice's subset")
    return Resolved(getter, resolution.key(fields))


METRIC = Context("metric", metric_path, ENUMS, COMMON)
DATAPOINT = Context("datapoint", datapoint_path, DATAPOINT_ENUMS, {**COMMON, "metric": metric_path})
