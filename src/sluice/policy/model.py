"""The parsed, validated form of a policy: plain immutable data, no behaviour.

A policy file is read into these objects by :mod:`sluice.policy.parse`; the
snapshot compiler (:mod:`sluice.policy.snapshot`) turns the valid ones into
pattern databases and decision tables.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Signal(enum.StrEnum):
    """The telemetry signal a policy applies to."""

    LOG = "log"
    METRIC = "metric"
    TRACE = "trace"


class Source(enum.Enum):
    """Where a selector reads its value from."""

    # Members are singletons compared by identity, so they hash by identity:
    # Enum's own __hash__ is a Python function, which every dictionary lookup
    # of a selector or a pattern would call (100,000 calls per compile of
    # 10,000 policies).
    __hash__ = object.__hash__

    FIELD = "field"
    """A well-known field of the record (or of its scope/resource), by name."""
    ATTRIBUTE = "attribute"
    """Record attributes: log attributes, span attributes, first data point's attributes."""
    RESOURCE_ATTRIBUTE = "resource_attribute"
    SCOPE_ATTRIBUTE = "scope_attribute"
    EVENT_ATTRIBUTE = "event_attribute"
    """Attributes of any span event (traces)."""


class Level(enum.IntEnum):
    """Which container a selector's value lives on; lets resource and scope
    values be read and scanned once per container instead of once per record."""

    RESOURCE = 0
    SCOPE = 1
    RECORD = 2


# Field names whose value lives on the resource or the scope container.
RESOURCE_FIELDS = frozenset({"resource_schema_url"})
SCOPE_FIELDS = frozenset({"scope_schema_url", "scope_name", "scope_version"})

# Fields whose string view is the lowercase hex of raw id bytes.
ID_FIELDS = frozenset({"trace_id", "span_id", "parent_span_id"})

LOG_FIELDS = (
    "body",
    "severity_text",
    "trace_id",
    "span_id",
    "event_name",
    "resource_schema_url",
    "scope_schema_url",
)
METRIC_FIELDS = (
    "name",
    "description",
    "unit",
    "resource_schema_url",
    "scope_schema_url",
    "scope_name",
    "scope_version",
)
TRACE_FIELDS = (
    "name",
    "trace_id",
    "span_id",
    "parent_span_id",
    "trace_state",
    "resource_schema_url",
    "scope_schema_url",
    "scope_name",
    "scope_version",
)

# Derived fields that carry their own comparison value (`metric_type: gauge`).
# Their string view is the short lowercase enum name.
METRIC_TYPE = "metric_type"
TEMPORALITY = "aggregation_temporality"
SPAN_KIND = "span_kind"
SPAN_STATUS = "span_status"
EVENT_NAME = "span_event_name"
"""Names of a span's events: a multi-valued field (any event may match)."""
LINK_TRACE_ID = "link_trace_id"
"""Trace ids of a span's links, lowercase hex: multi-valued."""


@dataclass(frozen=True, slots=True)
class Selector:
    """Names one value of a record: a field, or an attribute path in one of the lists."""

    source: Source
    name: str = ""
    path: tuple[str, ...] = ()

    @property
    def level(self) -> Level:
        if self.source is Source.RESOURCE_ATTRIBUTE or self.name in RESOURCE_FIELDS:
            return Level.RESOURCE
        if self.source is Source.SCOPE_ATTRIBUTE or self.name in SCOPE_FIELDS:
            return Level.SCOPE
        return Level.RECORD

    def describe(self) -> str:
        if self.source is Source.FIELD:
            return self.name
        return f"{self.source.value}:{'.'.join(self.path)}"


class MatchOp(enum.Enum):
    """How a matcher tests its selector's value."""

    __hash__ = object.__hash__  # see Source

    EXISTS = "exists"
    EXACT = "exact"
    REGEX = "regex"
    STARTS_WITH = "starts_with"
    ENDS_WITH = "ends_with"
    CONTAINS = "contains"
    EQUALS = "equals"
    GT = "gt"
    GTE = "gte"
    LT = "lt"
    LTE = "lte"


