"""The compile cache: nothing parsed or compiled twice, damaged entries and
files rebuilt, entries of another version ignored, concurrent writers safe."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sluice.policy import (
    PolicySnapshot,
    Signal,
    compiler_process,
    databases,
    hyperscan_syntax,
    load_document,
    parse,
)
from sluice.policy import cache as cache_module
from sluice.policy.cache import CompileCache
from sluice.policy.store import FILE_NAME
from sluice.providers.file import PolicyFileError, parse_policy_bytes
from sluice.telemetry.otlp_json import json_view
from tests.policy.test_snapshot import bodies, logs, rec


def body_policy(index: int, **extra: Any) -> dict[str, Any]:
    return {
        "id": f"p{index:03d}",
        "name": "n",
        "log": {
            "match": [{"log_field": "body", "regex": f"event-{index}-[a-f0-9]+ failed"}],
            "keep": "none",
            **extra,
        },
    }


DOCUMENT = {
    "policies": [
        *(body_policy(i) for i in range(20)),
        {
            "id": "tag",
            "name": "t",
            "log": {
                "match": [
                    {"log_field": "severity_text", "exact": "WARN"},
                    {"log_attribute": "service", "starts_with": "pay", "case_insensitive": True},
                    {
                        "log_field": "body",
                        "regex": "caf\u00e9|\\pL+\u00df",
                        "case_insensitive": True,
                    },
                ],
                "keep": "all",
                "transform": {"redact": [{"log_field": "body", "regex": "\\d{4}"}]},
            },
        },
        {
            "id": "typed",
            "name": "t",
            "log": {"match": [{"log_attribute": "n", "gt": {"double_value": 1.5}}], "keep": "10%"},
        },
        {"id": "broken", "name": "b", "log": {"match": [{"log_field": "body", "regex": "(["}]}},
    ]
}
RECORDS = [
    "event-3-ab12 failed",
    "event-12-zz failed",
    "café 1234",
    "hello",
    "event-19-0 failed now",
]


def surviving(snapshot: PolicySnapshot) -> list[str | None]:
    doc = logs(*(rec(b, "WARN", service="PAYMENTS") for b in RECORDS))
    snapshot.evaluate(Signal.LOG, json_view(Signal.LOG), doc)
    return bodies(doc)


EXPECTED = surviving(PolicySnapshot.compile(load_document(DOCUMENT).policies))


class Counting:
    """Counts calls of module functions while delegating to them."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, module: Any, *names: str) -> None:
        self.calls = 0
        for name in names:
            monkeypatch.setattr(module, name, self._counted(getattr(module, name)))

    def _counted(self, real: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return real(*args, **kwargs)

        return counted


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Counting, Counting]]:
    yield (
        Counting(monkeypatch, parse, "parse_policy"),
        Counting(monkeypatch, databases, "build_layout", "build_small_many"),
    )


def load(directory: Path) -> PolicySnapshot:
    """What a process starting on `directory` does: parse, compile."""
    cache = CompileCache(directory)
    report = load_document(DOCUMENT, cache)
    return PolicySnapshot.compile(report.policies, cache=cache)


def test_a_restart_parses_and_compiles_nothing(
    tmp_path: Path, counts: tuple[Counting, Counting]
) -> None:
    parsed, built = counts
    first = load(tmp_path)
    assert surviving(first) == EXPECTED
    assert parsed.calls == len(DOCUMENT["policies"])
    assert built.calls >= 1
    parsed.calls = built.calls = 0
    second = load(tmp_path)
    assert (parsed.calls, built.calls) == (0, 0)
    assert surviving(second) == EXPECTED
    assert second.errors == first.errors
    assert second.errors["broken"][0].startswith("log: match[0]: invalid regex")


def test_in_memory_an_unchanged_policy_is_not_parsed_again(
    counts: tuple[Counting, Counting],
) -> None:
    parsed, _ = counts
    cache = CompileCache(None)
    held = load_document(DOCUMENT, cache).policies
    parsed.calls = 0
    changed = {"policies": [*DOCUMENT["policies"][:-1], body_policy(99)]}
    again = load_document(changed, cache).policies
    assert parsed.calls == 1
    assert again[:-1] == held[:-1]
    assert all(a is b for a, b in zip(again[:-1], held[:-1], strict=True))


