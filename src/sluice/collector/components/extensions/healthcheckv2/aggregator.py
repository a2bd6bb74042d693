"""Component status events folded into pipeline and collector status, with
upstream's rules, so that the most relevant status rises to the top.

The tree: the collector at the root; under it ``pipeline:<id>`` for each
pipeline and ``extensions`` for the extensions; under those, one leaf per
component instance (``receiver:otlp``, ``processor:batch``...) holding its
latest event. A component in several pipelines is a leaf in each.

A group's status: the one status all its members share; otherwise, by
precedence, ``StatusFatalError``, ``StatusStarting``, ``StatusStopping`` (also
for a mix with ``StatusStopped``), then the two non-fatal errors (permanent
first unless only recoverable errors count, see :class:`ErrorPriority`). An
error status carries its earliest member event (when the failure began: the
recovery window counts from it); any other status the latest event time.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from sluice.collector.component import Status

EXTENSIONS = "extensions"
"""The group extensions report under (a pseudo-pipeline)."""
PIPELINE = "pipeline:"

ERRORS = frozenset({Status.RECOVERABLE_ERROR, Status.PERMANENT_ERROR, Status.FATAL_ERROR})


@dataclass(frozen=True, slots=True)
class Event:
    """One status at one time. `status` None is upstream's ``StatusNone``:
    nothing reported yet (time 0 is Go's zero time)."""

    status: Status | None
    error: str = ""
    timestamp_ns: int = 0

    @classmethod
    def now(cls, status: Status, error: str = "") -> Event:
        return cls(status, error, time.time_ns())

    @property
    def status_name(self) -> str:
        return self.status.value if self.status is not None else "StatusNone"


@dataclass(slots=True)
class AggregateStatus:
    """A component's event (a leaf), or a group's derived from its members."""

    event: Event
    components: dict[str, AggregateStatus] = field(default_factory=dict)


class ErrorPriority(enum.Enum):
    PERMANENT = "permanent"
    """Permanent errors outrank recoverable ones (the default)."""
    RECOVERABLE = "recoverable"
    """Recoverable errors outrank permanent ones: only they count for health."""


_LIFECYCLE_PRECEDENCE = (
    (Status.FATAL_ERROR, Status.FATAL_ERROR),
    (Status.STARTING, Status.STARTING),
    (Status.STOPPING, Status.STOPPING),
    (Status.STOPPED, Status.STOPPING),
)
"""(status present among members, group status), first match wins."""


def scope_key(scope: str) -> str:
    """``?pipeline=`` value -> group key: "" is the collector, ``extensions``
    the extensions, anything else a pipeline id."""
    return scope if scope in ("", EXTENSIONS) else PIPELINE + scope


class StatusAggregator:
    """The status tree; :meth:`record` updates a leaf and its ancestors."""

    def __init__(self, priority: ErrorPriority = ErrorPriority.PERMANENT):
        self.root = AggregateStatus(Event(None))
        errors = [Status.PERMANENT_ERROR, Status.RECOVERABLE_ERROR]
        if priority is ErrorPriority.RECOVERABLE:
            errors.reverse()
        self._precedence = [*_LIFECYCLE_PRECEDENCE, *((e, e) for e in errors)]
        self.watchers: list[Callable[[], None]] = []
        """Called after every change (the gRPC ``Watch`` streams)."""

    def find(self, scope: str) -> AggregateStatus | None:
        key = scope_key(scope)
        return self.root if not key else self.root.components.get(key)

    def record(self, instance: str, event: Event, pipelines: Iterable[str]) -> None:
        """`instance` is ``kind:id``; extensions go under ``extensions``, any
        other component under each pipeline of `pipelines`."""
        kind = instance.partition(":")[0]
        groups = [EXTENSIONS] if kind == "extension" else [PIPELINE + p for p in pipelines]
        for key in groups:
            group = self.root.components.setdefault(key, AggregateStatus(Event(None)))
            group.components[instance] = AggregateStatus(event)
            group.event = self._aggregate(group)
        if self.root.components:
            self.root.event = self._aggregate(self.root)
        for watcher in self.watchers:
            watcher()

    def _status(self, members: Iterable[AggregateStatus]) -> Status | None:
        seen = {m.event.status for m in members}
        if len(seen) == 1:
            return next(iter(seen))
        for present, status in self._precedence:
            if present in seen:
                return status
        return None

    def _aggregate(self, group: AggregateStatus) -> Event:
        members = list(group.components.values())
        status = self._status(members)
        events = [m.event for m in members]
        if status in ERRORS:
            return min((e for e in events if e.status == status), key=_time)
        latest = max(events, key=_time)
        if latest.status == status:
            return latest
        return Event(status, "", latest.timestamp_ns)


def _time(event: Event) -> int:
    return event.timestamp_ns
