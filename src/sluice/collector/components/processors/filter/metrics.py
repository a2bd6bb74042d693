"""Filtering metric requests: metrics against ``metrics.metric``, then the
data points of each kept metric against ``metrics.datapoint``; a metric
left without data points is dropped, then emptied scopes and resources.
Or the legacy ``metrics.include`` / ``metrics.exclude``. Items counted are
data points, as upstream."""

from __future__ import annotations

from typing import Any

from sluice.collector.components.processors.filter.legacy import MetricSkip
from sluice.collector.components.processors.filter.processor import Matcher
from sluice.ottl import DataPointItem, MetricItem
from sluice.policy import Signal
from sluice.telemetry.otlp_codec import PROTOBUF_FORMS

VIEW = PROTOBUF_FORMS[Signal.METRIC][1]


class MetricFilter:
    def __init__(self, metrics: Matcher | None, points: Matcher | None):
        self.metrics = metrics
        self.points = points

    def apply(self, batch: Any) -> int:
        """Drop matching metrics and data points in place; the number of data
        points dropped. Raises :class:`~sluice.ottl.ConditionFailed`."""
        metric_matches = self.metrics.matches if self.metrics is not None else None
        metric = MetricItem()
        point = DataPointItem()
        dropped = 0
        try:
            for resource in batch.resource_metrics:
                metric.rc = point.rc = resource
                for scope in resource.scope_metrics:
                    metric.sc = point.sc = scope
                    drop = []
                    for index, record in enumerate(scope.metrics):
                        kind = record.WhichOneof("data")
                        points = getattr(record, kind).data_points if kind else ()
                        metric.metric = record
                        metric.kind = kind
                        if metric_matches is not None and metric_matches(metric):
                            drop.append(index)
                            dropped += len(points)
                        elif self.points is not None and kind:
                            point.metric = record
                            point.kind = kind
                            before = len(points)
                            self._points(point, points)
                            dropped += before - len(points)
                            if not len(points):
                                drop.append(index)
                    if drop:
                        VIEW.remove_records(scope, drop)
        finally:
            for sequence in (self.metrics, self.points):
                if sequence is not None:
                    sequence.release()
        VIEW.prune(batch)
        return dropped

    def _points(self, item: DataPointItem, points: Any) -> None:
        assert self.points is not None
        matches = self.points.matches
        drop = []
        for index, record in enumerate(points):
            item.point = record
            if matches(item):
                drop.append(index)
        for index in reversed(drop):
            del points[index]


def _points(metric: Any) -> int:
    kind = metric.WhichOneof("data")
    return len(getattr(metric, kind).data_points) if kind else 0


class LegacyMetricFilter:
    """``metrics.include`` / ``metrics.exclude`` (upstream's skip expressions):
    a resource its resource part skips is dropped whole, then each metric
    its name part skips; emptied scopes and resources are removed."""

    def __init__(self, skip: MetricSkip):
        self.skip = skip

    def apply(self, batch: Any) -> int:
        """Drop skipped resources and metrics in place; the number of data
        points dropped."""
        skip = self.skip
        dropped = 0
        for resource in batch.resource_metrics:
            scopes = resource.scope_metrics
            if skip.tests_resources and skip.skips_resource(resource.resource):
                dropped += sum(_points(m) for scope in scopes for m in scope.metrics)
                del scopes[:]
                continue
            if not skip.tests_metrics:
                continue
            for scope in scopes:
                metrics = scope.metrics
                drop = [i for i, metric in enumerate(metrics) if skip.skips_metric(metric)]
                dropped += sum(_points(metrics[i]) for i in drop)
                VIEW.remove_records(scope, drop)
        VIEW.prune(batch)
        return dropped
