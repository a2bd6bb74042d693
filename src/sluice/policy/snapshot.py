"""Compile a policy set into an immutable :class:`PolicySnapshot` and evaluate
batches against it.

Compilation (once per policy change) turns every string condition into a
pattern id inside its field's :class:`FieldScanner`. Evaluation of a record is
then: read the values of the fields that any policy looks at, scan each value
once, and only for the policies whose required pattern ids all hit, check the
remaining conditions (negations, typed comparisons) and decide. A record that
no pattern hits costs one scan per present field, whatever the policy count.
"""

from __future__ import annotations

import logging
import operator
import struct
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from sluice.policy.model import (
    ID_FIELDS,
    Keep,
    KeepKind,
    Matcher,
    MatchOp,
    Policy,
    Selector,
    Signal,
    Source,
)
from sluice.policy.patterns import DatabaseCache, FieldScanner, PatternSpec
from sluice.policy.ratelimit import RateLimiter
from sluice.policy.sampling import sample_log, sample_trace, write_threshold
from sluice.policy.stats import MISSES, PolicyRuntime
from sluice.policy.transform import CompiledTransform
from sluice.policy.view import PRESENT, Ctx, FieldReader, RecordView, Scan, Value

log = logging.getLogger(__name__)

Check = Callable[[Sequence[int], RecordView, Ctx], bool]
"""A condition decided per candidate record: gets the record's pattern hits."""


def _compare(op: MatchOp, value: Value | None, literal: Any) -> bool:
    if value is None or value is PRESENT:
        return False
    if op is MatchOp.EQUALS:
        if isinstance(literal, bool) or isinstance(value, bool):
            return isinstance(literal, bool) and isinstance(value, bool) and value == literal
        if isinstance(literal, int | float):
            return isinstance(value, int | float) and value == literal
        return type(value) is type(literal) and value == literal
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    # Python compares ints and floats exactly, and never overflows doing so
    # (float() of a 400-digit integer would).
    number: Any = value
    if op is MatchOp.GT:
        return bool(number > literal)
    if op is MatchOp.GTE:
        return bool(number >= literal)
    if op is MatchOp.LT:
        return bool(number < literal)
    return bool(number <= literal)


def _typed_check(matcher: Matcher) -> Check:
    selector, op, literal, negate = matcher.selector, matcher.op, matcher.value, matcher.negate
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


@dataclass(slots=True)
class CompiledPolicy:
    """A valid policy ready to evaluate. It is indexed under one of its required
    pattern ids (its anchor); `rest` are the other ids that must also hit, and
    `checks` the conditions decided afterwards."""

    index: int
    policy: Policy
    required: frozenset[int]
    checks: tuple[Check, ...]
    transforms: tuple[CompiledTransform, ...]
    limiter: RateLimiter | None
    counter: list[int]
    score: int = 0
    rest: tuple[int, ...] = ()
    keep: Keep = field(init=False)

    def __post_init__(self) -> None:
        self.keep = self.policy.keep
        self.score = self.keep.restrictiveness


