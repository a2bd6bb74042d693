"""The ``policy`` processor's config: where policies come from."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sluice.collector.component import ComponentConfig, Problem
from sluice.providers import ConfigError, ProviderConfig, parse_providers
from sluice.providers.config import duplicate_id, parse_provider

KEY = "providers"


@dataclass(frozen=True)
class PolicyConfig(ComponentConfig):
    """``providers``: the same entries as Edge's ``policy_providers`` (file,
    http, grpc). A relative file ``path`` is relative to the directory the
    collector was started in, as upstream's file paths are."""

    providers: list[Any] = field(default_factory=list)

    def provider_configs(self) -> tuple[ProviderConfig, ...]:
        """The validated provider list (raises :class:`ConfigError`)."""
        # ${env:...} was expanded with the rest of the collector config:
        # expanding again would undo $$ escapes.
        return tuple(parse_providers(self.providers, KEY, Path.cwd(), expand=False))

    def validate(self) -> Iterator[Problem]:
        if not self.providers:
            yield KEY, "at least one policy provider is required"
            return
        if not isinstance(self.providers, list):
            yield KEY, "expected a list of providers"
            return
        # Each entry checked on its own, so that every bad entry is reported.
        seen: set[str] = set()
        for index, entry in enumerate(self.providers):
            try:
                config = parse_provider(entry, f"{KEY}[{index}]", index, Path.cwd(), expand=False)
            except ConfigError as problem:
                yield _problem(str(problem))
                continue
            if config.id in seen:
                yield _problem(str(duplicate_id(KEY, index, config.id)))
            seen.add(config.id)


def _problem(message: str) -> Problem:
    """A provider ConfigError (``providers[0].url: expected ...``) as a key
    path in the collector's notation (``providers[0]::url``) and a message."""
    where, _, what = message.partition(": ")
    return where.replace(".", "::"), what
