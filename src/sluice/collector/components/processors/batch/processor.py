"""The ``batch`` processor: upstream's batching, with back-pressure.

As upstream: items are added to one pending batch; it leaves when it holds
``send_batch_size`` items, or ``timeout`` after it got its first item, cut into
requests of at most ``send_batch_max_size`` items; shutdown sends what is
pending.

Unlike upstream, which accepts every request at once and only logs what the
next consumer refuses, :meth:`BatchProcessor.consume` returns once the batches
holding its items were accepted downstream, and raises the downstream
:class:`~sluice.collector.component.ConsumerError` to every request that
contributed to a refused batch: a full exporter queue reaches the sender as a
retryable error instead of data lost in the collector.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import Any

from sluice.collector import pdata
from sluice.collector.component import Consumer, Processor, refused
from sluice.collector.components.processors.batch.config import BatchConfig
from sluice.policy import Signal


class _Contribution:
    """One ``consume`` call's items on their way out."""

    __slots__ = ("done", "error", "sending", "unsent")

    def __init__(self, done: asyncio.Future[None], items: int):
        self.done = done
        self.unsent = items
        """Items still in the pending batch."""
        self.sending = 0
        """Sends in flight that hold some of its items."""
        self.error: BaseException | None = None

    def sent(self, error: BaseException | None) -> None:
        self.sending -= 1
        if error is not None and self.error is None:
            self.error = error
        if self.unsent or self.sending or self.done.done():
            return  # more to go, or its caller gave up waiting
        if self.error is None:
            self.done.set_result(None)
        else:
            self.done.set_exception(self.error)


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
        self.contributions: deque[_Contribution] = deque()
        """Contributions with items in the pending batch, in item order."""
        self.timer: asyncio.TimerHandle | None = None
        self.sends: set[asyncio.Task[None]] = set()

    async def consume(self, data: Any) -> None:
        items = pdata.item_count(self.signal, data)
        if not items:
            return
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.contributions.append(_Contribution(done, items))
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
        await done

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
            task = asyncio.ensure_future(self._send(part, self._take(items)))
            self.sends.add(task)
            task.add_done_callback(self.sends.discard)

    def _take(self, items: int) -> list[_Contribution]:
        """The contributions the next `items` pending items belong to."""
        taken = []
        while items:
            contribution = self.contributions[0]
            count = min(items, contribution.unsent)
            contribution.unsent -= count
            contribution.sending += 1
            items -= count
            taken.append(contribution)
            if not contribution.unsent:
                self.contributions.popleft()
        return taken

    async def _send(self, part: Any, contributions: list[_Contribution]) -> None:
        error: BaseException | None = None
        try:
            await self.next.consume(part)
        except Exception as failure:
            error = failure
            self.logger.debug("Sender failed: %s", failure)
        except asyncio.CancelledError:
            error = refused("the batch was not sent: the collector is stopping")
            raise
        finally:
            for contribution in contributions:
                contribution.sent(error)

    async def shutdown(self) -> None:
        """Send what is pending and wait for every send in flight."""
        self._stop_timer()
        self.timed = False  # anything consumed from now on leaves at once
        if self.pending is not None:
            self._flush(everything=True)
        if self.sends:
            await asyncio.gather(*self.sends, return_exceptions=True)
