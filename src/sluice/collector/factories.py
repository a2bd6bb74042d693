"""The component types a distribution holds, by kind (upstream's
``otelcol.Factories``). The built-in distribution loads every package listed
in :data:`BUILTIN`; a custom build loads only the packages it names, so it
never imports components it does not hold."""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import Any

from sluice.collector.component import Factory, Kind

_PACKAGE = "sluice.collector.components"
BUILTIN: tuple[str, ...] = tuple(
    f"{_PACKAGE}.{name}"
    for name in (
        "receivers.otlp",
        "processors.attributes",
        "processors.batch",
        "processors.filter",
        "processors.memorylimiter",
        "processors.policy",
        "processors.resource",
        "exporters.debug",
        "exporters.otlp",
        "exporters.otlphttp",
        "connectors.forward",
        "extensions.basicauth",
        "extensions.bearertokenauth",
        "extensions.healthcheck",
        "extensions.healthcheckv2",
        "extensions.pprof",
        "extensions.zpages",
    )
)


class Factories:
    """Factories by kind and type (aliases included)."""

    def __init__(self, factories: Iterable[Factory[Any]]):
        self.by_kind: dict[Kind, dict[str, Factory[Any]]] = {kind: {} for kind in Kind}
        self.aliases: dict[Kind, dict[str, str]] = {kind: {} for kind in Kind}
        for factory in factories:
            self.by_kind[factory.kind][factory.component_type] = factory
            for alias in getattr(factory, "aliases", ()):
                self.aliases[factory.kind][alias] = factory.component_type

    @classmethod
    def load(cls, packages: Iterable[str] = BUILTIN) -> Factories:
        """Import each package's ``FACTORY``."""
        return cls(importlib.import_module(p).FACTORY for p in packages)

    def get(self, kind: Kind, type_: str) -> Factory[Any] | None:
        table = self.by_kind[kind]
        return table.get(type_) or table.get(self.aliases[kind].get(type_, ""))

    def types(self, kind: Kind) -> list[str]:
        return sorted(self.by_kind[kind])