class _SignalTable:
    """Everything compiled for one signal."""

    def __init__(self, signal: Signal, cache: DatabaseCache | None):
        self.signal = signal
        self.cache = cache
        self.policies: list[CompiledPolicy] = []
        self.field_ids: dict[Selector, int] = {}
        self.patterns: list[dict[PatternSpec, int]] = []
        self.exists_ids: list[int | None] = []
        self.anchored: dict[int, list[int]] = {}
        self.anchors: frozenset[int] = frozenset()
        self._shapes: dict[tuple[int, ...], Shape] = {}
        self.remembered_shape = self._shapes.get
        self.always: tuple[int, ...] = ()
        self.field_scanners: list[FieldScanner] = []
        self._next_id = 0
        self.hit_rate: dict[int, float] = {}
        self._readers: dict[type, tuple[FieldReader | None, ...]] = {}

    def _field(self, selector: Selector) -> int:
        fid = self.field_ids.get(selector)
        if fid is None:
            fid = self.field_ids[selector] = len(self.patterns)
            self.patterns.append({})
            self.exists_ids.append(None)
        return fid

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id - 1

    def pattern_id(self, matcher: Matcher) -> int:
        fid = self._field(matcher.selector)
        op = MatchOp.EXACT if matcher.op is MatchOp.EQUALS else matcher.op
        assert isinstance(matcher.value, str)
        spec = PatternSpec(op, matcher.value, matcher.case_insensitive)
        known = self.patterns[fid].get(spec)
        if known is None:
            known = self.patterns[fid][spec] = self._new_id()
            self.hit_rate[known] = _estimated_hit_rate(matcher.selector, spec)
        return known

    def exists_id(self, selector: Selector) -> int:
        fid = self._field(selector)
        known = self.exists_ids[fid]
        if known is None:
            known = self.exists_ids[fid] = self._new_id()
            self.hit_rate[known] = 1.0
        return known

    def add(
        self, policy: Policy, runtime: PolicyRuntime, transforms: tuple[CompiledTransform, ...]
    ) -> None:
        required: set[int] = set()
        checks: list[Check] = []
        for matcher in policy.matchers:
            if matcher.op is MatchOp.EXISTS:
                pattern = self.exists_id(matcher.selector)
                if bool(matcher.value) != matcher.negate:
                    required.add(pattern)
                else:
                    checks.append(_absent_check(pattern))
            elif matcher.is_pattern:
                pattern = self.pattern_id(matcher)
                if matcher.negate:
                    checks.append(_absent_check(pattern))
                else:
                    required.add(pattern)
            else:
                checks.append(_typed_check(matcher))
        index = len(self.policies)
        if not required:
            self.always += (index,)
        keep = policy.keep
        limiter = runtime.limiter(policy.id, keep) if keep.kind is KeepKind.RATE else None
        self.policies.append(
            CompiledPolicy(
                index,
                policy,
                frozenset(required),
                tuple(checks),
                transforms,
                limiter,
                runtime.stats.counter(policy.id),
            )
        )

    def _anchor(self) -> None:
        """Index every policy under its most selective required id, the one that
        minimises (policies sharing it) x (estimated hit rate). A record then only
        touches policies whose anchor hit, however many share its common
        conditions, and a record whose hits anchor nothing is passed over at once."""
        sharing: dict[int, int] = {}
        for policy in self.policies:
            for pattern in policy.required:
                sharing[pattern] = sharing.get(pattern, 0) + 1
        for policy in self.policies:
            if not policy.required:
                continue
            anchor = min(policy.required, key=lambda p: (sharing[p] * self.hit_rate[p], p))
            policy.rest = tuple(sorted(policy.required - {anchor}))
            self.anchored.setdefault(anchor, []).append(policy.index)
        self.anchors = frozenset(self.anchored)

    def finish(self) -> None:
        self._anchor()
        self._selectors = {fid: selector for selector, fid in self.field_ids.items()}
        for fid, patterns in enumerate(self.patterns):
            scanner = FieldScanner(
                [(pid, spec) for spec, pid in patterns.items()],
                self.exists_ids[fid],
                self.cache,
                memoize=self._selectors[fid] not in _UNIQUE_VALUED,
            )
            self.field_scanners.append(scanner)

    def shape(self, hits: tuple[int, ...]) -> Shape:
        """What records hitting exactly `hits` select: the policies (in id order)
        whose required ids all hit, whose remaining checks still have to pass.
        Remembered per distinct hits tuple: records of the same shape hit the
        same ids."""
        found = self._shapes.get(hits)
        if found is not None:
            return found
        policies = self.policies
        anchored = self.anchored
        hit_set = set(hits)
        selected = [
            policies[index]
            for anchor in self.anchors.intersection(hit_set)
            for index in anchored[anchor]
            if hit_set.issuperset(policies[index].rest)
        ]
        selected.extend(policies[index] for index in self.always)
        selected.sort(key=_by_index)
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
                scan = self.field_scanners[fid].hits
                by_level[view.level_of(selector)].append((scan, selector))
            found = tuple(view.reader(fields) if fields else None for fields in by_level)
            self._readers[type(view)] = found
        return found


