"""The ``basicauth`` factory (contrib's basicauthextension): a server
authenticator for an ``htpasswd`` config, a client one for ``client_auth``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from sluice.collector.component import Component, ExtensionFactory, Settings
from sluice.collector.components.extensions.basicauth.config import (
    NO_CREDENTIAL_SOURCE,
    BasicAuthConfig,
)


class BasicAuthFactory(ExtensionFactory[BasicAuthConfig]):
    component_type = "basicauth"
    module = (
        "github.com/open-telemetry/opentelemetry-collector-contrib/extension/basicauthextension"
    )
    stability: ClassVar[Mapping[str, str]] = {"extension": "beta"}
    config_type = BasicAuthConfig

    def create(self, settings: Settings, config: BasicAuthConfig) -> Component:
        """Raises ValueError for an `htpasswd` with neither `file` nor
        `inline`, as upstream refuses to make it (its config is valid, so
        only a collector that runs the extension fails)."""
        if config.htpasswd is not None:
            if not config.htpasswd.file and not config.htpasswd.inline:
                raise ValueError(NO_CREDENTIAL_SOURCE)
            from sluice.collector.components.extensions.basicauth.server import BasicAuthServer

            return BasicAuthServer(config.htpasswd, settings.logger)
        from sluice.collector.components.extensions.basicauth.client import BasicAuthClient

        assert config.client_auth is not None  # validated: one of the two
        return BasicAuthClient(config.client_auth, settings.logger)
