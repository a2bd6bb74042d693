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
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from sluice.gcpause import collection_paused
from sluice.policy.cache import CompileCache
from sluice.policy.databases import Entry
from sluice.policy.model import ID_FIELDS, KeepKind, Policy, Selector, Signal, Source, Transform
from sluice.policy.sampling import sample_log, sample_trace, write_threshold
from sluice.policy.stats import MISSES, PolicyRuntime
from sluice.policy.table import CompiledPolicy, SignalTable, most_restrictive
from sluice.policy.transform import CHANGED, CompiledTransform
from sluice.policy.view import PRESENT, Ctx, FieldReader, RecordView, Value

log = logging.getLogger(__name__)

# Compiled constants: reading a member off its Enum class costs a dictionary
# lookup and Python 3.11's EnumType.__getattr__ hook, several times per
# decided record.
_ALL: Final = KeepKind.ALL
_NONE: Final = KeepKind.NONE
_RATE: Final = KeepKind.RATE
_PERCENT: Final = KeepKind.PERCENT
_LOG: Final = Signal.LOG
_TRACE: Final = Signal.TRACE


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


class _Place:
    """The record being decided and where it lives. Its Ctx is built on first
    use: a view may allocate for it (the lean view wraps the record's bytes),
    and most decisions need nothing of the record but its pattern hits."""

    def __init__(self, view: RecordView, resource: Any, scope: Any, records: Sequence[Any]):
        self.view = view
        self.resource = resource
        self.scope = scope
        self.records = records
        self.position = 0
        self.record: Any = None
        self._ctx: Ctx | None = None

    def at(self, position: int, record: Any) -> None:
        self.position = position
        self.record = record
        self._ctx = None

    def ctx(self) -> Ctx:
        ctx = self._ctx
        if ctx is None:
            ctx = self._ctx = self.view.context(
                self.resource, self.scope, self.records, self.position, self.record
            )
        return ctx


