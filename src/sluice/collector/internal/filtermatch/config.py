"""The legacy ``include`` / ``exclude`` match properties (upstream's
``internal/filter/filterconfig``) and upstream's per-signal rules about them.

Which properties a signal may use is checked where upstream checks it, when
a processor is created for a pipeline (``validate`` runs the same checks).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

from sluice.collector.confmap.decode import NIL_POINTER, GoType
from sluice.policy import Signal

SeverityNumber = Annotated[int, GoType("plog.SeverityNumber", 32, True)]
"""pdata's ``plog.SeverityNumber``: an int32 with no text form (a severity
name is refused, a number past int32 wraps)."""


@dataclass(frozen=True)
class RegexpOptions:
    """``regexp``: a cache of match results, by matched text."""

    cacheenabled: bool = False
    cachemaxnumentries: int = 0
    """Bound of the cache; 0 is unbounded (upstream's legacy meaning)."""


@dataclass(frozen=True)
class AttributeMatch:
    """An entry of ``attributes`` / ``resources``: the key must be present and,
    when `value` is set, its value must match (equal for ``strict``; for
    ``regexp`` the value is a pattern over the value's text)."""

    key: str = ""
    value: Any = None


@dataclass(frozen=True)
class LibraryMatch:
    """An entry of ``libraries``: the instrumentation scope's name and, when
    set (even to ""), its version."""

    name: str = ""
    version: str | None = None


@dataclass(frozen=True)
class SeverityNumberMatch:
    """``log_severity_number``: records at `min` or above match; records with
    no severity number match only with `match_undefined`."""

    min: SeverityNumber = 0
    match_undefined: bool = False


@dataclass(frozen=True)
class MatchProperties:
    """``include`` or ``exclude``: every property given must match (AND);
    within ``services``, ``span_names``, ``span_kinds``, ``log_bodies``,
    ``log_severity_texts`` and ``metric_names`` one item matching is enough
    (OR); every entry of ``attributes``, ``resources`` and ``libraries`` must
    match (upstream's code, whatever its README says)."""

    match_type: Annotated[str, GoType("filterset.MatchType")] = ""
    regexp: Annotated[RegexpOptions | None, NIL_POINTER] = None
    services: list[str] = field(default_factory=list)
    span_names: list[str] = field(default_factory=list)
    span_kinds: list[str] = field(default_factory=list)
    log_bodies: list[str] = field(default_factory=list)
    log_severity_texts: list[str] = field(default_factory=list)
    log_severity_number: Annotated[SeverityNumberMatch | None, NIL_POINTER] = None
    metric_names: list[str] = field(default_factory=list)
    attributes: list[AttributeMatch] = field(default_factory=list)
    resources: list[AttributeMatch] = field(default_factory=list)
    libraries: list[LibraryMatch] = field(default_factory=list)


@dataclass(frozen=True)
class MetricMatchProperties:
    """The filter processor's ``metrics.include`` / ``metrics.exclude``
    (upstream's ``filterconfig.MetricMatchProperties``): metrics named in
    ``metric_names`` (or, with ``match_type: expr``, that ``expressions``
    match) and resources holding every ``resource_attributes`` entry, each
    decided on its own."""

    match_type: Annotated[str, GoType("filterconfig.MetricMatchType")] = ""
    regexp: Annotated[RegexpOptions | None, NIL_POINTER] = None
    metric_names: list[str] = field(default_factory=list)
    expressions: list[str] = field(default_factory=list)
    resource_attributes: list[AttributeMatch] = field(default_factory=list)


SPAN_KINDS = (
    "SPAN_KIND_UNSPECIFIED",
    "SPAN_KIND_INTERNAL",
    "SPAN_KIND_SERVER",
    "SPAN_KIND_CLIENT",
    "SPAN_KIND_PRODUCER",
    "SPAN_KIND_CONSUMER",
)
"""Span kind names by number, as upstream's ``traceutil.SpanKindStr``."""
_STRICT_SPAN_KINDS = sorted(SPAN_KINDS[1:])


def _for_spans(mp: MatchProperties) -> str | None:
    for name in ("log_bodies", "log_severity_texts"):
        if getattr(mp, name):
            return f"{name} should not be specified for trace spans"
    if mp.log_severity_number is not None:
        return "log_severity_number should not be specified for trace spans"
    if not (
        mp.services
        or mp.span_names
        or mp.attributes
        or mp.libraries
        or mp.resources
        or mp.span_kinds
    ):
        return 'at least one of "attributes", "libraries",  or "resources" field must be specified'
    if mp.match_type == "strict" and any(k not in _STRICT_SPAN_KINDS for k in mp.span_kinds):
        # Upstream lists the kinds after as many empty strings (it appends
        # to a slice made with that length), so Go's %v starts with spaces.
        listed = [""] * len(_STRICT_SPAN_KINDS) + _STRICT_SPAN_KINDS
        return (
            "span_kinds string must match one of the standard span kinds when "
            f"match_type=strict: [{' '.join(listed)}]"
        )
    return None


def _for_logs(mp: MatchProperties) -> str | None:
    if mp.span_names or mp.services or mp.span_kinds:
        return "services, span_names, and span_kinds are not valid for log records"
    if not (
        mp.attributes
        or mp.libraries
        or mp.resources
        or mp.log_bodies
        or mp.log_severity_texts
        or mp.log_severity_number is not None
    ):
        return (
            'at least one of "attributes", "libraries", "span_kinds", "resources", '
            '"log_bodies", "log_severity_texts" or "log_severity_number" field must be specified'
        )
    return None


def _for_metrics(mp: MatchProperties) -> str | None:
    """v0.115 checks nothing for metrics: what they do not use selects
    nothing (see :class:`~sluice.collector.internal.filtermatch.selection.Selection`'s
    ``unused``). Later versions refuse such properties; every config they
    accept loads here too."""
    return None


SIGNAL_RULES = {Signal.TRACE: _for_spans, Signal.LOG: _for_logs, Signal.METRIC: _for_metrics}
"""Upstream v0.115's ``ValidateForSpans`` / ``ValidateForLogs``, and no check for metrics."""
