"""The memory check behind ``memory_limiter``: every ``check_interval`` the
resident set size is read; from the soft limit (``limit - spike``) data is
refused, at the hard limit garbage is collected and free heap given back to
the operating system. One limiter serves every pipeline that names the same
``memory_limiter`` id, as upstream shares one per config."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sluice.collector.components.processors.memorylimiter.config import MemoryLimiterConfig
from sluice.collector.components.processors.memorylimiter.memory import MIB
from sluice.heap import release_free_memory

SOFT_LIMIT_GC_INTERVAL_SECS = 10.0
"""Upstream's minimum time between forced collections when the soft limit is
crossed (collecting is expensive, and usually does not help twice)."""


def _mem_fields(usage: int) -> dict[str, Any]:
    """Upstream's zap field for the memory in use, as a logging ``extra``."""
    return {"fields": {"cur_mem_mib": usage // MIB}}


@dataclass(frozen=True)
class Limits:
    hard: int
    spike: int

    @property
    def soft(self) -> int:
        return self.hard - self.spike

    @classmethod
    def of(cls, config: MemoryLimiterConfig, total_memory: int) -> Limits:
        """Bytes, from MiB or from percentages of `total_memory` (bytes); an
        unset spike is 20% of the limit."""
        if config.limit_mib:
            hard, spike = config.limit_mib * MIB, config.spike_limit_mib * MIB
        else:
            total = total_memory
            hard = config.limit_percentage * total // 100
            spike = config.spike_limit_percentage * total // 100
        return cls(hard, spike or hard // 5)


class MemoryLimiter:
    """Tells whether data must be refused; checks memory in an asyncio task
    while at least one processor using it runs."""

    def __init__(
        self,
        limits: Limits,
        check_interval: float,
        logger: logging.Logger,
        read_usage: Callable[[], int],
    ):
        self.limits = limits
        self.check_interval = check_interval
        self.logger = logger
        self.read_usage = read_usage
        self.refusing = False
        self.above_hard = False
        self.last_collection = -float("inf")
        self.users = 0
        self._task: asyncio.Task[None] | None = None
        # Upstream's zap fields; its encoder writes a duration in seconds.
        configured = {
            "limit_mib": limits.hard // MIB,
            "spike_limit_mib": limits.spike // MIB,
            "check_interval": check_interval,
        }
        logger.info("Memory limiter configured", extra={"fields": configured})

    def start(self) -> None:
        self.users += 1
        if self.users == 1:
            self.check()
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        self.users -= 1
        if self.users == 0 and self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.check_interval)
            self.check()

    def check(self) -> None:
        """Measure, free memory when needed, and decide whether to refuse.
        Transitions are logged once, not at every check.

        As upstream, garbage is collected at every check above the hard
        limit, and when memory crosses the soft limit (unless a collection
        was done in the last SOFT_LIMIT_GC_INTERVAL_SECS), not while it stays
        above it. Otherwise, above the soft limit, free heap pages are given
        back to the OS: they count in the resident size until then, and
        giving them back costs well under a millisecond, so refusing stops as
        soon as the data that filled memory has left."""
        usage = self.read_usage()
        self.logger.debug("Currently used memory.", extra=_mem_fields(usage))
        if usage >= self.limits.hard:
            if not self.above_hard:
                self.logger.warning(
                    "Memory usage is above hard limit. Forcing a GC.", extra=_mem_fields(usage)
                )
            usage = self._collect()
        elif usage >= self.limits.soft and (self.refusing or not self._may_collect()):
            release_free_memory()
            usage = self.read_usage()
        refuse = usage >= self.limits.soft
        if self.refusing and not refuse:
            self.logger.info(
                "Memory usage back within limits. Resuming normal operation.",
                extra=_mem_fields(usage),
            )
        elif refuse and not self.refusing:
            if self._may_collect():
                self.logger.info(
                    "Memory usage is above soft limit. Forcing a GC.", extra=_mem_fields(usage)
                )
                usage = self._collect()
                refuse = usage >= self.limits.soft
            if refuse:
                self.logger.warning(
                    "Memory usage is above soft limit. Refusing data.", extra=_mem_fields(usage)
                )
        self.above_hard = usage >= self.limits.hard
        self.refusing = refuse

    def _may_collect(self) -> bool:
        """Whether crossing the soft limit may force a collection now."""
        return time.monotonic() - self.last_collection > SOFT_LIMIT_GC_INTERVAL_SECS

    def _collect(self) -> int:
        gc.collect()
        release_free_memory()
        self.last_collection = time.monotonic()
        usage = self.read_usage()
        self.logger.info("Memory usage after GC.", extra=_mem_fields(usage))
        return usage
