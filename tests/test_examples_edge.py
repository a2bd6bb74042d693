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
    for name in ("edge-sidecar.yaml", "edge-gateway.yaml"):
        text = (EDGE_EXAMPLES / "kubernetes" / name).read_text()
        probes = dict(re.findall(r"(\w+Probe):\n\s+httpGet: \{ path: (\S+),", text))
        assert probes == {"livenessProbe": "/_health", "readinessProbe": "/_ready"}, name


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


KUBERNETES_VERSION = "1.34.0"
"""A current Kubernetes release the manifests are validated against."""


def test_the_kubernetes_manifests_are_valid_and_their_embedded_configs_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every document of the sidecar and gateway manifests against the
    Kubernetes schemas (kubernetes-validate, strict: unknown fields fail);
    the Edge configs they embed parse; the sidecar's collector config loads
    in sluice-collector (it uses only components both distributions have)."""
    import kubernetes_validate
    import yaml

    monkeypatch.setenv("SERVICE_API_KEY", "k")  # the remote providers' headers need it

    folder = EDGE_EXAMPLES / "kubernetes"
    kinds: dict[str, list[str]] = {}
    for path in sorted(folder.glob("*.yaml")):
        documents = [d for d in yaml.safe_load_all(path.read_text()) if d]
        for document in documents:
            kubernetes_validate.validate(document, KUBERNETES_VERSION, strict=True)
            kinds.setdefault(path.name, []).append(document["kind"])
            if document["kind"] != "ConfigMap":
                continue
            data = document["data"]
            if "config.json" in data:
                config = parse_config(json.loads(data["config.json"]), f"{path.name} config.json")
                assert config.policy_providers
            if "collector.yaml" in data:
                collector_yaml = tmp_path / "collector.yaml"
                collector_yaml.write_text(data["collector.yaml"])
                checked = subprocess.run(
                    [str(BIN / "sluice-collector"), "validate", "--config", str(collector_yaml)],
                    capture_output=True,
                    text=True,
                    timeout=60,
                )
                assert checked.returncode == 0, checked.stderr
                exporter = yaml.safe_load(data["collector.yaml"])["exporters"]["otlphttp"]
                assert exporter["endpoint"] == "http://localhost:8080"  # the sidecar
    assert sorted(kinds["edge-sidecar.yaml"]) == [
        "ConfigMap",
        "ConfigMap",
        "Deployment",
        "Secret",
        "Service",
    ]
    assert sorted(kinds["edge-gateway.yaml"]) == ["ConfigMap", "Deployment", "Secret", "Service"]


def test_the_datadog_sidecar_example_routes_the_agents_calls(tmp_path: Path) -> None:
    """The example as written, with its Datadog hosts replaced by recording
    stand-ins and its port by a free one: the README's commands (its policies
    drop the debug log), then the Agent's calls, each family where the Agent
    would send it."""
    from tests.edge.agent_replay import LOGS, agent_calls
    from tests.edge.helpers import EdgeProcess, Reply, Upstream

    folder = tmp_path / "datadog-sidecar"
    shutil.copytree(EDGE_EXAMPLES / "datadog-sidecar", folder)
    written = json.loads((folder / "config.json").read_text())
    assert parse_config(written, "config.json").datadog_api_url == "https://app.datadoghq.com"
    logs, metrics, fallback = Upstream(), Upstream(), Upstream()
    for server in (logs, metrics, fallback):
        server.respond = Reply(202, b"{}")
    text = (folder / "config.json").read_text()
    for host, server in (
        ("https://http-intake.logs.datadoghq.com", logs),
        ("https://api.datadoghq.com", metrics),
        ("https://app.datadoghq.com", fallback),
    ):
        text = text.replace(host, server.url)
    config = json.loads(text.replace("8080", str(free_port())))
    # EdgeProcess writes this back as folder/config.json and runs it there, so
    # policies.json resolves next to it as in the example.
    edge = EdgeProcess(folder, config, program="sluice-edge-datadog", env={"DD_API_KEY": "env-key"})
    try:
        edge.wait_ready()
        sent = [
            {"message": "hello through Sluice Edge", "status": "info", "service": "demo"},
            {"message": "cache miss", "status": "debug", "service": "demo"},
        ]
        answer = edge.post("/api/v2/logs", json.dumps(sent).encode(), "application/json")
        assert answer.status == 202
        [got] = logs.received()
        assert json.loads(got.body) == sent[:1]
        assert got.all("DD-API-KEY") == ["env-key"]
        calls = agent_calls("agent-key")
        for call in calls:
            assert edge.request(call.method, call.target, call.body, call.headers).status == 202
        assert [r.path for r in logs.received()[1:]] == [c.path for c in calls if c.family == LOGS]
        # Outside Datadog's hosts the other API calls follow metrics_url (see
        # datadog_intake); with the real hosts they go to app.datadoghq.com.
        assert [r.path for r in metrics.received()] == [c.path for c in calls if c.family != LOGS]
        assert fallback.received() == []
    finally:
        assert edge.terminate() == 0
        for server in (logs, metrics, fallback):
            server.stop()
