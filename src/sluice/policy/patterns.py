"""Multi-pattern matching for one field: every string matcher of a policy set
that reads that field, answered by one scan of the value.

Case-sensitive ``exact`` literals are a dictionary lookup. Everything else
(regex, starts/ends/contains, caseless exact) is compiled into Hyperscan /
Vectorscan block-mode databases for the field (one, unless the compile memory
budget made it split them, see :mod:`sluice.policy.databases`). Patterns
Hyperscan cannot express with RE2's semantics (see :mod:`hyperscan_syntax`) are
matched one by one with RE2 instead. Translations and databases come from a
:class:`~sluice.policy.cache.CompileCache`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import hyperscan

from sluice.policy import native
from sluice.policy.cache import CompileCache, default_directory
from sluice.policy.conditions import PatternSpec
from sluice.policy.databases import Entry, FieldDatabases, budget_from_environment
from sluice.policy.model import MatchOp
from sluice.policy.shardplan import end_check
from sluice.policy.view import PRESENT, _Present

__all__ = ["MEMO_LIMIT", "DatabaseCache", "FieldScanner", "PatternSpec"]


class DatabaseCache(CompileCache):
    """The compile cache under the name it had when it held databases only;
    :meth:`default` keeps that name's contract."""

    @classmethod
    def default(cls, budget_mib: int = 0) -> DatabaseCache | None:  # type: ignore[override]
        """The cache in :func:`~sluice.policy.cache.default_directory`, or None
        when caching on disk is off (``SLUICE_CACHE_DIR`` empty)."""
        directory = default_directory()
        return None if directory is None else cls(directory, budget_from_environment(budget_mib))


MEMO_LIMIT = 2048
"""Distinct values remembered per field, so low-cardinality fields (severity,
service name) are answered without scanning. A field that fills the memo has
too many distinct values (message bodies) and is scanned without one."""


def _end_checks(entries: Sequence[Entry]) -> tuple[int, ...] | None:
    """Each entry's :func:`end_check`; None when no entry needs one."""
    ends = tuple(end_check(entry) for entry in entries)
    return ends if any(ends) else None


class _Sink:
    """Turns one database's match ids into the scanner's pattern ids. The
    database numbers its patterns by position; an entry may stand for several
    patterns (the same expression written two ways), or for none (an entry
    kept from an earlier build whose pattern is gone). A report of a
    start-anchored literal compiled floating counts only where it ends as
    `ends` says (see :func:`end_check`). A scan's context is the list the
    ids go to and the value's length."""

    __slots__ = ("ends", "extra", "first")

    def __init__(self, ids: Sequence[Sequence[int]], ends: Sequence[int] | None):
        self.first: tuple[int, ...] = tuple(found[0] if found else -1 for found in ids)
        self.extra: dict[int, tuple[int, ...]] = {
            local: tuple(found[1:]) for local, found in enumerate(ids) if len(found) > 1
        }
        self.ends = ends

    def on_match(
        self, local: int, _start: int, end: int, _flags: int, scan: tuple[list[int], int]
    ) -> None:
        hits, length = scan
        if self.ends is not None:
            want = self.ends[local]
            if want and (end != abs(want) or (want < 0 and end != length)):
                return
        found = self.first[local]
        if found >= 0:
            hits.append(found)
        if self.extra:
            more = self.extra.get(local)
            if more:
                hits.extend(more)


class _Memo(dict[Any, tuple[int, ...]]):
    """Value -> pattern ids. A lookup that hits is a plain C-level ``dict``
    access; a miss runs ``__missing__``, which scans and remembers the answer.
    A field whose distinct values overflow the memo (message bodies, request
    ids) is not worth remembering: the memo is emptied and stops growing."""

    __slots__ = ("limit", "scanner")

    def __init__(self, scanner: FieldScanner, limit: int):
        super().__init__()
        self.scanner = scanner
        self.limit = limit

    def __missing__(self, value: Any) -> tuple[int, ...]:
        found = self.scanner.compute(value)
        if self.limit:
            if len(self) < self.limit:
                self[value] = found
            else:
                self.limit = 0
                self.clear()
                self[PRESENT] = self.scanner.exists_only
        return found


def _dictionary_answers(spec: PatternSpec, memoize: bool) -> bool:
    """Whether a dictionary, not a database, answers a field's pattern."""
    # Exact literals on fields whose values repeat; on unique values (bodies)
    # hashing each one costs more than letting the database take the literal.
    return spec.op is MatchOp.EXACT and not spec.case_insensitive and memoize


def database_entries(
    patterns: Iterable[PatternSpec], cache: CompileCache, memoize: bool
) -> list[Entry]:
    """The database entries of a field's patterns (what :class:`FieldScanner`
    compiles; see :meth:`CompileCache.prepare_small`)."""
    out = []
    for spec in patterns:
        if not _dictionary_answers(spec, memoize):
            expression = cache.translate(spec)
            if expression is not None:
                out.append((expression, spec.flags))
    return out


