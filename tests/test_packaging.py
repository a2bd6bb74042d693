"""The lock files keep runtime and development dependencies apart, and the
image gets the runtime ones only."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def pins(lock: str) -> dict[str, str]:
    """name -> version of every pinned requirement (with its hash lines)."""
    text = (ROOT / lock).read_text()
    return {m[1].lower(): m[2] for m in re.finditer(r"^([A-Za-z0-9_.-]+)==(\S+)", text, re.M)}


def hashes(lock: str, name: str) -> list[str]:
    text = (ROOT / lock).read_text()
    block = re.search(rf"^{re.escape(name)}==\S+ \\\n((?:\s+--hash=\S+(?: \\)?\n)+)", text, re.M)
    assert block is not None, (lock, name)
    return sorted(re.findall(r"--hash=(\S+)", block.group(1)))


def declared(group: str | None) -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    entries = project["dependencies"] if group is None else project["optional-dependencies"][group]
    return {name.lower(): version for name, version in (e.split("==") for e in entries)}


def test_the_runtime_lock_holds_the_runtime_dependencies_and_no_development_tool() -> None:
    runtime = pins("requirements.lock")
    for name, version in declared(None).items():
        assert runtime[name] == version
    for name in declared("dev"):
        assert name not in runtime, name


def test_the_development_lock_extends_the_runtime_lock_exactly() -> None:
    runtime, dev = pins("requirements.lock"), pins("requirements-dev.lock")
    for name, version in runtime.items():
        assert dev[name] == version, name
        assert hashes("requirements-dev.lock", name) == hashes("requirements.lock", name)
    for name, version in declared("dev").items():
        assert dev[name] == version


def test_the_image_installs_the_runtime_lock_and_builds_from_a_minimal_context() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    runtime_stage = dockerfile.split("FROM python:3.11-slim", 1)[1]
    assert "-r requirements.lock" in runtime_stage
    assert "requirements-dev.lock" not in runtime_stage
    assert "USER sluice" in runtime_stage and "HEALTHCHECK" in runtime_stage
    ignore = (ROOT / ".dockerignore").read_text().splitlines()
    assert ignore[[line.startswith("#") for line in ignore].index(False)] == "*"
    assert "!.venv" not in ignore and "!src/" in ignore
