"""Policy reloads under concurrent traffic: every batch is evaluated against
exactly one snapshot (EDGE.md section 4: "the evaluated snapshot is swapped
atomically, requests in flight keep the snapshot they started with")."""

from __future__ import annotations

import http.client
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from tests.edge.helpers import EdgeLauncher, EdgeProcess, Upstream, otlp_logs_json

THREADS, PER_THREAD = 4, 50


def version(tag: str, drops: str) -> dict[str, Any]:
    """Drop body `drops`; stamp every kept record with attribute version=`tag`."""
    return {
        "policies": [
            {
                "id": "drop",
                "name": f"drop {drops}",
                "log": {"match": [{"log_field": "body", "exact": drops}], "keep": "none"},
            },
            {
                "id": "tag",
                "name": f"tag {tag}",
                "log": {
                    "match": [{"log_field": "body", "regex": "."}],
                    "transform": {
                        "add": [{"log_attribute": "version", "value": tag, "upsert": True}]
                    },
                },
            },
        ]
    }


V1, V2 = version("v1", "a"), version("v2", "b")
COPIES = 20
EXPECTED = {"v1": ["b", "c"] * COPIES, "v2": ["a", "c"] * COPIES}


def outcome(body: bytes) -> str:
    """Which version a forwarded batch is consistent with (or a description of the mix)."""
    doc = json.loads(body)
    records = [r for rl in doc["resourceLogs"] for sl in rl["scopeLogs"] for r in sl["logRecords"]]
    bodies = [r["body"]["stringValue"] for r in records]
    tags = {
        a["value"]["stringValue"]
        for r in records
        for a in r.get("attributes", [])
        if a["key"] == "version"
    }
    tags_per_record = [
        [a["value"]["stringValue"] for a in r.get("attributes", []) if a["key"] == "version"]
        for r in records
    ]
    if len(tags) == 1 and all(len(t) == 1 for t in tags_per_record):
        (tag,) = tags
        if EXPECTED[tag] == bodies:
            return tag
    return f"mixed: bodies={bodies} tags={tags_per_record}"


def rewrite(path: Path, doc: dict[str, Any], atomic: bool) -> None:
    text = json.dumps(doc, indent=1)
    if atomic:
        temporary = path.with_name(path.name + ".tmp")
        temporary.write_text(text)
        os.replace(temporary, path)
    else:
        path.write_text(text)  # truncate + write: a poll may see a partial file


