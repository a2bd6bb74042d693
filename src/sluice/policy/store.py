"""The compile cache on disk: one SQLite database of checksummed entries.

The engine's one module that touches the disk. Entries are opaque bytes under
a kind ("policy", "database", "layout") and a key the caller derives from the
entry's inputs and the code's version (:mod:`sluice.policy.cache`). SQLite
gives what a directory of files would need locking and renames for: Edge
workers and collectors sharing a cache directory read and write it at once
(WAL mode, writers wait their turn), and a write is all or nothing.

Nothing here may fail a compile. An entry whose checksum does not match is a
miss (and is rewritten by the caller); a file SQLite cannot read is moved
aside and started afresh; a directory that cannot be written, or a lock held
too long by another process, only costs the cache.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

log = logging.getLogger(__name__)

FILE_NAME = "compile-cache-v1.sqlite3"
MAX_BYTES = 256 << 20
"""When the file grows past this, the least recently used half is dropped."""
LOCK_WAIT_SECS = 2.0
"""How long a write waits for another process's write before giving up."""
TOUCH_AFTER_SECS = 86_400
"""An entry read this long after its last use is marked used again, so that
entries a running set still needs are not the ones evicted."""
_CHECKSUM = 16

SQLITE_LOCK = threading.Lock()
"""Held around every use of SQLite here, and by :mod:`compiler_process`
around each fork: a child that opens SQLite must not inherit its mutexes
held by another thread. A child starts with a fresh one."""


def _after_fork_in_child() -> None:
    global SQLITE_LOCK
    SQLITE_LOCK = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)
_BATCH = 500
"""Keys per SELECT (SQLite allows 999 parameters in older builds)."""


def _checksum(kind: str, key: bytes, payload: bytes) -> bytes:
    digest = hashlib.blake2b(kind.encode(), digest_size=_CHECKSUM)
    digest.update(key)
    digest.update(payload)
    return digest.digest()


