"""The worker group's counter files: every worker's count (the reader's own
too), a worker that exited keeping its counts (once) after the parent retires
it, a replacement adding its own, and the parent's record telling the workers
serving and the restarts."""

from __future__ import annotations

import shutil
from pathlib import Path

from sluice.edge.group import WORKER_RESTARTS, GroupRecord, WorkerGroup, worker_name
from sluice.edge.metrics import REQUESTS, Folded, merge


def _total(reader: WorkerGroup, name: str, labels: tuple[str, ...]) -> float:
    counts: Folded = {}
    for published in reader.published():
        merge(counts, published)
    return counts.get(name, {}).get(labels, 0.0)


def test_an_exited_workers_counts_stay_once_and_a_replacement_adds_its_own(
    tmp_path: Path,
) -> None:
    record = GroupRecord(tmp_path)
    record.write()
    reader = WorkerGroup(tmp_path, worker_name(0))
    dead = WorkerGroup(tmp_path, worker_name(1))
    dead.publish({REQUESTS: {("/v1/logs", "200"): 5.0}})
    kept = tmp_path / "kept.json"
    shutil.copy(tmp_path / "worker-1.json", kept)
    assert _total(reader, REQUESTS, ("/v1/logs", "200")) == 5

    record.retire(worker_name(1))
    record.restarted("killed")
    assert not (tmp_path / "worker-1.json").exists()
    assert _total(reader, REQUESTS, ("/v1/logs", "200")) == 5
    assert _total(reader, WORKER_RESTARTS, ("killed",)) == 1
    # A scrape that read the file just before the parent removed it counts it once.
    shutil.copy(kept, tmp_path / "worker-1.json")
    assert _total(reader, REQUESTS, ("/v1/logs", "200")) == 5

    WorkerGroup(tmp_path, worker_name(2)).publish({REQUESTS: {("/v1/logs", "200"): 3.0}})
    assert _total(reader, REQUESTS, ("/v1/logs", "200")) == 8
    reader.publish({REQUESTS: {("/v1/logs", "200"): 2.0}})
    assert _total(reader, REQUESTS, ("/v1/logs", "200")) == 10


def test_the_record_tells_the_workers_serving(tmp_path: Path) -> None:
    reader = WorkerGroup(tmp_path, worker_name(0))
    assert reader.serving() is None
    record = GroupRecord(tmp_path)
    record.serving = 2
    record.write()
    assert reader.serving() == 2
