"""The legacy ``include`` / ``exclude`` matching of upstream's
``internal/filter`` (``filterconfig``, ``filterset``, ``filtermatcher``,
``filterspan``, ``filterlog``, ``filtermetric``): the attributes processor's,
and the filter processor's legacy ones."""

from sluice.collector.internal.filtermatch.config import (
    AttributeMatch,
    LibraryMatch,
    MatchProperties,
    MetricMatchProperties,
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
from sluice.collector.internal.filtermatch.sets import (
    AttributesMatcher,
    MatchConfigError,
    StringSet,
)

__all__ = [
    "AttributeMatch",
    "AttributesMatcher",
    "Chooser",
    "LibraryMatch",
    "LogFields",
    "MatchConfigError",
    "MatchProperties",
    "MetricMatchProperties",
    "RegexpOptions",
    "Selection",
    "SeverityNumberMatch",
    "StringSet",
    "every",
    "selection_problems",
]
