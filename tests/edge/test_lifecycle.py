"""Start-up, configuration errors, graceful shutdown, workers and providers
(EDGE.md sections 1 and 4), all with real processes."""

from __future__ import annotations

import http.client
import json
import re
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.servers import policy_server
from tests.edge.helpers import (
    BIN,
    Answer,
    EdgeLauncher,
    Reply,
    Upstream,
    drop_logs,
    free_port,
    http_request,
    json_bodies,
    listening_pids,
    otlp_logs_json,
    policies,
    wait_until,
    write_json,
)

DROP_X = policies(drop_logs("drop-x", log_field="body", exact="x"))


def run_edge(*args: str, program: str = "sluice-edge") -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / program), *args], capture_output=True, text=True, timeout=30)


def logs(*bodies: str) -> bytes:
    return json.dumps(otlp_logs_json(list(bodies))).encode()


# -- configuration errors ------------------------------------------------------------------


@pytest.mark.parametrize(
    "name,content,field",
    [
        ("invalid-json", '{"upstream_url": "http://127.0.0.1:1",', "JSON"),
        ("missing-upstream", '{"listen_port": 0}', "upstream_url"),
        (
            "port-string",
            '{"upstream_url": "http://127.0.0.1:1", "listen_port": "x"}',
            "listen_port",
        ),
        (
            "port-range",
            '{"upstream_url": "http://127.0.0.1:1", "listen_port": 70000}',
            "listen_port",
        ),
        ("upstream-number", '{"upstream_url": 5}', "upstream_url"),
        ("upstream-scheme", '{"upstream_url": "ftp://host"}', "upstream_url"),
        ("log-level", '{"upstream_url": "http://127.0.0.1:1", "log_level": "loud"}', "log_level"),
        (
            "body-size",
            '{"upstream_url": "http://127.0.0.1:1", "max_body_size": -1}',
            "max_body_size",
        ),
        ("workers", '{"upstream_url": "http://127.0.0.1:1", "workers": 0}', "workers"),
        (
            "timeout",
            '{"upstream_url": "http://127.0.0.1:1", "upstream_timeout_secs": "soon"}',
            "upstream_timeout_secs",
        ),
        (
            "provider-type",
            '{"upstream_url": "http://127.0.0.1:1", "policy_providers": [{"type": "ftp", "id": "p"}]}',
            "policy_providers[0].type",
        ),
        (
            "providers-not-list",
            '{"upstream_url": "http://127.0.0.1:1", "policy_providers": {"type": "file"}}',
            "policy_providers",
        ),
        ("top-level-array", "[]", "object"),
    ],
)
def test_config_errors_exit_1_with_one_log_line(
    tmp_path: Path, name: str, content: str, field: str
) -> None:
    path = tmp_path / f"{name}.json"
    path.write_text(content)
    proc = run_edge(str(path))
    assert proc.returncode == 1, proc
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert " level=error " in lines[0]
    assert str(path) in lines[0]
    assert field in lines[0]


def test_missing_config_file_exits_1_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "nowhere" / "config.json"
    proc = run_edge(str(path))
    assert proc.returncode == 1
    [line] = proc.stderr.strip().splitlines()
    assert str(path) in line


@pytest.mark.parametrize("program", ["sluice-edge", "sluice-edge-datadog"])
def test_help_and_version(program: str) -> None:
    helped = run_edge("--help", program=program)
    assert helped.returncode == 0
    assert "CONFIG" in helped.stdout
    version = run_edge("--version", program=program)
    assert version.returncode == 0
    assert re.fullmatch(rf"{program} \d+\.\d+\.\d+\S*", version.stdout.strip()), version.stdout


def test_no_argument_is_a_usage_error() -> None:
    proc = run_edge()
    assert proc.returncode != 0
    assert "usage" in proc.stderr.lower()


def test_busy_port_exits_non_zero(tmp_path: Path, upstream: Upstream) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        path = tmp_path / "config.json"
        port = taken.getsockname()[1]
        write_json(path, {"upstream_url": upstream.url, "listen_port": port})
        proc = run_edge(str(path))
    assert proc.returncode != 0
    # Go's words, as the collector's listeners (which share Edge's) say it.
    assert f"listen tcp 127.0.0.1:{port}: bind: address already in use" in proc.stderr


