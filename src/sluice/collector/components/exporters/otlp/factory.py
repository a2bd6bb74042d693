"""The ``otlp`` (gRPC) exporter factory."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from sluice.collector.component import Exporter, ExporterFactory, Settings
from sluice.collector.components.exporters.otlp.config import OtlpGrpcConfig
from sluice.policy import Signal


class OtlpGrpcExporterFactory(ExporterFactory[OtlpGrpcConfig]):
    component_type = "otlp"
    aliases: ClassVar[tuple[str, ...]] = ("otlp_grpc",)
    """Upstream's name for it since v0.144 (``otlp`` stays as its deprecated alias)."""
    module = "go.opentelemetry.io/collector/exporter/otlpexporter"
    stability: ClassVar[Mapping[str, str]] = {
        "logs": "beta",
        "metrics": "stable",
        "traces": "stable",
    }
    config_type = OtlpGrpcConfig

    def create(
        self, settings: Settings, config: OtlpGrpcConfig, signals: frozenset[Signal]
    ) -> Exporter:
        from sluice.collector.components.exporters.otlp.exporter import OtlpGrpcSender
        from sluice.collector.exporterhelper import QueuedRetryExporter

        sender = OtlpGrpcSender(config, signals, settings)
        # `timeout` is each call's gRPC deadline (DEADLINE_EXCEEDED is retryable).
        return QueuedRetryExporter(
            settings, signals, sender, config.sending_queue, config.retry_on_failure
        )
