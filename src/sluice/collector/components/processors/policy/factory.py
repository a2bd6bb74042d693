"""The ``policy`` processor's factory."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from sluice.collector.component import Consumer, Processor, ProcessorFactory, Settings
from sluice.collector.components.processors.policy.config import PolicyConfig
from sluice.policy import Signal


class PolicyProcessorFactory(ProcessorFactory[PolicyConfig]):
    component_type = "policy"
    module = "github.com/usetero/tero-collector-distro/processor/policyprocessor"
    stability: ClassVar[Mapping[str, str]] = {
        "logs": "alpha",
        "metrics": "development",
        "traces": "development",
    }
    config_type = PolicyConfig
    needs_native = True
    version = "0.2.0"
    """The policy processor release whose config and behaviour this follows."""

    def create(
        self, settings: Settings, config: PolicyConfig, signal: Signal, next_: Consumer
    ) -> Processor:
        from sluice.collector.components.processors.policy.processor import PolicyProcessor
        from sluice.collector.components.processors.policy.registries import PolicyRegistries

        registries = PolicyRegistries.of(settings)
        return PolicyProcessor(
            signal,
            next_,
            config.provider_configs(),
            registries,
            registries.counter(str(settings.id), signal),
            settings.logger,
        )
