"""The ``attributes`` processor's factory."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import ClassVar

from sluice.collector.component import (
    Consumer,
    Problem,
    Processor,
    ProcessorFactory,
    Settings,
)
from sluice.collector.components.processors.attributes.config import AttributesConfig
from sluice.collector.internal.attraction import action_problems
from sluice.collector.internal.filtermatch import selection_problems
from sluice.policy import Signal


class AttributesProcessorFactory(ProcessorFactory[AttributesConfig]):
    component_type = "attributes"
    module = (
        "github.com/open-telemetry/opentelemetry-collector-contrib/processor/attributesprocessor"
    )
    stability: ClassVar[Mapping[str, str]] = {"logs": "beta", "metrics": "beta", "traces": "beta"}
    config_type = AttributesConfig
    needs_native = True
    """Regex patterns and regexp matching run on RE2 (the builder's cgo_enabled)."""

    def signal_problems(self, config: AttributesConfig, signal: Signal) -> Iterable[Problem]:
        """Upstream's errors when a pipeline creates the processor, the first
        only, in its order: an action's (``NewAttrProc``), else ``include`` /
        ``exclude`` properties the signal does not have or that do not
        compile."""
        problems = list(action_problems(config.actions, "actions"))
        return problems or selection_problems(config.include, config.exclude, signal)

    def create(
        self, settings: Settings, config: AttributesConfig, signal: Signal, next_: Consumer
    ) -> Processor:
        from sluice.collector.components.processors.attributes.processor import (
            AttributesProcessor,
        )
        from sluice.collector.internal.attraction import AttrProc
        from sluice.collector.internal.filtermatch import Selection

        return AttributesProcessor(
            signal,
            next_,
            AttrProc(config.actions),
            Selection(config.include, config.exclude, signal),
            settings.logger,
        )
