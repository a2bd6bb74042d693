"""The ``resource`` processor's factory."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import ClassVar

from sluice.collector.component import Consumer, Problem, Processor, ProcessorFactory, Settings
from sluice.collector.components.processors.resource.config import ResourceConfig
from sluice.collector.internal.attraction import action_problems
from sluice.policy import Signal


class ResourceProcessorFactory(ProcessorFactory[ResourceConfig]):
    component_type = "resource"
    module = "github.com/open-telemetry/opentelemetry-collector-contrib/processor/resourceprocessor"
    stability: ClassVar[Mapping[str, str]] = {"logs": "beta", "metrics": "beta", "traces": "beta"}
    config_type = ResourceConfig
    needs_native = True
    """Regex patterns and regexp matching run on RE2 (the builder's cgo_enabled)."""

    def signal_problems(self, config: ResourceConfig, signal: Signal) -> Iterable[Problem]:
        """The first action's problem, upstream's ``NewAttrProc`` error when a
        pipeline creates the processor."""
        return action_problems(config.attributes, "attributes")

    def create(
        self, settings: Settings, config: ResourceConfig, signal: Signal, next_: Consumer
    ) -> Processor:
        from sluice.collector.components.processors.resource.processor import ResourceProcessor
        from sluice.collector.internal.attraction import AttrProc

        return ResourceProcessor(signal, next_, AttrProc(config.attributes))