_by_index = operator.attrgetter("index")

SHAPE_MEMO_LIMIT: Final = 4096
"""Distinct hit combinations whose candidate policies are remembered per signal."""


def _winner(matched: Sequence[CompiledPolicy]) -> CompiledPolicy:
    """The most restrictive policy; on a tie the first in id order."""
    winner = matched[0]
    for policy in matched[1:]:
        if policy.score > winner.score:
            winner = policy
    return winner


@dataclass(slots=True)
class Shape:
    """The candidate policies of one hits tuple, with what can be decided
    before seeing the record: when no candidate has checks left, every
    candidate matches, so the winner is known, and a winner that keeps nothing
    drops the record without any further per-record work."""

    candidates: tuple[CompiledPolicy, ...]
    checked: bool
    """Some candidate still has checks: which ones match depends on the record."""
    drops: CompiledPolicy | None = None
    """Unchecked and won by a ``keep: none`` policy: the record is dropped."""
    losers: tuple[CompiledPolicy, ...] = ()
    """With `drops`: the other candidates, each counting a miss."""

    @classmethod
    def of(cls, candidates: tuple[CompiledPolicy, ...]) -> Shape:
        checked = any(p.checks for p in candidates)
        if checked or not candidates:
            return cls(candidates, checked)
        winner = _winner(candidates)
        if winner.keep.kind is not KeepKind.NONE:
            return cls(candidates, False)
        return cls(candidates, False, winner, tuple(p for p in candidates if p is not winner))


# Fields whose values are nearly always distinct: remembering them costs more
# than it saves.
_UNIQUE_VALUED = frozenset({Selector(Source.FIELD, "body")})


@dataclass(slots=True)
class BatchOutcome:
    """What evaluating one batch did. `modified` is False when the batch came
    out exactly as it went in (callers may then forward the original bytes)."""

    records: int = 0
    no_match: int = 0
    kept: int = 0
    dropped: int = 0
    sampled: int = 0
    transformed: int = 0
    malformed: int = 0
    """Records that could not be read (not well-formed OTLP); passed through."""
    modified: bool = False

    @property
    def remaining(self) -> int:
        return self.records - self.dropped


class _ReadFailures:
    """What evaluating one batch does with values its view cannot read. A
    ValueError is data (broken bytes, a record that is not an object): logged
    at debug level. Anything else is a bug in a view or the engine, which
    costs only the record or container it hit: logged as an error, with its
    traceback, once per batch."""

    def __init__(self, signal: Signal):
        self.signal = signal
        self.reported = False

    def record(self, problem: Exception) -> None:
        if isinstance(problem, ValueError):
            log.debug("unreadable %s record kept: %r", self.signal.value, problem)
        elif not self.reported:
            self.reported = True
            log.error(
                "reading a %s record failed; kept unevaluated",
                self.signal.value,
                exc_info=problem,
            )

    def container(self, reader: FieldReader | None, container: Any) -> tuple[int, ...] | None:
        """The hits of a resource or scope container; None when it cannot be read."""
        if reader is None:
            return ()
        try:
            return reader(container)
        except Exception as problem:
            self.record(problem)
            return None


