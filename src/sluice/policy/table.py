"""Everything compiled for one signal (:class:`SignalTable`): the compiled
policies, the pattern ids of their string conditions, one scanner per field,
and which policies a combination of pattern hits selects.

A table is built on the one it replaces. Policies that did not change (the
same parsed objects, from the compile cache) keep their compiled form;
patterns keep their ids (an id is released when no policy uses it any more,
and new patterns get new ids); a field whose patterns did not change keeps
its scanner, memo and databases included. So an update of one policy in
10,000 costs a few milliseconds of bookkeeping, not a compile of 10,000. A
table built this way decides exactly what a table built from nothing does;
only the numbering of patterns (and so which one anchors a policy, in a tie)
may differ.
"""

from __future__ import annotations

import operator
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from sluice.policy.cache import CompileCache
from sluice.policy.conditions import PatternSpec
from sluice.policy.databases import Entry, FieldDatabases
from sluice.policy.model import Keep, KeepKind, Matcher, MatchOp, Policy, Selector, Signal, Source
from sluice.policy.patterns import FieldScanner, database_entries
from sluice.policy.ratelimit import RateLimiter
from sluice.policy.stats import PolicyRuntime
from sluice.policy.transform import CompiledTransform
from sluice.policy.view import PRESENT, Ctx, FieldReader, RecordView, Scan, Value

Check = Callable[[Sequence[int], RecordView, Ctx], bool]
"""A condition decided per candidate record: gets the record's pattern hits."""


def _compare(op: MatchOp, value: Value | None, literal: Any) -> bool:
    """`equals` with the matcher's literal; gt/gte/lt/lte with its float64 threshold."""
    if value is None or value is PRESENT:
        return False
    if op is MatchOp.EQUALS:
        if isinstance(literal, bool) or isinstance(value, bool):
            return isinstance(literal, bool) and isinstance(value, bool) and value == literal
        if isinstance(literal, int | float):
            return isinstance(value, int | float) and value == literal
        return type(value) is type(literal) and value == literal
    # POLICY.md 3.5: comparisons are in float64 (as in Go's engine), so an
    # int64 past 2^53 rounds first: 2^53 + 1 is not > 2^53.
    number: float
    if isinstance(value, float):
        number = value
    elif isinstance(value, int) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:  # an intValue of hundreds of digits is no float64 number
            return False
    else:
        return False
    threshold: float = literal
    if op is MatchOp.GT:
        return number > threshold
    if op is MatchOp.GTE:
        return number >= threshold
    if op is MatchOp.LT:
        return number < threshold
    return number <= threshold


def _typed_check(matcher: Matcher) -> Check:
    selector, op, literal, negate = matcher.selector, matcher.op, matcher.value, matcher.negate
    if op is not MatchOp.EQUALS:
        literal = float(literal)  # once, here: parse allows int64 and double thresholds only
    if selector.source is Source.EVENT_ATTRIBUTE:
        # Like its string conditions: passes when some span event's value does.
        def any_event(hits: Sequence[int], view: RecordView, ctx: Ctx) -> bool:
            found = any(_compare(op, value, literal) for value in view.values(ctx, selector))
            return found != negate

        return any_event

    def check(hits: Sequence[int], view: RecordView, ctx: Ctx) -> bool:
        return _compare(op, view.get(ctx, selector), literal) != negate

    return check


def _absent_check(pattern_id: int) -> Check:
    def check(hits: Sequence[int], view: RecordView, ctx: Ctx) -> bool:
        return pattern_id not in hits

    return check


# Fields with few distinct values: an equality on them hits often.
_LOW_CARDINALITY = frozenset(
    {
        "severity_text",
        "span_kind",
        "span_status",
        "metric_type",
        "aggregation_temporality",
        "scope_name",
        "scope_version",
        "resource_schema_url",
        "scope_schema_url",
    }
)


