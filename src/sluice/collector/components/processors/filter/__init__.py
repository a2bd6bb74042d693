"""``filter``: drops logs, metrics, data points, spans and span events that
OTTL conditions match, and logs and spans by upstream's legacy
include/exclude, as upstream's filter processor."""

from sluice.collector.components.processors.filter.factory import FilterProcessorFactory

FACTORY = FilterProcessorFactory()

__all__ = ["FACTORY", "FilterProcessorFactory"]
