"""The console script: eval, check and demo, run as real processes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.conformance.harness import sluice_command


def sluice(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*sluice_command(), *args], capture_output=True, text=True, timeout=60, cwd=cwd
    )


def write(path: Path, value: Any) -> Path:
    path.write_text(value if isinstance(value, str) else json.dumps(value))
    return path


GOOD = {
    "id": "drop-debug",
    "name": "d",
    "log": {"match": [{"log_field": "severity_text", "exact": "DEBUG"}], "keep": "none"},
}
BAD = {
    "id": "bad-regex",
    "name": "b",
    "log": {"match": [{"log_field": "body", "regex": "(["}], "keep": "none"},
}


def test_check_reports_every_error_with_its_policy_id(tmp_path: Path) -> None:
    policies = write(tmp_path / "p.json", {"policies": [GOOD, BAD]})
    proc = sluice("check", str(policies))
    assert proc.returncode == 1
    assert f'{policies}: bad-regex: log: match[0]: invalid regex "(["' in proc.stdout
    assert "1 valid, 1 error(s)" in proc.stdout


def test_check_passes_a_clean_file(tmp_path: Path) -> None:
    proc = sluice("check", str(write(tmp_path / "p.json", {"policies": [GOOD]})))
    assert proc.returncode == 0, proc.stdout
    assert "1 valid, 0 error(s)" in proc.stdout


def test_eval_skips_a_bad_policy_and_applies_the_rest(tmp_path: Path) -> None:
    policies = write(tmp_path / "p.json", {"policies": [BAD, GOOD]})
    doc = {
        "resourceLogs": [
            {
                "scopeLogs": [
                    {
                        "logRecords": [
                            {"severityText": "DEBUG", "body": {"stringValue": "x"}},
                            {"severityText": "INFO", "body": {"stringValue": "(["}},
                        ]
                    }
                ]
            }
        ]
    }
    source = write(tmp_path / "in.json", doc)
    out, stats = tmp_path / "out.json", tmp_path / "stats.json"
    proc = sluice(
        "eval",
        "--policies",
        str(policies),
        "--input",
        str(source),
        "--output",
        str(out),
        "--stats",
        str(stats),
        "--signal",
        "log",
    )
    assert proc.returncode == 0, proc.stderr
    assert "bad-regex" in proc.stderr and "skipped" in proc.stderr
    records = json.loads(out.read_text())["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    assert [r["severityText"] for r in records] == ["INFO"]
    assert json.loads(stats.read_text()) == {"policies": [{"policy_id": "drop-debug", "hits": 1}]}


def test_eval_names_the_file_when_policies_are_not_json(tmp_path: Path) -> None:
    policies = write(tmp_path / "p.json", "{not json")
    source = write(tmp_path / "in.json", {"resourceLogs": []})
    proc = sluice(
        "eval",
        "--policies",
        str(policies),
        "--input",
        str(source),
        "--output",
        str(tmp_path / "o.json"),
    )
    assert proc.returncode == 1
    assert str(policies) in proc.stderr and "not valid JSON" in proc.stderr


def test_eval_names_a_missing_input(tmp_path: Path) -> None:
    policies = write(tmp_path / "p.json", {"policies": [GOOD]})
    proc = sluice(
        "eval",
        "--policies",
        str(policies),
        "--input",
        str(tmp_path / "nope.json"),
        "--output",
        str(tmp_path / "o.json"),
    )
    assert proc.returncode == 1 and "nope.json" in proc.stderr


def test_demo_runs_the_bundled_example(tmp_path: Path) -> None:
    proc = sluice("demo", "--output-dir", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "drop-health-checks" in proc.stdout
    logs = json.loads((tmp_path / "logs.json").read_text())
    bodies = [
        r["body"]["stringValue"]
        for rl in logs["resourceLogs"]
        for sl in rl["scopeLogs"]
        for r in sl["logRecords"]
    ]
    assert bodies and not any("/healthz" in b for b in bodies)
    assert any("4111-****-****-" in b for b in bodies)
    assert not any("4111-1111-1111" in b for b in bodies)
