"""The parent of ``workers: 2`` supervising real workers: a worker killed with
SIGKILL is logged, counted and replaced on the same port with its counts
kept, and SIGTERM afterwards (or while the replacement starts) stops every
worker and exits 0; workers that cannot start stop Edge with 1; the budget
of restarts while workers keep failing."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sluice.edge.group import PUBLISH_SECS
from sluice.edge.supervisor import RestartBudget
from tests.edge.helpers import (
    BIN,
    EdgeLauncher,
    EdgeProcess,
    Prometheus,
    Upstream,
    drop_logs,
    free_port,
    http_request,
    listening_pids,
    otlp_logs_json,
    policies,
    wait_until,
    write_json,
)

DROP_X = policies(drop_logs("drop-x", log_field="body", exact="x"))
STOP_SECS = 5.0
"""How long an idle Edge may take to stop (it takes well under a second)."""


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


@pytest.fixture
def edges(start_edge: EdgeLauncher) -> Iterator[EdgeLauncher]:
    """`start_edge`, and at teardown no worker left behind, even when the
    parent did not stop them (each test still checks the exit itself)."""
    yield start_edge
    for edge in start_edge.started:
        edge.terminate(timeout=STOP_SECS)
        for pid in listening_pids(edge.stderr()):
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def _start_two(edges: EdgeLauncher) -> tuple[EdgeProcess, int]:
    port = free_port()
    edge = edges(DROP_X, listen_port=port, workers=2)
    # Both listening, both with their policies (each worker loads its own).
    wait_until(
        lambda: (
            len(listening_pids(edge.stderr())) == 2
            and edge.stderr().count("policies updated by local") == 2
        ),
        edge,
        timeout=30,
    )
    return edge, port


def _scrape(port: int) -> Prometheus:
    answer = http_request(port, "GET", "/_metrics", timeout=5)
    assert answer.status == 200
    return Prometheus.parse(answer.body.decode())


def _dropped(port: int) -> float:
    return _scrape(port).results("logs")["dropped"]


def _stops_cleanly(edge: EdgeProcess, workers: list[int]) -> None:
    signalled = time.monotonic()
    code = edge.terminate(timeout=STOP_SECS)
    assert code == 0, edge.stderr()
    assert time.monotonic() - signalled < STOP_SECS
    assert not [pid for pid in workers if _alive(pid)], edge.stderr()


def test_a_killed_worker_is_replaced_with_its_counts_kept(
    edges: EdgeLauncher, upstream: Upstream
) -> None:
    edge, port = _start_two(edges)
    sent = 10
    for i in range(sent):  # fresh connections: the kernel spreads them over both workers
        body = json.dumps(otlp_logs_json(["x", f"keep {i}"])).encode()
        answer = http_request(port, "POST", "/v1/logs", body, {"Content-Type": "application/json"})
        assert answer.status == 200
    # Both workers have published their counts: every scrape, whichever worker
    # answers it, shows them all.
    time.sleep(PUBLISH_SECS)
    wait_until(lambda: all(_dropped(port) == sent for _ in range(8)), edge)
    victim, survivor = listening_pids(edge.stderr())

    os.kill(victim, signal.SIGKILL)
    wait_until(lambda: len(listening_pids(edge.stderr())) == 3, edge)
    replacement = listening_pids(edge.stderr())[2]
    assert replacement not in (victim, survivor)
    assert re.search(
        rf"level=error pid={edge.process.pid} logger=sluice.edge.supervisor "
        rf'msg="worker \d \(pid {victim}\) was killed by SIGKILL; replacing it".* signal=SIGKILL',
        edge.stderr(),
    ), edge.stderr()
    wait_until(lambda: _scrape(port).get("sluice_edge_workers") == 2, edge)
    for _ in range(6):  # whichever worker answers
        metrics = _scrape(port)
        assert metrics.get("sluice_edge_workers") == 2
        assert metrics.get("sluice_edge_worker_restarts_total", reason="killed") == 1
        assert metrics.get("sluice_edge_worker_restarts_total", reason="exited") == 0
        # The killed worker's counts neither vanished nor count twice.
        assert metrics.results("logs")["dropped"] == sent

    upstream.reset()
    before = _scrape(port).get("sluice_edge_requests_total", route="passthrough", code="200")
    for i in range(24):
        assert http_request(port, "POST", f"/w/{i}", b"payload").status == 200
    # Each worker keeps one pooled upstream connection: two clients, two workers.
    assert len({r.client for r in upstream.received("/w/")}) == 2, "both workers should serve"
    time.sleep(PUBLISH_SECS)
    wait_until(
        lambda: all(
            _scrape(port).get("sluice_edge_requests_total", route="passthrough", code="200")
            == before + 24
            for _ in range(8)
        ),
        edge,
    )
    _stops_cleanly(edge, [survivor, replacement])


def test_workers_stop_when_the_parent_is_killed(edges: EdgeLauncher) -> None:
    """A kill -9 of the parent runs none of its code; its workers used to serve
    on, unsupervised. The kernel now sends each of them SIGTERM."""
    edge, _ = _start_two(edges)
    workers = listening_pids(edge.stderr())
    edge.process.kill()
    edge.process.wait()
    wait_until(lambda: not [pid for pid in workers if _alive(pid)], edge, timeout=STOP_SECS)
    for pid in workers:  # each drained, as on SIGTERM
        assert f'pid={pid} logger=sluice.edge msg="stopped"' in edge.stderr()


def test_totals_never_go_backwards_when_workers_die(edges: EdgeLauncher) -> None:
    edge, port = _start_two(edges)
    body = json.dumps(otlp_logs_json(["x"])).encode()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    for _ in range(5):  # one connection: one worker counts them all
        connection.request("POST", "/v1/logs", body, {"Content-Type": "application/json"})
        assert connection.getresponse().read() == b"{}"
    connection.request("GET", "/_metrics")
    shown = Prometheus.parse(connection.getresponse().read().decode()).results("logs")["dropped"]
    connection.close()
    for pid in listening_pids(edge.stderr()):
        os.kill(pid, signal.SIGKILL)  # most likely before it wrote its counts
    wait_until(lambda: len(listening_pids(edge.stderr())) == 4, edge)
    wait_until(lambda: _scrape(port).get("sluice_edge_workers") == 2, edge)
    for _ in range(6):
        assert _dropped(port) >= shown
    assert _scrape(port).get("sluice_edge_worker_restarts_total", reason="killed") == 2


def test_sigterm_while_a_replacement_starts_stops_every_worker(edges: EdgeLauncher) -> None:
    edge, _ = _start_two(edges)
    victim, survivor = listening_pids(edge.stderr())
    os.kill(victim, signal.SIGKILL)
    wait_until(lambda: "restarted as pid" in edge.stderr(), edge)
    found = re.search(r"restarted as pid (\d+)", edge.stderr())
    assert found
    _stops_cleanly(edge, [survivor, int(found.group(1))])


def test_a_worker_failing_again_is_replaced_after_a_pause(edges: EdgeLauncher) -> None:
    edge, port = _start_two(edges)
    victim, survivor = listening_pids(edge.stderr())
    os.kill(victim, signal.SIGKILL)
    wait_until(lambda: len(listening_pids(edge.stderr())) == 3, edge)
    os.kill(listening_pids(edge.stderr())[2], signal.SIGKILL)
    wait_until(lambda: "replacing it in 1 s (2 workers exited within 60 s)" in edge.stderr(), edge)
    metrics = _scrape(port)  # the survivor, alone for a second
    assert metrics.get("sluice_edge_workers") == 1
    assert metrics.get("sluice_edge_worker_restarts_total", reason="killed") == 1
    # SIGTERM drops the pending replacement.
    _stops_cleanly(edge, [survivor])
    assert len(listening_pids(edge.stderr())) == 3, edge.stderr()


def test_workers_that_cannot_listen_stop_edge_with_1(tmp_path: Path, upstream: Upstream) -> None:
    with socket.socket() as taken:  # no SO_REUSEPORT: the workers cannot join it
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        path = tmp_path / "config.json"
        port = taken.getsockname()[1]
        write_json(path, {"upstream_url": upstream.url, "listen_port": port, "workers": 2})
        started = time.monotonic()
        proc = subprocess.run(
            [str(BIN / "sluice-edge"), str(path)], capture_output=True, text=True, timeout=30
        )
    assert proc.returncode == 1, proc.stderr
    assert time.monotonic() - started < 10
    assert f"listen tcp 127.0.0.1:{port}: bind: address already in use" in proc.stderr
    assert "it never served: stopping Edge" in proc.stderr
    assert "restarted" not in proc.stderr


def _spawned_workers(pid: int) -> list[int]:
    """The worker processes `pid` has spawned so far (not its resource tracker)."""
    return [
        int(entry.name)
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit() and _parent_of(entry) == pid and _is_worker(entry)
    ]


def _parent_of(entry: Path) -> int | None:
    try:
        stat = (entry / "stat").read_text()
    except OSError:
        return None
    return int(stat.rpartition(")")[2].split()[1])


def _is_worker(entry: Path) -> bool:
    try:
        return b"spawn_main" in (entry / "cmdline").read_bytes()
    except OSError:
        return False


def test_ctrl_c_while_workers_start_stops_edge_without_tracebacks(
    tmp_path: Path, upstream: Upstream
) -> None:
    """Ctrl-C reaches the whole process group. A worker still importing
    Python used to die of it with a KeyboardInterrupt traceback (or silently,
    failing Edge's start); it starts with SIGINT blocked now, and the parent
    stops it."""
    path = tmp_path / "config.json"
    write_json(path, {"upstream_url": upstream.url, "listen_port": free_port(), "workers": 2})
    edge = subprocess.Popen(
        [str(BIN / "sluice-edge"), str(path)],
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a group of its own, as a shell gives a foreground job
    )
    deadline = time.monotonic() + 10
    while len(_spawned_workers(edge.pid)) < 2:  # importing for a good while yet
        assert time.monotonic() < deadline and edge.poll() is None
        time.sleep(0.002)
    os.killpg(edge.pid, signal.SIGINT)
    _, stderr = edge.communicate(timeout=30)
    assert edge.returncode == 0, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    assert "killed by SIGINT" not in stderr, stderr  # each one stopped by the parent
    assert "SIGINT: stopping 2 workers" in stderr


def test_restarts_back_off_then_give_up_while_workers_keep_failing() -> None:
    budget = RestartBudget(delays=(0.0, 1.0, 2.0, 4.0), window=60.0)
    assert [budget.exited(at) for at in (100.0, 101.0, 103.0, 107.0)] == [0.0, 1.0, 2.0, 4.0]
    assert budget.exited(115.0) is None
    assert budget.recent == 5


def test_exits_further_apart_than_the_window_are_replaced_at_once() -> None:
    budget = RestartBudget(delays=(0.0, 1.0), window=60.0)
    assert [budget.exited(at) for at in (0.0, 61.0, 122.0, 183.0)] == [0.0] * 4
    assert budget.exited(184.0) == 1.0
