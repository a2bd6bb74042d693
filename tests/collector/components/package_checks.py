"""Checks every component package passes: its upstream example configs load
with ``sluice-collector validate``, and importing the package (what the
distribution does for every component it holds) leaves the component's
implementation unimported until a config uses it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.collector.helpers import run_cli


def assert_validates(config: Path) -> None:
    result = run_cli("validate", "--config", str(config))
    assert (result.returncode, result.stdout.strip()) == (0, "config is valid"), result.stderr


def assert_imports_lazily(package: str, implementation: str) -> None:
    """Importing `package` does not import `package.implementation`."""
    probe = f"import sys, {package}; print('{package}.{implementation}' in sys.modules)"
    imported = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert imported.stdout.strip() == "False", imported.stderr
