"""The ``healthcheckv2`` factory (contrib's healthcheckv2extension)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from sluice.collector.component import Component, ExtensionFactory, Settings
from sluice.collector.components.extensions.healthcheckv2.config import HealthCheckV2Config


class HealthCheckV2Factory(ExtensionFactory[HealthCheckV2Config]):
    component_type = "healthcheckv2"
    module = (
        "github.com/open-telemetry/opentelemetry-collector-contrib/extension/healthcheckv2extension"
    )
    stability: ClassVar[Mapping[str, str]] = {"extension": "development"}
    config_type = HealthCheckV2Config

    def create(self, settings: Settings, config: HealthCheckV2Config) -> Component:
        from sluice.collector.components.extensions.healthcheckv2.extension import (
            HealthCheckV2Extension,
        )

        return HealthCheckV2Extension(config, settings.logger)
