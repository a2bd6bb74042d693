"""What every OTTL context shares: resolving a path to a getter, the
``resource`` and ``scope`` (``instrumentation_scope``) paths, and upstream's
path errors.

A path starts with a segment of the context itself (``body``) or with the
name of a context above it that upstream's contexts have as a path segment
(``resource.attributes``, ``instrumentation_scope.name``, ``span.name`` in
the span event context, ``metric.name`` in the data point context). The
filter processor's parsers (upstream v0.115) are made without context names
(``EnablePathContextNames``): a context's own name (``log.body``) and
``scope`` are unknown segments, as there.

A getter takes the evaluation context of one item (a ``*Ctx`` object of the
signal's module) and returns the path's value (see :mod:`sluice.ottl.values`).
Values of the resource and the scope are read once per container: their
getters remember the last container they read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sluice.gostrconv import quoted
from sluice.ottl.errors import OttlConfigError
from sluice.ottl.syntax import Field, Path
from sluice.ottl.values import PMap, index_map

Getter = Callable[[Any], Any]
DOCS = "https://github.com/open-telemetry/opentelemetry-collector-contrib/tree/main/pkg/ottl/contexts/ottl"


@dataclass(frozen=True)
class Resolved:
    """A path's getter. `key` names the value read (the path with its
    context, e.g. ``log.body``): pattern leaves on the same key share one
    scan per item. `sequence` marks telemetry slices only ``Len`` takes.
    `text`, when set, gives what ``IsMatch`` scans more cheaply than
    converting the value (a str, UTF-8 bytes, or None for nil)."""

    getter: Getter
    key: str
    sequence: bool = False
    text: Getter | None = None


Resolver = Callable[["Resolution", tuple[Field, ...]], Resolved]


class Item:
    """What a condition is evaluated on: one item with its resource
    container `rc` (ResourceLogs/Spans/Metrics) and scope container `sc`,
    and the pattern hits of its scanned values. The signal's walker reuses
    one per batch, setting its fields for each item."""

    __slots__ = ("hits", "rc", "sc")

    def __init__(self) -> None:
        self.rc: Any = None
        self.sc: Any = None
        self.hits: list[Any] = []


class ContainerMemo:
    """The last (container, value) a resource or scope getter returned."""

    __slots__ = ("last",)

    def __init__(self) -> None:
        self.last: tuple[Any, Any] = (None, None)


@dataclass
class Resolution:
    """One path being resolved: its full text for messages, the context it
    belongs to, and the memos the compiled conditions will reset."""

    text: str
    context: Context
    context_name: str
    memos: list[ContainerMemo]
    original: str = ""
    """The path as upstream's messages write it (:meth:`Path.original_text`)."""

    def error(self, segment: str) -> OttlConfigError:
        """Upstream's error for a segment the path's context does not have."""
        name = self.context_name
        return OttlConfigError(
            f"segment {quoted(segment)} from path {quoted(self.original)} is not a valid path "
            f"nor a valid OTTL keyword for the {name} context - review {DOCS}{name} to see all "
            "valid paths"
        )

    def unsupported(self, why: str) -> OttlConfigError:
        return OttlConfigError(f'path "{self.text}" is not supported by Sluice: {why}')

    def key(self, fields: tuple[Field, ...]) -> str:
        return ".".join([self.context_name, *map(str, fields)])

    def per_container(self, container: Getter, getter: Getter) -> Getter:
        """`getter`, read once per container (`container` of the item)."""
        memo = ContainerMemo()
        self.memos.append(memo)

        def get(item: Any) -> Any:
            owner = container(item)
            last = memo.last
            if last[0] is owner:
                return last[1]
            value = getter(item)
            memo.last = (owner, value)
            return value

        return get


def leaf(resolution: Resolution, fields: tuple[Field, ...], keys: bool = False) -> Field:
    """The one field left of a path; `keys` when it may be indexed. Extra
    segments or keys are upstream's "not used by the context" errors."""
    last = fields[0]
    if not keys:
        unindexed(last)
    if len(fields) > 1:
        raise OttlConfigError(
            f'the path section "{fields[1].name}" was not used by the context - this likely '
            "means you are using extra path sections"
        )
    return last


