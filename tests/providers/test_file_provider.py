"""The file provider against real files: initial load, reloads, bad reloads,
a missing file, and a file rewritten while other threads evaluate."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from sluice.providers.config import ProviderConfig
from sluice.providers.file import FileProvider, PolicyFileError, read_policy_file
from sluice.providers.registry import PolicyRegistry
from tests.providers.helpers import (
    bodies,
    drop,
    evaluate,
    logs,
    surviving,
    wait_until,
    write_policies,
)


def file_provider(path: Path, interval: float = 0.05) -> tuple[FileProvider, PolicyRegistry]:
    registry = PolicyRegistry()
    config = ProviderConfig(type="file", id="local", path=str(path), poll_interval_secs=interval)
    return FileProvider(config, registry), registry


@pytest.fixture
def running() -> Iterator[list[FileProvider]]:
    """Providers a test started; stopped afterwards even when the test fails."""
    started: list[FileProvider] = []
    yield started
    for provider in started:
        provider.stop()


def test_initial_load(tmp_path: Path) -> None:
    path = tmp_path / "policies.json"
    write_policies(path, drop("drop-a", "a"), drop("drop-b", "b"))
    provider, registry = file_provider(path)
    assert surviving(registry.snapshot, "a", "b", "c") == ["a", "b", "c"]
    assert provider.poll() is True
    assert provider.loaded.is_set()
    assert provider.last_error == ""
    assert registry.generation == 1
    assert sorted(p.id for p in registry.snapshot.policies) == ["drop-a", "drop-b"]
    assert sorted(p.id for p in registry.owned_by("local")) == ["drop-a", "drop-b"]
    assert surviving(registry.snapshot, "a", "b", "c") == ["c"]


def test_an_unchanged_file_is_not_recompiled(tmp_path: Path) -> None:
    path = tmp_path / "policies.json"
    write_policies(path, drop("drop-a", "a"))
    provider, registry = file_provider(path)
    assert provider.poll()
    snapshot = registry.snapshot
    write_policies(path, drop("drop-a", "a"))  # same bytes, new inode and mtime
    for _ in range(3):
        assert provider.poll()
    assert registry.generation == 1
    assert registry.snapshot is snapshot


def test_a_rewrite_is_picked_up_by_the_polling_thread(
    tmp_path: Path, running: list[FileProvider]
) -> None:
    path = tmp_path / "policies.json"
    write_policies(path, drop("drop-a", "a"))
    provider, registry = file_provider(path)
    running.append(provider)
    provider.start()
    wait_until(provider.loaded.is_set, "the initial load")
    assert surviving(registry.snapshot, "a", "b") == ["b"]
    generation = registry.generation

    write_policies(path, drop("drop-b", "b"))
    wait_until(lambda: registry.generation > generation, "the rewrite to be applied")
    assert [p.id for p in registry.snapshot.policies] == ["drop-b"]
    assert surviving(registry.snapshot, "a", "b") == ["a"]
    assert provider.last_error == ""


@pytest.mark.parametrize(
    ("content", "mentions"),
    [
        ('{"policies": [', "not valid JSON"),
        ('{"rules": []}', '"policies" array'),
        (b"\xff\xfe{}", "not UTF-8"),
    ],
)
def test_a_bad_rewrite_keeps_the_previous_set(
    tmp_path: Path, running: list[FileProvider], content: str | bytes, mentions: str
) -> None:
    path = tmp_path / "policies.json"
    write_policies(path, drop("drop-a", "a"))
    provider, registry = file_provider(path)
    running.append(provider)
    provider.start()
    wait_until(provider.loaded.is_set, "the initial load")
    snapshot = registry.snapshot

    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    wait_until(lambda: provider.last_error != "", "the bad rewrite to be noticed")
    assert str(path) in provider.last_error
    assert mentions in provider.last_error
    assert "previous" not in provider.last_error  # the consequence: /_health says it, once
    assert registry.snapshot is snapshot
    assert registry.generation == 1
    assert surviving(registry.snapshot, "a", "b") == ["b"]

    write_policies(path, drop("drop-b", "b"))
    wait_until(lambda: registry.generation == 2, "the repaired file to be applied")
    assert surviving(registry.snapshot, "a", "b") == ["a"]
    wait_until(lambda: provider.last_error == "", "the error to clear")


def test_restoring_the_applied_content_clears_the_error(tmp_path: Path) -> None:
    """The restored file has the hash of the set in use: nothing to reload,
    but the error it reported is over (it used to stay in last_error)."""
    path = tmp_path / "policies.json"
    write_policies(path, drop("drop-a", "a"))
    good = path.read_bytes()
    provider, registry = file_provider(path)
    assert provider.poll()
    path.write_text('{"policies": [', encoding="utf-8")
    assert provider.poll() is False
    assert "not valid JSON" in provider.last_error

    path.write_bytes(good)
    ok = provider.poll()
    assert ok is True
    assert provider.last_error == ""
    assert provider.next_delay(ok) == provider.interval
    assert provider.failures == 0
    assert registry.generation == 1  # same content as applied: not recompiled
    assert surviving(registry.snapshot, "a", "b") == ["b"]


def test_a_missing_file_is_an_error_until_it_appears(
    tmp_path: Path, running: list[FileProvider]
) -> None:
    path = tmp_path / "later.json"
    provider, registry = file_provider(path)
    assert provider.poll() is False
    assert str(path) in provider.last_error
    assert "cannot read" in provider.last_error
    assert not provider.loaded.is_set()
    assert registry.generation == 0

    running.append(provider)
    provider.start()
    wait_until(lambda: provider.failures >= 2, "the polling thread to retry")
    assert registry.generation == 0
    write_policies(path, drop("drop-a", "a"))
    wait_until(provider.loaded.is_set, "the file to be loaded once it exists")
    assert provider.last_error == ""
    assert surviving(registry.snapshot, "a", "b") == ["b"]


def test_a_file_deleted_after_loading_keeps_the_set(tmp_path: Path) -> None:
    path = tmp_path / "policies.json"
    write_policies(path, drop("drop-a", "a"))
    provider, registry = file_provider(path)
    assert provider.poll()
    path.unlink()
    assert provider.poll() is False
    assert str(path) in provider.last_error
    assert surviving(registry.snapshot, "a", "b") == ["b"]


def test_read_policy_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text("[1, 2", encoding="utf-8")
    with pytest.raises(PolicyFileError, match=r"broken\.json: not valid JSON"):
        read_policy_file(path)
    with pytest.raises(PolicyFileError, match=r"absent\.json: cannot read"):
        read_policy_file(tmp_path / "absent.json")
    write_policies(path, drop("drop-a", "a"), {"id": "bad", "name": "n", "log": {"keep": "?"}})
    report = read_policy_file(path)
    assert [p.id for p in report.policies] == ["drop-a", "bad"]
    assert report.policies[0].errors == ()
    assert report.policies[1].errors != ()


# -- a file rewritten while batches are evaluated ---------------------------------

SET_A = (drop("drop-a", "a"), drop("drop-a-regex", "^a+$", regex=True))
SET_B = (drop("drop-b", "b"), drop("drop-b-regex", "^b+$", regex=True))
SENT = ("a", "b", "aaa", "bbb", "c")
A_DROPPED = ["b", "bbb", "c"] * 4
B_DROPPED = ["a", "aaa", "c"] * 4


def classify(remaining: list[str]) -> str:
    if remaining == A_DROPPED:
        return "A"
    if remaining == B_DROPPED:
        return "B"
    return f"mixed: {remaining}"


def test_every_batch_sees_one_version_while_the_file_is_rewritten(
    tmp_path: Path, running: list[FileProvider]
) -> None:
    path = tmp_path / "policies.json"
    write_policies(path, *SET_A)
    provider, registry = file_provider(path, interval=0.01)
    running.append(provider)
    provider.start()
    wait_until(provider.loaded.is_set, "the initial load")

    outcomes: Counter[str] = Counter()
    lock = threading.Lock()
    done = threading.Event()
    failures: list[BaseException] = []

    def evaluator() -> None:
        try:
            while not done.is_set():
                doc = logs(*SENT, resources=2, scopes=2)
                evaluate(registry.snapshot, doc)
                result = classify(bodies(doc))
                with lock:
                    outcomes[result] += 1
        except BaseException as problem:  # reported by the main thread
            failures.append(problem)

    threads = [threading.Thread(target=evaluator, daemon=True) for _ in range(3)]
    for thread in threads:
        thread.start()
    try:
        for flip in range(20):
            version = "B" if flip % 2 == 0 else "A"
            generation = registry.generation
            write_policies(path, *(SET_B if version == "B" else SET_A))
            wait_until(lambda g=generation: registry.generation > g, f"flip {flip} applied")
            with lock:
                seen = outcomes[version]
            wait_until(
                lambda v=version, s=seen: outcomes[v] > s or bool(failures),
                f"a batch decided by version {version}",
            )
    finally:
        done.set()
        for thread in threads:
            thread.join(timeout=10)
    assert failures == []
    assert provider.last_error == ""
    assert set(outcomes) == {"A", "B"}, outcomes
    assert registry.generation >= 21
