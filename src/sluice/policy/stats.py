"""Per-policy counters and other state that outlives one compiled snapshot.

A :class:`PolicyRuntime` is handed from one snapshot to the next, so rate
limiters keep their windows and counters keep counting when a provider
swaps in a new policy set.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final

from sluice.policy.model import Keep
from sluice.policy.ratelimit import RateLimiter, monotonic_ms

HITS: Final = 0
MISSES: Final = 1
COUNTER_SLOTS: Final = 10
"""hits, misses, then hit/miss pairs for the remove, redact, rename, add stages."""


@dataclass(frozen=True, slots=True)
class PolicyCounts:
    """Counters of one policy: match hits/misses and per-stage transform hits/misses."""

    hits: int = 0
    misses: int = 0
    transform: tuple[tuple[int, int], ...] = ((0, 0), (0, 0), (0, 0), (0, 0))

    @classmethod
    def of(cls, slots: list[int]) -> PolicyCounts:
        pairs = tuple((slots[i], slots[i + 1]) for i in range(2, COUNTER_SLOTS, 2))
        return cls(slots[HITS], slots[MISSES], pairs)

    @property
    def empty(self) -> bool:
        return not (self.hits or self.misses or any(h or m for h, m in self.transform))


class PolicyStats:
    """Monotonic counters per policy id. Readers take deltas since their last
    report instead of resetting, so a count is never lost to a race or to a
    failed report."""

    def __init__(self) -> None:
        self._counters: dict[str, list[int]] = {}
        self._reported: dict[str, list[int]] = {}
        self._lock = threading.Lock()

    def counter(self, policy_id: str) -> list[int]:
        """The live counter list of a policy (the engine increments it in place)."""
        with self._lock:
            found = self._counters.get(policy_id)
            if found is None:
                found = self._counters[policy_id] = [0] * COUNTER_SLOTS
            return found

    def totals(self) -> dict[str, PolicyCounts]:
        """Counters since start, by policy id (policies never matched are left out)."""
        with self._lock:
            items = [(pid, list(c)) for pid, c in self._counters.items()]
        out = {pid: PolicyCounts.of(c) for pid, c in items}
        return {pid: c for pid, c in out.items() if not c.empty}

    def pending(self) -> dict[str, PolicyCounts]:
        """Counts since the last :meth:`commit` (what a status report carries)."""
        with self._lock:
            items = [(pid, list(c), self._reported.get(pid)) for pid, c in self._counters.items()]
        out = {}
        for pid, current, reported in items:
            base = reported or [0] * COUNTER_SLOTS
            counts = PolicyCounts.of([a - b for a, b in zip(current, base, strict=True)])
            if not counts.empty:
                out[pid] = counts
        return out

    def commit(self, sent: dict[str, PolicyCounts]) -> None:
        """Mark the counts of a successful report as reported."""
        with self._lock:
            for pid, counts in sent.items():
                base = self._reported.setdefault(pid, [0] * COUNTER_SLOTS)
                base[HITS] += counts.hits
                base[MISSES] += counts.misses
                for stage, (hits, misses) in enumerate(counts.transform):
                    base[2 + 2 * stage] += hits
                    base[3 + 2 * stage] += misses


class PolicyRuntime:
    """State shared by successive snapshots: counters and rate limiters."""

    def __init__(self, clock: Callable[[], float] = monotonic_ms) -> None:
        self.stats = PolicyStats()
        self.clock = clock
        self._limiters: dict[tuple[str, int, int], RateLimiter] = {}
        self._lock = threading.Lock()

    def limiter(self, policy_id: str, keep: Keep) -> RateLimiter:
        """The limiter of a rate-limited policy; the same object while its limit is unchanged."""
        key = (policy_id, keep.limit, keep.window_ms)
        with self._lock:
            found = self._limiters.get(key)
            if found is None:
                found = self._limiters[key] = RateLimiter(keep.limit, keep.window_ms, self.clock)
            return found

    def retain(self, policy_ids: Iterable[str]) -> None:
        """Forget limiters of policies that are gone."""
        keep = set(policy_ids)
        with self._lock:
            for key in [k for k in self._limiters if k[0] not in keep]:
                del self._limiters[key]
