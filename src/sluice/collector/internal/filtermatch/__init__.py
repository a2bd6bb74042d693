"""The legacy ``include`` / ``exclude`` matching of upstream's
``internal/filter`` (``filterconfig``, ``filterset``, ``filtermatcher``,
``filterspan``, ``filterlog``, ``filtermetric``): the attributes processor's,
and the filter processor's legacy ones."""

from sluice.collector.internal.filtermatch.config import (
    AttributeMatch,
    LibraryMatch,
    MatchProperties,
    RegexpOptions,
    SeverityNumberMatch,
)
from sluice.collector.internal.filtermatch.selection import (
    Chooser,
    LogFields,
    Selection,
    every,
    selection_problems,
)
from sluice.collector.internal.filtermatch.sets import MatchConfigError, StringSet

__all__ = [
    "AttributeMatch",
    "Chooser",
    "LibraryMatch",
    "LogFields",
    "MatchConfigError",
    "MatchProperties",
    "RegexpOptions",
    "Selection",
    "SeverityNumberMatch",
    "StringSet",
    "every",
    "selection_problems",
]
