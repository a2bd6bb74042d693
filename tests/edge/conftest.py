"""Fixtures: a recording upstream and a launcher of real ``sluice-edge`` processes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.edge.helpers import EdgeLauncher, Upstream


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    server = Upstream()
    yield server
    server.stop()


@pytest.fixture
def start_edge(tmp_path: Path, upstream: Upstream) -> Iterator[EdgeLauncher]:
    """``start_edge(policies, **config)`` starts an Edge forwarding to `upstream`
    (listen_port 0, the port read from its log) and waits until /_health
    answers with every provider loaded. At teardown: SIGTERM, exit code 0."""
    launcher = EdgeLauncher(tmp_path, upstream)
    yield launcher
    problems = launcher.stop_all()
    assert not problems, problems
