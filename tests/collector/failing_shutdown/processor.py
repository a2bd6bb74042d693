"""``failingproc``: a processor that passes data on and whose shutdown fails
as configured."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from sluice.collector.component import Consumer, Processor, ProcessorFactory, Settings
from sluice.policy import Signal
from tests.collector.failing_shutdown import Failing, FailingConfig


class FailingProcessorFactory(ProcessorFactory[FailingConfig]):
    component_type = "failingproc"
    module = "example.com/failingproc"
    stability: ClassVar[Mapping[str, str]] = {"logs": "beta", "metrics": "beta", "traces": "beta"}
    config_type = FailingConfig

    def create(
        self, settings: Settings, config: FailingConfig, signal: Signal, next_: Consumer
    ) -> Processor:
        return Failing(config, next_)


FACTORY = FailingProcessorFactory()
