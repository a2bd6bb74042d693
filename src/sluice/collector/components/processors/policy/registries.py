"""Policy registries shared by the policy processors of one service: those
whose provider lists are equal share one registry and one set of polling
providers, started by the first processor to start and stopped when the last
one shuts down."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily

from sluice import __version__
from sluice.collector.component import SIGNAL_NAMES, Settings
from sluice.policy import Signal
from sluice.policy.outcomes import OutcomeTally
from sluice.policy.patterns import DatabaseCache
from sluice.providers import (
    ClientIdentity,
    PolicyRegistry,
    Provider,
    ProviderConfig,
    make_providers,
    stop_all,
)

IDENTITY = ClientIdentity("sluice-collector", service_version=__version__)
"""Who syncs with policy servers (``client_metadata``)."""
FIRST_LOAD_WAIT_SECS = 2.0
"""How long the first start waits for every provider's first attempt, so that
data arriving right after start meets the policies of a readable file."""
_WAIT_STEP_SECS = 0.01


@dataclass
class _Shared:
    registry: PolicyRegistry
    providers: list[Provider]
    settled: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once the providers' first attempts are over (or timed out)."""
    users: int = 0


class PolicyRecords:
    """``otelcol_processor_policy_records_total{processor,telemetry_type,result}``:
    one :class:`OutcomeTally` per processor and signal, added to once per
    batch and read as a counter family at scrape time (every result of
    COLLECTOR.md section 4 present from the processor's creation, at 0;
    ``malformed``, Sluice's own, once a record could not be read)."""

    def __init__(self) -> None:
        self.tallies: dict[tuple[str, str], OutcomeTally] = {}

    def tally(self, processor_id: str, signal: Signal) -> OutcomeTally:
        key = (processor_id, SIGNAL_NAMES[signal])
        found = self.tallies.get(key)
        if found is None:
            found = self.tallies[key] = OutcomeTally()
        return found

    def collect(self) -> Iterator[CounterMetricFamily]:
        family = CounterMetricFamily(
            "otelcol_processor_policy_records",
            "Number of telemetry records processed by the policy processor",
            labels=["processor", "telemetry_type", "result"],
        )
        for (processor_id, telemetry_type), tally in list(self.tallies.items()):
            for result, count in tally.results():
                if count or result != "malformed":  # not one of section 4's results
                    family.add_metric([processor_id, telemetry_type, result], count)
        yield family


class PolicyRegistries:
    """The service's shared policy registries (in ``settings.shared``) and
    the policy counter family."""

    SHARED_KEY = "policy"

    def __init__(self, metrics: CollectorRegistry):
        self._entries: dict[tuple[ProviderConfig, ...], _Shared] = {}
        self.records = PolicyRecords()
        metrics.register(self.records)

    @classmethod
    def of(cls, settings: Settings) -> PolicyRegistries:
        """The service's instance, made on first use."""
        return settings.service_wide(cls.SHARED_KEY, cls)

    def counter(self, processor_id: str, signal: Signal) -> OutcomeTally:
        """The tally one processor adds its batches' outcomes to."""
        return self.records.tally(processor_id, signal)

    def providers(self, configs: tuple[ProviderConfig, ...]) -> list[Provider]:
        """The running providers of a provider list (empty when none run)."""
        entry = self._entries.get(configs)
        return list(entry.providers) if entry else []

    async def acquire(
        self, configs: tuple[ProviderConfig, ...], logger: logging.Logger
    ) -> PolicyRegistry:
        """The registry fed by `configs`; the first caller starts its
        providers and waits (boundedly) for their first attempt. A provider
        that fails is logged and retried in the background: until policies
        arrive, the registry has none and data passes unfiltered."""
        entry = self._entries.get(configs)
        if entry is None:
            registry = PolicyRegistry(cache=DatabaseCache.default())
            entry = _Shared(registry, make_providers(list(configs), registry, IDENTITY))
            self._entries[configs] = entry
            for provider in entry.providers:
                provider.start()
            try:
                await _first_attempts(entry.providers, logger)
            finally:
                entry.settled.set()
        entry.users += 1
        await entry.settled.wait()
        return entry.registry

    async def release(self, configs: tuple[ProviderConfig, ...]) -> None:
        """One user fewer; the last one stops the providers (off the event
        loop: a stop may wait for a poll in progress, bounded by its timeout)."""
        entry = self._entries.get(configs)
        if entry is None:
            return
        entry.users -= 1
        if entry.users > 0:
            return
        del self._entries[configs]
        await asyncio.get_running_loop().run_in_executor(None, stop_all, entry.providers)


async def _first_attempts(providers: list[Provider], logger: logging.Logger) -> None:
    deadline = time.monotonic() + FIRST_LOAD_WAIT_SECS
    waiting = list(providers)
    while waiting and time.monotonic() < deadline:
        await asyncio.sleep(_WAIT_STEP_SECS)
        waiting = [p for p in waiting if not (p.loaded.is_set() or p.failures)]
    for provider in providers:
        if not provider.loaded.is_set():
            logger.error(
                "policy provider %s has no policies yet (%s); data passes unfiltered until it has",
                provider.config.id,
                provider.last_error or "still loading",
            )
