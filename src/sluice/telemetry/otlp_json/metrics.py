"""The OTLP JSON view of metrics: resourceMetrics / scopeMetrics / metrics,
one record per metric."""

from __future__ import annotations

from typing import Any, ClassVar

from sluice.policy.model import METRIC_TYPE, TEMPORALITY
from sluice.policy.view import Ctx, Value
from sluice.telemetry.otlp_json.fields import enum_name, nonempty
from sluice.telemetry.otlp_json.view import Getter, JsonView

_METRIC_DATA = (
    ("gauge", "gauge"),
    ("sum", "sum"),
    ("histogram", "histogram"),
    ("exponentialHistogram", "exponential_histogram"),
    ("summary", "summary"),
)
_TEMPORALITIES = ("delta", "cumulative")


def metric_data(metric: Any) -> tuple[str, Any] | tuple[None, None]:
    for key, name in _METRIC_DATA:
        data = metric.get(key)
        if isinstance(data, dict):
            return name, data
    return None, None


def _metric_type(metric: Any) -> str | None:
    return metric_data(metric)[0]


def _temporality(metric: Any) -> str | None:
    name, data = metric_data(metric)
    if data is None or name not in ("sum", "histogram", "exponential_histogram"):
        return None
    return enum_name(data.get("aggregationTemporality"), "AGGREGATION_TEMPORALITY_", _TEMPORALITIES)


def _first_datapoint(metric: Any) -> Any:
    _, data = metric_data(metric)
    points = data.get("dataPoints") if data is not None else None
    return (
        points[0] if isinstance(points, list) and points and isinstance(points[0], dict) else None
    )


class JsonMetricView(JsonView):
    """OTLP JSON metrics: one record per metric; datapoint attributes come from
    the metric's first data point."""

    RESOURCES = "resourceMetrics"
    SCOPES = "scopeMetrics"
    RECORDS = "metrics"
    PLAIN_FIELDS: ClassVar[dict[str, str]] = {
        "name": "name",
        "description": "description",
        "unit": "unit",
    }

    def record_attribute_holder(self, record: Any) -> Any:
        return _first_datapoint(record)

    def scan_field(self, name: str) -> Getter:
        if name == METRIC_TYPE:
            return _metric_type
        if name == TEMPORALITY:
            return _temporality
        return lambda metric: nonempty(metric.get(name))

    def typed_field(self, ctx: Ctx, name: str) -> Value | None:
        value: Value | None = self.scan_field(name)(ctx.record)
        return value
