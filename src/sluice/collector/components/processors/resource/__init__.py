"""``resource``: inserts, updates, deletes, hashes, extracts and converts
resource attributes of logs, metrics and traces, as upstream's resource
processor."""

from sluice.collector.components.processors.resource.factory import ResourceProcessorFactory

FACTORY = ResourceProcessorFactory()

__all__ = ["FACTORY", "ResourceProcessorFactory"]
