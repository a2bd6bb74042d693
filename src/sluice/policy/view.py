"""The seam between the engine and a wire form of telemetry.

The engine never knows whether a record is an OTLP protobuf message, an OTLP
JSON object or a Datadog log; it talks to a :class:`RecordView`, which knows
how to walk one decoded batch and how to read and write the values that
selectors name. Views live in :mod:`sluice.telemetry`.

A batch is walked as containers: resources hold scopes, scopes hold records
(log records, metrics, spans). ``Ctx`` bundles one record with its containers.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, Final, NamedTuple

from sluice.policy.model import Level, Selector, TypedValue


class _Present:
    """A value that exists but has no typed scalar view (array, kvlist, empty AnyValue)."""

    _instance: _Present | None = None

    def __new__(cls) -> _Present:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "PRESENT"


PRESENT: Final = _Present()
"""Marks a value that exists but is not a string, number, bool or bytes."""

Value = TypedValue | _Present
"""What a view returns for a selector: a typed scalar, or PRESENT."""


class Ctx(NamedTuple):
    """A record with the containers it lives in."""

    resource: Any
    scope: Any
    record: Any


class MalformedRecord(ValueError):
    """A record that its view cannot read (not an object, broken wire bytes):
    the engine keeps it as it came, unevaluated, and counts it malformed."""


Scan = Callable[[Any], tuple[int, ...]]
"""Scans one present value of a field (a non-empty str, or PRESENT for a value
that exists without a string view) and returns the pattern ids it hits."""

FieldReader = Callable[[Any], tuple[int, ...]]
"""Reads one record (or container), passes each present value of a plan's
selectors to that selector's Scan, and returns all ids hit, concatenated."""


class RecordView(ABC):
    """How the engine walks and edits one decoded batch of one signal."""

    @abstractmethod
    def resources(self, batch: Any) -> Sequence[Any]:
        """The resource containers of a batch, in document order."""

    @abstractmethod
    def scopes(self, resource: Any) -> Sequence[Any]:
        """The scope containers of a resource, in document order."""

    @abstractmethod
    def records(self, scope: Any) -> Sequence[Any]:
        """The records of a scope, in document order."""

    @abstractmethod
    def remove_records(self, scope: Any, indexes: list[int]) -> None:
        """Remove the records at `indexes` (ascending) from a scope."""

    @abstractmethod
    def prune(self, batch: Any) -> bool:
        """Remove scopes with no records, then resources with no scopes.
        Returns True when something was removed."""

    @abstractmethod
    def reader(self, fields: Sequence[tuple[Scan, Selector]]) -> FieldReader:
        """A function scanning the given selectors' values on one record, scope or
        resource container (the selectors share one level). Values that are
        absent (E false) are not scanned; a multi-valued field scans each value;
        an attribute key present twice counts only its first entry. It reads
        whatever a container holds (a value it cannot read is absent) and raises
        :class:`MalformedRecord` for a record it cannot read at all."""

    def read_records(
        self, reader: FieldReader, records: Sequence[Any], prefix: tuple[int, ...] = ()
    ) -> Sequence[tuple[int, ...] | None] | None:
        """`prefix` (the hits of the records' resource and scope) followed by
        what `reader` (from :meth:`reader`) finds, for each of a scope's
        `records`, read in one go where the view can: a record given None, or
        every record when this returns None, is read by calling `reader`."""
        return None

    def context(self, resource: Any, scope: Any, records: Any, position: int, record: Any) -> Ctx:
        """The Ctx of `record`, found at `position` in a scope's `records`. Views
        whose records are values rather than references (wire bytes) keep where it
        lives, so that an edit can be written back."""
        return Ctx(resource, scope, record)

    def level_of(self, selector: Selector) -> Level:
        """Which container holds a selector's value in this wire form (OTLP:
        resource attributes on the resource...; flat forms: the record)."""
        return selector.level

    @abstractmethod
    def get(self, ctx: Ctx, selector: Selector) -> Value | None:
        """The typed value of a selector, None when absent. Ids are raw bytes;
        empty well-known scalar fields are absent, empty string attributes are "".
        A multi-valued selector (an event attribute) gives its first value."""

    def values(self, ctx: Ctx, selector: Selector) -> Sequence[Value]:
        """Every typed value of a selector: one per span event that has the
        attribute for an event attribute, else the value of :meth:`get`."""
        value = self.get(ctx, selector)
        return () if value is None else (value,)

    # -- edits (logs) -------------------------------------------------------

    def set_string(self, ctx: Ctx, selector: Selector, value: str) -> None:
        """Write a string value: overwrite in place if present, else create
        (attributes are appended; missing intermediate kvlists are created)."""
        raise NotImplementedError(f"{type(self).__name__} cannot write {selector.describe()}")

    def remove(self, ctx: Ctx, selector: Selector) -> bool:
        """Delete the value (fields become empty); True if something was there."""
        raise NotImplementedError(f"{type(self).__name__} cannot remove {selector.describe()}")

    def rename(self, ctx: Ctx, source: Selector, to: str, upsert: bool) -> bool:
        """Move an attribute to key `to` in the same list, keeping its type.
        Returns True when the source existed (even if an existing target blocked it)."""
        raise NotImplementedError(f"{type(self).__name__} cannot rename {source.describe()}")

    # -- traces -------------------------------------------------------------

    def trace_state(self, record: Any) -> str:
        """The span's W3C tracestate ('' when unset)."""
        raise NotImplementedError

    def set_trace_state(self, record: Any, value: str) -> None:
        raise NotImplementedError

    def trace_id(self, record: Any) -> bytes:
        """The raw trace id; b'' when empty or all zero."""
        raise NotImplementedError
