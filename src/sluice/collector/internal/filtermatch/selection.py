"""Which items ``include`` / ``exclude`` select (upstream's ``filterspan``,
``filterlog`` and ``filtermetric`` skip expressions): an item is processed
when it matches ``include`` (if given) and does not match ``exclude``.

Items are spans, log records (parsed ``LogRecord`` messages) and metrics.
Properties of the resource and scope (``services``, ``resources``,
``libraries``) are decided once per scope; only the item's own properties
are tested per item, and a scope none of whose items is selected is not
walked at all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from sluice.collector.component import Problem
from sluice.collector.internal.filtermatch.config import (
    SIGNAL_RULES,
    SPAN_KINDS,
    MatchProperties,
)
from sluice.collector.internal.filtermatch.sets import (
    AttributesMatcher,
    MatchConfigError,
    StringSet,
)
from sluice.collector.internal.go_text import value_as_string
from sluice.policy import Signal

ItemTest = Callable[[Any], bool]


def EVERY(item: Any) -> bool:
    """The test of a scope whose items are all selected (walkers check for it
    by identity and skip the call)."""
    return True


def _built(prefix: str, build: Callable[[], Any]) -> Any:
    try:
        return build()
    except MatchConfigError as bad:
        raise MatchConfigError(f"{prefix}: {bad}") from None


class _Properties:
    """One ``include`` or ``exclude`` compiled for one signal."""

    def __init__(self, mp: MatchProperties, signal: Signal):
        problem = SIGNAL_RULES[signal](mp)
        if problem is not None:
            raise MatchConfigError(problem)
        self.services: StringSet | None = None
        self.libraries: list[tuple[StringSet, StringSet | None]] = []
        self.resources: AttributesMatcher | None = None
        if signal is Signal.METRIC:
            tests = _metric_tests(mp)
        else:
            self._scope_properties(mp)
            tests = _span_tests(mp) if signal is Signal.TRACE else _log_tests(mp)
            if mp.attributes:
                attributes = _built(
                    "error creating attribute filters",
                    lambda: AttributesMatcher(mp.attributes, mp.match_type, mp.regexp),
                )
                tests.append(lambda item: attributes.matches(item.attributes))
        if mp.resources:
            self.resources = _built(
                "error creating resource filters",
                lambda: AttributesMatcher(mp.resources, mp.match_type, mp.regexp),
            )
        if signal is Signal.TRACE and mp.services:
            self.services = _built(
                "error creating service name filters",
                lambda: StringSet(mp.services, mp.match_type, mp.regexp),
            )
        self.item_test = _all_of(tests)
        """None when the item's own properties are not matched."""

    def _scope_properties(self, mp: MatchProperties) -> None:
        for library in mp.libraries:
            name = _built(
                "error creating library name filters",
                partial(StringSet, [library.name], mp.match_type, mp.regexp),
            )
            version = None
            if library.version is not None:
                version = _built(
                    "error creating library version filters",
                    partial(StringSet, [library.version], mp.match_type, mp.regexp),
                )
            self.libraries.append((name, version))

    def container_matches(self, resource: Any, scope: Any) -> bool:
        """The resource's and scope's part of the match."""
        if self.services is not None and not self.services.matches(_service_name(resource)):
            return False
        for name, version in self.libraries:
            if not name.matches(scope.name):
                return False
            if version is not None and not version.matches(scope.version):
                return False
        return self.resources is None or self.resources.matches(resource.attributes)


def _metric_tests(mp: MatchProperties) -> list[ItemTest]:
    if not mp.metric_names:
        return []
    names = StringSet(mp.metric_names, mp.match_type, mp.regexp)
    return [lambda metric: names.matches(metric.name)]


def _span_tests(mp: MatchProperties) -> list[ItemTest]:
    tests: list[ItemTest] = []
    if mp.span_names:
        names = _built(
            "error creating span name filters",
            lambda: StringSet(mp.span_names, mp.match_type, mp.regexp),
        )
        tests.append(lambda span: names.matches(span.name))
    if mp.span_kinds:
        kinds = _built(
            "error creating span kind filters",
            lambda: StringSet(mp.span_kinds, mp.match_type, mp.regexp),
        )
        tests.append(lambda span: kinds.matches(_kind(span.kind)))
    return tests


def _log_tests(mp: MatchProperties) -> list[ItemTest]:
    tests: list[ItemTest] = []
    if mp.log_bodies:
        bodies = _built(
            "error creating log record body filters",
            lambda: StringSet(mp.log_bodies, mp.match_type, mp.regexp),
        )
        tests.append(lambda record: bodies.matches(value_as_string(record.body)))
    if mp.log_severity_texts:
        texts = _built(
            "error creating log record severity text filters",
            lambda: StringSet(mp.log_severity_texts, mp.match_type, mp.regexp),
        )
        tests.append(lambda record: texts.matches(record.severity_text))
    severity = mp.log_severity_number
    if severity is not None:
        least, undefined = severity.min, severity.match_undefined

        def severe_enough(record: Any) -> bool:
            number = record.severity_number
            return undefined if number == 0 else number >= least

        tests.append(severe_enough)
    return tests


def _kind(number: int) -> str:
    return SPAN_KINDS[number] if 0 <= number < len(SPAN_KINDS) else ""


def _service_name(resource: Any) -> str:
    for kv in resource.attributes:
        if kv.key == "service.name":
            return value_as_string(kv.value)
    return "<nil-service-name>"


def _all_of(tests: list[ItemTest]) -> ItemTest | None:
    if not tests:
        return None
    if len(tests) == 1:
        return tests[0]

    def every(item: Any) -> bool:
        return all(test(item) for test in tests)

    return every


def selection_problems(
    include: MatchProperties | None, exclude: MatchProperties | None, signal: Signal
) -> Iterator[Problem]:
    """What upstream refuses when it builds ``include`` / ``exclude`` for a
    pipeline of `signal`, under ``include`` or ``exclude``."""
    for where, properties in (("include", include), ("exclude", exclude)):
        if properties is not None:
            try:
                _Properties(properties, signal)
            except MatchConfigError as bad:
                yield where, str(bad)


class Selection:
    """``include`` and ``exclude`` compiled for one signal (raises
    :class:`MatchConfigError`: check :func:`selection_problems` first)."""

    def __init__(
        self, include: MatchProperties | None, exclude: MatchProperties | None, signal: Signal
    ):
        self.include = None if include is None else _Properties(include, signal)
        self.exclude = None if exclude is None else _Properties(exclude, signal)

    def scope_test(self, resource: Any, scope: Any) -> ItemTest | None:
        """The test of one scope's items: None when none is selected,
        :func:`EVERY` when all are."""
        include_test: ItemTest | None = None
        if self.include is not None:
            if not self.include.container_matches(resource, scope):
                return None
            include_test = self.include.item_test
        exclude_test: ItemTest | None = None
        if self.exclude is not None and self.exclude.container_matches(resource, scope):
            exclude_test = self.exclude.item_test
            if exclude_test is None:
                return None
        if exclude_test is None:
            return EVERY if include_test is None else include_test
        excluded = exclude_test
        if include_test is None:
            return lambda item: not excluded(item)
        included = include_test
        return lambda item: included(item) and not excluded(item)