class PolicySnapshot:
    """An immutable, compiled policy set. Evaluation only reads it, so any
    number of threads may evaluate while a provider compiles the next one."""

    def __init__(
        self, policies: Sequence[Policy], tables: dict[Signal, _SignalTable], runtime: PolicyRuntime
    ):
        self.policies = tuple(policies)
        self._tables = tables
        self.runtime = runtime

    @classmethod
    def compile(
        cls,
        policies: Iterable[Policy],
        runtime: PolicyRuntime | None = None,
        cache: DatabaseCache | None = None,
    ) -> PolicySnapshot:
        """Compile the enabled policies; invalid ones stay inert (their errors
        are kept for reporting on :attr:`errors`)."""
        runtime = runtime or PolicyRuntime()
        active = sorted(
            (p for p in policies if p.enabled and p.signal is not None), key=lambda p: p.id.encode()
        )
        tables = {signal: _SignalTable(signal, cache) for signal in Signal}
        for policy in active:
            if not policy.valid:
                continue
            assert policy.signal is not None
            try:
                transforms = tuple(CompiledTransform.compile(t) for t in policy.transforms)
            except ValueError as problem:  # validated at parse time; belt and braces
                log.error("policy %r: %s", policy.id, problem)
                continue
            tables[policy.signal].add(policy, runtime, transforms)
        for table in tables.values():
            table.finish()
        runtime.retain({p.id for p in active})
        return cls(active, tables, runtime)

    @property
    def errors(self) -> dict[str, tuple[str, ...]]:
        """Compile errors of enabled policies, by policy id."""
        return {p.id: p.errors for p in self.policies if p.errors}

    def count(self, signal: Signal) -> int:
        """How many policies of `signal` are active (valid and enabled)."""
        return len(self._tables[signal].policies)

    def fallback_patterns(self) -> int:
        """Patterns matched with RE2 one by one (Hyperscan cannot take them)."""
        return sum(s.fallback_count for t in self._tables.values() for s in t.field_scanners)

    def evaluate(self, signal: Signal, view: RecordView, batch: Any) -> BatchOutcome:
        """Apply the policies to a decoded batch in place: drop, sample, transform,
        then prune empty containers. Counters go to :attr:`runtime`."""
        table = self._tables[signal]
        outcome = BatchOutcome()
        if not table.policies:
            for resource in view.resources(batch):
                for scope in view.scopes(resource):
                    outcome.records += len(view.records(scope))
            outcome.no_match = outcome.records
            outcome.modified = view.prune(batch)
            return outcome
        resource_reader, scope_reader, record_reader = table.readers(view)
        always = table.always
        remembered = table.remembered_shape
        failures = _ReadFailures(signal)
        for resource in view.resources(batch):
            resource_hits = failures.container(resource_reader, resource)
            for scope in view.scopes(resource):
                records = view.records(scope)
                outcome.records += len(records)
                scope_hits = (
                    None if resource_hits is None else failures.container(scope_reader, scope)
                )
                if resource_hits is None or scope_hits is None:
                    # Views read what they can of a container; if even that
                    # fails, nothing of it can be decided: keep its records.
                    outcome.malformed += len(records)
                    continue
                container_hits = resource_hits + scope_hits
                dropped: list[int] = []
                for position, record in enumerate(records):
                    try:
                        hits = (
                            container_hits + record_reader(record)
                            if record_reader
                            else container_hits
                        )
                    except Exception as problem:  # keep it as it came, unevaluated
                        outcome.malformed += 1
                        failures.record(problem)
                        continue
                    if not hits and not always:
                        continue
                    shape = remembered(hits) or table.shape(hits)
                    drops = shape.drops
                    if drops is not None:
                        drops.counter[0] += 1
                        for loser in shape.losers:
                            loser.counter[MISSES] += 1
                        outcome.dropped += 1
                        dropped.append(position)
                        continue
                    candidates = shape.candidates
                    if not candidates:
                        continue
                    try:
                        ctx = view.context(resource, scope, records, position, record)
                        if shape.checked:
                            matched: Sequence[CompiledPolicy] = [
                                p
                                for p in candidates
                                if not p.checks or all(check(hits, view, ctx) for check in p.checks)
                            ]
                            if not matched:
                                continue
                        else:
                            matched = candidates
                        status = self._decide(table, matched, view, ctx, outcome)
                    except Exception as problem:
                        # Bytes the reader did not need turned out unreadable when a
                        # check, sample key or transform read them: keep the record.
                        outcome.malformed += 1
                        outcome.modified = True  # an earlier transform step may have run
                        failures.record(problem)
                        continue
                    if status == 0:
                        dropped.append(position)
                    elif status == 2:  # a shared resource/scope value changed: rescan it
                        resource_hits = failures.container(resource_reader, resource)
                        scope_hits = failures.container(scope_reader, scope)
                        if resource_hits is None or scope_hits is None:
                            outcome.malformed += len(records) - position - 1
                            break
                        container_hits = resource_hits + scope_hits
                if dropped:
                    outcome.modified = True
                    view.remove_records(scope, dropped)
        outcome.no_match = outcome.records - (
            outcome.kept
            + outcome.dropped
            + outcome.sampled
            + outcome.transformed
            + outcome.malformed
        )
        if view.prune(batch):
            outcome.modified = True
        return outcome

    def _decide(
        self,
        table: _SignalTable,
        matched: Sequence[CompiledPolicy],
        view: RecordView,
        ctx: Ctx,
        outcome: BatchOutcome,
    ) -> int:
        """Decide one record that `matched` policies (in id order) match.
        Returns 0 when dropped, 1 when kept, 2 when kept and a shared
        resource/scope value was rewritten."""
        winner = _winner(matched)
        keep = winner.keep
        kind = keep.kind
        write: int | None = None
        if kind is KeepKind.ALL:
            kept = True
            if table.signal is Signal.TRACE:
                write = 0
        elif kind is KeepKind.NONE:
            kept = False
        elif kind is KeepKind.RATE:
            assert winner.limiter is not None
            kept = winner.limiter.allow()
        elif kind is KeepKind.PERCENT:
            kept = self._sample_log(winner, view, ctx)
        else:
            kept, write = sample_trace(
                keep, view.trace_state(ctx.record), view.trace_id(ctx.record)
            )
        if kept:
            for policy in matched:
                policy.counter[0] += 1
        else:
            winner.counter[0] += 1
            for policy in matched:
                if policy is not winner:
                    policy.counter[MISSES] += 1
            outcome.dropped += 1
            return 0  # the caller removes it and marks the batch modified
        status = 1
        changed = False
        if write is not None:
            state = view.trace_state(ctx.record)
            view.set_trace_state(ctx.record, write_threshold(state, write, keep.precision))
            changed = True
        if table.signal is Signal.LOG:
            for policy in matched:
                for step in policy.transforms:
                    hit = step.apply(view, ctx)
                    slot = step.counter_slot + (0 if hit else 1)
                    policy.counter[slot] += 1
                    changed = True
                    if hit and step.touches_container:
                        status = 2
        if changed:
            outcome.modified = True
        # One result per record: a transform ran wins over how it was kept.
        if changed and table.signal is Signal.LOG:
            outcome.transformed += 1
        elif kind in (KeepKind.PERCENT, KeepKind.RATE, KeepKind.TRACE_SAMPLE):
            outcome.sampled += 1
        else:
            outcome.kept += 1
        return status

    @staticmethod
    def _sample_log(winner: CompiledPolicy, view: RecordView, ctx: Ctx) -> bool:
        keep, key = winner.keep, winner.policy.sample_key
        if key is None:
            return sample_log(keep.percent, None, False)
        value = view.get(ctx, key)
        is_trace_id = key.source is Source.FIELD and key.name == "trace_id"
        return sample_log(keep.percent, _key_bytes(value, key), is_trace_id)


def _key_bytes(value: Value | None, key: Selector) -> bytes:
    """A sample key's bytes: ids raw, strings UTF-8, ints/doubles 8-byte
    big-endian, bools one byte; absent, untyped or an id that is not hex gives
    b'' (keep)."""
    if value is None or value is PRESENT:
        return b""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        if key.name not in ID_FIELDS or key.source is not Source.FIELD:
            return value.encode("utf-8", "replace")
        try:
            return bytes.fromhex(value)
        except ValueError:  # an id that is not hex (a Datadog field) has no randomness
            return b""
    if isinstance(value, bool):
        return b"\x01" if value else b"\x00"
    if isinstance(value, int):
        return (value & 0xFFFFFFFFFFFFFFFF).to_bytes(8, "big")
    return struct.pack(">d", value)
