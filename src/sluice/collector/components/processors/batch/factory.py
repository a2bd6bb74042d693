"""The ``batch`` processor's factory."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from sluice.collector.component import Consumer, Processor, ProcessorFactory, Settings
from sluice.collector.components.processors.batch.config import BatchConfig
from sluice.policy import Signal


class BatchProcessorFactory(ProcessorFactory[BatchConfig]):
    component_type = "batch"
    module = "go.opentelemetry.io/collector/processor/batchprocessor"
    stability: ClassVar[Mapping[str, str]] = {"logs": "beta", "metrics": "beta", "traces": "beta"}
    config_type = BatchConfig
    counts_items = False  # upstream's is not built on processorhelper

    def create(
        self, settings: Settings, config: BatchConfig, signal: Signal, next_: Consumer
    ) -> Processor:
        from sluice.collector.components.processors.batch.processor import BatchProcessor
        from sluice.collector.components.processors.batch.telemetry import BatchTelemetry

        telemetry = BatchTelemetry.of(settings)
        return BatchProcessor(signal, next_, config, settings.logger, telemetry, str(settings.id))
