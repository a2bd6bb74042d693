"""The ``pprof`` factory (contrib's pprofextension)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from sluice.collector.component import Component, ExtensionFactory, Settings
from sluice.collector.components.extensions.pprof.config import PprofConfig


class PprofFactory(ExtensionFactory[PprofConfig]):
    component_type = "pprof"
    module = "github.com/open-telemetry/opentelemetry-collector-contrib/extension/pprofextension"
    stability: ClassVar[Mapping[str, str]] = {"extension": "beta"}
    config_type = PprofConfig

    def create(self, settings: Settings, config: PprofConfig) -> Component:
        from sluice.collector.components.extensions.pprof.extension import PprofExtension

        return PprofExtension(config, settings.logger)
