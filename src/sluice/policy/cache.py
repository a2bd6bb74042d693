"""Everything compiling a policy set produces, remembered so that nothing is
done twice: in memory for the updates of a running process, and on disk
(:mod:`sluice.policy.store`) for restarts and for other processes.

- **Policies**, keyed by a hash of their JSON: the parsed and validated
  :class:`Policy` and the Hyperscan translation of each of its patterns. An
  unchanged policy is never parsed, validated or translated again.
- **Databases**, keyed by their patterns: each compiled Hyperscan database,
  and how a field's patterns were split into databases (the layout).

Keys include a fingerprint of the code that produced the entry (the sources
of the parser, the translator and this cache, and the Hyperscan and RE2
versions), so entries of another version are never used. In memory, parsed
policies are held only while something else holds them (weak references);
translations and databases are trimmed after each compile to what it used.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import logging
import marshal
import os
import pickle
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import hyperscan
import orjson

import sluice
from sluice.gcpause import collection_paused
from sluice.heap import resident_bytes
from sluice.policy import (
    codec,
    compiler_process,
    conditions,
    databases,
    hyperscan_syntax,
    model,
    native,
    parse,
    regex_dialect,
    shardplan,
    store,
)
from sluice.policy.conditions import PatternSpec
from sluice.policy.databases import (
    NO_DATABASES,
    BuildReport,
    Entry,
    FieldDatabases,
    Layout,
    Shard,
)
from sluice.policy.model import LoadReport, Policy
from sluice.policy.transform import CompiledTransform

log = logging.getLogger(__name__)

FORMAT = 1
"""Bumped whenever the meaning of an entry changes."""

DIRECTORY_VARIABLE = "SLUICE_CACHE_DIR"
ISOLATED_PARSE_BYTES = 256 << 10
"""Policy documents at least this large (about 1,500 policies) are parsed in
a child process when the process holds few parsed policies."""
ISOLATED_PARSE_HELD = 1000

_FINGERPRINTED: tuple[ModuleType, ...] = (
    codec,
    conditions,
    databases,
    hyperscan_syntax,
    model,
    parse,
    regex_dialect,
    shardplan,
    store,
)


def _source_bytes(module: ModuleType) -> bytes:
    """A module's source (its compiled form when the source is not
    installed); for a package, the sources of all its modules, in name order."""
    where = Path(module.__file__ or "")
    if where.name.partition(".")[0] == "__init__":
        return b"".join(_file_source(path) for path in sorted(where.parent.glob("*.py")))
    return _file_source(where.with_name(module.__name__.rsplit(".", 1)[-1] + ".py"), where)


def _file_source(source: Path, compiled: Path | None = None) -> bytes:
    """The bytes of `source`, else of `compiled` (b"" when neither reads)."""
    for candidate in (source, compiled):
        if candidate is None:
            continue
        try:
            return candidate.read_bytes()
        except OSError:
            continue
    return b""


def fingerprint() -> str:
    """Identifies the code behind every entry: a different fingerprint means
    entries written by another version, which are never read."""
    digest = hashlib.blake2b(digest_size=16)
    versions = (
        FORMAT,
        sluice.__version__,
        importlib.metadata.version("hyperscan"),
        importlib.metadata.version("google-re2"),
    )
    digest.update(repr(versions).encode())
    for module in _FINGERPRINTED:
        digest.update(_source_bytes(module))
    digest.update(Path(__file__).read_bytes())
    return digest.hexdigest()


def default_directory() -> Path | None:
    """``$SLUICE_CACHE_DIR`` (empty: no cache on disk, None), else
    ``$XDG_CACHE_HOME/sluice`` or ``~/.cache/sluice``."""
    configured = os.environ.get(DIRECTORY_VARIABLE)
    if configured is not None:
        return Path(configured) if configured else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "sluice"


def _digest(*parts: bytes) -> bytes:
    digest = hashlib.blake2b(digest_size=20)
    for part in parts:
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return digest.digest()


def _entries_bytes(entries: Sequence[Entry]) -> bytes:
    return b"".join(b"%d %d\n%s" % (flags, len(e), e) for e, flags in entries)


def _json_bytes(obj: Any) -> bytes | None:
    """The policy object's JSON, one text per distinct object: orjson's,
    unless it wrote a null (orjson also writes NaN and Infinity as null) or
    failed (integers past 64 bits, lone surrogates): then the standard
    library's, which tells them apart."""
    try:
        text = orjson.dumps(obj)
    except (orjson.JSONEncodeError, TypeError):
        text = b""
    if text and b"null" not in text:
        return text
    try:
        return b"j" + json.dumps(obj, separators=(",", ":")).encode("ascii")
    except (TypeError, ValueError):
        return None


