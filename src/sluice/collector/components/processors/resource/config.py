"""The ``resource`` processor's config: upstream's ``attributes``, the same
actions as the attributes processor's (see
:mod:`sluice.collector.internal.attraction`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from sluice.collector.component import ComponentConfig, Problem
from sluice.collector.internal.attraction import ActionConfig, action_problems


@dataclass(frozen=True)
class ResourceConfig(ComponentConfig):
    attributes: list[ActionConfig] = field(default_factory=list)
    """Applied in order to the attributes of every resource."""

    def validate(self) -> Iterator[Problem]:
        if not self.attributes:
            yield "", 'missing required field "attributes"'
            return
        yield from action_problems(self.attributes, "attributes")
