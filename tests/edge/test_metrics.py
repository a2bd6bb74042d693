"""Edge's metrics against real processes: Prometheus naming, every series at 0
from the start, results counted as the collector counts them, per-policy
numbers at ``/_policies`` (and on ``/_metrics`` only when asked), and with
``workers: 2`` every scrape showing the whole group."""

from __future__ import annotations

import json
import socket
import time
from typing import Any

from sluice import __version__
from tests.edge.helpers import (
    EdgeLauncher,
    EdgeProcess,
    Prometheus,
    Upstream,
    drop_logs,
    free_port,
    http_request,
    otlp_logs_json,
    policies,
    wait_until,
)

REDACT_SAMPLED = {
    "id": "redact-cards",
    "name": "redact cards",
    "log": {
        "match": [{"log_field": "body", "regex": "card"}],
        "keep": "100%",
        "transform": {"redact": [{"log_field": "body", "regex": "[0-9]{4}"}]},
    },
}
POLICIES = policies(
    drop_logs("drop-x", log_field="body", exact="x"),
    REDACT_SAMPLED,
    drop_logs("broken", log_field="body", regex="([bad"),
)
RESULTS = ("dropped", "kept", "sampled", "transformed", "no_match", "malformed")


def logs(*bodies: str) -> bytes:
    return json.dumps(otlp_logs_json(list(bodies))).encode()


def scrape(edge: EdgeProcess) -> Prometheus:
    answer = edge.request("GET", "/_metrics", timeout=5)
    assert answer.status == 200
    assert (answer.header("Content-Type") or "").startswith("text/plain; version=0.0.4")
    return Prometheus.parse(answer.body.decode())


def test_every_series_is_there_at_zero_from_the_start(start_edge: EdgeLauncher) -> None:
    edge = start_edge(POLICIES)
    metrics = scrape(edge)
    for telemetry_type in ("logs", "metrics", "traces"):
        assert metrics.results(telemetry_type) == dict.fromkeys(RESULTS, 0)
        assert metrics.has("sluice_edge_records_received_total", telemetry_type=telemetry_type)
    for route, code in (("/v1/logs", "200"), ("/api/v2/logs", "202"), ("passthrough", "200")):
        assert metrics.has("sluice_edge_requests_total", route=route, code=code)
    for kind in ("timeout", "failed"):
        assert metrics.get("sluice_edge_upstream_errors_total", kind=kind) == 0
    assert metrics.get("sluice_edge_fail_open_total", route="/v1/logs") == 0
    assert metrics.get("sluice_edge_upstream_request_duration_seconds_bucket", le="+Inf") == 0
    assert metrics.get("sluice_edge_upstream_request_duration_seconds_count") == 0
    build = [
        dict(labels)
        for (name, labels), value in metrics.samples.items()
        if name == "sluice_edge_build_info" and value == 1
    ]
    assert [b["version"] for b in build] == [__version__]
    assert build[0]["distribution"] == "sluice-edge"
    assert metrics.get("sluice_edge_policies_loaded", telemetry_type="logs") == 2
    assert metrics.get("sluice_edge_policy_errors") == 1
    assert metrics.get("sluice_edge_provider_loaded", provider="local") == 1
    assert not any(name.startswith("sluice_edge_policy_hits") for name, _ in metrics.samples)


def test_counts_after_traffic(start_edge: EdgeLauncher, upstream: Upstream) -> None:
    edge = start_edge(POLICIES)
    before = scrape(edge)
    assert edge.post("/v1/logs", logs("x", "card 4111", "plain"), "application/json").status == 200
    assert edge.post("/v1/logs", logs("x"), "application/json").status == 200  # all dropped
    assert edge.post("/v1/logs", b"{not json", "application/json").status == 200  # fails open
    assert edge.request("GET", "/other").status == 200
    after = scrape(edge)

    def delta(name: str, **labels: str) -> float:
        return after.get(name, **labels) - before.get(name, **labels)

    results = {r: after.results("logs")[r] - before.results("logs")[r] for r in RESULTS}
    # The sampled and redacted record counts as transformed, as the collector counts it.
    assert results == {
        "dropped": 2,
        "kept": 0,
        "sampled": 0,
        "transformed": 1,
        "no_match": 1,
        "malformed": 0,
    }
    assert delta("sluice_edge_records_received_total", telemetry_type="logs") == 4
    assert delta("sluice_edge_requests_total", route="/v1/logs", code="200") == 3
    assert delta("sluice_edge_requests_total", route="passthrough", code="200") == 1
    assert delta("sluice_edge_fail_open_total", route="/v1/logs") == 1
    # Three upstream calls: the filtered batch, the unreadable one, the passthrough.
    assert delta("sluice_edge_upstream_request_duration_seconds_count") == 3
    assert delta("sluice_edge_upstream_request_duration_seconds_bucket", le="+Inf") == 3
    assert delta("sluice_edge_upstream_request_duration_seconds_sum") > 0
    assert len(upstream.received()) == 3


def test_upstream_errors_are_counted_by_kind(start_edge: EdgeLauncher) -> None:
    edge = start_edge(None, upstream_url=f"http://127.0.0.1:{free_port()}")
    assert edge.request("POST", "/anything", b"x").status == 502
    metrics = scrape(edge)
    assert metrics.get("sluice_edge_upstream_errors_total", kind="failed") == 1
    assert metrics.get("sluice_edge_requests_total", route="passthrough", code="502") == 1


