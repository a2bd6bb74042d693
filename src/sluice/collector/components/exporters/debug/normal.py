"""``verbosity: normal``: one line per log record, span or metric data point,
as upstream writes them:

- log record: ``<body> <k=v k=v>``
- span: ``<name> <trace id> <span id>[ <k=v k=v>]``
- data point: ``<metric>{<k=v,k=v>} <value>`` (histograms: ``count= sum=
  min= max=`` and ``le<bound>=<count>`` per bucket; summaries: quantiles)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sluice.collector.internal.go_text import (
    float_f,
    float_v,
    hex_id,
    value_as_string,
)


def _attributes(attributes: Any) -> list[str]:
    return [f"{kv.key}={value_as_string(kv.value)}" for kv in attributes]


def logs(request: Any) -> str:
    """`request`: a full ``ExportLogsServiceRequest``."""
    return "".join(
        f"{value_as_string(record.body)} {' '.join(_attributes(record.attributes))}\n"
        for resource in request.resource_logs
        for scope in resource.scope_logs
        for record in scope.log_records
    )


def traces(request: Any) -> str:
    lines = []
    for resource in request.resource_spans:
        for scope in resource.scope_spans:
            for span in scope.spans:
                line = f"{span.name} {hex_id(span.trace_id)} {hex_id(span.span_id)}"
                if span.attributes:
                    line += " " + " ".join(_attributes(span.attributes))
                lines.append(line + "\n")
    return "".join(lines)


def _number(point: Any) -> str:
    kind = point.WhichOneof("value")
    if kind == "as_int":
        return str(point.as_int)
    if kind == "as_double":
        return float_v(point.as_double)
    return ""


def _counts(point: Any) -> str:
    text = f"count={point.count}"
    for field in ("sum", "min", "max"):
        if point.HasField(field):
            text += f" {field}={float_v(getattr(point, field))}"
    return text


def _point_values(metric: Any) -> Iterator[tuple[Any, str]]:
    kind = metric.WhichOneof("data")
    if kind in ("gauge", "sum"):
        for point in getattr(metric, kind).data_points:
            yield point, _number(point)
    elif kind == "histogram":
        for point in metric.histogram.data_points:
            text = _counts(point)
            for i, count in enumerate(point.bucket_counts):
                bound = (
                    f"le{float_v(point.explicit_bounds[i])}="
                    if i < len(point.explicit_bounds)
                    else ""
                )
                text += f" {bound}{count}"
            yield point, text
    elif kind == "exponential_histogram":
        for point in metric.exponential_histogram.data_points:
            yield point, _counts(point)
    elif kind == "summary":
        for point in metric.summary.data_points:
            text = f"count={point.count} sum={float_f(point.sum)}"
            for quantile in point.quantile_values:
                text += f" q{float_v(quantile.quantile)}={float_v(quantile.value)}"
            yield point, text


def metrics(request: Any) -> str:
    return "".join(
        f"{metric.name}{{{','.join(_attributes(point.attributes))}}} {value}\n"
        for resource in request.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        for point, value in _point_values(metric)
    )
