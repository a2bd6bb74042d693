"""The collector examples: every shipped config validates, and the
collector-in-front-of-Edge example runs as written (on free ports)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor

from tests.collector.helpers import BIN, CollectorProcess, free_ports, run_cli
from tests.edge.helpers import EdgeProcess, Upstream

EXAMPLES = Path(__file__).parent.parent.parent / "examples" / "collector"
ENV = {"SERVICE_API_KEY": "k", "BACKEND_URL": "https://otlp.example.com"}


def test_every_collector_example_validates() -> None:
    configs = sorted(EXAMPLES.glob("*/collector.yaml"))
    assert [p.parent.name for p in configs] == ["gateway", "in-front-of-edge", "memory-limited"]
    for path in configs:
        result = run_cli("validate", "--config", str(path), env=ENV, cwd=path.parent)
        assert (result.returncode, result.stdout) == (0, "config is valid\n"), result.stderr


def test_the_gateway_needs_its_api_key() -> None:
    path = EXAMPLES / "gateway" / "collector.yaml"
    result = run_cli("validate", "--config", str(path), env={"BACKEND_URL": "https://x"})
    assert result.returncode == 1
    assert "environment variable SERVICE_API_KEY is not set" in result.stderr


def test_collector_in_front_of_edge_runs_as_written(tmp_path: Path) -> None:
    folder = tmp_path / "example"
    shutil.copytree(EXAMPLES / "in-front-of-edge", folder)
    backend = Upstream()
    edge_port, otlp_port, metrics_port = free_ports(3)
    replacements = {
        "8080": str(edge_port),
        "4318": str(otlp_port),
        "8888": str(metrics_port),
        "127.0.0.1:9090": f"127.0.0.1:{backend.port}",
        '"platform-policies.json"': json.dumps(str(folder / "platform-policies.json")),
    }
    for name in ("collector.yaml", "edge.json"):
        text = (folder / name).read_text()
        for old, new in replacements.items():
            text = text.replace(old, new)
        (folder / name).write_text(text)
    edge = EdgeProcess(folder / "edge", json.loads((folder / "edge.json").read_text()))
    try:
        edge.wait_ready()
        collector = CollectorProcess(folder, None, ["--config", "collector.yaml"]).wait_ready()
        try:
            provider = LoggerProvider()
            exporter = OTLPLogExporter(endpoint=f"http://127.0.0.1:{otlp_port}/v1/logs")
            provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
            logger = provider.get_logger("example")
            for body, level in (
                ("GET /healthz 200", "info"),
                ("cache warmed", "debug"),
                ("order 42 shipped", "info"),
            ):
                logger.emit(body=body, severity_text=level)
            provider.shutdown()
            [request] = backend.wait_for(1, timeout=15)
            sent = ExportLogsServiceRequest.FromString(request.decoded())
            bodies = [
                r.body.string_value
                for rl in sent.resource_logs
                for sl in rl.scope_logs
                for r in sl.log_records
            ]
            assert bodies == ["order 42 shipped"]
        finally:
            assert collector.terminate() == 0, collector.stderr()
    finally:
        edge.terminate()
        backend.stop()


def test_the_readme_run_and_demo_commands(tmp_path: Path, fixed_ports: None) -> None:
    """``./scripts/run`` starts the default config on its fixed localhost ports;
    ``sluice demo --endpoint`` sends the bundled telemetry and reports what
    the policies did; the records that passed are printed by the collector.
    The demo is started first: it waits for the collector to listen."""
    demo = subprocess.Popen(
        [str(BIN / "sluice"), "demo", "--endpoint", "http://localhost:4318"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert demo.stdout is not None
    first = demo.stdout.readline()
    assert first == "waiting for http://localhost:4318 (up to 30 s)\n", first
    collector = CollectorProcess(tmp_path, None)
    try:
        output = first + demo.communicate(timeout=60)[0]
        assert demo.returncode == 0, output
        for name in ("logs.json", "metrics.json", "traces.json"):
            assert f"sent {name}" in output and "HTTP 200" in output
        assert re.search(r"logs\s+dropped\s+\d+", output), output
        assert re.search(r"traces\s+sampled\s+\d+", output), output
    finally:
        demo.kill()
        assert collector.terminate() == 0, collector.stderr()
    printed = collector.stdout_path.read_text()
    assert "sluice.redacted=true" in printed  # a transformed record passed
    assert "4111-****-****" in printed and "GET /healthz" not in printed
