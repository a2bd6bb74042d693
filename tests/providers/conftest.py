"""A real ``sluice policy-server`` process per test, serving a file the test may rewrite."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conformance.servers import RunningServer, policy_server
from tests.providers.helpers import drop, write_policies

TOKEN = "s3cret"


@dataclass
class Served:
    path: Path
    """The policy file the server reads (rewrite it to change what is served)."""
    server: RunningServer

    def hits(self) -> dict[str, int]:
        """The hits per policy id that clients reported, from ``GET /stats``."""
        return {e["policy_id"]: e["hits"] for e in self.server.get("/stats")["policies"]}


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    """``sluice policy-server --token s3cret`` serving one policy, drop-x."""
    path = tmp_path / "served.json"
    write_policies(path, drop("drop-x", "x"))
    with policy_server(path, "--token", TOKEN) as server:
        yield Served(path, server)
