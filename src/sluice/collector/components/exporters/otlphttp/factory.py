"""The ``otlphttp`` exporter factory (also spelled ``otlp_http``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from sluice.collector.component import Exporter, ExporterFactory, Settings
from sluice.collector.components.exporters.otlphttp.config import OtlpHttpConfig
from sluice.policy import Signal


class OtlpHttpExporterFactory(ExporterFactory[OtlpHttpConfig]):
    component_type = "otlphttp"
    aliases: ClassVar[tuple[str, ...]] = ("otlp_http",)
    module = "go.opentelemetry.io/collector/exporter/otlphttpexporter"
    stability: ClassVar[Mapping[str, str]] = {
        "logs": "beta",
        "metrics": "stable",
        "traces": "stable",
    }
    config_type = OtlpHttpConfig

    def create(
        self, settings: Settings, config: OtlpHttpConfig, signals: frozenset[Signal]
    ) -> Exporter:
        from sluice.collector.components.exporters.otlphttp.exporter import OtlpHttpSender
        from sluice.collector.exporterhelper import QueuedRetryExporter

        sender = OtlpHttpSender(config, signals, settings)
        # The HTTP client's timeout covers each request, as upstream (whose
        # exporterhelper timeout is off for otlphttp).
        return QueuedRetryExporter(
            settings, signals, sender, config.sending_queue, config.retry_on_failure
        )
