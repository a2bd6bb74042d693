"""OTTL contexts: how each kind of item's paths read it. One module per
signal; each context names the item class its getters read."""

from sluice.ottl.contexts.base import ContainerMemo, Context, Getter, Resolved
from sluice.ottl.contexts.log import LOG, LogItem
from sluice.ottl.contexts.metric import DATAPOINT, METRIC, DataPointItem, MetricItem
from sluice.ottl.contexts.trace import SPAN, SPAN_EVENT, SpanEventItem, SpanItem

__all__ = [
    "DATAPOINT",
    "LOG",
    "METRIC",
    "SPAN",
    "SPAN_EVENT",
    "ContainerMemo",
    "Context",
    "DataPointItem",
    "Getter",
    "LogItem",
    "MetricItem",
    "Resolved",
    "SpanEventItem",
    "SpanItem",
]
