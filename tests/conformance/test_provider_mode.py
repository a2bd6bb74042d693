"""Conformance through the sync protocol: a real ``sluice policy-server``
serves each testcase's policies, ``sluice eval --server`` (one process per
batch) syncs, evaluates and reports, and the statuses the server collected
are compared as the outside harness does (POLICY.md 9.3)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.harness import TESTCASES, batches, sluice_command
from tests.conformance.normalize import normalize
from tests.conformance.servers import policy_server

CASES = sorted(d for d in TESTCASES.iterdir() if d.is_dir())
PROVIDER_ONLY = [c for c in CASES if (c / "provider_only").exists()]


def normalize_error(error: str) -> str:
    if re.match(r"^log: transform:.*invalid.*regex", error):
        return "log: transform: invalid regex"
    if error.startswith("log: keep:"):
        return "log: keep"
    found = re.match(r'^(.*invalid regex "(?:[^"\\]|\\.)*")', error)
    return found.group(1) if found else error


def normalize_stats(doc: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for entry in doc["policies"]:
        errors = sorted(normalize_error(e) for e in entry.get("errors", []))
        item: dict[str, Any] = {"policy_id": entry["policy_id"], "hits": entry.get("hits", 0)}
        if errors:
            item["errors"] = errors
        if item["hits"] > 0 or errors:
            out.append(item)
    return sorted(out, key=lambda e: e["policy_id"])


def test_the_four_provider_only_cases_are_present() -> None:
    assert len(PROVIDER_ONLY) == 4


def run_through_server(case: Path, tmp_path: Path, mode: str) -> None:
    """Every batch through ``sluice eval --server`` or ``--grpc`` (one process
    each) against one policy server; outputs and collected stats must match."""
    with policy_server(case / "policies.json") as server:
        source = ["--server", server.sync_url] if mode == "http" else ["--grpc", server.grpc_target]
        for i, batch in enumerate(batches(case)):
            out = tmp_path / f"out_{i}.json"
            proc = subprocess.run(
                [
                    *sluice_command(),
                    "eval",
                    *source,
                    "--input",
                    str(batch.input),
                    "--output",
                    str(out),
                    "--signal",
                    batch.signal,
                ],
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert proc.returncode == 0, proc.stderr
            actual = normalize(json.loads(out.read_text()))
            assert actual == normalize(json.loads(batch.expected.read_text())), f"batch {i + 1}"
        collected = server.get("/stats")
    expected = json.loads((case / "expected_stats.json").read_text())
    assert normalize_stats(collected) == normalize_stats(expected)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_through_http_sync(case: Path, tmp_path: Path) -> None:
    run_through_server(case, tmp_path, "http")


@pytest.mark.parametrize("case", PROVIDER_ONLY, ids=[c.name for c in PROVIDER_ONLY])
def test_provider_only_case_through_grpc(case: Path, tmp_path: Path) -> None:
    run_through_server(case, tmp_path, "grpc")
