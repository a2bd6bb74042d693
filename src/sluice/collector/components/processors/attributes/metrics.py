"""Metrics: the attributes of every data point of each selected metric
(``include`` / ``exclude`` select metrics, by name and resource)."""

from __future__ import annotations

from typing import Any

from sluice.collector.internal.attraction import AttrProc
from sluice.collector.internal.filtermatch import Selection


def process_metrics(data: Any, actions: AttrProc, selection: Selection) -> int:
    """Apply `actions` in place (every point is readable: returns 0)."""
    for scope_metrics, choose in selection.scopes(data.resource_metrics, "scope_metrics"):
        for metric in scope_metrics.metrics:
            kind = metric.WhichOneof("data")
            if kind is None or choose(metric, ()) is None:
                continue
            for point in getattr(metric, kind).data_points:
                actions.process(point.attributes)
    return 0
