"""The ``debug`` exporter factory."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from sluice.collector.component import Exporter, ExporterFactory, Settings
from sluice.collector.components.exporters.debug.config import DebugConfig
from sluice.policy import Signal


class DebugExporterFactory(ExporterFactory[DebugConfig]):
    component_type = "debug"
    module = "go.opentelemetry.io/collector/exporter/debugexporter"
    stability: ClassVar[Mapping[str, str]] = {
        "logs": "development",
        "metrics": "development",
        "traces": "development",
    }
    config_type = DebugConfig

    def create(
        self, settings: Settings, config: DebugConfig, signals: frozenset[Signal]
    ) -> Exporter:
        from sluice.collector.components.exporters.debug.exporter import DebugSender
        from sluice.collector.exporterhelper import (
            QueuedRetryExporter,
            QueueSettings,
            RetrySettings,
        )

        # As upstream: no queue, no retries, no timeout; sent items are counted.
        return QueuedRetryExporter(
            settings,
            signals,
            DebugSender(config, settings.logger, str(settings.id)),
            QueueSettings(enabled=False),
            RetrySettings(enabled=False),
        )
