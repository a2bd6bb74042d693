"""The ``policy`` processor's config: where policies come from."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sluice.collector.component import ComponentConfig, Problem
from sluice.collector.confmap.decode import AsWritten, plain, shallow
from sluice.confexpand import Expanded
from sluice.providers import ConfigError, ProviderConfig, parse_providers
from sluice.providers.config import HEADER_KEYS, TEXT_KEYS

KEY = "providers"


@dataclass(frozen=True)
class PolicyConfig(ComponentConfig):
    """``providers``: the same entries as Edge's ``policy_providers`` (file,
    http, grpc). A relative file ``path`` is relative to the directory the
    collector was started in, as upstream's file paths are."""

    providers: list[AsWritten] = field(default_factory=list)

    def __post_init__(self) -> None:
        object.__setattr__(self, "providers", _typed(self.providers, frozenset()))

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
        try:
            self.provider_configs()
        except ConfigError as problem:  # one line per problem, of every entry
            yield from map(_problem, str(problem).splitlines())


def _problem(message: str) -> Problem:
    """A provider ConfigError (``providers[0].url: expected ...``) as a key
    path in the collector's notation (``providers[0]::url``) and a message."""
    where, _, what = message.partition(": ")
    return where.replace(".", "::"), what


def _typed(value: Any, text_keys: frozenset[str]) -> Any:
    """`value` (a provider list, entry or header) with each whole ``${...}``
    read as upstream's decoder reads it into policy-go's ``ProviderConfig``:
    the text it stood for under a key that holds text (an id, a path, a
    header value: a token of digits stays text), its YAML value elsewhere."""
    value = shallow(value)
    if isinstance(value, list):
        return [_typed(item, TEXT_KEYS) for item in value]
    if not isinstance(value, Mapping):
        return plain(value)
    typed: dict[Any, Any] = {}
    for key, item in value.items():
        if isinstance(item, Expanded) and key in text_keys:
            typed[key] = item.text
        elif key == "headers" and isinstance(shallow(item), list):
            typed[key] = [_typed(header, HEADER_KEYS) for header in shallow(item)]
        else:
            typed[key] = plain(item)
    return typed
