"""The collector's effective config as a plain map, as upstream's collector
hands it to ``ConfigWatcher`` extensions (``confmap.Conf.Marshal`` of the
decoded config): every component's config with its defaults filled in,
secrets as ``[REDACTED]`` (with the values of every ``headers`` map, which
upstream types as secrets), durations as integer nanoseconds (Go's
``time.Duration``), and the ``service`` section."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from typing import Any

from sluice.collector.config import Config
from sluice.collector.confmap.decode import Duration, Opaque

REDACTED = "[REDACTED]"


def marshal(value: Any) -> Any:
    """`value` as plain maps, lists and scalars."""
    if isinstance(value, Opaque):
        return REDACTED
    if isinstance(value, Duration):
        return round(value * 1e9)
    if isinstance(value, enum.Enum):
        return marshal(value.value)
    if isinstance(value, bool | int | float) or value is None:
        return value
    if isinstance(value, str):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: _field(f.name, getattr(value, f.name))
            for f in dataclasses.fields(value)
            if not f.name.startswith("_")
        }
    if isinstance(value, Mapping):
        return {str(key): marshal(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [marshal(item) for item in value]
    return str(value)


def _field(name: str, value: Any) -> Any:
    if name == "headers" and isinstance(value, Mapping):
        return {str(key): REDACTED for key in value}
    return marshal(value)


def effective_config(config: Config) -> dict[str, Any]:
    """The whole effective config: the component sections, then ``service``."""
    out: dict[str, Any] = {
        kind.value: {str(cid): marshal(c.config) for cid, c in configured.items()}
        for kind, configured in config.components.items()
    }
    out["service"] = {
        "extensions": [str(cid) for cid in config.extensions],
        "pipelines": {
            str(pid): {
                "receivers": [str(c) for c in pipeline.receivers],
                "processors": [str(c) for c in pipeline.processors],
                "exporters": [str(c) for c in pipeline.exporters],
            }
            for pid, pipeline in config.pipelines.items()
        },
        "telemetry": marshal(config.telemetry),
    }
    return out