def test_a_restart_on_the_same_file_reads_one_document_entry(
    tmp_path: Path, counts: tuple[Counting, Counting], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file's bytes find the whole parse at once; a damaged document
    entry falls back to the policies one by one, and is written again."""
    parsed, _ = counts
    raw = json.dumps(DOCUMENT).encode()
    first = parse_policy_bytes(raw, "p.json", CompileCache(tmp_path))
    parsed.calls = 0
    per_policy = Counting(monkeypatch, CompileCache, "parse_all")
    again = parse_policy_bytes(raw, "p.json", CompileCache(tmp_path))
    assert (parsed.calls, per_policy.calls) == (0, 0)
    assert again.policies == first.policies
    assert again.warnings == first.warnings
    with entries(tmp_path) as db:
        db.execute("UPDATE entries SET value=substr(value, 1, 60) WHERE kind='document'")
    assert parse_policy_bytes(raw, "p.json", CompileCache(tmp_path)).policies == first.policies
    assert (parsed.calls, per_policy.calls) == (0, 1)
    parse_policy_bytes(raw, "p.json", CompileCache(tmp_path))
    assert per_policy.calls == 1


def test_the_cache_tells_nan_from_null_and_big_integers_from_floats() -> None:
    cache = CompileCache(None)
    docs = [
        {"policies": [{"id": "x", "name": "n", "log": {"match": [m], "keep": "none"}}]}
        for m in (
            {"log_attribute": "n", "gt": {"double_value": float("nan")}},
            {"log_attribute": "n", "gt": {"double_value": None}},
            {"log_attribute": "n", "equals": {"int_value": 2**63 - 1}},
            {"log_attribute": "n", "equals": {"int_value": float(2**63 - 1)}},
        )
    ]
    cached = [load_document(d, cache).policies[0] for d in docs]
    fresh = [load_document(d).policies[0] for d in docs]
    assert [p.errors for p in cached] == [p.errors for p in fresh]
    assert [p.matchers for p in cached] == [p.matchers for p in fresh]


def entries(directory: Path) -> sqlite3.Connection:
    return sqlite3.connect(directory / FILE_NAME, isolation_level=None)


def test_a_damaged_entry_is_ignored_and_rebuilt(
    tmp_path: Path, counts: tuple[Counting, Counting]
) -> None:
    parsed, built = counts
    load(tmp_path)
    with entries(tmp_path) as db:
        (key, value) = db.execute("SELECT key, value FROM entries WHERE kind='policy'").fetchone()
        db.execute(
            "UPDATE entries SET value=? WHERE kind='policy' AND key=?",
            (value[:-3] + b"\x00\xff\x00", key),
        )
        db.execute("UPDATE entries SET value=substr(value, 1, 40) WHERE kind='database'")
    parsed.calls = built.calls = 0
    assert surviving(load(tmp_path)) == EXPECTED
    assert parsed.calls == 1
    assert built.calls >= 1
    parsed.calls = built.calls = 0
    assert surviving(load(tmp_path)) == EXPECTED
    assert (parsed.calls, built.calls) == (0, 0)


def test_an_unreadable_file_is_set_aside_and_started_afresh(
    tmp_path: Path, counts: tuple[Counting, Counting]
) -> None:
    parsed, _ = counts
    (tmp_path / FILE_NAME).write_bytes(b"this is not a database" * 100)
    assert surviving(load(tmp_path)) == EXPECTED
    assert (tmp_path / f"{FILE_NAME}.unreadable").exists()
    parsed.calls = 0
    assert surviving(load(tmp_path)) == EXPECTED
    assert parsed.calls == 0


def test_an_unwritable_directory_only_costs_the_cache(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("x")
    assert surviving(load(blocked / "cache")) == EXPECTED


def test_entries_of_another_version_are_not_used(
    tmp_path: Path, counts: tuple[Counting, Counting], monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed, built = counts
    load(tmp_path)
    monkeypatch.setattr(cache_module, "FORMAT", cache_module.FORMAT + 1)
    parsed.calls = built.calls = 0
    assert surviving(load(tmp_path)) == EXPECTED
    assert parsed.calls == len(DOCUMENT["policies"])
    assert built.calls >= 1
    with entries(tmp_path) as db:
        (fingerprint,) = db.execute("SELECT value FROM meta WHERE name='fingerprint'").fetchone()
        (count,) = db.execute("SELECT count(*) FROM entries WHERE kind='policy'").fetchone()
    assert fingerprint == cache_module.fingerprint()
    assert count == len(DOCUMENT["policies"])  # the old version's entries are gone


def test_the_fingerprint_covers_every_module_of_a_fingerprinted_package() -> None:
    """A change to any module of the parser or the translator (packages) is a
    new version: their entries are never read by the other."""
    for package in (parse, hyperscan_syntax):
        covered = cache_module._source_bytes(package)
        modules = sorted(Path(package.__file__ or "").parent.glob("*.py"))
        assert len(modules) > 1
        for module in modules:
            assert module.read_bytes() in covered, module


WRITER = """
import json, sys
from pathlib import Path
from sluice.policy import PolicySnapshot, load_document
from sluice.policy.cache import CompileCache
directory, start = Path(sys.argv[1]), int(sys.argv[2])
for round in range(3):
    doc = {"policies": [
        {"id": f"w{i}", "name": "n", "log": {"match": [{"log_field": "body",
         "regex": f"writer-{i}-{round % 2}-[0-9]+"}], "keep": "none"}}
        for i in range(start, start + 150)]}
    cache = CompileCache(directory)
    report = load_document(doc, cache)
    PolicySnapshot.compile(report.policies, cache=cache)
print("ok")
"""


def test_concurrent_writers_do_not_clash(tmp_path: Path) -> None:
    """Workers (separate processes) filling one cache at once, with
    overlapping policies: every one succeeds, and every entry reads back."""
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path), str(start)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for start in (0, 50, 100, 150)
    ]
    for writer in writers:
        out, err = writer.communicate(timeout=300)
        assert writer.returncode == 0, err
        assert out.strip() == "ok"
        assert "cannot" not in err and "unreadable" not in err and "damaged" not in err
    with entries(tmp_path) as db:
        (count,) = db.execute("SELECT count(*) FROM entries WHERE kind='policy'").fetchone()
    assert count == 300 * 2  # 300 distinct ids, each with two regexes
    doc = {
        "policies": [
            {
                "id": f"w{i}",
                "name": "n",
                "log": {
                    "match": [{"log_field": "body", "regex": f"writer-{i}-1-[0-9]+"}],
                    "keep": "none",
                },
            }
            for i in range(300)
        ]
    }
    cache = CompileCache(tmp_path)
    report = load_document(doc, cache)
    assert report.policies == load_document(doc).policies
    snapshot = PolicySnapshot.compile(report.policies, cache=cache)
    batch = logs(rec("writer-7-1-42"), rec("writer-7-0-42"), rec("writer-299-1-1"))
    snapshot.evaluate(Signal.LOG, json_view(Signal.LOG), batch)
    assert bodies(batch) == ["writer-7-0-42"]


def test_sluice_eval_uses_the_cache(tmp_path: Path) -> None:
    policies = tmp_path / "p.json"
    policies.write_text(json.dumps(DOCUMENT))
    source = tmp_path / "in.json"
    source.write_text(json.dumps(logs(*(rec(b) for b in RECORDS))))
    env = {**os.environ, "SLUICE_CACHE_DIR": str(tmp_path / "cache")}
    command = [
        sys.executable,
        "-m",
        "sluice.cli",
        "--log-level",
        "debug",
        "eval",
        "--policies",
        str(policies),
        "--input",
        str(source),
    ]
    outputs = []
    for run in range(2):
        out = tmp_path / f"out{run}.json"
        done = subprocess.run(
            [*command, "--output", str(out)], capture_output=True, text=True, env=env, timeout=120
        )
        assert done.returncode == 0, done.stderr
        outputs.append((json.loads(out.read_bytes()), done.stderr))
    assert outputs[0][0] == outputs[1][0]
    assert f"0 from cache, {len(DOCUMENT['policies'])} parsed" in outputs[0][1]
    assert f"{len(DOCUMENT['policies'])} policies from the cached document" in outputs[1][1]
    assert "compiled 20 patterns" in outputs[0][1]
    assert "compiled" not in outputs[1][1]


def test_a_large_first_document_is_parsed_in_a_child_process(
    tmp_path: Path, counts: tuple[Counting, Counting]
) -> None:
    """What the child parses is what a parse here gives; the parse's errors
    come back as the same exceptions."""
    parsed, _ = counts
    document = {"policies": [body_policy(i) for i in range(2500)] + DOCUMENT["policies"]}
    raw = json.dumps(document).encode()
    assert len(raw) > cache_module.ISOLATED_PARSE_BYTES
    cache = CompileCache(tmp_path, budget=1 << 30)
    report = parse_policy_bytes(raw, "p.json", cache)
    assert parsed.calls == 0  # the child parsed them (and counted in its own memory)
    plain = parse_policy_bytes(raw, "p.json")
    assert report.policies == plain.policies
    assert report.warnings == plain.warnings
    assert surviving(PolicySnapshot.compile(report.policies, cache=cache)) == EXPECTED
    broken = b'{"policies": [' + b" " * (400 << 10)
    with pytest.raises(PolicyFileError, match=r"p\.json: not valid JSON"):
        parse_policy_bytes(broken, "p.json", CompileCache(tmp_path, budget=1 << 30))


def attribute_policies(count: int, first: int = 0) -> dict[str, Any]:
    """`count` policies over six attributes: six small fields."""
    return {
        "policies": [
            {
                "id": f"a{k}",
                "name": "n",
                "log": {
                    "match": [{"log_attribute": f"attr{k % 6}", "regex": f"^v{k}-[0-9]+$"}],
                    "keep": "none",
                },
            }
            for k in range(first, first + count)
        ]
    }


def kept_values(snapshot: PolicySnapshot, values: list[tuple[int, str]]) -> list[str]:
    doc = logs(*(rec(value, **{f"attr{k % 6}": value}) for k, value in values))
    snapshot.evaluate(Signal.LOG, json_view(Signal.LOG), doc)
    return [body for body in bodies(doc) if body is not None]


def test_the_small_builds_of_a_compile_go_to_one_child() -> None:
    """A set of many small fields (1,000 realistic policies have dozens):
    with a memory budget one child compiles all of their databases, not one
    child per field nor this process (Hyperscan's compiler would stay in its
    memory); an update's extra databases too. A trivial compile stays here."""
    values = [(1, "v1-22"), (2, "v2-x"), (7, "v7-0"), (70, "v70-5"), (3, "v1-22")]
    cache = CompileCache(None, budget=64 << 20)
    before = compiler_process.forked
    snapshot = PolicySnapshot.compile(
        load_document(attribute_policies(60), cache).policies, cache=cache
    )
    assert compiler_process.forked == before + 1
    assert kept_values(snapshot, values) == ["v2-x", "v70-5", "v1-22"]

    update = load_document(attribute_policies(80), cache).policies
    updated = PolicySnapshot.compile(update, cache=cache, previous=snapshot)
    assert compiler_process.forked == before + 2
    assert len(updated.incomplete_fields()) == 6  # each field got an extra database
    assert kept_values(updated, values) == ["v2-x", "v1-22"]

    trivial = CompileCache(None, budget=64 << 20)
    small = load_document(attribute_policies(databases.BATCH_MIN_PATTERNS - 1), trivial)
    PolicySnapshot.compile(small.policies, cache=trivial)
    assert compiler_process.forked == before + 2
