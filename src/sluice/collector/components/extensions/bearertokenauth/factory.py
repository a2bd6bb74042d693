"""The ``bearertokenauth`` factory (contrib's bearertokenauthextension)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from sluice.collector.component import Component, ExtensionFactory, Settings
from sluice.collector.components.extensions.bearertokenauth.config import BearerTokenAuthConfig


class BearerTokenAuthFactory(ExtensionFactory[BearerTokenAuthConfig]):
    component_type = "bearertokenauth"
    module = (
        "github.com/open-telemetry/opentelemetry-collector-contrib/extension/"
        "bearertokenauthextension"
    )
    stability: ClassVar[Mapping[str, str]] = {"extension": "beta"}
    config_type = BearerTokenAuthConfig

    def create(self, settings: Settings, config: BearerTokenAuthConfig) -> Component:
        from sluice.collector.components.extensions.bearertokenauth.extension import (
            BearerTokenAuth,
        )

        return BearerTokenAuth(config, settings.logger)
