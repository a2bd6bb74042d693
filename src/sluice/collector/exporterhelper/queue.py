"""The in-memory sending queue between ``consume`` and an exporter's senders.

Its capacity counts batches, items or bytes (the ``sizer``); a batch counts
against it from the moment it is queued until a sender takes it, as
upstream's bounded memory queue does. A full queue refuses, or, when it
blocks, makes the producer wait for room.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class QueuedBatch:
    data: Any
    items: int
    size: int
    """What the batch weighs against the capacity."""
    outcome: asyncio.Future[None] | None = None
    """Settled once the batch is sent or lost, for a producer that waits."""


class SendingQueue:
    """FIFO of batches, bounded by `capacity` units."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.used = 0
        self._batches: deque[QueuedBatch] = deque()
        self._filled = asyncio.Event()
        self._freed = asyncio.Event()

    def __len__(self) -> int:
        return len(self._batches)

    def offer(self, batch: QueuedBatch) -> bool:
        """Queue `batch` if it fits now."""
        if self.used + batch.size > self.capacity:
            return False
        self.used += batch.size
        self._batches.append(batch)
        self._filled.set()
        return True

    async def put(self, batch: QueuedBatch) -> None:
        """Queue `batch`, waiting for room (it must fit in an empty queue)."""
        while not self.offer(batch):
            self._freed.clear()
            await self._freed.wait()

    async def take(self) -> QueuedBatch:
        """The oldest batch, waiting for one."""
        while not self._batches:
            self._filled.clear()
            await self._filled.wait()
        batch = self._batches.popleft()
        self.used -= batch.size
        self._freed.set()
        return batch

    def take_all(self) -> list[QueuedBatch]:
        """Empty the queue at once (what is left at a shutdown deadline)."""
        left = list(self._batches)
        self._batches.clear()
        self.used = 0
        self._freed.set()
        return left
