"""The active policy set: merges what every provider delivered and swaps in
a compiled snapshot atomically.

Each provider update replaces that provider's whole set. Merging is by
policy id: remote (http/grpc) providers win over files; between providers of
the same priority, the later one in configuration order wins. Compilation
runs on the thread that delivered the update, never on the evaluation path;
evaluation reads :attr:`PolicyRegistry.snapshot` once per batch and keeps that
snapshot to the end of the batch, however often it is replaced meanwhile.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from sluice.heap import release_free_memory
from sluice.policy import Policy, PolicyRuntime, PolicySnapshot, Signal
from sluice.policy.patterns import DatabaseCache

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ProviderSet:
    """The policies one provider delivered, with its merge rank."""

    provider_id: str
    priority: int
    order: int
    policies: tuple[Policy, ...]


def _active(policies: Sequence[Policy]) -> int:
    return sum(p.enabled and p.valid and p.signal is not None for p in policies)


class PolicyRegistry:
    """Holds every provider's latest set and the compiled merged snapshot."""

    def __init__(
        self, runtime: PolicyRuntime | None = None, cache: DatabaseCache | None = None
    ) -> None:
        self.runtime = runtime or PolicyRuntime()
        self._cache = cache
        self._sets: dict[str, ProviderSet] = {}
        self._owner: dict[str, str] = {}
        self._lock = threading.Lock()
        self.snapshot: PolicySnapshot = PolicySnapshot.compile((), self.runtime, cache)
        self.generation = 0
        """How many snapshots have been swapped in."""

    def update(
        self, provider_id: str, priority: int, order: int, policies: list[Policy]
    ) -> PolicySnapshot:
        """Replace one provider's set, recompile the merged set, swap it in.
        An update that leaves the provider no active policy is logged as a
        warning: it most likely disabled or broke them all by mistake."""
        with self._lock:
            previous = self._sets.get(provider_id)
            self._sets[provider_id] = ProviderSet(provider_id, priority, order, tuple(policies))
            merged, owner = self._merge()
            snapshot = PolicySnapshot.compile(merged, self.runtime, self._cache)
            self._owner = owner
            self.snapshot = snapshot
            self.generation += 1
        release_free_memory()
        had = _active(previous.policies) if previous is not None else 0
        if not _active(policies) and (had or policies):
            log.warning(
                "%s: no active policies left (had %d; delivered %d: %d disabled, %d with errors)",
                provider_id,
                had,
                len(policies),
                sum(not p.enabled for p in policies),
                sum(p.enabled and not p.valid for p in policies),
            )
        log.info(
            "policies updated by %s: %d active (%d with errors)",
            provider_id,
            sum(snapshot.count(s) for s in Signal),
            len(snapshot.errors),
        )
        return snapshot

    def _merge(self) -> tuple[list[Policy], dict[str, str]]:
        chosen: dict[str, tuple[tuple[int, int], Policy, str]] = {}
        for provider in self._sets.values():
            rank = (provider.priority, provider.order)
            for policy in provider.policies:
                current = chosen.get(policy.id)
                if current is None or rank >= current[0]:
                    if current is not None and current[2] != provider.provider_id:
                        log.info(
                            "policy %r from %s overrides %s",
                            policy.id,
                            provider.provider_id,
                            current[2],
                        )
                    chosen[policy.id] = (rank, policy, provider.provider_id)
        merged = [policy for _, policy, _ in chosen.values()]
        owner = {pid: provider for pid, (_, _, provider) in chosen.items()}
        return merged, owner

    def owned_by(self, provider_id: str) -> list[Policy]:
        """The active policies (valid or not) that came from one provider."""
        with self._lock:
            owner = self._owner
            provider = self._sets.get(provider_id)
        if provider is None:
            return []
        return [p for p in provider.policies if owner.get(p.id) == provider_id]