def send_concurrently(edge: EdgeProcess, payload: bytes, pause: float) -> list[str]:
    """POST `payload` PER_THREAD times from each of THREADS threads (a
    fresh connection now and then, `pause` seconds between requests); the
    failures (a status other than 200, an exception)."""
    failures: list[str] = []

    def client(n: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", edge.port, timeout=30)
        try:
            for i in range(PER_THREAD):
                if i % 10 == 9:
                    conn.close()
                    conn = http.client.HTTPConnection("127.0.0.1", edge.port, timeout=30)
                conn.request(
                    "POST", f"/v1/logs?t={n}&i={i}", payload, {"Content-Type": "application/json"}
                )
                response = conn.getresponse()
                response.read()
                if response.status != 200:
                    failures.append(f"thread {n} request {i}: {response.status}")
                time.sleep(pause)
        except Exception as problem:
            failures.append(f"thread {n}: {problem!r}")
        finally:
            conn.close()

    clients = [threading.Thread(target=client, args=(n,)) for n in range(THREADS)]
    for thread in clients:
        thread.start()
    for thread in clients:
        thread.join(120)
    return failures


def test_reload_under_concurrent_traffic(start_edge: EdgeLauncher, upstream: Upstream) -> None:
    edge = start_edge(
        None,
        policy_providers=[
            {"type": "file", "id": "local", "path": "policies.json", "poll_interval_secs": 0.02}
        ],
        loaded=False,
    )
    rewrite(edge.policy_path, V1, atomic=True)
    deadline = time.monotonic() + 10
    while not edge.health()["providers"][0]["loaded"]:
        assert time.monotonic() < deadline, edge.stderr()
        time.sleep(0.02)
    payload = json.dumps(otlp_logs_json(["a", "b", "c"] * COPIES)).encode()
    stop = threading.Event()

    def writer() -> None:
        flip = 0
        while not stop.is_set():
            flip += 1
            rewrite(edge.policy_path, V2 if flip % 2 else V1, atomic=flip % 3 == 0)
            time.sleep(0.015)

    writing = threading.Thread(target=writer)
    writing.start()
    failures = send_concurrently(edge, payload, pause=0.01)  # spread over many reloads
    stop.set()
    writing.join(10)
    assert failures == []
    received = upstream.received("/v1/logs")
    assert len(received) == THREADS * PER_THREAD
    outcomes = [outcome(r.body) for r in received]
    mixed = [o for o in outcomes if o not in EXPECTED]
    assert mixed == []
    assert set(outcomes) == {"v1", "v2"}, "both versions should have been seen while flipping"
    swaps = edge.stderr().count("policies updated by local")
    assert swaps >= 10, f"only {swaps} reloads happened during the traffic"

    # Settle on v2: new requests follow it.
    rewrite(edge.policy_path, V2, atomic=True)
    deadline = time.monotonic() + 10
    while True:
        answer = edge.post("/v1/logs?settle", payload, "application/json")
        assert answer.status == 200
        if outcome(upstream.received("/v1/logs?settle")[-1].body) == "v2":
            break
        assert time.monotonic() < deadline, "v2 never took effect"
        time.sleep(0.02)
    for i in range(10):
        assert edge.post(f"/v1/logs?after={i}", payload, "application/json").status == 200
        assert outcome(upstream.received(f"/v1/logs?after={i}")[-1].body) == "v2"
    assert edge.health()["policies"]["logs"] == 2


def large_version(tag: str, drops: str, turn: int) -> dict[str, Any]:
    """:func:`version` plus LARGE body regexes no record matches, new in each
    `turn`: every update compiles the body's database anew, in the compiler
    child (more than databases.SMALL_BUILD patterns)."""
    doc = version(tag, drops)
    doc["policies"] += [
        {
            "id": f"r{i}",
            "name": "r",
            "log": {
                "match": [{"log_field": "body", "regex": f"event-{i}-{turn}-[a-f0-9]+ failed"}],
                "keep": "none",
            },
        }
        for i in range(LARGE)
    ]
    return doc


LARGE = 150


def test_updates_compiled_in_the_child_process_swap_atomically_under_traffic(
    start_edge: EdgeLauncher, upstream: Upstream, tmp_path: Path
) -> None:
    """Edge keeps serving while each update's databases compile in its
    compiler child (Edge's default memory budget, an empty compile cache);
    every batch sees one whole set, and the sets the child compiled decide."""
    edge = start_edge(
        large_version("v1", "a", 0),
        env={"SLUICE_CACHE_DIR": str(tmp_path / "cache")},
        policy_providers=[
            {"type": "file", "id": "local", "path": "policies.json", "poll_interval_secs": 0.05}
        ],
    )
    payload = json.dumps(otlp_logs_json(["a", "b", "c"] * COPIES)).encode()
    stop = threading.Event()

    def writer() -> None:
        turn = 0
        while not stop.is_set():
            turn += 1
            swaps = edge.stderr().count("policies updated by local")
            doc = large_version("v2", "b", turn) if turn % 2 else large_version("v1", "a", turn)
            rewrite(edge.policy_path, doc, atomic=True)
            deadline = time.monotonic() + 60
            while edge.stderr().count("policies updated by local") == swaps:
                if stop.is_set() or time.monotonic() > deadline:
                    return
                time.sleep(0.02)

    writing = threading.Thread(target=writer)
    writing.start()
    failures = send_concurrently(edge, payload, pause=0.05)
    stop.set()
    writing.join(70)
    assert failures == []
    outcomes = [outcome(r.body) for r in upstream.received("/v1/logs")]
    assert len(outcomes) == THREADS * PER_THREAD
    assert [o for o in outcomes if o not in EXPECTED] == []
    assert set(outcomes) == {"v1", "v2"}
    log = edge.stderr()
    children = log.count("compiler child peak")
    assert children >= 3, log[-3000:]
    assert log.count("policies updated by local") >= 3
    assert edge.health()["policies"]["logs"] == LARGE + 2
