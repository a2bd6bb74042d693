"""``batch``: groups requests into batches by item count and time, and cuts
large ones, as upstream's batch processor, with back-pressure."""

from sluice.collector.components.processors.batch.factory import BatchProcessorFactory

FACTORY = BatchProcessorFactory()

__all__ = ["FACTORY", "BatchProcessorFactory"]
