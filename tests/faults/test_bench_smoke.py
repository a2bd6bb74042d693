"""The fault benchmarks (``bench/chaos.py``, ``bench/hostile.py``) keep running:
each for about two seconds with a tiny load, against the real Edge. They
report, and do not judge, so these tests check that the report adds up, not
today's figures."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_bench(script: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return done.stdout


def row(report: str, label: str) -> float:
    """The number in the report's table row that starts with `label`."""
    found = re.search(rf"^\| {re.escape(label)}[^|]* \| ([\d,.]+) \|", report, re.MULTILINE)
    assert found, f"no row {label!r} in:\n{report}"
    return float(found.group(1).replace(",", ""))


def test_chaos_accounts_for_every_record_sent() -> None:
    report = run_bench("chaos.py", "--seconds", "2", "--clients", "1", "--drain", "5")
    sent = row(report, "sent (the policies keep them)")
    committed = row(report, "committed by the upstream (unique)")
    assert sent > 0 and committed > 0
    assert row(report, "dropped by policy by design") > 0
    # Every kept record is committed, lost one way or the other, or unfinished.
    assert sent == (
        committed
        + row(report, "**lost: acked but never committed (silent)**")
        + row(report, "lost: never acked after all retries")
        + row(report, "unfinished when the drain time ran out")
    )
    for client in ("otlp-proto", "otlp-json", "otel-sdk", "datadog"):
        assert re.search(rf"^\| {client} \| [1-9]", report, re.MULTILINE), report
    assert "targets: " in report


def test_hostile_reports_memory_and_valid_requests() -> None:
    report = run_bench(
        "hostile.py", "--seconds", "3", "--connections", "10", "--settle", "1", "--flood-mib", "1"
    )
    idle = row(report, "idle before the load")
    assert 0 < idle <= row(report, "peak during the load (VmHWM)")
    assert re.search(r"valid 1 MiB OTLP POSTs \([\d,]+ records each\): [1-9]", report), report
    # Outcomes are listed in the order they first happened: on a loaded host
    # Edge may close one upload mid-send before any is half sent.
    assert re.search(r"^\| aborted upload \|[^|\n]*\bhalf sent", report, re.MULTILINE), report
    assert "targets: " in report