def _estimated_hit_rate(selector: Selector, spec: PatternSpec) -> float:
    """A rough prior of how often a condition hits a present value, used only to
    choose anchors: equality on an enum-like field is common, a short literal
    or a regex somewhere in a long body less so, a long literal rare."""
    if selector.source is Source.FIELD and selector.name in _LOW_CARDINALITY:
        return 0.3
    if spec.op is MatchOp.REGEX:
        return 0.05
    if spec.op is MatchOp.EXACT:
        return 0.02
    return 0.2 if len(spec.text) < 4 else 0.03


class CompiledPolicy:
    """A valid policy ready to evaluate. It is indexed under one of its required
    pattern ids (its anchor); `rest` are the other ids that must also hit, and
    `checks` the conditions decided afterwards. Never changed once a snapshot
    uses it: a table that needs another anchor for it makes a copy."""

    __slots__ = (
        "anchor",
        "checks",
        "counter",
        "keep",
        "limiter",
        "order",
        "policy",
        "required",
        "rest",
        "score",
        "transforms",
        "uses",
    )

    def __init__(
        self,
        policy: Policy,
        required: frozenset[int],
        uses: tuple[int, ...],
        checks: tuple[Check, ...],
        transforms: tuple[CompiledTransform, ...],
        limiter: RateLimiter | None,
        counter: list[int],
    ) -> None:
        self.policy = policy
        self.order: bytes = policy.id.encode()
        """Evaluation order (policy ids, as bytes): ties go to the first."""
        self.required = required
        self.uses = uses
        """Every pattern id it holds (required or checked), one per matcher."""
        self.checks = checks
        self.transforms = transforms
        self.limiter = limiter
        self.counter = counter
        self.keep: Keep = policy.keep
        self.score: int = policy.keep.restrictiveness
        self.anchor = -1
        self.rest: tuple[int, ...] = ()

    def anchored(self, anchor: int) -> CompiledPolicy:
        """This policy indexed under `anchor` (itself when it already is)."""
        if anchor == self.anchor:
            return self
        copy = CompiledPolicy(
            self.policy,
            self.required,
            self.uses,
            self.checks,
            self.transforms,
            self.limiter,
            self.counter,
        )
        copy.anchor = anchor
        copy.rest = tuple(sorted(self.required - {anchor}))
        return copy


_by_order = operator.attrgetter("order")

YIELD_EVERY: Final = 256
"""Policies compiled between two offers of the GIL. Compiled code never
offers it by itself, and the event loop waits for it while a large set is
compiled on a provider thread: 10,000 policies took ~100 ms."""


def _offer_gil() -> None:
    time.sleep(0)  # releases the GIL: a waiting thread may take it


SHAPE_MEMO_LIMIT: Final = 4096
"""Distinct hit combinations whose candidate policies are remembered per signal."""


def most_restrictive(matched: Sequence[CompiledPolicy]) -> CompiledPolicy:
    """The most restrictive policy; on a tie the first in id order."""
    best = matched[0]
    for policy in matched[1:]:
        if policy.score > best.score:
            best = policy
    return best


@dataclass(slots=True)
class Shape:
    """The candidate policies of one hits tuple, with what can be decided
    before seeing the record: when no candidate has checks left, every
    candidate matches, so the winner is known, and a winner that keeps nothing
    drops the record without any further per-record work."""

    candidates: tuple[CompiledPolicy, ...]
    winner: CompiledPolicy | None = None
    """The policy deciding every record of the shape when no candidate has
    checks left; None when some has (which ones match depends on the record)
    or there is no candidate."""
    drops: CompiledPolicy | None = None
    """Unchecked and won by a ``keep: none`` policy: the record is dropped."""
    losers: tuple[CompiledPolicy, ...] = ()
    """With `drops`: the other candidates, each counting a miss."""

    @classmethod
    def of(cls, candidates: tuple[CompiledPolicy, ...]) -> Shape:
        if not candidates or any(p.checks for p in candidates):
            return cls(candidates)
        best = most_restrictive(candidates)
        if best.keep.kind is not KeepKind.NONE:
            return cls(candidates, best)
        return cls(candidates, best, best, tuple(p for p in candidates if p is not best))


# Fields whose values are nearly always distinct: remembering them costs more
# than it saves.
_UNIQUE_VALUED = frozenset({Selector(Source.FIELD, "body")})


