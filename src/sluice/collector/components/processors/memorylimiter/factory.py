"""The ``memory_limiter`` processor's factory: one limiter per component id,
shared by the pipelines that use it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from sluice.collector.component import Consumer, Processor, ProcessorFactory, Settings
from sluice.collector.components.processors.memorylimiter.config import MemoryLimiterConfig
from sluice.policy import Signal

SHARED_KEY = "memory_limiter"


class MemoryLimiterProcessorFactory(ProcessorFactory[MemoryLimiterConfig]):
    component_type = "memory_limiter"
    module = "go.opentelemetry.io/collector/processor/memorylimiterprocessor"
    stability: ClassVar[Mapping[str, str]] = {"logs": "beta", "metrics": "beta", "traces": "beta"}
    config_type = MemoryLimiterConfig

    def create(
        self, settings: Settings, config: MemoryLimiterConfig, signal: Signal, next_: Consumer
    ) -> Processor:
        """Raises OSError when a percentage limit is set and total memory is unknown."""
        from sluice.collector.components.processors.memorylimiter.limiter import (
            Limits,
            MemoryLimiter,
        )
        from sluice.collector.components.processors.memorylimiter.memory import (
            MIB,
            total_memory,
        )
        from sluice.collector.components.processors.memorylimiter.processor import (
            MemoryLimiterProcessor,
        )
        from sluice.collector.components.processors.memorylimiter.telemetry import (
            MemoryLimiterTelemetry,
        )
        from sluice.heap import resident_bytes

        limiters: dict[str, MemoryLimiter] = settings.shared.setdefault(SHARED_KEY, {})
        limiter = limiters.get(str(settings.id))
        if limiter is None:
            total = 0
            if not config.limit_mib:
                try:
                    total = total_memory()
                except OSError as unknown:
                    raise OSError(
                        "failed to get total memory, use fixed memory settings (limit_mib): "
                        f"{unknown}"
                    ) from None
                fields = {
                    "total_memory_mib": total // MIB,
                    "limit_percentage": config.limit_percentage,
                    "spike_limit_percentage": config.spike_limit_percentage,
                }
                settings.logger.info("Using percentage memory limiter", extra={"fields": fields})
            limits = Limits.of(config, total)
            limiter = MemoryLimiter(
                limits, float(config.check_interval), settings.logger, resident_bytes
            )
            limiters[str(settings.id)] = limiter
        accepted, refused = MemoryLimiterTelemetry.of(settings).series(str(settings.id), signal)
        return MemoryLimiterProcessor(limiter, next_, signal, accepted, refused)
