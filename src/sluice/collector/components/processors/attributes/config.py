"""The ``attributes`` processor's config: upstream's ``actions`` (see
:mod:`sluice.collector.internal.attraction`) and ``include`` / ``exclude``
(see :mod:`sluice.collector.internal.filtermatch`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated

from sluice.collector.component import ComponentConfig, Problem
from sluice.collector.confmap.decode import NIL_POINTER
from sluice.collector.internal.attraction import ActionConfig
from sluice.collector.internal.filtermatch import MatchProperties


@dataclass(frozen=True)
class AttributesConfig(ComponentConfig):
    actions: list[ActionConfig] = field(default_factory=list)
    """Applied in order to each selected span, log record or data point."""
    include: Annotated[MatchProperties | None, NIL_POINTER] = None
    """Only items matching these are processed (null: not set)."""
    exclude: Annotated[MatchProperties | None, NIL_POINTER] = None
    """Items matching these are not processed (checked after ``include``)."""

    def validate(self) -> Iterator[Problem]:
        """As upstream's ``Validate``: only a non-empty ``actions``; the actions
        themselves are checked when a pipeline creates the processor (see
        the factory's ``signal_problems``)."""
        if not self.actions:
            yield "", 'missing required field "actions"'
