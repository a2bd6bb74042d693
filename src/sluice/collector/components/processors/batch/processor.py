"""The ``batch`` processor: upstream's batching, with back-pressure that
loses nothing.

As upstream: ``consume`` adds a request's items to one pending batch and
returns; the batch leaves when it holds ``send_batch_size`` items, or
``timeout`` after it got its first item, cut into requests of at most
``send_batch_max_size`` items; shutdown sends what is pending.

Unlike upstream, which logs and drops a batch the next consumer refuses, a
batch refused with a retryable error (a full exporter queue, a memory
limiter) is held and offered again after the refusal's ``retry_after``; while
any batch is held, ``consume`` refuses new requests with a retryable error,
so the pressure reaches the senders (HTTP 503, gRPC ``UNAVAILABLE``) instead
of the collector growing or losing data. Only a permanent refusal, or a held
batch still refused when the collector stops, is given up on: logged with
its item count.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import Any

from sluice.collector import pdata
from sluice.collector.component import Consumer, ConsumerError, Processor, refused
from sluice.collector.components.processors.batch.config import BatchConfig
from sluice.policy import Signal

RETRY_SECS = 1.0
"""How soon a held batch is offered again when its refusal names no delay."""


class BatchProcessor(Processor):
    mutates_data = True

    def __init__(
        self, signal: Signal, next_: Consumer, config: BatchConfig, logger: logging.Logger
    ):
        self.signal = signal
        self.next = next_
        self.size = config.send_batch_size
        self.max_size = config.send_batch_max_size
        self.timeout = float(config.timeout)
        self.timed = self.timeout > 0 and self.size > 0
        """Whether items wait for a batch to fill (else every request leaves at once)."""
        self.logger = logger
        self.pending: Any = None
        self.pending_items = 0
        self.timer: asyncio.TimerHandle | None = None
        self.sends: set[asyncio.Task[None]] = set()
        self.held: deque[tuple[Any, int]] = deque()
        """Batches the next consumer refused (retryably), oldest first, with their item counts."""
        self.refusal: ConsumerError | None = None
        self.retrying: asyncio.Task[None] | None = None

    async def consume(self, data: Any) -> None:
        items = pdata.item_count(self.signal, data)
        if not items:
            return
        if self.held:
            refusal = self.refusal
            raise refused(
                f"the batch processor holds {sum(n for _, n in self.held)} items the next "
                f"component refused ({refusal}); retry later",
                refusal.retry_after or RETRY_SECS if refusal is not None else RETRY_SECS,
            )
        if self.pending is None:
            self.pending = data  # ours now: the caller never touches it again
        else:
            pdata.merge(self.signal, self.pending, data)
        self.pending_items += items
        if not self.timed:
            self._flush(everything=True)
        elif self.pending_items >= self.size:
            self._flush(everything=False)
            self._stop_timer()  # a remainder waits a whole timeout, as upstream
        if self.pending is not None and self.timer is None and self.timed:
            self.timer = asyncio.get_running_loop().call_later(self.timeout, self._on_timeout)

    def _on_timeout(self) -> None:
        self.timer = None
        if self.pending is not None:
            self._flush(everything=True)

    def _stop_timer(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _flush(self, everything: bool) -> None:
        """Send the pending batch in requests of at most ``send_batch_max_size``
        items; unless `everything`, a last request smaller than
        ``send_batch_size`` stays pending."""
        parts = pdata.split(self.signal, self.pending, self.max_size)
        last_items = self.pending_items - self.max_size * (len(parts) - 1)
        if not everything and last_items < self.size:
            self.pending, self.pending_items = parts.pop(), last_items
        else:
            self.pending, self.pending_items = None, 0
        for index, part in enumerate(parts):
            items = (
                last_items if index == len(parts) - 1 and self.pending is None else self.max_size
            )
            task = asyncio.ensure_future(self._send(part, items))
            self.sends.add(task)
            task.add_done_callback(self.sends.discard)

    async def _send(self, part: Any, items: int) -> None:
        try:
            await self.next.consume(part)
        except ConsumerError as refusal:
            if refusal.retryable:
                self._hold(part, items, refusal)
            else:
                self._give_up(items, str(refusal))
        except Exception as failure:
            self.logger.exception("the next component failed on a batch")
            self._give_up(items, str(failure) or type(failure).__name__)

    def _hold(self, part: Any, items: int, refusal: ConsumerError) -> None:
        if not self.held:
            self.logger.warning(
                "a batch of %d items was refused (%s); holding it and refusing new data "
                "until it is accepted",
                items,
                refusal,
            )
        self.held.append((part, items))
        self.refusal = refusal
        if self.retrying is None:
            self.retrying = asyncio.ensure_future(self._offer_held())

    async def _offer_held(self) -> None:
        """Offer held batches again, oldest first, each after its refusal's delay."""
        try:
            while self.held:
                refusal = self.refusal
                delay = refusal.retry_after if refusal and refusal.retry_after else RETRY_SECS
                await asyncio.sleep(delay)
                await self._offer_once()
            self.logger.info("the next component accepts data again")
        finally:
            self.retrying = None

    async def _offer_once(self) -> None:
        while self.held:
            part, items = self.held[0]
            try:
                await self.next.consume(part)
            except ConsumerError as refusal:
                if refusal.retryable:
                    self.refusal = refusal
                    return
                self._give_up(items, str(refusal))
            except Exception as failure:
                self.logger.exception("the next component failed on a batch")
                self._give_up(items, str(failure) or type(failure).__name__)
            self.held.popleft()

    def _give_up(self, items: int, reason: str) -> None:
        self.logger.error(
            "dropping a batch of %d items the next component refused: %s", items, reason
        )

    async def shutdown(self) -> None:
        """Send what is pending, wait for every send in flight, and offer held
        batches once more (what is still refused is logged as dropped)."""
        self._stop_timer()
        self.timed = False  # anything consumed from now on leaves at once
        if self.pending is not None:
            self._flush(everything=True)
        if self.sends:
            await asyncio.gather(*self.sends, return_exceptions=True)
        if self.retrying is not None:
            self.retrying.cancel()
        await self._offer_once()
        while self.held:
            _, items = self.held.popleft()
            self._give_up(items, f"still refused at shutdown ({self.refusal})")
