"""The ``zpages`` factory (core's zpagesextension)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from sluice.collector.component import Component, ExtensionFactory, Settings
from sluice.collector.components.extensions.zpages.config import ZPagesConfig


class ZPagesFactory(ExtensionFactory[ZPagesConfig]):
    component_type = "zpages"
    module = "go.opentelemetry.io/collector/extension/zpagesextension"
    stability: ClassVar[Mapping[str, str]] = {"extension": "beta"}
    config_type = ZPagesConfig

    def create(self, settings: Settings, config: ZPagesConfig) -> Component:
        from sluice.collector.components.extensions.zpages.extension import ZPagesExtension

        return ZPagesExtension(config, settings.logger)
