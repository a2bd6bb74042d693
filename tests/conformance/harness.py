"""Runs conformance testcases the way the outside harness does: one
``sluice eval`` process per input batch, outputs normalised, stats summed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conformance.normalize import normalize

TESTCASES = Path(__file__).parent / "testcases"
EXTRA_TESTCASES = Path(__file__).parent / "extra_testcases"
"""Sluice's own testcases, in the layout of the public ones (see its README)."""
_PREFIX_SIGNAL = {"logs_": "log", "metrics_": "metric", "traces_": "trace"}
_TOP_SIGNAL = {"resourceLogs": "log", "resourceMetrics": "metric", "resourceSpans": "trace"}


def sluice_command() -> list[str]:
    """The installed console script next to this interpreter (the real CLI)."""
    script = Path(sys.executable).parent / "sluice"
    return [str(script)] if script.exists() else [sys.executable, "-m", "sluice.cli"]


@dataclass(frozen=True)
class Batch:
    input: Path
    expected: Path
    signal: str


def file_mode_cases(root: Path = TESTCASES) -> list[Path]:
    return sorted(d for d in root.iterdir() if d.is_dir() and not (d / "provider_only").exists())


def batches(case: Path) -> list[Batch]:
    if (case / "input.json").exists():
        signal = next(s for p, s in _PREFIX_SIGNAL.items() if case.name.startswith(p))
        return [Batch(case / "input.json", case / "expected.json", signal)]
    numbered = sorted(
        (int(re.fullmatch(r"input_(\d+)\.json", p.name).group(1)), p)  # type: ignore[union-attr]
        for p in case.glob("input_*.json")
    )
    out = []
    for n, path in numbered:
        doc = json.loads(path.read_text())
        signal = next(_TOP_SIGNAL[k] for k in doc if k in _TOP_SIGNAL)
        out.append(Batch(path, case / f"expected_{n}.json", signal))
    return out


def merge_stats(files: list[dict[str, Any]]) -> dict[str, Any]:
    totals: dict[str, list[int]] = {}
    for doc in files:
        for entry in doc["policies"]:
            t = totals.setdefault(entry["policy_id"], [0, 0])
            t[0] += entry["hits"]
            t[1] += entry.get("misses", 0)
    out = []
    for pid in sorted(totals):
        hits, misses = totals[pid]
        entry: dict[str, Any] = {"policy_id": pid, "hits": hits}
        if misses:
            entry["misses"] = misses
        out.append(entry)
    return {"policies": out}


def run_case(case: Path, workdir: Path) -> tuple[list[tuple[Any, Any]], Any, Any]:
    """Run every batch; returns [(actual, expected) normalised], actual stats, expected stats."""
    pairs = []
    stats = []
    for i, batch in enumerate(batches(case)):
        out, st = workdir / f"out_{i}.json", workdir / f"stats_{i}.json"
        proc = subprocess.run(
            [
                *sluice_command(),
                "eval",
                "--policies",
                str(case / "policies.json"),
                "--input",
                str(batch.input),
                "--output",
                str(out),
                "--stats",
                str(st),
                "--signal",
                batch.signal,
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0, f"{case.name}: exit {proc.returncode}: {proc.stderr}"
        pairs.append(
            (
                normalize(json.loads(out.read_text())),
                normalize(json.loads(batch.expected.read_text())),
            )
        )
        stats.append(json.loads(st.read_text()))
    actual_stats = stats[0] if len(stats) == 1 else merge_stats(stats)
    expected_stats = json.loads((case / "expected_stats.json").read_text())
    return pairs, actual_stats, expected_stats
