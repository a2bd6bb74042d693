"""The compiled build and the plain sources decide every odd record alike
(see tests/compiled_source.py for why and how)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.compiled_source import results

ROOT = Path(__file__).resolve().parent.parent


def test_compiled_modules_decide_like_their_sources() -> None:
    compiled = json.loads(json.dumps(results(), sort_keys=True))
    source_run = subprocess.run(
        [sys.executable, "-m", "tests.compiled_source"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert source_run.returncode == 0, source_run.stderr[-3000:]
    source = json.loads(source_run.stdout)
    assert compiled.keys() == source.keys()
    differing = sorted(key for key in compiled if compiled[key] != source[key])
    assert not differing, (
        f"{len(differing)} of {len(compiled)} runs differ, e.g. {differing[:5]}: "
        f"compiled {compiled[differing[0]]} source {source[differing[0]]}"
    )
    # The corpus reaches what it is for: odd values that are evaluated, not refused.
    odd = [r for key, r in compiled.items() if "/odd" in key and "outcome" in r]
    assert sum(r["outcome"]["records"] - r["outcome"]["malformed"] for r in odd) > 1000
