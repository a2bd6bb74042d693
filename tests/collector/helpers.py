"""Real ``sluice-collector`` processes and real OTLP sinks for the collector tests.

* :class:`CollectorProcess`: ``sluice-collector --config FILE.yaml`` as a
  subprocess, ready when it logs "Everything is ready", stopped with SIGTERM.
* The sinks: the Edge suite's recording :class:`Upstream` (OTLP/HTTP) and
  the exporter tests' :class:`GrpcSink` (OTLP/gRPC).
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.edge.helpers import free_port, http_request

__all__ = ["CollectorProcess", "free_port", "free_ports", "metric_value", "run_cli"]

BIN = Path(sys.executable).parent
READY = "Everything is ready"
START_TIMEOUT = 30.0


def free_ports(count: int) -> list[int]:
    """`count` distinct free ports (all held open while choosing, so that no
    port is handed out twice)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [int(sock.getsockname()[1]) for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


class CollectorProcess:
    """One ``sluice-collector`` process on a config written to `workdir`."""

    def __init__(
        self,
        workdir: Path,
        config: dict[str, Any] | str | None,
        args: list[str] | None = None,
        env: dict[str, str] | None = None,
        program: Path | None = None,
    ) -> None:
        """`program`: a distribution sluice-builder wrote (default: sluice-collector)."""
        workdir.mkdir(parents=True, exist_ok=True)
        self.workdir = workdir
        command = [str(program or BIN / "sluice-collector")]
        if config is not None:
            self.config_path = workdir / "collector.yaml"
            text = config if isinstance(config, str) else yaml.safe_dump(config, sort_keys=False)
            self.config_path.write_text(text)
            command += ["--config", str(self.config_path)]
        self.stderr_path = workdir / "collector.stderr"
        self._stderr = self.stderr_path.open("wb")
        self.stdout_path = workdir / "collector.stdout"
        self._stdout = self.stdout_path.open("wb")
        self.process = subprocess.Popen(
            [*command, *(args or [])],
            stdout=self._stdout,
            stderr=self._stderr,
            env={**os.environ, **(env or {})},
            cwd=workdir,
        )

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def wait_ready(self) -> CollectorProcess:
        deadline = time.monotonic() + START_TIMEOUT
        while READY not in self.stderr():
            if self.process.poll() is not None:
                raise RuntimeError(f"collector exited {self.process.returncode}: {self.stderr()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"collector not ready: {self.stderr()}")
            time.sleep(0.02)
        return self

    def wait_log(self, pattern: str, timeout: float = 15.0) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while True:
            found = re.search(pattern, self.stderr())
            if found:
                return found
            if time.monotonic() > deadline:
                raise AssertionError(f"no log line matching {pattern!r}: {self.stderr()}")
            time.sleep(0.02)

    def metrics(self, port: int) -> str:
        answer = http_request(port, "GET", "/metrics", None, {}, 5.0)
        assert answer.status == 200, answer
        return answer.body.decode()

    def terminate(self, timeout: float = 30.0) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._stderr.close()
        self._stdout.close()
        return self.process.returncode


def metric_value(exposition: str, name: str, **labels: str) -> float:
    """The sum of a metric's samples whose labels include `labels`."""
    return sum(
        sample.value
        for family in text_string_to_metric_families(exposition)
        for sample in family.samples
        if sample.name == name and labels.items() <= sample.labels.items()
    )


def run_cli(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "sluice-collector"), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )


def post_one_log(http_port: int) -> None:
    """One OTLP/JSON log record to a collector's otlp receiver (the components'
    self-metrics series appear on traffic)."""
    doc = {"resourceLogs": [{"scopeLogs": [{"logRecords": [{"body": {"stringValue": "a"}}]}]}]}
    answer = http_request(
        http_port,
        "POST",
        "/v1/logs",
        json.dumps(doc).encode(),
        {"Content-Type": "application/json"},
        10.0,
    )
    assert answer.status == 200, answer
