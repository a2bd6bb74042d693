"""``zpages``: live HTML (and JSON) pages about the running collector: build
and runtime info, pipelines and their components' status, extensions and
feature gates."""

from sluice.collector.components.extensions.zpages.factory import ZPagesFactory

FACTORY = ZPagesFactory()

__all__ = ["FACTORY", "ZPagesFactory"]
