"""``failingext``: an extension whose shutdown fails as configured."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from sluice.collector.component import Component, ExtensionFactory, Settings
from tests.collector.failing_shutdown import Failing, FailingConfig


class FailingExtensionFactory(ExtensionFactory[FailingConfig]):
    component_type = "failingext"
    module = "example.com/failingext"
    stability: ClassVar[Mapping[str, str]] = {"extension": "beta"}
    config_type = FailingConfig

    def create(self, settings: Settings, config: FailingConfig) -> Component:
        return Failing(config)


FACTORY = FailingExtensionFactory()
