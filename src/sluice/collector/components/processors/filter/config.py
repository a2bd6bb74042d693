"""The ``filter`` processor's config: OTTL conditions per signal and
``error_mode``, and upstream's legacy ``logs.include`` / ``logs.exclude``
and ``spans.include`` / ``spans.exclude``, with upstream's keys and checks."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated

from sluice.collector.component import ComponentConfig, Problem
from sluice.collector.confmap.decode import NIL_POINTER, GoType
from sluice.collector.internal.filtermatch import (
    AttributeMatch,
    MatchProperties,
    MetricMatchProperties,
    RegexpOptions,
    SeverityNumberMatch,
)
from sluice.ottl import DATAPOINT, LOG, METRIC, PROPAGATE, SPAN, SPAN_EVENT, Context, check

ERROR_MODES = ("ignore", "propagate", "silent")
EXPR = (
    "match_type expr (the expr language) is not supported by Sluice's filter processor; "
    "write the expressions as OTTL conditions (metrics.datapoint)"
)
SEVERITIES: dict[str, int] = {}
"""``severity_number.min``'s names (upper-cased) and numbers, as upstream's:
``TRACE`` = ``"1"``, ``TRACE2`` = ``"2"``... ``FATAL4`` = ``"24"``."""
for _level, _short in enumerate(("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL")):
    for _step in range(4):
        _number = _level * 4 + _step + 1
        SEVERITIES[str(_number)] = SEVERITIES[f"{_short}{_step + 1 if _step else ''}"] = _number


@dataclass(frozen=True)
class SeverityNumberProperties:
    """``severity_number``: records at `min` or above match; records without
    a severity number match only with `match_undefined`."""

    min: Annotated[str, GoType("filterconfig.logSeverity")] = ""
    """A short name (``INFO``, ``warn2``; case-insensitive) or its number
    (``"9"``); empty: every defined severity."""
    match_undefined: bool = False

    def number(self) -> int:
        return SEVERITIES.get(self.min.upper(), 0)


@dataclass(frozen=True)
class LogMatchProperties:
    """``logs.include`` / ``logs.exclude`` (upstream's ``LogMatchProperties``):
    every property given must match; within a list one item is enough,
    except attributes, every entry of which must match."""

    match_type: str = ""
    """``strict`` or ``regexp`` (RE2, unanchored)."""
    resource_attributes: list[AttributeMatch] = field(default_factory=list)
    record_attributes: list[AttributeMatch] = field(default_factory=list)
    severity_texts: list[str] = field(default_factory=list)
    severity_number: Annotated[SeverityNumberProperties | None, NIL_POINTER] = None
    bodies: list[str] = field(default_factory=list)

    def is_empty(self) -> bool:
        """No property to match: upstream ignores such an include/exclude."""
        return not (
            self.resource_attributes
            or self.record_attributes
            or self.severity_texts
            or self.bodies
            or self.severity_number is not None
        )

    def match_properties(self) -> MatchProperties | None:
        """As the shared matcher's properties; None when empty."""
        if self.is_empty():
            return None
        severity = self.severity_number
        return MatchProperties(
            match_type=self.match_type,
            resources=self.resource_attributes,
            attributes=self.record_attributes,
            log_severity_texts=self.severity_texts,
            log_bodies=self.bodies,
            log_severity_number=None
            if severity is None
            else SeverityNumberMatch(severity.number(), severity.match_undefined),
        )


@dataclass(frozen=True)
class LogFilters:
    log_record: list[str] | None = None
    """Drop a log record when any condition is true (log context). None when
    not written: upstream tells it from a list written empty."""
    include: Annotated[LogMatchProperties | None, NIL_POINTER] = None
    """Keep only the records that match (legacy); a pointer upstream, so
    written null it stays unset."""
    exclude: Annotated[LogMatchProperties | None, NIL_POINTER] = None
    """Drop the records that match, after ``include`` (legacy)."""


@dataclass(frozen=True)
class SpanMatchConfig:
    """``spans``: upstream's legacy span matching, the attributes
    processor's ``include`` / ``exclude`` properties."""

    include: Annotated[MatchProperties | None, NIL_POINTER] = None
    exclude: Annotated[MatchProperties | None, NIL_POINTER] = None


@dataclass(frozen=True)
class MetricFilters:
    metric: list[str] | None = None
    """Drop a metric when any condition is true (metric context)."""
    datapoint: list[str] | None = None
    """Drop a data point when any condition is true (data point context); a
    metric left with no data points is dropped."""
    include: Annotated[MetricMatchProperties | None, NIL_POINTER] = None
    """Keep only the metrics that match (legacy): a resource must hold its
    ``resource_attributes``, a metric match its ``metric_names``."""
    exclude: Annotated[MetricMatchProperties | None, NIL_POINTER] = None
    """Drop the resources holding its ``resource_attributes`` and the
    metrics its ``metric_names`` match (legacy)."""
    regexp: Annotated[RegexpOptions | None, NIL_POINTER] = None
    """Read and not used, as upstream (``include.regexp`` / ``exclude.regexp``
    configure the patterns)."""

    def has_conditions(self) -> bool:
        """A condition list is written (even empty)."""
        return self.metric is not None or self.datapoint is not None


@dataclass(frozen=True)
class TraceFilters:
    span: list[str] | None = None
    """Drop a span when any condition is true (span context)."""
    spanevent: list[str] | None = None
    """Drop a span event when any condition is true (span event context)."""

    def has_conditions(self) -> bool:
        """A condition list is written (even empty): upstream then uses them
        and not ``spans.include`` / ``spans.exclude``."""
        return self.span is not None or self.spanevent is not None


@dataclass(frozen=True)
class FilterConfig(ComponentConfig):
    error_mode: str = PROPAGATE
    """What a condition that fails on an item does: ``propagate`` (the batch
    is refused), ``ignore`` (logged, the condition counts as false) or
    ``silent`` (the same, not logged). Case-insensitive, as upstream."""
    logs: LogFilters = field(default_factory=LogFilters)
    metrics: MetricFilters = field(default_factory=MetricFilters)
    traces: TraceFilters = field(default_factory=TraceFilters)
    spans: SpanMatchConfig = field(default_factory=SpanMatchConfig)

    @property
    def mode(self) -> str:
        return self.error_mode.lower()

    def conditions(self) -> list[tuple[str, Context, list[str] | None]]:
        """(key path, context, conditions) of every condition list, in the
        order upstream's Validate parses them."""
        return [
            ("traces::span", SPAN, self.traces.span),
            ("traces::spanevent", SPAN_EVENT, self.traces.spanevent),
            ("metrics::metric", METRIC, self.metrics.metric),
            ("metrics::datapoint", DATAPOINT, self.metrics.datapoint),
            ("logs::log_record", LOG, self.logs.log_record),
        ]

    def validate(self) -> Iterator[Problem]:
        """Upstream's checks in its order. An error_mode it cannot decode
        stops there (it never validates such a config), and so does the
        first signal that mixes OTTL conditions with include/exclude (its
        Validate returns that error alone)."""
        if self.mode not in ERROR_MODES:
            yield "error_mode", f"unknown error mode {self.mode}"
            return
        mixed = self._mixed()
        if mixed is not None:
            yield "", f"cannot use ottl conditions and include/exclude for {mixed} at the same time"
            return
        yield from self._legacy()
        for key, context, given in self.conditions():
            conditions = given or []
            for index, condition in enumerate(conditions):
                if not isinstance(condition, str):
                    yield f"{key}[{index}]", "a condition must be a string"
            texts = [c for c in conditions if isinstance(c, str)]
            for index, message in check(context, texts):
                yield f"{key}[{index}]", message

    def _mixed(self) -> str | None:
        """The first signal (spans, metrics, logs: upstream's order) given
        both OTTL conditions (a list written empty too, as upstream tests
        ``!= nil``) and include/exclude."""
        mixes = (
            ("spans", self.traces.has_conditions(), self.spans),
            ("metrics", self.metrics.has_conditions(), self.metrics),
            ("logs", self.logs.log_record is not None, self.logs),
        )
        for signal, conditions, legacy in mixes:
            if conditions and (legacy.include is not None or legacy.exclude is not None):
                return signal
        return None

    def _legacy(self) -> Iterator[Problem]:
        """Upstream's check of ``severity_number.min``."""
        for key in ("include", "exclude"):
            properties: LogMatchProperties | None = getattr(self.logs, key)
            severity = properties.severity_number if properties is not None else None
            if severity is not None and severity.min and severity.number() == 0:
                yield (
                    f"logs::{key}::severity_number::min",
                    f"'{severity.min}' is not a valid severity: not a valid severity",
                )
