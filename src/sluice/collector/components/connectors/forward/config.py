"""The ``forward`` connector has no settings (upstream's config is empty)."""

from __future__ import annotations

from dataclasses import dataclass

from sluice.collector.component import ComponentConfig


@dataclass(frozen=True)
class ForwardConfig(ComponentConfig):
    pass
