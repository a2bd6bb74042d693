"""Upstream's legacy matching (``logs.include`` / ``logs.exclude``,
``spans.include`` / ``spans.exclude``: its ``filterlog`` and ``filterspan``
skip expressions; ``metrics.include`` / ``metrics.exclude``: its
``filtermetric`` name matcher and resource expression) on the shared
:mod:`~sluice.collector.internal.filtermatch`.

An item is dropped when it does not match ``include`` (if given) or matches
``exclude``: exactly the items the attributes processor's
:class:`~sluice.collector.internal.filtermatch.Selection` does not select.
A :class:`LegacyMatcher` stands where the walkers (``logs.py``,
``traces.py``) use an OTTL condition sequence: ``matches`` is true for an
item to drop.

Cost: the resource and scope part of both properties is decided once per
scope; a scope wholly kept or dropped reads no record. Otherwise only the
properties given are read, from lean records as the OTTL log context reads
them: the body and severity text from the record's bytes, the severity
number from the record parsed once with its attributes left raw, and the
attributes (each ``KeyValue`` parsed) only when attributes are matched.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from google.protobuf.message import DecodeError
from opentelemetry.proto.common.v1.common_pb2 import KeyValue

from sluice.collector.component import Problem
from sluice.collector.components.processors.filter.config import EXPR, FilterConfig
from sluice.collector.internal.attrmap import AttributeMap
from sluice.collector.internal.filtermatch import (
    AttributesMatcher,
    LogFields,
    MatchConfigError,
    MatchProperties,
    MetricMatchProperties,
    Selection,
    StringSet,
    every,
    selection_problems,
)
from sluice.ottl import IGNORE, PROPAGATE, ConditionFailed, Failures, OttlRuntimeError
from sluice.ottl.contexts.log import attribute_list, body_string, severity_number, severity_text
from sluice.policy import Signal

LEAN_LOG_FIELDS = LogFields(body_string, severity_text, severity_number)
"""Log fields read from a :class:`~sluice.ottl.LogItem` (lean record bytes)."""

Reader = Callable[[Any, bool], tuple[Any, Any]]
"""An item -> (what the item tests read, its ``KeyValue`` entries when the
bool asks for them, else ``()``)."""


def _lean_record(item: Any, attributes: bool) -> tuple[Any, Any]:
    if not attributes:
        return item, ()
    try:
        return item, [KeyValue.FromString(raw) for raw in attribute_list(item)]
    except DecodeError as broken:
        raise OttlRuntimeError(f"log record attribute is not a KeyValue: {broken}") from None


def _span(item: Any, attributes: bool) -> tuple[Any, Any]:
    span = item.span
    return span, span.attributes if attributes else ()


class LegacyMatcher:
    """Include/exclude for one signal, asked item by item in a batch's order
    (the scope's decision is remembered until the scope changes)."""

    def __init__(self, selection: Selection, read: Reader, label: str, error_mode: str):
        self.selection = selection
        self.read = read
        self.label = label
        """Names the matching in errors, as a condition's text would."""
        self.error_mode = error_mode
        self.failures = Failures()
        self._scope: Any = None
        self._choose: Any = None

    def matches(self, item: Any) -> bool:
        """Whether `item` is to be dropped. A log record whose bytes cannot be
        read fails as an OTTL condition would (``error_mode``): with
        ``ignore`` or ``silent`` it is kept."""
        scope = item.sc
        if scope is not self._scope:
            self._scope = scope
            self._choose = self.selection.scope_test(item.rc.resource, scope.scope)
        choose = self._choose
        if choose is None:
            return True
        if choose is every:
            return False
        try:
            record, kvs = self.read(item, self.selection.reads_attributes)
            return choose(record, kvs) is None
        except OttlRuntimeError as error:
            if self.error_mode == PROPAGATE:
                raise ConditionFailed(self.label, error) from None
            if self.error_mode == IGNORE:
                self.failures.add(self.label, error)
            return False

    def release(self) -> None:
        self._scope = self._choose = None


def log_properties(config: FilterConfig) -> tuple[MatchProperties | None, MatchProperties | None]:
    """``logs.include`` and ``logs.exclude`` as match properties (None when
    absent or empty: upstream ignores an empty one)."""
    logs = config.logs
    return (
        None if logs.include is None else logs.include.match_properties(),
        None if logs.exclude is None else logs.exclude.match_properties(),
    )


class MetricSkip:
    """Upstream's legacy metric matching, two skip expressions decided on
    their own: a resource is dropped when it lacks ``include``'s
    ``resource_attributes`` or holds ``exclude``'s; then a metric is dropped
    when ``include``'s ``metric_names`` do not match its name or
    ``exclude``'s do. A property set without resource attributes (or
    without names) tests nothing on that level.

    Raises :class:`MetricMatchError` with upstream's error, built in its
    order: resources of include, of exclude, then names of include, of
    exclude."""

    def __init__(
        self, include: MetricMatchProperties | None, exclude: MetricMatchProperties | None
    ):
        self.keep_resources = _built("include", _resource_matcher, include)
        self.drop_resources = _built("exclude", _resource_matcher, exclude)
        self.keep_names = _built("include", _name_set, include)
        self.drop_names = _built("exclude", _name_set, exclude)
        self.tests_resources = self.keep_resources is not None or self.drop_resources is not None
        self.tests_metrics = self.keep_names is not None or self.drop_names is not None

    def skips_resource(self, resource: Any) -> bool:
        attributes = AttributeMap(resource.attributes)
        if self.keep_resources is not None and not self.keep_resources.matches(attributes):
            return True
        return self.drop_resources is not None and self.drop_resources.matches(attributes)

    def skips_metric(self, metric: Any) -> bool:
        name = metric.name
        if self.keep_names is not None and not self.keep_names.matches(name):
            return True
        return self.drop_names is not None and self.drop_names.matches(name)


class MetricMatchError(MatchConfigError):
    """A legacy metric property set upstream does not build; `where` is
    ``include`` or ``exclude``."""

    def __init__(self, where: str, problem: MatchConfigError):
        super().__init__(str(problem))
        self.where = where


T = TypeVar("T")


def _built(
    where: str,
    build: Callable[[MetricMatchProperties | None], T],
    mp: MetricMatchProperties | None,
) -> T:
    try:
        return build(mp)
    except MatchConfigError as bad:
        raise MetricMatchError(where, bad) from None


def _resource_matcher(mp: MetricMatchProperties | None) -> AttributesMatcher | None:
    if mp is None or not mp.resource_attributes:
        return None
    return AttributesMatcher(mp.resource_attributes, mp.match_type, mp.regexp)


def _name_set(mp: MetricMatchProperties | None) -> StringSet | None:
    if mp is None:
        return None
    if mp.match_type == "expr":
        if mp.expressions:
            raise MatchConfigError(EXPR)
        return None  # upstream has no matcher without expressions
    if not mp.metric_names:
        return None
    return StringSet(mp.metric_names, mp.match_type, mp.regexp)


def metric_skip(config: FilterConfig) -> MetricSkip | None:
    """The legacy metric matching; None when it tests nothing (the
    processor then passes metrics untouched, as upstream)."""
    metrics = config.metrics
    if metrics.has_conditions():
        return None
    skip = MetricSkip(metrics.include, metrics.exclude)
    return skip if skip.tests_resources or skip.tests_metrics else None


def legacy_problems(config: FilterConfig, signal: Signal) -> list[Problem]:
    """What upstream refuses when it builds the legacy matching for a
    pipeline of `signal` (its wording: logs' errors are wrapped)."""
    if signal is Signal.METRIC and not config.metrics.has_conditions():
        try:
            MetricSkip(config.metrics.include, config.metrics.exclude)
        except MetricMatchError as bad:
            return [(f"metrics::{bad.where}", str(bad))]
        return []
    if signal is Signal.LOG and config.logs.log_record is None:
        return [
            (f"logs::{where}", f"failed to build skip matcher: {message}")
            for where, message in selection_problems(*log_properties(config), Signal.LOG)
        ]
    if signal is Signal.TRACE and not config.traces.has_conditions():
        spans = config.spans
        return [
            (f"spans::{where}", message)
            for where, message in selection_problems(spans.include, spans.exclude, Signal.TRACE)
        ]
    return []


def legacy_matcher(config: FilterConfig, signal: Signal) -> LegacyMatcher | None:
    """The legacy matching of `signal`; None when none is configured."""
    if signal is Signal.LOG:
        include, exclude = log_properties(config)
        read, label = _lean_record, "logs.include/exclude"
    elif signal is Signal.TRACE:
        include, exclude = config.spans.include, config.spans.exclude
        read, label = _span, "spans.include/exclude"
    else:
        return None
    if include is None and exclude is None:
        return None
    selection = Selection(include, exclude, signal, LEAN_LOG_FIELDS)
    return LegacyMatcher(selection, read, label, config.mode)