class PolicySnapshot:
    """An immutable, compiled policy set. Evaluation only reads it, so any
    number of threads may evaluate while a provider compiles the next one."""

    def __init__(
        self, policies: Sequence[Policy], tables: dict[Signal, SignalTable], runtime: PolicyRuntime
    ):
        self.policies = tuple(policies)
        self._tables = tables
        self.runtime = runtime

    @classmethod
    def compile(
        cls,
        policies: Iterable[Policy],
        runtime: PolicyRuntime | None = None,
        cache: CompileCache | None = None,
        previous: PolicySnapshot | None = None,
    ) -> PolicySnapshot:
        """Compile the enabled policies; invalid ones stay inert (their errors
        are kept for reporting on :attr:`errors`). Translations, databases and
        transforms come from `cache` where it has them (without one, nothing
        is remembered). With `previous` (the snapshot being replaced) a field
        where only a few patterns changed keeps its databases and gets one
        small one added (see :meth:`incomplete_fields`)."""
        runtime = runtime or PolicyRuntime()
        cache = cache if cache is not None else CompileCache(None)
        with collection_paused():
            active = sorted(
                (p for p in policies if p.enabled and p.signal is not None),
                key=lambda p: p.id.encode(),
            )
            valid: dict[Signal, list[tuple[Policy, tuple[CompiledTransform, ...]]]] = {
                signal: [] for signal in Signal
            }
            steps: list[Transform] = []
            for policy in active:
                if not policy.valid:
                    continue
                assert policy.signal is not None
                try:
                    transforms = tuple(cache.transform(t) for t in policy.transforms)
                except ValueError as problem:  # validated at parse time; belt and braces
                    log.error("policy %r: %s", policy.id, problem)
                    continue
                steps.extend(policy.transforms)
                valid[policy.signal].append((policy, transforms))
            tables = {}
            for signal in Signal:
                before = None if previous is None else previous._tables[signal]
                table = tables[signal] = SignalTable(signal, cache, before)
                table.build(
                    valid[signal],
                    runtime,
                    reuse=previous is not None and previous.runtime is runtime,
                )
            # The fields' small builds compile together (one child process)
            # before each field's scanner takes its databases from the cache.
            cache.prepare_small(b for t in tables.values() for b in t.pending_builds())
            for table in tables.values():
                table.finish()
            cache.trim(
                (spec for t in tables.values() for spec in t.specs()),
                steps,
                (s for t in tables.values() for f in t.live_scanners() for s in f.databases.shards),
            )
            runtime.retain({p.id for p in active})
        return cls(active, tables, runtime)

    def incomplete_fields(self) -> list[tuple[Entry, ...]]:
        """The patterns of every field whose databases were built on the
        previous snapshot's (:meth:`compile` with `previous`): compiling them
        completely (:meth:`CompileCache.complete`) and compiling again makes a
        snapshot whose scans cost what a fresh compile's do."""
        return [
            scanner.databases.entries
            for table in self._tables.values()
            for scanner in table.live_scanners()
            if not scanner.databases.complete
        ]

    @property
    def errors(self) -> dict[str, tuple[str, ...]]:
        """Compile errors of enabled policies, by policy id."""
        return {p.id: p.errors for p in self.policies if p.errors}

    def count(self, signal: Signal) -> int:
        """How many policies of `signal` are active (valid and enabled)."""
        return len(self._tables[signal].policies)

    def fallback_patterns(self) -> int:
        """Patterns matched with RE2 one by one (Hyperscan cannot take them)."""
        return sum(s.fallback_count for t in self._tables.values() for s in t.live_scanners())

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
                place = _Place(view, resource, scope, records)
                dropped: list[int] = []
                # Each record taken out once: a protobuf list of bytes copies
                # a record's bytes at every access.
                items = list(records)
                # The hits read in one go start with the container's, as they
                # were before any record of the scope rewrote them.
                read_after = container_hits
                read = (
                    view.read_records(record_reader, items, read_after) if record_reader else None
                )
                for position, record in enumerate(items):
                    try:
                        if record_reader:
                            found = None if read is None else read[position]
                            if found is None:
                                hits = container_hits + record_reader(record)
                            elif container_hits is read_after:
                                hits = found
                            else:
                                hits = container_hits + found[len(read_after) :]
                        else:
                            hits = container_hits
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
                    place.at(position, record)
                    try:
                        winner = shape.winner
                        if winner is None:
                            ctx = place.ctx()
                            matched: Sequence[CompiledPolicy] = [
                                p
                                for p in candidates
                                if not p.checks or all(check(hits, view, ctx) for check in p.checks)
                            ]
                            if not matched:
                                continue
                            winner = most_restrictive(matched)
                        else:
                            matched = candidates
                        status = self._decide(table, matched, winner, view, place, outcome)
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
        table: SignalTable,
        matched: Sequence[CompiledPolicy],
        winner: CompiledPolicy,
        view: RecordView,
        place: _Place,
        outcome: BatchOutcome,
    ) -> int:
        """Decide the record at `place` that `matched` policies (in id order)
        match, `winner` the most restrictive of them. Returns 0 when dropped,
        1 when kept, 2 when kept and a shared resource/scope value was
        rewritten. Only a sample key, a trace sample or threshold and a
        transform read the record (build its Ctx)."""
        keep = winner.keep
        kind = keep.kind
        write: int | None = None
        if kind is _ALL:
            kept = True
            if table.signal is _TRACE:
                write = 0
        elif kind is _NONE:
            kept = False
        elif kind is _RATE:
            assert winner.limiter is not None
            kept = winner.limiter.allow()
        elif kind is _PERCENT:
            kept = self._sample_log(winner, view, place)
        else:
            record = place.ctx().record
            kept, write = sample_trace(keep, view.trace_state(record), view.trace_id(record))
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
            record = place.ctx().record
            state = view.trace_state(record)
            view.set_trace_state(record, write_threshold(state, write, keep.precision))
            changed = True
        if table.signal is _LOG:
            for policy in matched:
                for step in policy.transforms:
                    result = step.apply(view, place.ctx())
                    slot = step.counter_slot + (0 if result else 1)  # a hit, or a miss
                    policy.counter[slot] += 1
                    if result == CHANGED:
                        changed = True
                        if step.touches_container:
                            status = 2
        if changed:
            outcome.modified = True
        # One result per record: a transform that changed it wins over how it
        # was kept.
        if changed and table.signal is _LOG:
            outcome.transformed += 1
        elif kind is not _ALL:  # a sample or a rate limit kept it
            outcome.sampled += 1
        else:
            outcome.kept += 1
        return status

    @staticmethod
    def _sample_log(winner: CompiledPolicy, view: RecordView, place: _Place) -> bool:
        keep, key = winner.keep, winner.policy.sample_key
        if key is None:
            return sample_log(keep.percent, None, False)
        value = view.get(place.ctx(), key)
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
