"""Component configs from ``testdata/<type>/config_*.yaml``: each file holds
one component (``type`` or ``type/name``: its settings), decoded and
validated as the service does."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml

from sluice.collector.confmap.decode import Problems, decode

C = TypeVar("C")


def load_config(config_type: type[C], path: Path) -> tuple[C, list[str]]:
    """The config and its problems (``key::path: message`` lines)."""
    (raw,) = yaml.safe_load(path.read_text()).values()
    problems = Problems()
    config: Any = decode(config_type, raw, "", problems)
    for key, message in config.validate():
        problems.add(key, message)
    return config, problems.lines
