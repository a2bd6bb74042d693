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
    Selection,
    selection_problems,
)
from sluice.collector.internal.filtermatch.sets import MatchConfigError, StringSet

__all__ = [
    "AttributeMatch",
    "Chooser",
    "LibraryMatch",
    "MatchConfigError",
    "MatchProperties",
    "RegexpOptions",
    "Selection",
    "SeverityNumberMatch",
    "StringSet",
    "selection_problems",
]
