"""Real processes for provider-mode tests: ``sluice policy-server``."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conformance.harness import sluice_command


@dataclass
class RunningServer:
    process: subprocess.Popen[str]
    http_port: int
    grpc_port: int

    @property
    def sync_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}/v1/policy/sync"

    @property
    def grpc_target(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}{path}", timeout=10) as r:
            return json.loads(r.read())


@contextmanager
def policy_server(policies: Path, *extra: str) -> Iterator[RunningServer]:
    """Start ``sluice policy-server`` on free ports; stop it afterwards."""
    process = subprocess.Popen(
        [*sluice_command(), "policy-server", "--policies", str(policies), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        ports = {}
        deadline = time.monotonic() + 30
        assert process.stdout is not None
        while len(ports) < 2 and time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                raise RuntimeError(f"policy-server exited: {process.stderr.read()}")  # type: ignore[union-attr]
            name, _, value = line.strip().partition("=")
            ports[name] = int(value)
        yield RunningServer(process, ports["HTTP_PORT"], ports["GRPC_PORT"])
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