def unindexed(segment: Field) -> None:
    """Upstream's error for keys on a segment that takes none (its parser
    checks a segment's keys before the sections after it)."""
    if segment.keys:
        raise OttlConfigError(
            f'the keys indexing "{segment.name}" were not used by the context - this likely '
            "means you are trying to index a path that does not support indexing"
        )


def attributes_getter(kvs_of: Getter, keys: tuple[str | int, ...]) -> Getter:
    """``attributes`` (a map) or ``attributes[...]`` over `kvs_of` an item."""
    if not keys:
        return lambda item: PMap(kvs_of(item))
    return lambda item: index_map(PMap(kvs_of(item)), keys)


def _rc(item: Any) -> Any:
    return item.rc


def _sc(item: Any) -> Any:
    return item.sc


_RESOURCE_PATHS = frozenset({"attributes", "dropped_attributes_count", "schema_url"})
_SCOPE_PATHS = frozenset(
    {"attributes", "name", "version", "dropped_attributes_count", "schema_url"}
)


def resource_path(resolution: Resolution, fields: tuple[Field, ...]) -> Resolved:
    """``resource.attributes[...]``, ``resource.dropped_attributes_count``,
    ``resource.schema_url``; `item.rc` is the ResourceLogs/Spans/Metrics."""
    if not fields:
        raise resolution.unsupported("the resource itself cannot be compared")
    if fields[0].name not in _RESOURCE_PATHS:  # before its keys or the sections after it
        raise resolution.error(fields[0].name)
    last = leaf(resolution, fields, keys=fields[0].name == "attributes")
    getter: Getter
    if last.name == "attributes":
        getter = attributes_getter(lambda item: item.rc.resource.attributes, last.keys)
    elif last.name == "dropped_attributes_count":
        getter = lambda item: item.rc.resource.dropped_attributes_count  # noqa: E731
    else:  # schema_url
        getter = lambda item: item.rc.schema_url  # noqa: E731
    return Resolved(resolution.per_container(_rc, getter), resolution.key(fields))


def scope_path(resolution: Resolution, fields: tuple[Field, ...]) -> Resolved:
    """``instrumentation_scope.name|version|attributes|dropped_attributes_count|
    schema_url``; `item.sc` is the ScopeLogs/Spans/Metrics."""
    if not fields:
        raise resolution.unsupported("the instrumentation scope itself cannot be compared")
    if fields[0].name not in _SCOPE_PATHS:  # before its keys or the sections after it
        raise resolution.error(fields[0].name)
    last = leaf(resolution, fields, keys=fields[0].name == "attributes")
    getter: Getter
    name = last.name
    if name == "attributes":
        getter = attributes_getter(lambda item: item.sc.scope.attributes, last.keys)
    elif name in ("name", "version", "dropped_attributes_count"):
        getter = _scope_field(name)
    else:  # schema_url
        getter = lambda item: item.sc.schema_url  # noqa: E731
    return Resolved(resolution.per_container(_sc, getter), resolution.key(fields))


def _scope_field(name: str) -> Getter:
    return lambda item: getattr(item.sc.scope, name)


@dataclass(frozen=True)
class Context:
    """One OTTL context: its own paths, the contexts above it its paths may
    name (``resource``, ``instrumentation_scope``...), and its enums."""

    name: str
    own: Resolver
    enums: Mapping[str, int]
    others: Mapping[str, Resolver] = field(default_factory=dict)

    def resolve(self, path: Path, memos: list[ContainerMemo]) -> Resolved:
        """The getter of `path`; raises :class:`OttlConfigError`."""
        text, original = str(path), path.original_text()
        first, rest = path.fields[0], path.fields[1:]
        if first.name == "cache":
            raise Resolution(text, self, self.name, memos, original).unsupported(
                "the filter processor has no cache"
            )
        parser = self.others.get(first.name)
        if parser is None or first.keys:
            return self.own(Resolution(text, self, self.name, memos, original), path.fields)
        context_name = "scope" if first.name == "instrumentation_scope" else first.name
        resolution = Resolution(text, self, context_name, memos, original)
        if not rest:
            raise resolution.error(first.name)
        return parser(resolution, rest)


COMMON: dict[str, Resolver] = {
    "resource": resource_path,
    "instrumentation_scope": scope_path,
}
"""The resource and scope contexts every signal's context can name (the
scope only by its legacy name: ``scope`` came with context names)."""
