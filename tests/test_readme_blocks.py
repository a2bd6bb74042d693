"""README command blocks that start a server in the background, run verbatim
by bash from the repository root, as a user pastes them: each must wait for
readiness before its first request, so a block that races its server fails
here. (They use the README's fixed ports: 8080/9090 and 8181/8182, which no
other test binds.)"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text()


def block_containing(marker: str) -> str:
    """The README's one ``sh`` block that contains ``marker``."""
    blocks: list[str] = [b for b in re.findall(r"```sh\n(.*?)```", README, re.S) if marker in b]
    assert len(blocks) == 1, marker
    return blocks[0]


def run(block: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-e", "-c", block], cwd=ROOT, capture_output=True, text=True, timeout=60
    )


def test_the_edge_quickstart_block_runs_as_written() -> None:
    block = block_containing("examples/edge/quickstart/config.json &")
    done = run(block)
    assert done.returncode == 0, done.stderr
    # The backend prints what reached it (card numbers masked, no health
    # checks); then the block's three answers: the export, /_health, /_policies.
    printed, answers = done.stdout.split("\n{", 1)
    assert "4111-****-****-4946" in printed and "4111-1111" not in printed
    assert "/healthz" not in printed
    decoder = json.JSONDecoder()
    values, text, at = [], "{" + answers, 0
    while at < len(text.rstrip()):
        value, at = decoder.raw_decode(text, at)
        values.append(value)
    export, health, policies = values
    assert export == {}
    assert health["status"] == "ok" and health["providers"][0]["loaded"] is True
    hits = {p["id"]: p["hits"] for p in policies["policies"]}
    assert hits["drop-health-checks"] > 0 and hits["redact-card-numbers"] > 0


def test_the_policy_server_walk_through_runs_as_written() -> None:
    block = block_containing("sluice policy-server --policies")
    done = run(block)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:2] == ["HTTP_PORT=8181", "GRPC_PORT=8182"]
    stats, _ = json.JSONDecoder().raw_decode(lines[2])
    hits = {entry["policy_id"]: entry["hits"] for entry in stats["policies"]}
    # Both runs reported back: a logs policy (HTTP sync) and a traces one (gRPC).
    assert hits["drop-health-checks"] > 0 and hits["keep-error-spans"] > 0
    filtered = json.loads(Path("/tmp/filtered.json").read_text())
    assert filtered["resourceLogs"]