@pytest.mark.parametrize("address", ["::1", "::", "0.0.0.0"])
def test_listen_addresses(start_edge: EdgeLauncher, upstream: Upstream, address: str) -> None:
    edge = start_edge(DROP_X, listen_address=address)
    assert edge.post("/v1/logs", logs("x", "y"), "application/json").status == 200
    assert json_bodies(json.loads(upstream.received()[-1].body)) == ["y"]


# -- graceful shutdown ------------------------------------------------------------------------


def test_sigterm_finishes_the_request_in_flight(
    start_edge: EdgeLauncher, upstream: Upstream
) -> None:
    edge = start_edge(DROP_X)
    upstream.respond = lambda r: Reply(201, b"slow answer", delay=1.0 if r.path == "/slow" else 0.0)
    # An idle kept-alive connection must not hold the shutdown up.
    idle = http.client.HTTPConnection("127.0.0.1", edge.port, timeout=30)
    idle.request("GET", "/_health")
    idle.getresponse().read()
    results: list[Answer | BaseException] = []

    def slow_request() -> None:
        try:
            results.append(edge.request("POST", "/slow", b"in flight"))
        except BaseException as problem:
            results.append(problem)

    thread = threading.Thread(target=slow_request)
    thread.start()
    upstream.wait_for(1, path_prefix="/slow")
    assert upstream.received("/slow"), "the upstream never saw the request"
    signalled = time.monotonic()
    edge.process.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    with pytest.raises(OSError):  # no longer accepting
        socket.create_connection(("127.0.0.1", edge.port), timeout=2).close()
    thread.join(15)
    code = edge.process.wait(15)  # the one SIGTERM ends it: a second would be a forced stop
    took = time.monotonic() - signalled
    edge.terminate()
    idle.close()
    [result] = results
    assert isinstance(result, Answer), result
    assert (result.status, result.body) == (201, b"slow answer")
    assert code == 0, edge.stderr()
    assert 0.5 <= took < 8, took


def test_sigterm_when_idle_exits_promptly(start_edge: EdgeLauncher) -> None:
    edge = start_edge(DROP_X)
    started = time.monotonic()
    assert edge.terminate() == 0
    assert time.monotonic() - started < 5
    assert "stopped" in edge.stderr()


@pytest.mark.parametrize("workers", [1, 2])
def test_sighup_makes_every_provider_poll_now_and_edge_serves_on(
    start_edge: EdgeLauncher, upstream: Upstream, workers: int
) -> None:
    """SIGHUP's default action would kill Edge without draining. Each worker's
    providers poll at once instead: an edited policy file applies without
    waiting for its interval (an hour here)."""
    port = free_port()
    provider = {"type": "file", "id": "local", "path": "policies.json", "poll_interval_secs": 3600}
    edge = start_edge(DROP_X, listen_port=port, workers=workers, policy_providers=[provider])
    wait_until(lambda: edge.stderr().count("policies updated by local") == workers, edge, 30)
    write_json(edge.policy_path, policies(drop_logs("drop-y", log_field="body", exact="y")))
    edge.process.send_signal(signal.SIGHUP)
    wait_until(lambda: edge.stderr().count("policies updated by local") == 2 * workers, edge)
    for _ in range(6 * workers):  # fresh connections: the kernel spreads them over the workers
        answer = http_request(
            port, "POST", "/v1/logs", logs("x", "y"), {"Content-Type": "application/json"}
        )
        assert answer.status == 200
    assert {tuple(json_bodies(json.loads(r.body))) for r in upstream.received()} == {("x",)}
    assert edge.process.poll() is None and edge.terminate() == 0, edge.stderr()


