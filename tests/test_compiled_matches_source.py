"""The compiled build and the plain sources decide every odd record alike
(see tests/compiled_source.py for why and how)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests import compiled_selectors
from tests.compiled_source import results

ROOT = Path(__file__).resolve().parent.parent
OTLP_VIEWS = ("json", "protobuf", "message")


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
    # Every typed condition works on every attribute level of every view: each
    # kind matches somewhere (a reader returning the wrong type matches nothing).
    matched = {
        (key.split("/")[1], key.split("/")[4], *entry["policy_id"].split("|")[1:])
        for key, run in compiled.items()
        if key.startswith("selectors/") and "stats" in run
        for entry in run["stats"]
        if entry["hits"]
    }
    views = {
        (key.split("/")[1], key.split("/")[4]) for key in compiled if key.startswith("selectors/")
    }
    expected = {
        (signal.value, view, source, op)
        for signal, sources in compiled_selectors.ATTRIBUTE_SOURCES.items()
        for view in (*OTLP_VIEWS, "datadog")
        if (signal.value, view) in views
        for source in sources
        # Datadog logs have no scope; series tags are strings
        if view != "datadog" or (signal.value == "log" and source != "scope_attribute")
        for op in compiled_selectors.TYPED_OPS
    }
    assert len(expected) > 140
    assert not expected - matched, sorted(expected - matched)