def _policies_doc(edge: EdgeProcess) -> Any:
    answer = edge.request("GET", "/_policies", timeout=5)
    assert (answer.status, answer.header("Content-Type")) == (200, "application/json")
    return answer.json()


def test_per_policy_numbers_at_policies_and_only_on_request_on_metrics(
    start_edge: EdgeLauncher,
) -> None:
    edge = start_edge(POLICIES)
    for _ in range(2):
        assert edge.post("/v1/logs", logs("x", "card 1234"), "application/json").status == 200
    doc = _policies_doc(edge)
    assert doc["workers"] == 1
    by_id = {p["id"]: p for p in doc["policies"]}
    assert list(by_id) == ["broken", "drop-x", "redact-cards"]
    assert by_id["drop-x"] | {"name": ""} == {
        "id": "drop-x",
        "name": "",
        "telemetry_type": "logs",
        "provider": "local",
        "hits": 2,
        "misses": 0,
        "transforms": {},
        "errors": [],
    }
    assert by_id["redact-cards"]["hits"] == 2
    assert by_id["redact-cards"]["transforms"] == {"redact": {"hits": 2, "misses": 0}}
    assert by_id["broken"]["errors"][0].startswith("log: match[0]: invalid regex")
    assert not any(
        name.startswith("sluice_edge_policy") and "hits" in name for name, _ in scrape(edge).samples
    )

    flagged = start_edge(POLICIES, policy_metrics=True)
    metrics = scrape(flagged)
    assert metrics.get("sluice_edge_policy_hits_total", policy_id="drop-x") == 0  # there at 0
    assert flagged.post("/v1/logs", logs("x"), "application/json").status == 200
    metrics = scrape(flagged)
    assert metrics.get("sluice_edge_policy_hits_total", policy_id="drop-x") == 1
    assert metrics.has("sluice_edge_policy_misses_total", policy_id="redact-cards")


def test_two_workers_every_scrape_shows_the_whole_group(
    start_edge: EdgeLauncher, upstream: Upstream
) -> None:
    port = free_port()
    edge = start_edge(
        policies(drop_logs("drop-x", log_field="body", exact="x")), listen_port=port, workers=2
    )
    deadline = time.monotonic() + 30
    while edge.stderr().count("policies updated by local") < 2:
        assert time.monotonic() < deadline, edge.stderr()
        time.sleep(0.05)
    sent = 30
    for i in range(sent):  # fresh connections: the kernel spreads them over both workers
        answer = http_request(
            port, "POST", "/v1/logs", logs("x", f"keep {i}"), {"Content-Type": "application/json"}
        )
        assert answer.status == 200
    assert len({r.client for r in upstream.received()}) == 2, "both workers should have served"

    def dropped() -> float:
        metrics = Prometheus.parse(http_request(port, "GET", "/_metrics").body.decode())
        return metrics.results("logs")["dropped"]

    deadline = time.monotonic() + 10
    while dropped() != sent:
        assert time.monotonic() < deadline, "the scrapes never showed both workers' counts"
        time.sleep(0.2)
    # Whichever worker answers, the group's total (never one worker's share).
    assert [dropped() for _ in range(12)] == [sent] * 12
    hits = [
        {
            p["id"]: p["hits"]
            for p in json.loads(http_request(port, "GET", "/_policies").body)["policies"]
        }
        for _ in range(6)
    ]
    assert hits == [{"drop-x": sent}] * 6


def test_requests_the_http_layer_refuses_are_counted(start_edge: EdgeLauncher) -> None:
    """A request refused before any route sees it (malformed: 400; a body over
    max_body_size: 413) counts under route="server", so refusals show."""
    edge = start_edge(None, max_body_size=1024)
    for data in (
        b"NOT HTTP AT ALL\r\n\r\n",
        b"POST /v1/logs HTTP/1.1\r\nHost: e\r\nContent-Length: 4096\r\n\r\n",
    ):
        with socket.create_connection(("127.0.0.1", edge.port), timeout=5) as sock:
            sock.sendall(data)
            assert sock.recv(65536).startswith(b"HTTP/1.1 4")
    metrics = scrape(edge)
    assert metrics.get("sluice_edge_requests_total", route="server", code="400") == 1
    assert metrics.get("sluice_edge_requests_total", route="server", code="413") == 1


def test_provider_sync_errors_are_counted(start_edge: EdgeLauncher) -> None:
    """EDGE.md section 2: /_metrics counts provider sync errors. Every failed
    attempt counts, and the count stays after the provider recovers (the
    consecutive-failures gauge goes back to 0)."""
    edge = start_edge(POLICIES)
    errors = "sluice_edge_provider_sync_errors_total"
    assert scrape(edge).get(errors, provider="local") == 0
    good = edge.policy_path.read_bytes()
    edge.policy_path.write_text("{not json")
    wait_until(lambda: scrape(edge).get(errors, provider="local") >= 2, edge)
    edge.policy_path.write_bytes(good)
    failures = "sluice_edge_provider_consecutive_failures"
    wait_until(lambda: scrape(edge).get(failures, provider="local") == 0, edge)
    assert scrape(edge).get(errors, provider="local") >= 2
