"""The ``memory_limiter`` processor's config, with upstream's checks."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from sluice.collector.component import ComponentConfig, Problem
from sluice.collector.confmap.decode import Duration, Uint32

UNSET = Duration(0)


@dataclass(frozen=True)
class MemoryLimiterConfig(ComponentConfig):
    """All zero by default, as upstream: ``check_interval`` and a limit must be set."""

    check_interval: Duration = UNSET
    limit_mib: Uint32 = 0
    """Hard limit of the resident set size, in MiB; wins over ``limit_percentage``."""
    spike_limit_mib: Uint32 = 0
    """Headroom below the hard limit: data is refused from ``limit - spike``
    (0: 20% of the limit)."""
    limit_percentage: Uint32 = 0
    """Hard limit as a percentage of total memory (the cgroup limit, if any)."""
    spike_limit_percentage: Uint32 = 0

    def validate(self) -> Iterator[Problem]:
        # Upstream's checks, wording and order; like upstream, only the first.
        if self.check_interval <= 0:
            yield "", "'check_interval' must be greater than zero"
        elif not self.limit_mib and not self.limit_percentage:
            yield "", "'limit_mib' or 'limit_percentage' must be greater than zero"
        elif self.limit_percentage > 100 or self.spike_limit_percentage > 100:
            yield (
                "",
                "'limit_percentage' and 'spike_limit_percentage' must be greater than zero"
                " and less than or equal to hundred",
            )
        elif 0 < self.limit_mib <= self.spike_limit_mib:
            yield "", "'spike_limit_mib' must be smaller than 'limit_mib'"
        elif 0 < self.limit_percentage <= self.spike_limit_percentage:
            yield "", "'spike_limit_percentage' must be smaller than 'limit_percentage'"
