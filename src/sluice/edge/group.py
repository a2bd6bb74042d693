"""The counters of every worker of one Edge (``workers: N``), so that whichever
worker answers a scrape shows the whole process group.

Workers share the port, so a scrape reaches one of them at random. Each
worker publishes its folded counters to a file of its own in a directory the
parent process made (atomically: write, then rename) once a second while its
counters change, and at shutdown. The worker answering a scrape sums every
worker's latest file, its own included: the counters are at most
:data:`PUBLISH_SECS` old, and never go backwards, whichever worker answers.
(Its own live counters would be newer, but what they hold beyond its file
would vanish from the next scrape another worker answers, or when it dies.)
The request path does nothing for this: publishing folds the same plain
integers a scrape folds.

The parent keeps a file of its own, :data:`RECORD_FILE`: how many workers
serve, how often one was replaced, and the counters of workers that exited
while Edge ran (:class:`GroupRecord`). A replacement publishes under a new
name, so a worker that died keeps what it had published (its counts since
its last write, never shown, are lost with it), and nothing counts twice.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sluice.edge.metrics import Folded, merge

log = logging.getLogger(__name__)

PUBLISH_SECS = 1.0
RECORD_FILE = "supervisor.json"
"""The parent's file in the group directory (workers' files are ``worker-N.json``)."""
WORKER_RESTARTS = "sluice_edge_worker_restarts"
RESTART_REASONS = ("killed", "exited")
"""The ``reason`` label of a restart: the worker was killed by a signal (the
out-of-memory killer's SIGKILL, say), or exited by itself."""


def no_restarts() -> Folded:
    """The restart counter family with every reason at 0 (present from the start)."""
    return {WORKER_RESTARTS: {(reason,): 0.0 for reason in RESTART_REASONS}}


def worker_name(serial: int) -> str:
    """The name a worker publishes under: every worker Edge starts has its own."""
    return f"worker-{serial}"


def _encode(counts: Folded) -> Any:
    return {
        name: [[list(labels), value] for labels, value in series.items()]
        for name, series in counts.items()
    }


def _decode(doc: Any) -> Folded:
    return {
        name: {tuple(str(v) for v in labels): float(value) for labels, value in series}
        for name, series in doc.items()
    }


def _write(path: Path, doc: Any) -> None:
    """Replace `path` with `doc` as JSON, atomically (raises OSError)."""
    partial = path.with_suffix(".tmp")
    partial.write_bytes(json.dumps(doc).encode())
    os.replace(partial, path)


@dataclass
class _Record:
    serving: int | None = None
    retired: frozenset[str] = frozenset()
    counts: Folded = field(default_factory=dict)


def _read_record(directory: Path) -> _Record:
    """The parent's record (empty when it is missing or unreadable)."""
    try:
        doc = json.loads((directory / RECORD_FILE).read_bytes())
        return _Record(int(doc["serving"]), frozenset(doc["retired"]), _decode(doc["counts"]))
    except (OSError, ValueError, TypeError, KeyError) as problem:
        log.debug("no record of the worker group in %s: %s", directory, problem)
        return _Record()


class WorkerGroup:
    """One worker's view of the group's files in `directory`; `name` is the
    worker's own (:func:`worker_name`)."""

    def __init__(self, directory: Path, name: str) -> None:
        self.directory = directory
        self.name = name
        self._path = directory / f"{name}.json"
        self._published = -1

    def publish(self, counts: Folded) -> None:
        """Replace this worker's file with `counts`."""
        try:
            _write(self._path, _encode(counts))
        except OSError as problem:
            log.warning("cannot publish this worker's counters to %s: %s", self._path, problem)

    def published(self) -> list[Folded]:
        """The latest counters of every worker, this one's and those of
        exited workers included (unreadable files skipped)."""
        found: dict[str, Folded] = {}
        for path in sorted(self.directory.glob("worker-*.json")):
            try:
                found[path.stem] = _decode(json.loads(path.read_bytes()))
            except (OSError, ValueError, TypeError, AttributeError) as problem:
                log.debug("skipping %s: %s", path, problem)
        # Read after the workers' files: the parent records a dead worker's
        # counts before it removes the worker's file (GroupRecord.retire), so
        # whichever of the two this read saw, the counts are added once.
        record = _read_record(self.directory)
        return [counts for name, counts in found.items() if name not in record.retired] + [
            record.counts
        ]

    def serving(self) -> int | None:
        """How many workers serve, as the parent last recorded (None: no record)."""
        return _read_record(self.directory).serving

    async def publish_while_changing(
        self, fold: Callable[[], Folded], version: Callable[[], int]
    ) -> None:
        """Publish every :data:`PUBLISH_SECS` when `version()` moved (runs
        until cancelled; the caller publishes once more at shutdown)."""
        while True:
            current = version()
            if current != self._published:
                self._published = current
                self.publish(fold())
            await asyncio.sleep(PUBLISH_SECS)


class GroupRecord:
    """The parent's file in the group directory: the workers serving, the
    restarts, and the last counters of every worker that exited while Edge
    ran (folded into one, so that the directory does not grow with restarts)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.serving = 0
        self.retired: list[str] = []
        self.counts: Folded = no_restarts()

    def write(self) -> bool:
        """Publish the record; False when it cannot be written (logged)."""
        doc = {"serving": self.serving, "retired": self.retired, "counts": _encode(self.counts)}
        try:
            _write(self.directory / RECORD_FILE, doc)
        except OSError as problem:
            log.warning("cannot record the worker group in %s: %s", self.directory, problem)
            return False
        return True

    def retire(self, name: str) -> None:
        """Keep the counters the exited worker `name` last published, then
        remove its file (in that order: see :meth:`WorkerGroup.published`)."""
        path = self.directory / f"{name}.json"
        try:
            merge(self.counts, _decode(json.loads(path.read_bytes())))
        except FileNotFoundError:
            pass  # it died before its first publication: nothing to keep
        except (OSError, ValueError, TypeError, AttributeError) as problem:
            log.warning("the counters of %s are lost: %s", name, problem)
        self.retired.append(name)
        if self.write():  # else the file stays, and scrapes still count it
            path.unlink(missing_ok=True)

    def restarted(self, reason: str) -> None:
        """Count a replacement started for a worker that `reason` (killed or exited)."""
        self.counts[WORKER_RESTARTS][(reason,)] += 1
        self.write()
