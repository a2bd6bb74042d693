"""The active policy set: merges what every provider delivered and swaps in
a compiled snapshot atomically.

Each provider update replaces that provider's whole set. Merging is by
policy id: remote (http/grpc) providers win over files; between providers of
the same priority, the later one in configuration order wins. Compilation
runs on the thread that delivered the update, never on the evaluation path;
evaluation reads :attr:`PolicyRegistry.snapshot` once per batch and keeps that
snapshot to the end of the batch, however often it is replaced meanwhile.

An update is compiled on the snapshot it replaces: what is unchanged is
reused from the compile cache, and a field where a few patterns changed gets
one small extra database instead of a new one. Such a snapshot is swapped in
at once; a background thread then compiles the affected fields completely
and swaps again, so scans go back to costing what a fresh compile's do.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from sluice.gcpause import collection_paused
from sluice.heap import release_free_memory
from sluice.policy import Policy, PolicyRuntime, PolicySnapshot, Signal
from sluice.policy.cache import CompileCache

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
        self, runtime: PolicyRuntime | None = None, cache: CompileCache | None = None
    ) -> None:
        self.runtime = runtime or PolicyRuntime()
        self.cache = cache if cache is not None else CompileCache(None)
        """Parsed policies and compiled databases; providers parse through it."""
        self._sets: dict[str, ProviderSet] = {}
        self._owner: dict[str, str] = {}
        self._lock = threading.Lock()
        self.snapshot: PolicySnapshot = PolicySnapshot.compile((), self.runtime, self.cache)
        self.generation = 0
        """How many updates have been swapped in (completing an update's
        databases swaps in a snapshot that decides the same: not counted)."""
        self._completion = threading.Condition()
        self._completion_wanted = False
        self._completer: threading.Thread | None = None

    def update(
        self, provider_id: str, priority: int, order: int, policies: list[Policy]
    ) -> PolicySnapshot:
        """Replace one provider's set, recompile the merged set, swap it in.
        An update that leaves the provider no active policy is logged as a
        warning: it most likely disabled or broke them all by mistake."""
        started = time.perf_counter()
        # The collector stays paused until the swap: the young collection of
        # everything the compile built comes after it, not before.
        with self._lock, collection_paused():
            previous = self._sets.get(provider_id)
            self._sets[provider_id] = ProviderSet(provider_id, priority, order, tuple(policies))
            snapshot = self._recompile()
            self.generation += 1
        swapped = time.perf_counter() - started
        self.cache.release()
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
            "policies updated by %s: %d active (%d with errors), swapped in %.0f ms",
            provider_id,
            sum(snapshot.count(s) for s in Signal),
            len(snapshot.errors),
            swapped * 1000,
        )
        return snapshot

    def _recompile(self) -> PolicySnapshot:
        """Compile the merged set on the current snapshot and swap it in
        (holding the lock); start completing it if it needs that."""
        merged, owner = self._merge()
        snapshot = PolicySnapshot.compile(merged, self.runtime, self.cache, self.snapshot)
        self._owner = owner
        self.snapshot = snapshot
        if snapshot.incomplete_fields():
            self._want_completion()
        return snapshot

    # -- completing incremental builds ---------------------------------------------

    def _want_completion(self) -> None:
        with self._completion:
            self._completion_wanted = True
            if self._completer is None:
                self._completer = threading.Thread(
                    target=self._complete, name="policy-databases", daemon=True
                )
                self._completer.start()

    def _complete(self) -> None:
        """Until no snapshot needs it: compile the incomplete fields of the
        current snapshot completely (outside the lock: updates go on), then,
        if no update came meanwhile, compile the set again and swap."""
        while True:
            with self._completion:
                if not self._completion_wanted:
                    self._completer = None
                    self._completion.notify_all()
                    return
                self._completion_wanted = False
            try:
                self._complete_once()
            except Exception:  # a bug here must not stop later completions
                log.exception("completing the pattern databases failed")

    def _complete_once(self) -> None:
        snapshot = self.snapshot
        started = time.perf_counter()
        for entries in snapshot.incomplete_fields():
            self.cache.complete(entries)
        with self._lock, collection_paused():
            if self.snapshot is not snapshot:
                return  # the newer snapshot asked for its own completion
            self._recompile()
        self.cache.release()
        release_free_memory()
        log.info("pattern databases completed in %.2f s", time.perf_counter() - started)

    def wait_complete(self, timeout: float | None = None) -> bool:
        """Wait until no incremental build is left to complete; False on timeout."""
        with self._completion:
            return self._completion.wait_for(
                lambda: self._completer is None and not self._completion_wanted, timeout
            )

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
