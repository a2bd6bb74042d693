"""The ``memory_limiter`` processor: refuses data, retryably, while its
limiter says memory is above the soft limit; passes it on otherwise. It
counts the items it refuses and those it lets through (whatever the next
component then does with them), as upstream."""

from __future__ import annotations

from typing import Any

from sluice.collector import pdata
from sluice.collector.component import Consumer, Host, Processor, refused
from sluice.collector.components.processors.memorylimiter.limiter import MemoryLimiter
from sluice.collector.telemetry import Series
from sluice.policy import Signal

REFUSED = "data refused due to high memory usage"
"""Upstream's wording (the receiver answers 503 / UNAVAILABLE with it)."""


class MemoryLimiterProcessor(Processor):
    def __init__(
        self,
        limiter: MemoryLimiter,
        next_: Consumer,
        signal: Signal,
        accepted: Series,
        refused: Series,
    ):
        self.limiter = limiter
        self.next = next_
        self.signal = signal
        self.accepted = accepted
        self.refused = refused
        self.started = False

    async def start(self, host: Host) -> None:
        self.limiter.start()
        self.started = True

    async def shutdown(self) -> None:
        if self.started:
            self.started = False
            await self.limiter.stop()

    async def consume(self, data: Any) -> None:
        items = pdata.item_count(self.signal, data)
        if self.limiter.refusing:
            self.refused.inc(items)
            raise refused(REFUSED)
        self.accepted.inc(items)
        await self.next.consume(data)
