"""Which items ``include`` / ``exclude`` select (upstream's ``filterspan``,
``filterlog`` and ``filtermetric`` skip expressions): an item is processed
when it matches ``include`` (if given) and does not match ``exclude``.

Items are spans, log records and metrics. A selected item comes with the
:class:`~sluice.collector.internal.attrmap.AttributeMap` of its attributes
(the one the actions then edit), read before the item's tests only when they
match attributes.
Properties of the resource and scope (``services``, ``resources``,
``libraries``) are decided once per scope; only the item's own properties
are tested per item, and a scope none of whose items is selected is not
walked at all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from operator import attrgetter
from typing import Any, TypeVar

from sluice.collector.component import Problem
from sluice.collector.internal.attrmap import EMPTY, AttributeMap
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

T = TypeVar("T")
ItemTest = Callable[[Any, AttributeMap], bool]
"""Is an item (with its attributes' view) selected?"""


def _message_body(record: Any) -> str:
    return value_as_string(record.body)


@dataclass(frozen=True)
class LogFields:
    """How the log tests read a record: its body as text (pdata's
    ``AsString``), severity text and severity number. The default reads
    ``LogRecord`` messages; the filter processor reads lean records' bytes
    as its OTTL log context does, without parsing them whole."""

    body: Callable[[Any], str] = _message_body
    severity_text: Callable[[Any], str] = attrgetter("severity_text")
    severity_number: Callable[[Any], int] = attrgetter("severity_number")


MESSAGE_FIELDS = LogFields()


def _built(prefix: str, build: Callable[[], T]) -> T:
    try:
        return build()
    except MatchConfigError as bad:
        raise MatchConfigError(f"{prefix}: {bad}") from None


class _Properties:
    """One ``include`` or ``exclude`` compiled for one signal."""

    def __init__(self, mp: MatchProperties, signal: Signal, fields: LogFields = MESSAGE_FIELDS):
        problem = SIGNAL_RULES[signal](mp)
        if problem is not None:
            raise MatchConfigError(problem)
        self.services: StringSet | None = None
        self.libraries: list[tuple[StringSet, StringSet | None]] = []
        self.resources: AttributesMatcher | None = None
        if signal is Signal.METRIC:
            # Upstream's metric matcher is built from metric_names alone:
            # ``resources`` passes its checks for metrics but selects nothing.
            tests = _metric_tests(mp)
        else:
            # Built in upstream's order, so that of several problems the same
            # one is reported: libraries, attributes, resources, then services,
            # span names and kinds, or log bodies and severity texts.
            self._scope_properties(mp)
            attributes = None
            if mp.attributes:
                attributes = _built(
                    "error creating attribute filters",
                    lambda: AttributesMatcher(mp.attributes, mp.match_type, mp.regexp),
                )
            if mp.resources:
                self.resources = _built(
                    "error creating resource filters",
                    lambda: AttributesMatcher(mp.resources, mp.match_type, mp.regexp),
                )
            if signal is Signal.TRACE and mp.services:
                self.services = _strings("error creating service name filters", mp.services, mp)
            tests = _span_tests(mp) if signal is Signal.TRACE else _log_tests(mp, fields)
            if attributes is not None:
                matcher = attributes
                tests.append(lambda item, view: matcher.matches(view))
        self.item_test = _all_of(tests)
        """None when the item's own properties are not matched."""
        self.reads_attributes = signal is not Signal.METRIC and bool(mp.attributes)

    def _scope_properties(self, mp: MatchProperties) -> None:
        for library in mp.libraries:
            name = _strings("error creating library name filters", [library.name], mp)
            version = None
            if library.version is not None:
                version = _strings("error creating library version filters", [library.version], mp)
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
        resources = self.resources
        return resources is None or resources.matches(AttributeMap(resource.attributes))


def _strings(prefix: str, items: list[str], mp: MatchProperties) -> StringSet:
    """A string set of `mp`'s match type; its errors start with `prefix`."""
    return _built(prefix, partial(StringSet, items, mp.match_type, mp.regexp))


_NOT_FOR_METRICS = (
    "services",
    "span_names",
    "span_kinds",
    "log_bodies",
    "log_severity_texts",
    "log_severity_number",
    "attributes",
    "resources",
    "libraries",
)
"""Properties a metrics pipeline accepts (as upstream v0.115) but does not use."""


def _metric_tests(mp: MatchProperties) -> list[ItemTest]:
    # Upstream's metric matcher: match_type expr wants ``expressions``, which
    # these properties cannot hold, so it has none; so has one without names.
    if not mp.metric_names or mp.match_type == "expr":
        return []
    names = StringSet(mp.metric_names, mp.match_type, mp.regexp)
    return [lambda metric, view: names.matches(metric.name)]


def _span_tests(mp: MatchProperties) -> list[ItemTest]:
    tests: list[ItemTest] = []
    if mp.span_names:
        names = _strings("error creating span name filters", mp.span_names, mp)
        tests.append(lambda span, view: names.matches(span.name))
    if mp.span_kinds:
        kinds = _strings("error creating span kind filters", mp.span_kinds, mp)
        tests.append(lambda span, view: kinds.matches(_kind(span.kind)))
    return tests


def _log_tests(mp: MatchProperties, fields: LogFields) -> list[ItemTest]:
    tests: list[ItemTest] = []
    if mp.log_bodies:
        bodies = _strings("error creating log record body filters", mp.log_bodies, mp)
        body = fields.body
        tests.append(lambda record, view: bodies.matches(body(record)))
    if mp.log_severity_texts:
        texts = _strings(
            "error creating log record severity text filters", mp.log_severity_texts, mp
        )
        severity_text = fields.severity_text
        tests.append(lambda record, view: texts.matches(severity_text(record)))
    severity = mp.log_severity_number
    if severity is not None:
        least, undefined = severity.min, severity.match_undefined
        severity_number = fields.severity_number

        def severe_enough(record: Any, view: AttributeMap) -> bool:
            number = severity_number(record)
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

    def every(item: Any, view: AttributeMap) -> bool:
        return all(test(item, view) for test in tests)

    return every


def selection_problems(
    include: MatchProperties | None, exclude: MatchProperties | None, signal: Signal
) -> Iterator[Problem]:
    """What upstream refuses when it builds ``include`` / ``exclude`` for a
    pipeline of `signal`, under ``include`` or ``exclude``: the first only, as
    upstream builds ``include`` first and stops at its error."""
    for where, properties in (("include", include), ("exclude", exclude)):
        if properties is not None:
            try:
                _Properties(properties, signal)
            except MatchConfigError as bad:
                yield where, str(bad)
                return


def _compiled(mp: MatchProperties | None, signal: Signal, fields: LogFields) -> _Properties | None:
    """`mp` compiled; None when it tests nothing, as a metric ``include`` /
    ``exclude`` without ``metric_names``: upstream then has no matcher, so
    such an include selects every metric and such an exclude none."""
    if mp is None:
        return None
    properties = _Properties(mp, signal, fields)
    if signal is Signal.METRIC and properties.item_test is None:
        return None
    return properties


Chooser = Callable[[Any, Any], AttributeMap | None]
"""For one scope: given an item and its ``repeated KeyValue`` field, the
item's attribute map when the item is selected, else None."""


def every(item: Any, kvs: Any) -> AttributeMap | None:
    """The chooser of a scope whose items are all selected."""
    return AttributeMap(kvs)


def _chooser(test: ItemTest | None, reads_attributes: bool) -> Chooser:
    """A chooser that reads an item's attributes before the test only when
    the test matches attributes."""
    if test is None:
        return every
    if reads_attributes:

        def choose(item: Any, kvs: Any) -> AttributeMap | None:
            attributes = AttributeMap(kvs)
            return attributes if test(item, attributes) else None

        return choose

    def choose_then_read(item: Any, kvs: Any) -> AttributeMap | None:
        return AttributeMap(kvs) if test(item, EMPTY) else None

    return choose_then_read


class Selection:
    """``include`` and ``exclude`` compiled for one signal (raises
    :class:`MatchConfigError`: check :func:`selection_problems` first).
    `fields` reads log records (see :class:`LogFields`)."""

    def __init__(
        self,
        include: MatchProperties | None,
        exclude: MatchProperties | None,
        signal: Signal,
        fields: LogFields = MESSAGE_FIELDS,
    ):
        self.include = _compiled(include, signal, fields)
        self.exclude = _compiled(exclude, signal, fields)
        self.unused: list[str] = []
        """What is set but, as upstream, selects nothing (metrics only)."""
        if signal is Signal.METRIC:
            given = [mp for mp in (include, exclude) if mp is not None]
            ignored = [name for name in _NOT_FOR_METRICS if any(getattr(mp, name) for mp in given)]
            if ignored:
                self.unused.append(
                    f"{', '.join(ignored)} (metrics are selected by metric_names only)"
                )
            if any(mp.match_type == "expr" for mp in given):
                self.unused.append("match_type expr (it needs expressions, which are not set)")
        reads = any(p is not None and p.reads_attributes for p in (self.include, self.exclude))
        self.reads_attributes = reads
        """Whether a chooser reads the item's attributes (else it may be
        handed none: only an attribute map to act on is made of them)."""
        included = self.include.item_test if self.include is not None else None
        excluded = self.exclude.item_test if self.exclude is not None else None
        self._included = _chooser(included, reads)
        """Items of a scope that matches include's resource and scope part, and
        not exclude's."""
        self._not_excluded: Chooser = every
        """Items of a scope that matches exclude's resource and scope part (and
        include's, or there is no include)."""
        if excluded is not None:
            test: ItemTest = (
                (lambda item, map_: not excluded(item, map_))
                if included is None
                else (lambda item, map_: included(item, map_) and not excluded(item, map_))
            )
            self._not_excluded = _chooser(test, reads)

    def scopes(self, containers: Any, scopes_field: str) -> Iterator[tuple[Any, Chooser]]:
        """Each scope (``ScopeSpans``...) of `containers` (``ResourceSpans``...)
        with something selected, and how to choose its items."""
        for container in containers:
            resource = container.resource
            for holder in getattr(container, scopes_field):
                choose = self.scope_test(resource, holder.scope)
                if choose is not None:
                    yield holder, choose

    def scope_test(self, resource: Any, scope: Any) -> Chooser | None:
        """How to choose one scope's items; None when none is selected."""
        if self.include is not None and not self.include.container_matches(resource, scope):
            return None
        exclude = self.exclude
        if exclude is not None and exclude.container_matches(resource, scope):
            return None if exclude.item_test is None else self._not_excluded
        return self._included
