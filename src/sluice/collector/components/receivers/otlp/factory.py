"""The ``otlp`` receiver's factory (upstream ``receiver/otlpreceiver``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from sluice.collector.component import Component, Consumer, ReceiverFactory, Settings
from sluice.collector.components.receivers.otlp.config import OtlpReceiverConfig
from sluice.policy import Signal


class OtlpReceiverFactory(ReceiverFactory[OtlpReceiverConfig]):
    component_type = "otlp"
    module = "go.opentelemetry.io/collector/receiver/otlpreceiver"
    stability: ClassVar[Mapping[str, str]] = {
        "logs": "beta",
        "metrics": "stable",
        "traces": "stable",
    }
    config_type = OtlpReceiverConfig

    def create(
        self, settings: Settings, config: OtlpReceiverConfig, consumers: Mapping[Signal, Consumer]
    ) -> Component:
        from sluice.collector.components.receivers.otlp.receiver import OtlpReceiver

        return OtlpReceiver(settings, config, consumers)
