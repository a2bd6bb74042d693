"""The ``memory_limiter`` processor: refuses data, retryably, while its
limiter says memory is above the soft limit; passes it on otherwise."""

from __future__ import annotations

from typing import Any

from sluice.collector.component import Consumer, Host, Processor, refused
from sluice.collector.components.processors.memorylimiter.limiter import MemoryLimiter

REFUSED = "data refused due to high memory usage"
"""Upstream's wording (the receiver answers 503 / UNAVAILABLE with it)."""


class MemoryLimiterProcessor(Processor):
    def __init__(self, limiter: MemoryLimiter, next_: Consumer):
        self.limiter = limiter
        self.next = next_
        self.started = False

    async def start(self, host: Host) -> None:
        self.limiter.start()
        self.started = True

    async def shutdown(self) -> None:
        if self.started:
            self.started = False
            await self.limiter.stop()

    async def consume(self, data: Any) -> None:
        if self.limiter.refusing:
            raise refused(REFUSED)
        await self.next.consume(data)
