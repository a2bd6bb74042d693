"""``attributes``: inserts, updates, deletes, hashes, extracts and converts
attributes of spans, log records and metric data points, optionally only of
the items ``include`` / ``exclude`` select, as upstream's attributes processor."""

from sluice.collector.components.processors.attributes.factory import (
    AttributesProcessorFactory,
)

FACTORY = AttributesProcessorFactory()

__all__ = ["FACTORY", "AttributesProcessorFactory"]
