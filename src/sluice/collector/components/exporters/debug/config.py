"""``debug`` exporter config, as upstream's ``debugexporter.Config``."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from sluice.collector.component import ComponentConfig, Problem
from sluice.collector.confmap.decode import LevelNumber, TelemetryLevel
from sluice.gostrconv import quoted

VERBOSITIES = ("basic", "normal", "detailed")


@dataclass
class DebugConfig(ComponentConfig):
    verbosity: TelemetryLevel = "basic"
    """``basic`` (a count line per batch), ``normal`` (a line per record),
    ``detailed`` (every field); any case, or the level's number (0 to 2),
    as upstream's configtelemetry.Level."""
    sampling_initial: int = 2
    """Output lines written per second before sampling starts."""
    sampling_thereafter: int = 1
    """Then every n-th identical line per second (0: none)."""
    use_internal_logger: bool = True
    """Write through the collector's log (stderr); false: plain text on stdout."""

    @property
    def level(self) -> str:
        return self.verbosity.lower()

    def validate(self) -> Iterator[Problem]:
        if isinstance(self.verbosity, LevelNumber):  # Go's String() of it is ""
            yield "verbosity", f"verbosity level {quoted(self.verbosity)} is not supported"
        elif self.level == "none":
            yield "verbosity", 'verbosity level "None" is not supported'
        elif self.level not in VERBOSITIES:
            yield "verbosity", f"unknown metrics level {quoted(self.level)}"
