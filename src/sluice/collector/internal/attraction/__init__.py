"""Attribute actions (upstream's ``internal/coreinternal/attraction``): the
``actions`` of the attributes processor and the ``attributes`` of the resource
processor, validated with upstream's wording and compiled once."""

from sluice.collector.internal.attraction.config import ActionConfig, action_problems
from sluice.collector.internal.attraction.engine import AttrProc

__all__ = ["ActionConfig", "AttrProc", "action_problems"]