class CompileCache:
    """What compiling has produced: parsed policies, translations, databases.

    `directory` (None: memory only) holds the entries on disk; `budget` is the
    compile memory budget in bytes (None: ``$SLUICE_COMPILE_MEMORY_MIB``, else
    no limit; 0: no limit).
    Thread-safe. One registry should own one cache: each compile trims the
    in-memory memos to what it used.
    """

    def __init__(self, directory: Path | None = None, budget: int | None = None) -> None:
        self.directory = directory
        self.budget = databases.budget_from_environment() if budget is None else budget
        self._fingerprint = fingerprint()
        self._salt = bytes.fromhex(self._fingerprint)
        self.store = store.CacheStore(directory, self._fingerprint) if directory else None
        self._policies: weakref.WeakValueDictionary[bytes, Policy] = weakref.WeakValueDictionary()
        self._translations: dict[PatternSpec, bytes | None] = {}
        self._re2: dict[PatternSpec, Any] = {}
        self._transforms: dict[model.Transform, CompiledTransform] = {}
        self._shards: dict[bytes, Shard] = {}
        self._layouts: dict[bytes, Layout] = {}
        self._entries: dict[int, tuple[bytes, bytes]] = {}
        """id() of each policy of the last parse_all -> its key and stored form."""
        self._stored: dict[bytes, bytes] = {}
        self._lock = threading.Lock()
        self.last_build: BuildReport | None = None
        """The latest complete build that compiled something (for logs and benchmarks)."""

    @classmethod
    def default(cls, budget_mib: int = 0) -> CompileCache:
        """On disk in :func:`default_directory` (memory only when caching is
        off), compiling within ``$SLUICE_COMPILE_MEMORY_MIB``, else
        `budget_mib` (0: no limit)."""
        return cls(default_directory(), databases.budget_from_environment(budget_mib))

    def release(self) -> None:
        """Done for now (a set is swapped in): give back what the store holds
        open until it is needed again."""
        if self.store is not None:
            self.store.release()

    # -- policies ------------------------------------------------------------------

    def _policy_key(self, obj: Mapping[str, Any]) -> bytes | None:
        text = _json_bytes(obj)
        if text is None:
            return None
        return hashlib.blake2b(text, digest_size=20, key=self._salt).digest()

    def parse_all(self, objects: Sequence[Mapping[str, Any]]) -> list[Policy]:
        """:func:`~sluice.policy.parse.parse_policy` of every object, from
        memory or disk where the same object was parsed before."""
        with collection_paused():
            keys = [self._policy_key(obj) for obj in objects]
            found: list[Policy | None] = [
                None if key is None else self._policies.get(key) for key in keys
            ]
            wanted = sorted({k for k, p in zip(keys, found, strict=True) if k and p is None})
            if wanted and self.store is not None:
                loaded = self._load_policies(wanted)
                found = [
                    p if p is not None or k is None else loaded.get(k)
                    for k, p in zip(keys, found, strict=True)
                ]
            written: dict[bytes, bytes] = {}
            out: list[Policy] = []
            parsed = 0
            for obj, key, policy in zip(objects, keys, found, strict=True):
                if policy is None:
                    policy = parse.parse_policy(obj)
                    parsed += 1
                    if key is not None:
                        translations = self._translate_policy(policy)
                        self._policies[key] = policy
                        if self.store is not None:
                            written[key] = codec.encode(policy, translations)
                out.append(policy)
            if written and self.store is not None:
                self.store.put_many("policy", written.items())
            self._entries = {
                id(policy): (key, written.get(key) or self._stored.get(key, b""))
                for key, policy in zip(keys, out, strict=True)
                if key is not None
            }
            self._stored = {}
        log.debug("%d policies: %d from cache, %d parsed", len(out), len(out) - parsed, parsed)
        return out

    # -- whole documents (starts and restarts) -------------------------------------

    def parse_isolated(
        self, raw: bytes, parse: Callable[[bytes, CompileCache], LoadReport]
    ) -> LoadReport:
        """``parse(raw, self)``: in a forked child (like the compiler) when
        the document is large and this process holds few parsed policies (a
        start, or a first large set), so that the decoded JSON and the parse's
        other transient objects (15 MiB for 10,000 policies) never take this
        process's memory, and the parse never holds its GIL; the child sends
        back each policy's stored form. Otherwise, or when the child fails,
        here. An exception `parse` raises is raised here either way."""
        if not (
            self.budget
            and len(raw) > ISOLATED_PARSE_BYTES
            and len(self._policies) < ISOLATED_PARSE_HELD
            and compiler_process.can_fork()
        ):
            return parse(raw, self)
        headroom = compiler_process.headroom_within(self.budget, resident_bytes())
        try:
            payload, _ = compiler_process.run_forked(
                lambda: self._parse_in_child(raw, parse), headroom
            )
        except compiler_process.ChildFailed as problem:
            log.warning("parsing policies in a child process failed (%s); parsing here", problem)
            return parse(raw, self)
        kind, body = marshal.loads(payload)
        if kind == "error":
            raise pickle.loads(body)
        report = self._report_from(*body)
        return parse(raw, self) if report is None else report

    def _parse_in_child(
        self, raw: bytes, parse: Callable[[bytes, CompileCache], LoadReport]
    ) -> bytes:
        held = set(self._policies.keys())
        if self.directory is not None:  # a connection of its own: none crosses a fork
            self.store = store.CacheStore(self.directory, self._fingerprint)
        try:
            report = parse(raw, self)
        except Exception as problem:
            return marshal.dumps(("error", pickle.dumps(problem)))
        items = []
        for policy in report.policies:
            key, encoded = self._entries.get(id(policy), (b"", b""))
            if not encoded and key not in held:
                encoded = codec.encode(policy, self._translate_policy(policy))
            items.append((key, encoded))
        return marshal.dumps(("ok", (report.warnings, items)))

    def _report_from(
        self, warnings: list[str], items: list[tuple[bytes, bytes]]
    ) -> LoadReport | None:
        """A report from stored forms (an empty form: a policy this process
        holds, by key); None if one of those is gone meanwhile."""
        decoder = codec.Decoder()
        report = LoadReport(warnings=list(warnings))
        entries: dict[int, tuple[bytes, bytes]] = {}
        for key, encoded in items:
            if encoded:
                decoded = decoder.decode(encoded)
                policy = self._remember(key, *decoded) if key else decoded[0]
            else:
                found = self._policies.get(key)
                if found is None:
                    return None
                policy = found
            entries[id(policy)] = (key, encoded)
            report.policies.append(policy)
        self._entries = entries
        return report

    def _document_key(self, raw: bytes) -> bytes:
        return hashlib.blake2b(raw, digest_size=20, key=self._salt, person=b"document").digest()

    def load_document_bytes(self, raw: bytes) -> LoadReport | None:
        """The parse of a policy document these exact bytes were parsed into
        before (warnings included), in one read: what a restart needs."""
        if self.store is None:
            return None
        data = self.store.get("document", self._document_key(raw))
        if data is None:
            return None
        with collection_paused():
            try:
                warnings, items = marshal.loads(data)
                decoder = codec.Decoder()
                report = LoadReport(warnings=list(warnings))
                for key, encoded in items:
                    policy = self._policies.get(key)
                    if policy is None:
                        policy = self._remember(key, *decoder.decode(encoded))
                    report.policies.append(policy)
            except Exception as problem:  # a damaged entry is a miss; it is written again
                log.warning("compile cache: unreadable document entry ignored (%r)", problem)
                return None
        log.debug("%d policies from the cached document", len(report.policies))
        return report

    def remember_document_bytes(self, raw: bytes, report: LoadReport) -> None:
        """Store what the last :meth:`parse_all` made of a document, for
        :meth:`load_document_bytes`, when every policy came from disk or was
        parsed: the first load of a process, which a restart will repeat."""
        if self.store is None:
            return
        items = [self._entries.get(id(policy), (b"", b"")) for policy in report.policies]
        if any(not encoded for _, encoded in items):
            self._entries = {}
            return  # some came from memory: an update in a running process
        self._entries = {}
        data = marshal.dumps((report.warnings, items))
        self.store.put_many("document", [(self._document_key(raw), data)])

    def _load_policies(self, keys: list[bytes]) -> dict[bytes, Policy]:
        """The stored policies among `keys` (the memory memo only holds them
        weakly, so they are returned to be held)."""
        assert self.store is not None
        decoder = codec.Decoder()
        loaded: dict[bytes, Policy] = {}
        self._stored = self.store.get_many("policy", keys)
        for key, data in self._stored.items():
            try:
                loaded[key] = self._remember(key, *decoder.decode(data))
            except Exception as problem:  # a damaged entry is a miss; it is written again
                log.warning("compile cache: unreadable policy entry ignored (%r)", problem)
        return loaded

    def _remember(
        self, key: bytes, policy: Policy, translations: tuple[bytes | None, ...]
    ) -> Policy:
        self._policies[key] = policy
        for matcher, translation in zip(policy.matchers, translations, strict=True):
            spec = PatternSpec.of(matcher)
            if spec is not None:
                self._translations[spec] = translation
        return policy

    def _translate_policy(self, policy: Policy) -> tuple[bytes | None, ...]:
        out = []
        for matcher in policy.matchers:
            spec = PatternSpec.of(matcher)
            out.append(None if spec is None else self.translate(spec))
        return tuple(out)

    # -- patterns ------------------------------------------------------------------

    def translate(self, spec: PatternSpec) -> bytes | None:
        """The Hyperscan form of a pattern (None: only RE2 matches it faithfully)."""
        try:
            return self._translations[spec]
        except KeyError:
            found = self._translations[spec] = spec.hyperscan_expression()
            return found

    def re2(self, spec: PatternSpec) -> Any:
        """The compiled RE2 regex of a pattern Hyperscan does not take."""
        found = self._re2.get(spec)
        if found is None:
            found = self._re2[spec] = regex_dialect.compile_re2(
                spec.re2_pattern(), spec.case_insensitive
            )
        return found

    def transform(self, step: model.Transform) -> CompiledTransform:
        """A transform step compiled (its redact regex with RE2)."""
        found = self._transforms.get(step)
        if found is None:
            found = self._transforms[step] = CompiledTransform.compile(step)
        return found

    def trim(
        self,
        specs: Iterable[PatternSpec],
        steps: Iterable[model.Transform] = (),
        shards: Iterable[Shard] = (),
    ) -> None:
        """Forget what a compile did not use: translations, RE2 regexes,
        transforms and databases (what the next compile needs again is what
        this one used, or what :meth:`complete` built since)."""
        used = set(specs)
        kept = set(steps)
        held = {id(shard) for shard in shards}
        with self._lock:
            self._translations = {s: t for s, t in self._translations.items() if s in used}
            self._re2 = {s: r for s, r in self._re2.items() if s in used}
            self._transforms = {s: c for s, c in self._transforms.items() if s in kept}
            self._shards = {k: s for k, s in self._shards.items() if id(s) in held}
            if len(self._layouts) > 4096:
                self._layouts.clear()

    # -- databases -----------------------------------------------------------------

    def _layout_key(self, entries: tuple[Entry, ...]) -> bytes:
        return _digest(self._salt, b"%d" % self.budget, _entries_bytes(entries))

    def _shard_key(self, entries: tuple[Entry, ...]) -> bytes:
        return _digest(self._salt, _entries_bytes(entries))

    def _layout(self, key: bytes) -> Layout | None:
        found = self._layouts.get(key)
        if found is None and self.store is not None:
            data = self.store.get("layout", key)
            if data is not None:
                try:
                    plans = orjson.loads(data)
                    found = Layout(tuple((int(c), tuple(int(i) for i in r)) for c, r in plans))
                except (ValueError, TypeError):
                    log.warning("compile cache: unreadable layout entry ignored")
                    found = None
                if found is not None:
                    self._layouts[key] = found
        return found

    def _stored_shards(self, runs: list[tuple[Entry, ...]]) -> list[Shard] | None:
        """The databases of `runs`, from memory or disk; None if any is missing."""
        keys = [self._shard_key(run) for run in runs]
        shards: list[Shard | None] = [self._shards.get(key) for key in keys]
        missing = [key for key, shard in zip(keys, shards, strict=True) if shard is None]
        if missing:
            if self.store is None:
                return None
            blobs = self.store.get_many("database", missing)
            for index, (key, run) in enumerate(zip(keys, runs, strict=True)):
                if shards[index] is not None:
                    continue
                blob = blobs.get(key)
                if blob is None:
                    return None
                try:
                    database = native.load_database(blob)
                except (hyperscan.error, ValueError, TypeError) as problem:
                    log.warning("compile cache: unreadable database entry ignored (%r)", problem)
                    return None
                shard = shards[index] = Shard(run, database)
                with self._lock:
                    self._shards[key] = shard
        return [s for s in shards if s is not None]

    def _complete_from_cache(self, entries: tuple[Entry, ...]) -> FieldDatabases | None:
        layout = self._layout(self._layout_key(entries))
        if layout is None:
            return None
        runs = databases.shard_runs(entries, layout)
        if runs is None:
            return None
        shards = self._stored_shards(runs)
        if shards is None:
            return None
        return FieldDatabases(entries, tuple(shards), databases.refused_entries(entries, layout))

    def field_databases(
        self, entries: Iterable[Entry], previous: FieldDatabases | None = None
    ) -> FieldDatabases:
        """The databases for a field's patterns: the complete build when it is
        known (in memory or on disk) or when there is no `previous` build to
        add to; otherwise an incremental one on `previous` (see
        :mod:`sluice.policy.databases`), when few enough patterns changed."""
        ordered = databases.sorted_entries(list(entries))
        if not ordered:
            return NO_DATABASES
        if previous is not None and previous.complete and previous.entries == ordered:
            return previous
        known = self._complete_from_cache(ordered)
        if known is not None:
            return known
        if previous is not None:
            incremental = databases.overlay(ordered, previous, self._compile_small)
            if incremental is not None:
                return incremental
        return self.complete(ordered)

    def complete(self, entries: tuple[Entry, ...]) -> FieldDatabases:
        """Compile sorted `entries` completely (within the budget), remember
        the result and return it."""
        known = self._complete_from_cache(entries)
        if known is not None:
            return known
        layout, built, report = databases.build_layout(entries, self.budget)
        self.last_build = report
        log.log(
            logging.INFO if report.child_peak_bytes else logging.DEBUG,
            "compiled %d patterns into %d database(s) in %.2f s%s",
            report.patterns,
            report.databases,
            report.seconds,
            f" (compiler child peak {report.child_peak_bytes / (1 << 20):.1f} MiB"
            f" over the process's {report.parent_bytes / (1 << 20):.1f} MiB)"
            if report.child_peak_bytes
            else "",
        )
        return self._remember_build(entries, layout, built)

    def _remember_build(
        self, entries: tuple[Entry, ...], layout: Layout, built: list[tuple[Shard, bytes]]
    ) -> FieldDatabases:
        """Remember a complete build of `entries` (in memory and on disk)."""
        shards = []
        blobs = []
        layout_key = self._layout_key(entries)
        with self._lock:
            for shard, blob in built:
                key = self._shard_key(shard.entries)
                self._shards[key] = shard
                shards.append(shard)
                blobs.append((key, blob))
            self._layouts[layout_key] = layout
        if self.store is not None:
            self.store.put_many("database", blobs)
            plans = [[count, list(refused)] for count, refused in layout.shards]
            self.store.put_many("layout", [(layout_key, orjson.dumps(plans))])
        return FieldDatabases(entries, tuple(shards), databases.refused_entries(entries, layout))

    def prepare_small(
        self, fields: Iterable[tuple[Iterable[Entry], FieldDatabases | None]]
    ) -> None:
        """Compile, together, the small builds that :meth:`field_databases`
        would compile in this thread for each of `fields` (its patterns and
        its previous build): a complete build of at most
        :data:`databases.SMALL_BUILD` patterns, or an incremental build's
        extra database. With a budget they go to one child process
        (:func:`databases.build_small_many`), so that compiling a set of
        many small fields neither forks once per field nor brings
        Hyperscan's compiler into this process; the builds are then
        remembered, and found by :meth:`field_databases`."""
        runs: dict[tuple[Entry, ...], None] = {}
        for entries, previous in fields:
            ordered = databases.sorted_entries(list(entries))
            if not ordered or (previous is not None and previous.entries == ordered):
                continue
            run: tuple[Entry, ...] | None = ordered
            if previous is not None:
                added = databases.overlay_added(ordered, previous)
                run = added if added is not None else ordered
            if not run or len(run) > databases.SMALL_BUILD or run in runs:
                continue
            if self._complete_from_cache(ordered) is None and (
                run is ordered or self._complete_from_cache(run) is None
            ):
                runs[run] = None
        if not runs:
            return
        for run, (layout, built) in zip(
            runs, databases.build_small_many(list(runs), self.budget), strict=True
        ):
            log.debug(
                "compiled %d patterns into %d database(s) (small build)", len(run), len(built)
            )
            self._remember_build(run, layout, built)

    def _compile_small(self, entries: tuple[Entry, ...]) -> tuple[list[Shard], frozenset[Entry]]:
        """An incremental build's extra database: as :meth:`prepare_small`
        compiled it, else compiled here."""
        known = self._complete_from_cache(entries)
        if known is not None:
            return list(known.shards), known.rejected
        layout, built, _ = databases.build_layout(entries, 0)
        return [shard for shard, _ in built], databases.refused_entries(entries, layout)
