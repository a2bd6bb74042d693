"""Metrics: the attributes of every data point of each selected metric
(``include`` / ``exclude`` select metrics, by name and resource)."""

from __future__ import annotations

from typing import Any

from sluice.collector.internal.attraction import AttrProc
from sluice.collector.internal.filtermatch import EVERY, Selection


def process_metrics(data: Any, actions: AttrProc, selection: Selection) -> int:
    """Apply `actions` in place (every point is readable: returns 0)."""
    for resource_metrics in data.resource_metrics:
        resource = resource_metrics.resource
        for scope_metrics in resource_metrics.scope_metrics:
            test = selection.scope_test(resource, scope_metrics.scope)
            if test is None:
                continue
            every = test is EVERY
            for metric in scope_metrics.metrics:
                kind = metric.WhichOneof("data")
                if kind is None or not (every or test(metric)):
                    continue
                for point in getattr(metric, kind).data_points:
                    actions.process(point.attributes)
    return 0
