"""Fixtures for every test folder."""

from __future__ import annotations

import fcntl
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

FIXED_PORTS_LOCK = Path(tempfile.gettempdir()) / "sluice-tests-fixed-ports.lock"


@pytest.fixture
def fixed_ports() -> Iterator[None]:
    """Held by a test that serves on the default config's fixed localhost ports
    (4317, 4318, 8888), as the README's examples do: pytest-xdist runs test
    files side by side, and two such tests at once would collide."""
    with FIXED_PORTS_LOCK.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        yield