class CacheStore:
    """Checksummed entries in ``<directory>/compile-cache-v1.sqlite3``.
    Thread-safe (one connection, used under :data:`SQLITE_LOCK`)."""

    def __init__(self, directory: Path, fingerprint: str, max_bytes: int = MAX_BYTES) -> None:
        self.path = directory / FILE_NAME
        self.fingerprint = fingerprint
        self.max_bytes = max_bytes
        self._connection: sqlite3.Connection | None = None
        self._broken = False
        self._stale: list[tuple[str, bytes]] = []

    # -- connection ----------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection | None:
        if self._connection is not None or self._broken:
            return self._connection
        try:
            self._connection = self._open()
        except sqlite3.DatabaseError as problem:
            if isinstance(problem, sqlite3.OperationalError) and _locked(problem):
                log.warning("compile cache %s is locked; not using it this time", self.path)
                return None
            self._set_aside(problem)
            try:
                self._connection = self._open()
            except (sqlite3.Error, OSError) as again:
                self._give_up(again)
        except OSError as problem:
            self._give_up(problem)
        return self._connection

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(
            self.path, timeout=LOCK_WAIT_SECS, check_same_thread=False, isolation_level=None
        )
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            # Entries are read once per start: SQLite's page cache (2 MiB by
            # default) would only hold memory a sidecar does not have.
            connection.execute("PRAGMA cache_size=-256")
            connection.execute(
                "CREATE TABLE IF NOT EXISTS entries (kind TEXT NOT NULL, key BLOB NOT NULL,"
                " value BLOB NOT NULL, used INTEGER NOT NULL, PRIMARY KEY (kind, key))"
                " WITHOUT ROWID"
            )
            connection.execute(
                "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)"
            )
            row = connection.execute("SELECT value FROM meta WHERE name='fingerprint'").fetchone()
            if row is None or row[0] != self.fingerprint:
                # Entries of another version can never match a key of this
                # one: make room instead of keeping them until evicted.
                with connection:
                    connection.execute("BEGIN IMMEDIATE")
                    connection.execute("DELETE FROM entries")
                    connection.execute(
                        "INSERT OR REPLACE INTO meta VALUES ('fingerprint', ?)", (self.fingerprint,)
                    )
        except BaseException:
            connection.close()
            raise
        return connection

    def _set_aside(self, problem: Exception) -> None:
        aside = self.path.with_name(f"{self.path.name}.unreadable")
        log.warning("compile cache %s is unreadable (%s); starting a new one", self.path, problem)
        self._close()
        for suffix in ("", "-wal", "-shm"):
            try:
                os.replace(f"{self.path}{suffix}", f"{aside}{suffix}")
            except FileNotFoundError:
                pass
            except OSError as failure:
                log.warning("cannot move %s%s aside: %s", self.path, suffix, failure)

    def _give_up(self, problem: Exception) -> None:
        log.warning(
            "compile cache %s cannot be used (%s); compiling without it", self.path, problem
        )
        self._close()
        self._broken = True

    def release(self) -> None:
        """Close the connection until the next use: between policy updates
        SQLite's page cache and statement cache (2 MiB in Edge) are only
        memory a sidecar does not have; opening again costs about a millisecond."""
        with SQLITE_LOCK:
            self._close()

    def _close(self) -> None:
        if self._connection is not None:
            with contextlib.suppress(sqlite3.Error):
                self._connection.close()
            self._connection = None

    def _failed(self, problem: sqlite3.Error, doing: str) -> None:
        """A query failed: a lock held too long is logged; anything else means
        the file is damaged, and it is started afresh on the next use."""
        if isinstance(problem, sqlite3.OperationalError) and _locked(problem):
            log.info("compile cache %s busy; %s skipped", self.path, doing)
            return
        if isinstance(problem, sqlite3.DatabaseError):
            self._set_aside(problem)
        else:
            log.warning("compile cache %s: %s failed: %s", self.path, doing, problem)

    # -- entries -------------------------------------------------------------------

    def get_many(self, kind: str, keys: Sequence[bytes]) -> dict[bytes, bytes]:
        """The intact entries among `keys`; a damaged one is left out (and
        dropped with the next write)."""
        found: dict[bytes, bytes] = {}
        if not keys:
            return found
        now = int(time.time())
        with SQLITE_LOCK:
            connection = self._connect()
            if connection is None:
                return found
            try:
                for start in range(0, len(keys), _BATCH):
                    batch = keys[start : start + _BATCH]
                    marks = ",".join("?" * len(batch))
                    rows = connection.execute(
                        f"SELECT key, value, used FROM entries WHERE kind=? AND key IN ({marks})",
                        (kind, *batch),
                    ).fetchall()
                    for key, value, used in rows:
                        payload = value[_CHECKSUM:]
                        if value[:_CHECKSUM] != _checksum(kind, key, payload):
                            log.warning("compile cache: damaged %s entry ignored", kind)
                            self._stale.append((kind, key))
                            continue
                        found[key] = payload
                        if now - used > TOUCH_AFTER_SECS:
                            self._stale.append((kind, key))
            except sqlite3.Error as problem:
                self._failed(problem, "read")
                return {}
        return found

    def get(self, kind: str, key: bytes) -> bytes | None:
        return self.get_many(kind, [key]).get(key)

    def put_many(self, kind: str, items: Iterable[tuple[bytes, bytes]]) -> None:
        """Write entries (replacing what is there), and mark the entries read
        since the last write that were damaged or long unused."""
        now = int(time.time())
        rows = [(kind, key, _checksum(kind, key, payload) + payload, now) for key, payload in items]
        with SQLITE_LOCK:
            connection = self._connect()
            if connection is None:
                return
            stale, self._stale = self._stale, []
            try:
                with connection:
                    connection.execute("BEGIN IMMEDIATE")
                    connection.executemany("INSERT OR REPLACE INTO entries VALUES (?,?,?,?)", rows)
                    if stale:
                        connection.executemany(
                            "UPDATE entries SET used=? WHERE kind=? AND key=?",
                            [(now, k, key) for k, key in stale],
                        )
            except sqlite3.Error as problem:
                self._failed(problem, "write")
                return
            self._evict_if_full(connection)

    def _evict_if_full(self, connection: sqlite3.Connection) -> None:
        try:
            size = os.path.getsize(self.path)
        except OSError:
            return
        if size <= self.max_bytes:
            return
        try:
            with connection:
                connection.execute("BEGIN IMMEDIATE")
                (count,) = connection.execute("SELECT count(*) FROM entries").fetchone()
                connection.execute(
                    "DELETE FROM entries WHERE (kind, key) IN"
                    " (SELECT kind, key FROM entries ORDER BY used LIMIT ?)",
                    (max(1, count // 2),),
                )
            connection.execute("VACUUM")
        except sqlite3.Error as problem:
            self._failed(problem, "eviction")
            return
        log.info(
            "compile cache %s was %d MiB: least recently used half dropped", self.path, size >> 20
        )


def _locked(problem: sqlite3.OperationalError) -> bool:
    text = str(problem)
    return "locked" in text or "busy" in text
