"""The registry: merge rules, whole-set replacement, and atomic swaps while
many threads evaluate."""

from __future__ import annotations

import logging
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from sluice.policy import Policy, load_document
from sluice.providers.registry import PolicyRegistry
from tests.providers.helpers import bodies, drop, evaluate, logs, surviving

FILE, REMOTE = 0, 1


def policies(*docs: dict[str, Any]) -> list[Policy]:
    report = load_document({"policies": list(docs)})
    assert all(p.valid for p in report.policies)
    return report.policies


def active(registry: PolicyRegistry) -> dict[str, str]:
    """Active policy id -> the body it drops."""
    return {p.id: str(p.matchers[0].value) for p in registry.snapshot.policies}


def test_a_remote_provider_wins_over_a_file_whatever_the_order() -> None:
    for remote_first in (False, True):
        registry = PolicyRegistry()
        updates = [
            ("baseline", FILE, 5, policies(drop("shared", "from-file"), drop("only-file", "f"))),
            ("control-plane", REMOTE, 0, policies(drop("shared", "from-remote"))),
        ]
        for provider_id, priority, order, found in reversed(updates) if remote_first else updates:
            registry.update(provider_id, priority, order, found)
        assert active(registry) == {"shared": "from-remote", "only-file": "f"}
        assert [p.id for p in registry.owned_by("control-plane")] == ["shared"]
        assert [p.id for p in registry.owned_by("baseline")] == ["only-file"]
        assert surviving(registry.snapshot, "from-file", "from-remote", "f") == ["from-file"]


def test_same_priority_the_later_provider_in_order_wins() -> None:
    registry = PolicyRegistry()
    registry.update("second", FILE, 1, policies(drop("shared", "second")))
    registry.update("first", FILE, 0, policies(drop("shared", "first"), drop("own", "o")))
    assert active(registry) == {"shared": "second", "own": "o"}
    registry.update("first", FILE, 0, policies(drop("shared", "first-again")))
    assert active(registry) == {"shared": "second"}

    remote = PolicyRegistry()
    remote.update("grpc-a", REMOTE, 3, policies(drop("p", "later")))
    remote.update("http-b", REMOTE, 2, policies(drop("p", "earlier")))
    assert active(remote) == {"p": "later"}
    assert remote.owned_by("http-b") == []


def test_an_update_replaces_the_whole_set() -> None:
    registry = PolicyRegistry()
    registry.update("remote", REMOTE, 0, policies(drop("a", "a"), drop("b", "b")))
    assert surviving(registry.snapshot, "a", "b", "c") == ["c"]
    registry.update("remote", REMOTE, 0, policies(drop("b", "b")))
    assert active(registry) == {"b": "b"}
    assert surviving(registry.snapshot, "a", "b", "c") == ["a", "c"]
    registry.update("remote", REMOTE, 0, [])
    assert active(registry) == {}
    assert surviving(registry.snapshot, "a", "b", "c") == ["a", "b", "c"]
    assert registry.owned_by("remote") == []
    assert registry.owned_by("never-seen") == []
    assert registry.generation == 3


def test_a_withdrawn_override_falls_back_to_the_file() -> None:
    registry = PolicyRegistry()
    registry.update("baseline", FILE, 0, policies(drop("p", "file")))
    registry.update("control-plane", REMOTE, 1, policies(drop("p", "remote")))
    assert active(registry) == {"p": "remote"}
    assert registry.owned_by("baseline") == []
    registry.update("control-plane", REMOTE, 1, [])
    assert active(registry) == {"p": "file"}
    assert [p.id for p in registry.owned_by("baseline")] == ["p"]