def test_two_workers_share_the_port(start_edge: EdgeLauncher, upstream: Upstream) -> None:
    port = free_port()
    edge = start_edge(DROP_X, listen_port=port, workers=2)
    deadline = time.monotonic() + 30
    while len(listening_pids(edge.stderr())) < 2:
        assert time.monotonic() < deadline, edge.stderr()
        assert edge.process.poll() is None, edge.stderr()
        time.sleep(0.05)
    workers = listening_pids(edge.stderr())
    assert edge.process.pid not in workers
    # Wait until every worker has its policies (each loads its own).
    deadline = time.monotonic() + 30
    while edge.stderr().count("policies updated by local") < 2:
        assert time.monotonic() < deadline, edge.stderr()
        time.sleep(0.05)
    for i in range(24):  # fresh connections: the kernel spreads them over both workers
        answer = http_request(port, "POST", f"/w/{i}", b"payload")
        assert answer.status == 200
        dropped = http_request(
            port, "POST", "/v1/logs", logs("x"), {"Content-Type": "application/json"}
        )
        assert (dropped.status, dropped.body) == (200, b"{}")
    received = upstream.received("/w/")
    assert [r.path for r in received] == [f"/w/{i}" for i in range(24)]
    # Each worker keeps one pooled upstream connection for sequential requests.
    assert len({r.client for r in received}) == 2, "both workers should have served"
    code = edge.terminate()
    assert code == 0, edge.stderr()
    deadline = time.monotonic() + 10
    for pid in workers:
        while Path(f"/proc/{pid}").exists():
            assert time.monotonic() < deadline, f"worker {pid} still running"
            time.sleep(0.05)


def test_workers_need_a_fixed_port(tmp_path: Path, upstream: Upstream) -> None:
    path = tmp_path / "config.json"
    write_json(path, {"upstream_url": upstream.url, "listen_port": 0, "workers": 2})
    proc = subprocess.run(
        [str(BIN / "sluice-edge"), str(path)], capture_output=True, text=True, timeout=30
    )
    assert proc.returncode != 0
    assert "listen_port" in proc.stderr


# -- providers -----------------------------------------------------------------------------


def test_policies_arriving_later_apply_to_later_traffic(
    start_edge: EdgeLauncher, upstream: Upstream
) -> None:
    """A missing policy file is retried; until it loads traffic passes unfiltered."""
    edge = start_edge(
        None,
        policy_providers=[
            {"type": "file", "id": "late", "path": "later.json", "poll_interval_secs": 0.05}
        ],
        loaded=False,
    )
    assert edge.post("/v1/logs", logs("x", "y"), "application/json").status == 200
    assert json_bodies(json.loads(upstream.received()[-1].body)) == ["x", "y"]
    health = edge.health()
    assert health["providers"][0]["loaded"] is False
    assert "later.json" in health["providers"][0]["last_error"]
    write_json(edge.workdir / "later.json", DROP_X)
    edge.wait_ready(loaded=True)
    assert edge.post("/v1/logs", logs("x", "y"), "application/json").status == 200
    assert json_bodies(json.loads(upstream.received()[-1].body)) == ["y"]


def test_bad_reload_keeps_previous_policies(start_edge: EdgeLauncher, upstream: Upstream) -> None:
    edge = start_edge(DROP_X)
    edge.policy_path.write_text('{"policies": [ not json')
    deadline = time.monotonic() + 10
    while not edge.health()["providers"][0]["last_error"]:
        assert time.monotonic() < deadline, edge.stderr()
        time.sleep(0.05)
    assert edge.post("/v1/logs", logs("x", "y"), "application/json").status == 200
    assert json_bodies(json.loads(upstream.received()[-1].body)) == ["y"]
    assert edge.health()["policies"]["logs"] == 1


def test_http_provider_policies_apply_and_hits_are_synced_at_shutdown(
    start_edge: EdgeLauncher, upstream: Upstream, tmp_path: Path
) -> None:
    served = tmp_path / "served.json"
    write_json(
        served,
        policies(
            drop_logs("drop-x", log_field="body", exact="x"),
            drop_logs("drop-z", log_field="body", exact="z"),
        ),
    )
    with policy_server(served) as server:
        edge = start_edge(
            None,
            policy_providers=[
                {"type": "http", "id": "remote", "url": server.sync_url, "poll_interval_secs": 60}
            ],
        )
        health: Any = edge.health()
        assert health["policies"]["logs"] == 2
        assert health["providers"] == [
            {"id": "remote", "type": "http", "loaded": True, "failures": 0, "last_error": ""}
        ]
        for bodies in (["x", "y", "x"], ["z", "y"], ["x"]):
            assert edge.post("/v1/logs", logs(*bodies), "application/json").status == 200
        assert [json_bodies(json.loads(r.body)) for r in upstream.received()] == [["y"], ["y"]]
        before = server.get("/stats")
        assert before["policies"] == [] or all(p["hits"] == 0 for p in before["policies"])
        assert edge.terminate() == 0, edge.stderr()
        stats = {p["policy_id"]: p["hits"] for p in server.get("/stats")["policies"]}
    assert stats == {"drop-x": 3, "drop-z": 1}