PATTERN_OPS = frozenset(
    {MatchOp.EXACT, MatchOp.REGEX, MatchOp.STARTS_WITH, MatchOp.ENDS_WITH, MatchOp.CONTAINS}
)

TypedValue = str | bool | int | float | bytes
"""A typed literal of `equals`/`gt`/... or the typed view of a record value."""


@dataclass(frozen=True, slots=True)
class Matcher:
    """One condition of a policy. `value` is the pattern text for pattern ops,
    the required presence for EXISTS, or a typed literal for EQUALS/GT/..."""

    selector: Selector
    op: MatchOp
    value: TypedValue
    negate: bool = False
    case_insensitive: bool = False

    @property
    def is_pattern(self) -> bool:
        """True when the matcher is decided by the multi-pattern scan of a string."""
        return self.op in PATTERN_OPS or (self.op is MatchOp.EQUALS and isinstance(self.value, str))


class KeepKind(enum.Enum):
    ALL = "all"
    NONE = "none"
    PERCENT = "percent"
    RATE = "rate"
    TRACE_SAMPLE = "trace_sample"


class SamplingMode(enum.Enum):
    HASH_SEED = 1
    PROPORTIONAL = 2
    EQUALIZING = 3


@dataclass(frozen=True, slots=True)
class Keep:
    """What happens to a record whose winning policy this is.

    `percent` is N for log `N%` sampling and p for trace sampling; `limit` and
    `window_ms` describe a rate limit (`limit` records per window).
    """

    kind: KeepKind
    percent: float = 100.0
    limit: int = 0
    window_ms: int = 0
    mode: SamplingMode = SamplingMode.HASH_SEED
    precision: int = 4
    hash_seed: int = 0
    fail_closed: bool = True
    text: str = ""
    """The keep as written (normalised), for reports and the sync protocol."""

    @property
    def restrictiveness(self) -> int:
        """Go's scores: higher wins; ties go to the lowest policy id."""
        if self.kind is KeepKind.NONE:
            return 1000
        if self.kind is KeepKind.ALL:
            return 0
        if self.kind is KeepKind.RATE:
            return 500
        return int(1000 - 10 * self.percent)


KEEP_ALL = Keep(KeepKind.ALL, text="all")
KEEP_NONE = Keep(KeepKind.NONE, percent=0.0, text="none")


class TransformOp(enum.Enum):
    __hash__ = object.__hash__  # see Source

    REMOVE = "remove"
    REDACT = "redact"
    RENAME = "rename"
    ADD = "add"


@dataclass(frozen=True, slots=True)
class Transform:
    """One transform step of a log policy.

    REMOVE uses `target`; REDACT `target`, `value` (the replacement) and
    optionally `regex`; RENAME `source` and `target` (the new key, in the
    source's attribute list) and `upsert`; ADD `target`, `value`, `upsert`.
    """

    op: TransformOp
    target: Selector
    value: str = ""
    regex: str | None = None
    upsert: bool = False
    source: Selector | None = None


@dataclass(frozen=True, slots=True, weakref_slot=True)
class Policy:
    """One policy after parsing and validation. `errors` non-empty means inert.
    (Weakly referable: the compile cache remembers parsed policies only while
    something else still holds them.)"""

    id: str
    name: str = ""
    enabled: bool = True
    signal: Signal | None = None
    matchers: tuple[Matcher, ...] = ()
    keep: Keep = KEEP_ALL
    sample_key: Selector | None = None
    transforms: tuple[Transform, ...] = ()
    errors: tuple[str, ...] = ()

    @property
    def valid(self) -> bool:
        return not self.errors


@dataclass(slots=True)
class LoadReport:
    """What loading a policy document produced: policies in file order, and
    document-level warnings (duplicate ids, ignored entries)."""

    policies: list[Policy] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