def test_an_update_leaving_a_provider_no_active_policy_is_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Such an update is most likely a mistake (every policy disabled or
    broken); it used to pass as a routine "0 active" info line."""
    registry = PolicyRegistry()
    caplog.set_level(logging.INFO, "sluice.providers.registry")

    def warnings() -> list[str]:
        found = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        caplog.clear()
        return found

    registry.update("remote", REMOTE, 0, [])
    assert warnings() == []  # nothing before, nothing now: not news
    registry.update("remote", REMOTE, 0, policies(drop("a", "a"), drop("b", "b")))
    assert warnings() == []
    disabled = load_document({"policies": [{**drop("a", "a"), "enabled": False}]}).policies
    broken = load_document({"policies": [{"id": "b", "log": {"match": []}}]}).policies
    registry.update("remote", REMOTE, 0, disabled + broken)
    assert warnings() == [
        "remote: no active policies left (had 2; delivered 2: 1 disabled, 1 with errors)"
    ]
    registry.update("remote", REMOTE, 0, disabled)
    assert warnings() == [
        "remote: no active policies left (had 0; delivered 1: 1 disabled, 0 with errors)"
    ]
    registry.update("remote", REMOTE, 0, policies(drop("a", "a")))
    registry.update("remote", REMOTE, 0, [])
    assert warnings() == [
        "remote: no active policies left (had 1; delivered 0: 0 disabled, 0 with errors)"
    ]


def test_counters_outlive_a_swap() -> None:
    registry = PolicyRegistry()
    registry.update("f", FILE, 0, policies(drop("p", "x")))
    evaluate(registry.snapshot, logs("x", "x"))
    registry.update("f", FILE, 0, policies(drop("p", "x"), drop("q", "y")))
    evaluate(registry.snapshot, logs("x", "y"))
    totals = registry.runtime.stats.totals()
    assert (totals["p"].hits, totals["q"].hits) == (3, 1)
    pending = registry.runtime.stats.pending()
    registry.runtime.stats.commit(pending)
    assert registry.runtime.stats.pending() == {}
    evaluate(registry.snapshot, logs("y"))
    assert {k: v.hits for k, v in registry.runtime.stats.pending().items()} == {"q": 1}
    assert registry.runtime.stats.totals()["q"].hits == 2


# -- swaps while many threads evaluate ---------------------------------------------

SET_A = policies(
    drop("drop-a", "a"), drop("drop-a-regex", "^a{2,}$", regex=True), drop("common", "zzz")
)
SET_B = policies(
    drop("drop-b", "b"), drop("drop-b-regex", "^b{2,}$", regex=True), drop("common", "zzz")
)
SENT = ("a", "b", "aa", "bbb", "c", "zzz")
RESOURCES, SCOPES = 3, 2
A_DROPPED = ["b", "bbb", "c"] * RESOURCES * SCOPES
B_DROPPED = ["a", "aa", "c"] * RESOURCES * SCOPES


@pytest.fixture
def quick_switches() -> Iterator[None]:
    """Threads switch every 0.1 ms instead of 5. The evaluators scan in C
    without releasing the GIL, so a swapper that releases it (to compile,
    to log) waits a whole switch interval behind each of the eight to get it
    back: 300 swaps took about a minute at the default interval."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    try:
        yield
    finally:
        sys.setswitchinterval(interval)


@pytest.mark.usefixtures("quick_switches")
def test_evaluation_sees_exactly_one_set_while_snapshots_are_swapped() -> None:
    registry = PolicyRegistry()
    registry.update("remote", REMOTE, 0, SET_A)
    swaps = 300
    outcomes: Counter[str] = Counter()
    dropped_total = [0]
    lock = threading.Lock()
    done = threading.Event()
    start = threading.Barrier(9)
    failures: list[BaseException] = []

    def evaluator() -> None:
        try:
            start.wait(timeout=10)
            while not done.is_set():
                doc = logs(*SENT, resources=RESOURCES, scopes=SCOPES)
                outcome = evaluate(registry.snapshot, doc)
                remaining = bodies(doc)
                label = (
                    "A"
                    if remaining == A_DROPPED
                    else "B"
                    if remaining == B_DROPPED
                    else f"mixed: {remaining}"
                )
                with lock:
                    outcomes[label] += 1
                    dropped_total[0] += outcome.dropped
        except BaseException as problem:
            failures.append(problem)

    def swapper() -> None:
        try:
            start.wait(timeout=10)
            for i in range(swaps):
                registry.update("remote", REMOTE, 0, SET_B if i % 2 == 0 else SET_A)
        except BaseException as problem:
            failures.append(problem)
        finally:
            done.set()

    threads = [threading.Thread(target=evaluator, daemon=True) for _ in range(8)]
    threads.append(threading.Thread(target=swapper, daemon=True))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(t.is_alive() for t in threads)
    assert failures == []
    assert set(outcomes) <= {"A", "B"}, [k for k in outcomes if k.startswith("mixed")][:3]
    assert sum(outcomes.values()) > 0
    assert registry.generation == swaps + 1
    assert active(registry) == {"drop-a": "a", "drop-a-regex": "^a{2,}$", "common": "zzz"}

    batches = sum(outcomes.values())
    assert dropped_total[0] == batches * 3 * RESOURCES * SCOPES
    hits = {pid: c.hits for pid, c in registry.runtime.stats.totals().items()}
    assert hits["common"] == batches * RESOURCES * SCOPES
    assert sum(hits.values()) == dropped_total[0]
