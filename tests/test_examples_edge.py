"""The Edge examples: every shipped config validates, and the quickstart runs
(on free ports, otherwise exactly as written)."""

from __future__ import annotations

import json
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from sluice.edge.config import parse_config

ROOT = Path(__file__).parent.parent
EDGE_EXAMPLES = ROOT / "examples" / "edge"
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_every_edge_example_config_validates(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVICE_API_KEY", "k")  # the remote providers' headers need it
    configs = sorted(EDGE_EXAMPLES.glob("*/config.json"))
    assert len(configs) == 3
    for path in configs:
        config = parse_config(json.loads(path.read_text()), str(path))
        assert config.upstream_url and config.policy_providers
    manifest = (EDGE_EXAMPLES / "kubernetes" / "edge-sidecar.yaml").read_text()
    embedded = re.search(r"config\.json: \|\n((?:    .*\n)+)", manifest)
    assert embedded is not None
    config = parse_config(json.loads(embedded.group(1)), "configmap config.json")
    assert config.listen_address == "0.0.0.0" and len(config.policy_providers) == 2
    assert "limits: { cpu: 200m, memory: 64Mi }" in manifest
    assert "secretKeyRef: { name: sluice-edge, key: api-key }" in manifest
    probes = dict(re.findall(r"(\w+Probe):\n\s+httpGet: \{ path: (\S+),", manifest))
    assert probes == {"livenessProbe": "/_health", "readinessProbe": "/_ready"}


def test_the_quickstart_runs(tmp_path: Path) -> None:
    folder = tmp_path / "quickstart"
    shutil.copytree(EDGE_EXAMPLES / "quickstart", folder)
    edge_port, upstream_port = free_port(), free_port()
    for name in ("config.json", "upstream.py"):
        text = (folder / name).read_text()
        text = text.replace("8080", str(edge_port)).replace("9090", str(upstream_port))
        (folder / name).write_text(text)
    upstream = subprocess.Popen(
        [sys.executable, str(folder / "upstream.py")], stdout=subprocess.PIPE, text=True
    )
    edge = subprocess.Popen(
        [str(BIN / "sluice-edge"), str(folder / "config.json")], stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 30
        while True:  # as the README's block waits: until /_ready answers 200
            try:
                if urllib.request.urlopen(f"http://127.0.0.1:{edge_port}/_ready").status == 200:
                    break
            except OSError:  # not listening yet, or 503 (HTTPError) until policies load
                pass
            assert time.monotonic() < deadline, "Edge did not become ready"
            time.sleep(0.1)
        logs = (ROOT / "src" / "sluice" / "examples" / "logs.json").read_bytes()
        request = urllib.request.Request(
            f"http://127.0.0.1:{edge_port}/v1/logs",
            data=logs,
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            assert answer.status == 200
    finally:
        edge.send_signal(signal.SIGTERM)
        assert edge.wait(timeout=20) == 0
        upstream.terminate()
        printed = upstream.communicate(timeout=10)[0]
    assert "upstream received POST /v1/logs" in printed
    assert "GET /healthz" not in printed  # the health checks were dropped by Edge
    assert "4111-****-****-" in printed  # the card number was masked


def test_the_quickstart_config_validates_as_documented() -> None:
    path = EDGE_EXAMPLES / "quickstart" / "config.json"
    proc = subprocess.run(
        [str(BIN / "sluice-edge"), "validate", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "would listen on 127.0.0.1:8080 (1 worker, log_level info, log_format logfmt)" in (
        proc.stdout
    )
    assert "8 active policies (5 logs, 1 metrics, 2 traces), 0 disabled, 0 with errors" in (
        proc.stdout
    )
