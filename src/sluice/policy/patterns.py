"""Multi-pattern matching for one field: every string matcher of a policy set
that reads that field, answered by one scan of the value.

Case-sensitive ``exact`` literals are a dictionary lookup. Everything else
(regex, starts/ends/contains, caseless exact) is compiled into one
Hyperscan/Vectorscan block-mode database per field. Patterns Hyperscan cannot
express with RE2's semantics (see :mod:`regex_dialect`) are matched one by one
with RE2 instead. Compiled databases are cached on disk by content hash.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import logging
import os
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import hyperscan

from sluice.policy import regex_dialect
from sluice.policy.model import MatchOp
from sluice.policy.view import PRESENT, _Present

log = logging.getLogger(__name__)

_HYPERSCAN_VERSION = importlib.metadata.version("hyperscan")

MEMO_LIMIT = 2048
"""Distinct values remembered per field, so low-cardinality fields (severity,
service name) are answered without scanning. A field that fills the memo has
too many distinct values (message bodies) and is scanned without one."""

_BASE_FLAGS = hyperscan.HS_FLAG_UTF8 | hyperscan.HS_FLAG_SINGLEMATCH | hyperscan.HS_FLAG_ALLOWEMPTY
_LITERAL_ANCHORS = {
    MatchOp.EXACT: (True, True),
    MatchOp.STARTS_WITH: (True, False),
    MatchOp.ENDS_WITH: (False, True),
    MatchOp.CONTAINS: (False, False),
}


@dataclass(frozen=True, slots=True)
class PatternSpec:
    """One string condition: `op` is EXACT, REGEX, STARTS_WITH, ENDS_WITH or CONTAINS."""

    op: MatchOp
    text: str
    case_insensitive: bool = False

    def re2_pattern(self) -> str:
        if self.op is MatchOp.REGEX:
            return self.text
        start, end = _LITERAL_ANCHORS[self.op]
        return ("^" if start else "") + _re2_escape(self.text) + (r"\z" if end else "")

    def hyperscan_expression(self) -> bytes | None:
        """The Hyperscan form, or None when only RE2 can match it faithfully."""
        if self.case_insensitive and regex_dialect.needs_re2_for_caseless(self.text):
            return None
        if self.op is MatchOp.REGEX:
            return regex_dialect.to_hyperscan(self.text)
        start, end = _LITERAL_ANCHORS[self.op]
        return regex_dialect.literal_to_hyperscan(self.text, start, end)


def _re2_escape(text: str) -> str:
    return "".join(c if c.isalnum() or c == "_" or ord(c) > 127 else "\\" + c for c in text)


def _on_match(pattern_id: int, _start: int, _end: int, _flags: int, hits: list[int]) -> None:
    hits.append(pattern_id)


class DatabaseCache:
    """Compiled Hyperscan databases on disk, keyed by a hash of their expressions."""

    def __init__(self, directory: Path):
        self.directory = directory

    @classmethod
    def default(cls) -> DatabaseCache | None:
        """``$SLUICE_CACHE_DIR`` (empty disables), else ``$XDG_CACHE_HOME/sluice``
        or ``~/.cache/sluice``."""
        configured = os.environ.get("SLUICE_CACHE_DIR")
        if configured is not None:
            return cls(Path(configured)) if configured else None
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
        return cls(Path(base) / "sluice")

    @staticmethod
    def key(entries: Sequence[tuple[int, bytes, int]]) -> str:
        digest = hashlib.sha256(f"hyperscan {_HYPERSCAN_VERSION}\n".encode())
        for pattern_id, expression, flags in entries:
            digest.update(b"%d %d %d\n" % (pattern_id, flags, len(expression)))
            digest.update(expression)
        return digest.hexdigest()

    def load(self, key: str) -> tuple[Any, list[int]] | None:
        path = self.directory / f"{key}.hsdb"
        try:
            raw = path.read_bytes()
            header, _, blob = raw.partition(b"\n")
            rejected = [int(i) for i in json.loads(header)]
            database = hyperscan.loadb(blob, hyperscan.HS_MODE_BLOCK) if blob else None
        except FileNotFoundError:
            return None
        except (OSError, ValueError, hyperscan.error) as problem:
            log.warning("ignoring unreadable pattern cache %s: %s", path, problem)
            return None
        return database, rejected

    def store(self, key: str, database: Any, rejected: list[int]) -> None:
        blob = hyperscan.dumpb(database) if database is not None else b""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
            with os.fdopen(fd, "wb") as out:
                out.write(json.dumps(rejected).encode() + b"\n" + blob)
            os.replace(tmp, self.directory / f"{key}.hsdb")
        except OSError as problem:
            log.warning("cannot write pattern cache in %s: %s", self.directory, problem)


def _compile(entries: Sequence[tuple[int, bytes, int]]) -> Any:
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    database.compile(
        expressions=[e for _, e, _ in entries],
        ids=[i for i, _, _ in entries],
        elements=len(entries),
        flags=[f for _, _, f in entries],
    )
    return database


def compile_with_rejects(
    entries: Sequence[tuple[int, bytes, int]],
) -> tuple[Any, list[int]]:
    """Compile all entries into one database; entries Hyperscan refuses are
    found by bisection and returned as rejected ids (the caller matches them
    with RE2)."""
    if not entries:
        return None, []
    try:
        return _compile(entries), []
    except hyperscan.error:
        if len(entries) == 1:
            return None, [entries[0][0]]
    accepted: list[tuple[int, bytes, int]] = []
    rejected: list[int] = []
    _bisect(list(entries), accepted, rejected)
    return (_compile(accepted) if accepted else None), rejected


def _bisect(
    entries: list[tuple[int, bytes, int]],
    accepted: list[tuple[int, bytes, int]],
    rejected: list[int],
) -> None:
    try:
        _compile(entries)
    except hyperscan.error:
        if len(entries) == 1:
            rejected.append(entries[0][0])
            return
        middle = len(entries) // 2
        _bisect(entries[:middle], accepted, rejected)
        _bisect(entries[middle:], accepted, rejected)
        return
    accepted.extend(entries)


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
        cache: DatabaseCache | None,
        memoize: bool = True,
    ):
        self.exists_id = exists_id
        self.exists_only: tuple[int, ...] = () if exists_id is None else (exists_id,)
        self._exact: dict[str, list[int]] = {}
        self._fallback: list[tuple[int, Any]] = []
        entries: list[tuple[int, bytes, int]] = []
        specs = dict(patterns)
        for pattern_id, spec in patterns:
            # A dictionary answers exact literals on fields whose values repeat;
            # on unique values (bodies) hashing each one costs more than letting
            # the database take the literal too.
            if spec.op is MatchOp.EXACT and not spec.case_insensitive and memoize:
                self._exact.setdefault(spec.text, []).append(pattern_id)
                continue
            expression = spec.hyperscan_expression()
            if expression is None:
                self._fallback.append((pattern_id, self._re2(spec)))
            else:
                flags = _BASE_FLAGS | (hyperscan.HS_FLAG_CASELESS if spec.case_insensitive else 0)
                entries.append((pattern_id, expression, flags))
        self._database, rejected = self._build(entries, cache)
        for pattern_id in rejected:
            self._fallback.append((pattern_id, self._re2(specs[pattern_id])))
        self._scratch: dict[int, Any] = {}
        self._memo = _Memo(self, MEMO_LIMIT)
        self._memo[PRESENT] = self.exists_only
        self.hits: Callable[[str | _Present], tuple[int, ...]] = (
            self._memo.__getitem__ if memoize else self.compute
        )
        """Pattern ids (and the exists id) satisfied by one present value."""

    @staticmethod
    def _re2(spec: PatternSpec) -> Any:
        return regex_dialect.compile_re2(spec.re2_pattern(), spec.case_insensitive)

    @staticmethod
    def _build(
        entries: list[tuple[int, bytes, int]], cache: DatabaseCache | None
    ) -> tuple[Any, list[int]]:
        """The database for `entries` (from the cache when it has it) and the
        ids Hyperscan rejected."""
        if not entries:
            return None, []
        key = DatabaseCache.key(entries) if cache is not None else ""
        cached = cache.load(key) if cache is not None else None
        if cached is not None:
            return cached
        database, rejected = compile_with_rejects(entries)
        if cache is not None:
            cache.store(key, database, rejected)
        return database, rejected

    @property
    def fallback_count(self) -> int:
        """How many patterns are matched with RE2 one by one."""
        return len(self._fallback)

    def _scratch_for_thread(self) -> Any:
        ident = threading.get_ident()
        scratch = self._scratch.get(ident)
        if scratch is None:
            scratch = self._scratch[ident] = hyperscan.Scratch(self._database)
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
        ids: list[int] = list(self.exists_only)
        if self._exact:
            if text is None:
                text = data.decode()
            exact = self._exact.get(text)
            if exact:
                ids.extend(exact)
        database = self._database
        if database is not None:
            scratch = self._scratch.get(threading.get_ident()) or self._scratch_for_thread()
            database.scan(data, _on_match, 0, ids, scratch)
        if self._fallback:
            if text is None:
                text = data.decode()
            for pattern_id, regex in self._fallback:
                if regex.search(text) is not None:
                    ids.append(pattern_id)
        return tuple(ids) if ids else ()