class FieldScanner:
    """Answers "which pattern ids hit this value" for every matcher on one field.

    `exists_id` (if any) is reported for every present value, so `exists`
    conditions count like patterns. :attr:`hits` is the function to call.
    Thread-safe: each thread gets its own Hyperscan scratch space.
    """

    def __init__(
        self,
        patterns: Sequence[tuple[int, PatternSpec]],
        exists_id: int | None,
        cache: CompileCache | None,
        memoize: bool = True,
        previous: FieldScanner | None = None,
    ):
        """`previous` is this field's scanner in the snapshot being replaced:
        its databases are reused as far as they still fit (see
        :meth:`CompileCache.field_databases`). Without a `cache` the
        translations and databases are remembered by no one."""
        if cache is None:
            cache = CompileCache(None)
        self.exists_id = exists_id
        self.exists_only: tuple[int, ...] = () if exists_id is None else (exists_id,)
        self._exact: dict[str, list[int]] = {}
        self._fallback: list[tuple[int, Any]] = []
        by_entry: dict[Entry, list[int]] = {}
        specs = dict(patterns)
        for pattern_id, spec in patterns:
            if _dictionary_answers(spec, memoize):
                self._exact.setdefault(spec.text, []).append(pattern_id)
                continue
            expression = cache.translate(spec)
            if expression is None:
                self._fallback.append((pattern_id, cache.re2(spec)))
            else:
                by_entry.setdefault((expression, spec.flags), []).append(pattern_id)
        self.databases: FieldDatabases = cache.field_databases(
            by_entry, None if previous is None else previous.databases
        )
        """The Hyperscan databases answering this field's patterns."""
        for entry in sorted(self.databases.rejected):
            for pattern_id in by_entry.get(entry, ()):
                self._fallback.append((pattern_id, cache.re2(specs[pattern_id])))
        ids_of = [
            (
                shard.database,
                [by_entry.get(e, ()) for e in shard.entries],
                _end_checks(shard.entries),
            )
            for shard in self.databases.shards
        ]
        self._native: Any = native.matcher(ids_of) if ids_of else None
        """Scans every database in one call (see :mod:`sluice.policy.native`)."""
        self._shards: tuple[tuple[Any, Callable[..., None]], ...] = ()
        """Without the native matcher: each database with its match callback."""
        if self._native is None:
            self._shards = tuple(
                (database, _Sink(ids, ends).on_match) for database, ids, ends in ids_of
            )
        self._only_databases = self._native is not None and not (
            self._exact or self._fallback or self.exists_only
        )
        self._scratch: dict[int, tuple[Any, ...]] = {}
        self._memo = _Memo(self, MEMO_LIMIT)
        self._memo[PRESENT] = self.exists_only
        self.hits: Callable[[str | _Present], tuple[int, ...]] = (
            self._memo.__getitem__ if memoize else self.compute
        )
        """Pattern ids (and the exists id) satisfied by one present value."""

    @property
    def matcher(self) -> Any:
        """The native matcher (``_hsnative.Matcher``) that alone answers a
        value as :meth:`compute` does, scanned on its UTF-8 bytes, when this
        field has no exact, fallback or exists answers beside its databases;
        else None. The readers in C scan bodies with it where they lie."""
        return self._native if self._only_databases else None

    @property
    def fallback_count(self) -> int:
        """How many patterns are matched with RE2 one by one."""
        return len(self._fallback)

    @property
    def database_count(self) -> int:
        """How many Hyperscan databases each value is scanned with."""
        return len(self.databases.shards)

    def _scratch_for_thread(self) -> tuple[Any, ...]:
        ident = threading.get_ident()
        scratch = self._scratch.get(ident)
        if scratch is None:
            scratch = self._scratch[ident] = tuple(
                hyperscan.Scratch(database) for database, _ in self._shards
            )
        return scratch

    def compute(self, value: object) -> tuple[int, ...]:
        """Scan one value (no memo): a string, or UTF-8 bytes (a protobuf
        string read from the wire; invalid UTF-8 raises UnicodeDecodeError). Any
        other value (from a malformed record) is present but has nothing to scan."""
        text: str | None
        if isinstance(value, str):
            text = value
            try:
                data = value.encode()
            except UnicodeEncodeError:
                # A lone surrogate (from a JSON escape), which UTF-8 cannot
                # hold: every matcher sees the text Hyperscan scans, with "?"
                # in its place.
                data = value.encode("utf-8", "replace")
                text = None
        elif isinstance(value, bytes):
            data = value
            text = None if value.isascii() else value.decode()  # decoding validates
        else:
            return self.exists_only
        if self._only_databases:
            return self._native.scan(data)  # type: ignore[no-any-return]
        ids: list[int] = list(self.exists_only)
        if self._exact:
            if text is None:
                text = data.decode()
            exact = self._exact.get(text)
            if exact:
                ids.extend(exact)
        if self._native is not None:
            ids.extend(self._native.scan(data))
        shards = self._shards
        if shards:
            scratch = self._scratch.get(threading.get_ident()) or self._scratch_for_thread()
            scan = (ids, len(data))
            for index in range(len(shards)):
                database, sink = shards[index]
                database.scan(data, sink, 0, scan, scratch[index])
        if self._fallback:
            if text is None:
                text = data.decode()
            for pattern_id, regex in self._fallback:
                if regex.search(text) is not None:
                    ids.append(pattern_id)
        return tuple(ids) if ids else ()
