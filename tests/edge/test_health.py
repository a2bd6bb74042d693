"""Liveness and readiness against real processes (EDGE.md sections 2 and 5):
``/_health`` stays 200 and says ``degraded`` with the reason while a provider
has not loaded or is failing; ``/_ready`` is 503 until every provider loaded
once, then 200 for good."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.conformance.servers import policy_server
from tests.edge.helpers import (
    EdgeLauncher,
    EdgeProcess,
    drop_logs,
    policies,
    wait_until,
    write_json,
)

DROP_X = policies(drop_logs("drop-x", log_field="body", exact="x"))


def probe(edge: EdgeProcess, path: str) -> tuple[int, Any]:
    answer = edge.request("GET", path, timeout=5)
    assert answer.header("Content-Type") == "application/json"
    return answer.status, answer.json()


def test_ready_waits_for_a_missing_file_and_health_says_why(start_edge: EdgeLauncher) -> None:
    edge = start_edge(
        None,
        policy_providers=[
            {"type": "file", "id": "late", "path": "later.json", "poll_interval_secs": 0.05}
        ],
        loaded=False,
    )
    wait_until(lambda: bool(edge.health()["providers"][0]["last_error"]), edge)
    assert probe(edge, "/_ready") == (503, {"status": "loading", "waiting_for": ["late"]})
    status, health = probe(edge, "/_health")
    assert status == 200
    assert health["status"] == "degraded"
    [reason] = health["reasons"]
    assert reason.startswith("provider late has not loaded yet: cannot read ")
    assert "later.json" in reason
    assert edge.request("HEAD", "/_ready").status == 503
    write_json(edge.workdir / "later.json", DROP_X)
    wait_until(lambda: probe(edge, "/_ready")[0] == 200, edge)
    assert probe(edge, "/_ready") == (200, {"status": "ready"})
    status, health = probe(edge, "/_health")
    assert (status, health["status"], health["reasons"]) == (200, "ok", [])


def test_a_provider_failing_later_degrades_health_but_not_readiness(
    start_edge: EdgeLauncher,
) -> None:
    edge = start_edge(DROP_X)
    assert probe(edge, "/_ready")[0] == 200
    good = edge.policy_path.read_text()
    edge.policy_path.write_text('{"policies": [ not json')
    wait_until(lambda: edge.health()["status"] == "degraded", edge)
    [reason] = edge.health()["reasons"]
    # Said once: the provider's error is what failed, health adds what it means.
    assert re.fullmatch(
        rf"provider local is failing: {re.escape(str(edge.policy_path))}: not valid JSON: "
        r"[^;]*; its last good policies stay active",
        reason,
    ), reason
    [logged] = [line for line in edge.stderr().splitlines() if "provider local: " in line]
    assert logged.endswith('; its last good policies stay active"'), logged
    assert probe(edge, "/_ready") == (200, {"status": "ready"})
    assert edge.health()["policies"]["logs"] == 1  # the last good set
    edge.policy_path.write_text(good)
    wait_until(lambda: edge.health()["status"] == "ok", edge)
    assert edge.health()["providers"][0]["failures"] == 0


def test_a_policy_server_refusing_the_token_keeps_edge_unready(
    start_edge: EdgeLauncher, tmp_path: Path
) -> None:
    served = tmp_path / "served.json"
    write_json(served, DROP_X)
    with policy_server(served, "--token", "right") as server:
        edge = start_edge(
            None,
            policy_providers=[
                {
                    "type": "http",
                    "id": "remote",
                    "url": server.sync_url,
                    "headers": [{"name": "Authorization", "value": "Bearer wrong"}],
                }
            ],
            loaded=False,
        )
        wait_until(lambda: bool(edge.health()["providers"][0]["last_error"]), edge)
        assert probe(edge, "/_ready")[0] == 503
        health = edge.health()
        assert health["status"] == "degraded"
        assert "401" in health["reasons"][0]
        assert health["policies"] == {"logs": 0, "metrics": 0, "traces": 0}


def test_without_providers_edge_is_ready_at_once(start_edge: EdgeLauncher) -> None:
    edge = start_edge(None)
    assert probe(edge, "/_ready") == (200, {"status": "ready"})
    status, health = probe(edge, "/_health")
    assert (status, health["status"], health["providers"]) == (200, "ok", [])
