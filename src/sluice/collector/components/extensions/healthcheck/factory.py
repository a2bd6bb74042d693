"""The ``health_check`` factory (contrib's healthcheckextension)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from sluice.collector.component import Component, ExtensionFactory, Settings
from sluice.collector.components.extensions.healthcheck.config import HealthCheckConfig


class HealthCheckFactory(ExtensionFactory[HealthCheckConfig]):
    component_type = "health_check"
    module = (
        "github.com/open-telemetry/opentelemetry-collector-contrib/extension/healthcheckextension"
    )
    stability: ClassVar[Mapping[str, str]] = {"extension": "beta"}
    config_type = HealthCheckConfig

    def create(self, settings: Settings, config: HealthCheckConfig) -> Component:
        from sluice.collector.components.extensions.healthcheck.extension import (
            HealthCheckExtension,
        )

        return HealthCheckExtension(config, settings.logger)
