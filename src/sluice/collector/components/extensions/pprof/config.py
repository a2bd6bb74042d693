"""The ``pprof`` extension's config, as contrib's pprofextension: the listen
address (``confignet.TCPAddrConfig``, squashed at the top level) and Go's
profiling settings."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from sluice.collector.component import ComponentConfig, Problem
from sluice.collector.confmap.decode import Duration
from sluice.transport.listener import parse_endpoint

DEFAULT_ENDPOINT = "localhost:1777"


@dataclass(frozen=True)
class DialerConfig:
    timeout: Duration = Duration(0)
    """Part of upstream's address type; a listener dials nothing."""


@dataclass(frozen=True)
class PprofConfig(ComponentConfig):
    endpoint: str = DEFAULT_ENDPOINT
    dialer: DialerConfig = field(default_factory=DialerConfig)
    block_profile_fraction: int = 0
    """Go's blocking profiler rate; Python has no such profiler (a warning
    says so when it is set above 0)."""
    mutex_profile_fraction: int = 0
    """Go's mutex contention rate; likewise without meaning here."""
    save_to_file: str = ""
    """Write a CPU profile of the whole run to this file when the collector stops."""

    def validate(self) -> Iterator[Problem]:
        # Upstream refuses an empty endpoint when it creates the extension.
        if not self.endpoint:
            yield "", '"endpoint" is required when using the "pprof" extension'
            return
        try:
            parse_endpoint(self.endpoint)
        except ValueError as bad:
            yield "endpoint", str(bad)
