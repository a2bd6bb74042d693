"""The ``resource`` processor's config: upstream's ``attributes``, the same
actions as the attributes processor's (see
:mod:`sluice.collector.internal.attraction`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from sluice.collector.component import ComponentConfig, Problem
from sluice.collector.internal.attraction import ActionConfig


@dataclass(frozen=True)
class ResourceConfig(ComponentConfig):
    attributes: list[ActionConfig] = field(default_factory=list)
    """Applied in order to the attributes of every resource."""

    def validate(self) -> Iterator[Problem]:
        """As upstream's ``Validate``: only a non-empty ``attributes``; the
        actions themselves are checked when a pipeline creates the processor
        (see the factory's ``signal_problems``)."""
        if not self.attributes:
            yield "", 'missing required field "attributes"'
