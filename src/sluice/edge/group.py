"""The counters of every worker of one Edge (``workers: N``), so that whichever
worker answers a scrape shows the whole process group.

Workers share the port, so a scrape reaches one of them at random. Each
worker publishes its folded counters to a file in a directory the parent
process made (atomically: write, then rename) once a second while its
counters change, and at shutdown. The worker answering a scrape uses its own
live counters and the others' latest files, summed: counters from other
workers are at most :data:`PUBLISH_SECS` old, and never go backwards (a
worker that exited leaves its last counts behind). The request path does
nothing for this: publishing folds the same plain integers a scrape folds.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Callable
from pathlib import Path

from sluice.edge.metrics import Folded

log = logging.getLogger(__name__)

PUBLISH_SECS = 1.0


def _encode(counts: Folded) -> bytes:
    return json.dumps(
        {
            name: [[list(labels), value] for labels, value in series.items()]
            for name, series in counts.items()
        }
    ).encode()


def _decode(data: bytes) -> Folded:
    doc = json.loads(data)
    return {
        name: {tuple(str(v) for v in labels): float(value) for labels, value in series}
        for name, series in doc.items()
    }


class WorkerGroup:
    """One worker's view of the group's counter files in `directory`."""

    def __init__(self, directory: Path, index: int) -> None:
        self.directory = directory
        self.index = index
        self._path = directory / f"worker-{index}.json"
        self._published = -1

    def publish(self, counts: Folded) -> None:
        """Replace this worker's file with `counts`."""
        partial = self._path.with_suffix(".tmp")
        try:
            partial.write_bytes(_encode(counts))
            os.replace(partial, self._path)
        except OSError as problem:
            log.warning("cannot publish this worker's counters to %s: %s", self._path, problem)

    def others(self) -> list[Folded]:
        """The latest counters of every other worker (unreadable files skipped)."""
        found = []
        for path in sorted(self.directory.glob("worker-*.json")):
            if path == self._path:
                continue
            try:
                found.append(_decode(path.read_bytes()))
            except (OSError, ValueError, TypeError) as problem:
                log.debug("skipping %s: %s", path, problem)
        return found

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
