"""The ``batch`` processor's config, with upstream's defaults and checks."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from sluice.collector.component import ComponentConfig, Problem
from sluice.collector.confmap.decode import Duration, Uint32
from sluice.gostrconv import quoted

DEFAULT_TIMEOUT = Duration(0.2)


@dataclass(frozen=True)
class BatchConfig(ComponentConfig):
    timeout: Duration = DEFAULT_TIMEOUT
    """How long the first item of a batch waits for the batch to fill (0:
    send every request at once)."""
    send_batch_size: Uint32 = 8192
    """Items (log records, data points, spans) that make a batch leave."""
    send_batch_max_size: Uint32 = 0
    """Upper bound of a sent batch; larger ones are split (0: no bound)."""
    metadata_keys: list[str] = field(default_factory=list)
    """Client metadata keys (case-insensitive) whose values split data into
    separate batches."""
    metadata_cardinality_limit: Uint32 = 1000
    """Most combinations of those values batched at once (0: no limit)."""

    def validate(self) -> Iterator[Problem]:
        problem = self._first_problem()
        if problem is not None:
            yield "", problem

    def _first_problem(self) -> str | None:
        """Upstream's checks, wording and order; like upstream, only the first."""
        if 0 < self.send_batch_max_size < self.send_batch_size:
            return "send_batch_max_size must be greater or equal to send_batch_size"
        seen: set[str] = set()
        for key in self.metadata_keys:
            lowered = key.lower()
            if lowered in seen:
                return f"duplicate entry in metadata_keys: {quoted(lowered)} (case-insensitive)"
            seen.add(lowered)
        if self.timeout < 0:
            return "timeout must be greater or equal to 0"
        return None
