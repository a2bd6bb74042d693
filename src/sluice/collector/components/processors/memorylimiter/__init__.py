"""``memory_limiter``: refuses data (retryably) while the collector's memory
is above a soft limit, and collects garbage at the hard limit."""

from sluice.collector.components.processors.memorylimiter.factory import (
    MemoryLimiterProcessorFactory,
)

FACTORY = MemoryLimiterProcessorFactory()

__all__ = ["FACTORY", "MemoryLimiterProcessorFactory"]