class _Field:
    """The conditions of one field: pattern ids by condition, the id of its
    ``exists`` condition, and how many policy matchers use each id."""

    __slots__ = ("exists", "patterns", "selector")

    def __init__(self, selector: Selector) -> None:
        self.selector = selector
        self.patterns: dict[PatternSpec, int] = {}
        self.exists: int | None = None

    def copy(self) -> _Field:
        other = _Field(self.selector)
        other.patterns = dict(self.patterns)
        other.exists = self.exists
        return other


class SignalTable:
    """Everything compiled for one signal; see the module docstring."""

    def __init__(self, signal: Signal, cache: CompileCache, previous: SignalTable | None) -> None:
        self.signal = signal
        self.cache = cache
        self.policies: list[CompiledPolicy] = []
        """In evaluation order."""
        self.fields: list[_Field] = []
        self.field_ids: dict[Selector, int] = {}
        self.field_scanners: list[FieldScanner | None] = []
        """One per field; None for a field no policy reads any more."""
        self.uses: dict[int, int] = {}
        """Pattern id -> matchers using it; an id nothing uses is released."""
        self.sharing: dict[int, int] = {}
        """Pattern id -> policies that require it (what anchoring weighs)."""
        self.hit_rate: dict[int, float] = {}
        self.owner: dict[int, tuple[int, PatternSpec | None]] = {}
        """Pattern id -> its field and condition (None: the field's ``exists``)."""
        self.anchored: dict[int, list[CompiledPolicy]] = {}
        self.anchors: frozenset[int] = frozenset()
        self.always: tuple[CompiledPolicy, ...] = ()
        self._next_id = 0
        self._shapes: dict[tuple[int, ...], Shape] = {}
        self.remembered_shape = self._shapes.get
        self._readers: dict[type, tuple[FieldReader | None, ...]] = {}
        self._compiled: dict[int, CompiledPolicy] = {}
        """id() of each policy -> its compiled form (the policy is held by it)."""
        self._copied: set[int] = set()
        self._changed: set[int] = set()
        """Fields whose conditions changed in this build."""
        self._previous = previous
        if previous is not None:
            self.fields = list(previous.fields)
            self.field_ids = dict(previous.field_ids)
            self.uses = dict(previous.uses)
            self.sharing = dict(previous.sharing)
            self.hit_rate = dict(previous.hit_rate)
            self.owner = dict(previous.owner)
            self._next_id = previous._next_id

    # -- conditions ----------------------------------------------------------------

    def _field(self, selector: Selector) -> int:
        """The field's id, its conditions copied for this table (copy on write)."""
        fid = self.field_ids.get(selector)
        if fid is None:
            fid = self.field_ids[selector] = len(self.fields)
            self.fields.append(_Field(selector))
            self._copied.add(fid)
        elif fid not in self._copied:
            self.fields[fid] = self.fields[fid].copy()
            self._copied.add(fid)
        self._changed.add(fid)
        return fid

    def _new_id(self, fid: int, spec: PatternSpec | None, rate: float) -> int:
        pattern = self._next_id
        self._next_id += 1
        self.hit_rate[pattern] = rate
        self.owner[pattern] = (fid, spec)
        self.uses[pattern] = 0
        return pattern

    def _pattern_id(self, matcher: Matcher) -> int:
        spec = PatternSpec.of(matcher)
        assert spec is not None
        fid = self.field_ids.get(matcher.selector)
        if fid is not None:
            known = self.fields[fid].patterns.get(spec)
            if known is not None:
                return known
        fid = self._field(matcher.selector)
        pattern = self._new_id(fid, spec, _estimated_hit_rate(matcher.selector, spec))
        self.fields[fid].patterns[spec] = pattern
        return pattern

    def _exists_id(self, selector: Selector) -> int:
        fid = self.field_ids.get(selector)
        if fid is not None:
            known = self.fields[fid].exists
            if known is not None:
                return known
        fid = self._field(selector)
        pattern = self.fields[fid].exists = self._new_id(fid, None, 1.0)
        return pattern

    def _release(self, pattern: int) -> None:
        """One matcher fewer uses `pattern`; the last one frees it."""
        left = self.uses[pattern] - 1
        if left:
            self.uses[pattern] = left
            return
        del self.uses[pattern], self.hit_rate[pattern]
        fid, spec = self.owner.pop(pattern)
        self._field(self.fields[fid].selector)
        field = self.fields[fid]
        if spec is None:
            field.exists = None
        else:
            del field.patterns[spec]

    # -- policies ------------------------------------------------------------------

    def _compile(
        self, policy: Policy, runtime: PolicyRuntime, transforms: tuple[CompiledTransform, ...]
    ) -> CompiledPolicy:
        required: set[int] = set()
        uses: list[int] = []
        checks: list[Check] = []
        for matcher in policy.matchers:
            if matcher.op is MatchOp.EXISTS:
                pattern = self._exists_id(matcher.selector)
                if bool(matcher.value) != matcher.negate:
                    required.add(pattern)
                else:
                    checks.append(_absent_check(pattern))
            elif matcher.is_pattern:
                pattern = self._pattern_id(matcher)
                if matcher.negate:
                    checks.append(_absent_check(pattern))
                else:
                    required.add(pattern)
            else:
                checks.append(_typed_check(matcher))
                continue
            uses.append(pattern)
            self.uses[pattern] += 1
        for pattern in required:
            self.sharing[pattern] = self.sharing.get(pattern, 0) + 1
        keep = policy.keep
        limiter = runtime.limiter(policy.id, keep) if keep.kind is KeepKind.RATE else None
        return CompiledPolicy(
            policy,
            frozenset(required),
            tuple(uses),
            tuple(checks),
            transforms,
            limiter,
            runtime.stats.counter(policy.id),
        )

    def _forget(self, compiled: CompiledPolicy) -> None:
        for pattern in compiled.required:
            left = self.sharing[pattern] - 1
            if left:
                self.sharing[pattern] = left
            else:
                del self.sharing[pattern]
        for pattern in compiled.uses:
            self._release(pattern)

    def build(
        self,
        policies: Sequence[tuple[Policy, tuple[CompiledTransform, ...]]],
        runtime: PolicyRuntime,
        reuse: bool,
    ) -> None:
        """Compile `policies` (valid, in evaluation order, with their compiled
        transforms), keeping what the previous table compiled for the same
        policy objects when `reuse` (the same runtime holds their counters).
        The fields' scanners follow in :meth:`finish`."""
        previous = self._previous
        known = previous._compiled if previous is not None and reuse else {}
        kept: set[int] = set()
        touched: set[int] = set()
        compiled: list[CompiledPolicy] = []
        for count, (policy, transforms) in enumerate(policies):
            found = known.get(id(policy))
            if found is None:
                found = self._compile(policy, runtime, transforms)
                touched.update(found.required)
                if count % YIELD_EVERY == 0:
                    _offer_gil()
            else:
                kept.add(id(policy))
            compiled.append(found)
        if previous is not None:
            for key, gone in previous._compiled.items():
                if key not in kept:
                    self._forget(gone)
                    touched.update(gone.required)
        self._anchor(compiled, touched)

    def _anchor(self, compiled: list[CompiledPolicy], touched: set[int]) -> None:
        """Index every policy under its most selective required id, the one that
        minimises (policies sharing it) x (estimated hit rate). A record then only
        touches policies whose anchor hit, however many share its common
        conditions, and a record whose hits anchor nothing is passed over at once.
        A policy none of whose ids changed sharing keeps its anchor."""
        sharing, rate = self.sharing, self.hit_rate
        always: list[CompiledPolicy] = []
        for index, policy in enumerate(compiled):
            required = policy.required
            if not required:
                always.append(policy)
                self._compiled[id(policy.policy)] = policy
                continue
            if policy.anchor < 0 or not touched.isdisjoint(required):
                anchor = min(required, key=lambda p: (sharing[p] * rate[p], p))
                policy = compiled[index] = policy.anchored(anchor)
                if index % YIELD_EVERY == 0:
                    _offer_gil()
            self.anchored.setdefault(policy.anchor, []).append(policy)
            self._compiled[id(policy.policy)] = policy
        self.policies = compiled
        self.always = tuple(always)
        self.anchors = frozenset(self.anchored)

    def _scanner_plan(self, fid: int) -> tuple[bool, FieldScanner | None]:
        """Whether field `fid` needs a new scanner, and then its previous one
        (else the scanner it keeps: None for a field no policy reads)."""
        previous = self._previous
        before = None
        if previous is not None and fid < len(previous.field_scanners):
            before = previous.field_scanners[fid]
        field = self.fields[fid]
        if not field.patterns and field.exists is None:
            return False, None
        if before is not None and fid not in self._changed and before.databases.complete:
            return False, before
        return True, before

    def pending_builds(self) -> list[tuple[list[Entry], FieldDatabases | None]]:
        """The database entries of each field :meth:`finish` compiles a new
        scanner for, with its previous databases (for
        :meth:`CompileCache.prepare_small`)."""
        out: list[tuple[list[Entry], FieldDatabases | None]] = []
        for fid, field in enumerate(self.fields):
            new, before = self._scanner_plan(fid)
            if new:
                memoize = field.selector not in _UNIQUE_VALUED
                entries = database_entries(field.patterns, self.cache, memoize)
                out.append((entries, None if before is None else before.databases))
        return out

    def finish(self) -> None:
        """A scanner per field (after :meth:`build`): the previous one where
        the field's conditions did not change and its databases are
        complete; else a new one, on the previous one's databases where they
        still fit."""
        for fid, field in enumerate(self.fields):
            new, before = self._scanner_plan(fid)
            if not new:
                self.field_scanners.append(before)
            else:
                self.field_scanners.append(
                    FieldScanner(
                        [(pid, spec) for spec, pid in field.patterns.items()],
                        field.exists,
                        self.cache,
                        memoize=field.selector not in _UNIQUE_VALUED,
                        previous=before,
                    )
                )
                _offer_gil()
        self._previous = None  # the old table may go

    # -- evaluation ----------------------------------------------------------------

    def scanner(self, selector: Selector) -> FieldScanner | None:
        """The scanner of a field (None when no policy reads it)."""
        fid = self.field_ids.get(selector)
        return None if fid is None else self.field_scanners[fid]

    def shape(self, hits: tuple[int, ...]) -> Shape:
        """What records hitting exactly `hits` select: the policies (in id order)
        whose required ids all hit, whose remaining checks still have to pass.
        Remembered per distinct hits tuple: records of the same shape hit the
        same ids."""
        found = self._shapes.get(hits)
        if found is not None:
            return found
        anchored = self.anchored
        hit_set = set(hits)
        selected = [
            policy
            for anchor in self.anchors.intersection(hit_set)
            for policy in anchored[anchor]
            if hit_set.issuperset(policy.rest)
        ]
        selected.extend(self.always)
        selected.sort(key=_by_order)
        found = Shape.of(tuple(selected))
        if len(self._shapes) >= SHAPE_MEMO_LIMIT:
            self._shapes.clear()
        self._shapes[hits] = found
        return found

    def readers(self, view: RecordView) -> tuple[FieldReader | None, ...]:
        """(resource, scope, record) readers for this view type, built once."""
        found = self._readers.get(type(view))
        if found is None:
            by_level: list[list[tuple[Scan, Selector]]] = [[], [], []]
            for selector, fid in self.field_ids.items():
                scanner = self.field_scanners[fid]
                if scanner is not None:
                    by_level[view.level_of(selector)].append((scanner.hits, selector))
            found = tuple(view.reader(fields) if fields else None for fields in by_level)
            self._readers[type(view)] = found
        return found

    def live_scanners(self) -> list[FieldScanner]:
        """The scanners of the fields some policy reads."""
        return [s for s in self.field_scanners if s is not None]

    def specs(self) -> list[PatternSpec]:
        """Every condition of this table."""
        return [spec for field in self.fields for spec in field.patterns]
