"""The ``batch`` processor: upstream's batching, with back-pressure that
loses nothing.

As upstream: ``consume`` adds a request's items to one pending batch and
returns; the batch leaves when it holds ``send_batch_size`` items, or
``timeout`` after it got its first item, cut into requests of at most
``send_batch_max_size`` items, which the next consumer is given one
after another; shutdown sends what is pending.

With ``metadata_keys``, as upstream: every distinct combination of those
keys' values in the client's metadata (:mod:`sluice.collector.client`,
which the receivers fill with ``include_metadata``) has a batch of its own,
up to ``metadata_cardinality_limit`` combinations (beyond it a new
combination is refused with a permanent error); a batch is sent with only
those keys as its client's metadata, so a later ``from_context:
metadata.<key>`` still finds them. Without them, batches are sent with no
client at all.

Unlike upstream, which logs and drops a batch the next consumer refuses, a
batch refused with a retryable error (a full exporter queue, a memory
limiter) is held and offered again after the refusal's ``retry_after``; while
any batch is held, ``consume`` refuses new requests with a retryable error,
so the pressure reaches the senders (HTTP 503, gRPC ``UNAVAILABLE``) instead
of the collector growing or losing data (each combination of metadata
values holds and refuses on its own). Only a permanent refusal, or a held
batch still refused when the collector stops, is given up on: logged with
its item count.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Coroutine
from types import MappingProxyType
from typing import Any

from sluice.collector import client, pdata
from sluice.collector.component import Consumer, ConsumerError, Processor, permanent, refused
from sluice.collector.components.processors.batch.config import BatchConfig
from sluice.collector.components.processors.batch.telemetry import BatchTelemetry
from sluice.policy import Signal

RETRY_SECS = 1.0
"""How soon a held batch is offered again when its refusal names no delay."""


TOO_MANY_BATCHERS = "Permanent error: too many batcher metadata-value combinations"
"""Upstream's refusal beyond ``metadata_cardinality_limit``: a permanent
error, whose text consumererror.NewPermanent prefixes."""

ShardKey = tuple[tuple[str, ...], ...]
"""The values of each metadata key, in the keys' sorted order."""


class BatchProcessor(Processor):
    mutates_data = True

    def __init__(
        self,
        signal: Signal,
        next_: Consumer,
        config: BatchConfig,
        logger: logging.Logger,
        telemetry: BatchTelemetry,
        processor_id: str,
    ):
        self.signal = signal
        self.next = next_
        self.size = config.send_batch_size
        self.max_size = config.send_batch_max_size
        self.timeout = float(config.timeout)
        self.timed = self.timeout > 0 and self.size > 0
        """Whether items wait for a batch to fill (else every request leaves at once)."""
        self.logger = logger
        self.keys = sorted({key.lower() for key in config.metadata_keys})
        """The metadata keys data is batched by, lower-cased and sorted as upstream."""
        self.limit = config.metadata_cardinality_limit
        self.shards: dict[ShardKey, _Shard] = {}
        """Without metadata keys, the one batch (key ``()``), sent with no client."""
        if not self.keys:
            self.shards[()] = _Shard(self, client.NOBODY)
        self.series = telemetry.instance(processor_id, lambda: len(self.shards))

    async def consume(self, data: Any) -> None:
        shard = self._shard()  # as upstream, even for a request without items
        items = pdata.item_count(self.signal, data)
        if items:
            shard.add(data, items)

    def _shard(self) -> _Shard:
        """The batch of the current client's values of the metadata keys."""
        info = client.current()
        key = tuple(info.get(name) for name in self.keys)
        shard = self.shards.get(key)
        if shard is None:
            if self.limit and len(self.shards) >= self.limit:
                raise permanent(TOO_MANY_BATCHERS)
            metadata = MappingProxyType(dict(zip(self.keys, key, strict=True)))
            shard = self.shards[key] = _Shard(self, client.Info(metadata=metadata))
        return shard

    async def shutdown(self) -> None:
        """Send what is pending, wait for every send in flight, and offer held
        batches once more (what is still refused is logged as dropped)."""
        self.timed = False  # anything consumed from now on leaves at once
        await asyncio.gather(*(shard.shutdown() for shard in list(self.shards.values())))


class _Shard:
    """The pending batch of one combination of metadata values, and what the
    next consumer refused of it; its sends run with `info` as the client."""

    def __init__(self, processor: BatchProcessor, info: client.Info):
        self.processor = processor
        self.client = info
        self.pending: Any = None
        self.pending_items = 0
        self.timer: asyncio.TimerHandle | None = None
        self.sends: set[asyncio.Task[None]] = set()
        self.sending = asyncio.Lock()
        """Held by the send in progress: as upstream's one goroutine per batch,
        requests go to the next consumer one at a time, in the order they
        were cut (the lock wakes its waiters first come, first served)."""
        self.held: deque[tuple[Any, int]] = deque()
        """Batches the next consumer refused (retryably), oldest first, with their item counts."""
        self.refusal: ConsumerError | None = None
        self.retrying: asyncio.Task[None] | None = None

    def add(self, data: Any, items: int) -> None:
        processor = self.processor
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
            pdata.merge(processor.signal, self.pending, data)
        self.pending_items += items
        if not processor.timed:
            self._flush(everything=True, by_timeout=False)
        elif self.pending_items >= processor.size:
            self._flush(everything=False, by_timeout=False)
            self._stop_timer()  # a remainder waits a whole timeout, as upstream
        if self.pending is not None and self.timer is None and processor.timed:
            self.timer = asyncio.get_running_loop().call_later(processor.timeout, self._on_timeout)

    def _on_timeout(self) -> None:
        self.timer = None
        if self.pending is not None:
            self._flush(everything=True, by_timeout=True)

    def _stop_timer(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _flush(self, everything: bool, by_timeout: bool) -> None:
        """Send the pending batch in requests of at most ``send_batch_max_size``
        items; unless `everything`, a last request smaller than
        ``send_batch_size`` stays pending. Each request the next consumer
        takes counts as a send for the size trigger or (`by_timeout`, and at
        shutdown) the timeout, as upstream's."""
        max_size = self.processor.max_size
        parts = pdata.split(self.processor.signal, self.pending, max_size)
        last_items = self.pending_items - max_size * (len(parts) - 1)
        if not everything and last_items < self.processor.size:
            self.pending, self.pending_items = parts.pop(), last_items
        else:
            self.pending, self.pending_items = None, 0
        for index, part in enumerate(parts):
            items = last_items if index == len(parts) - 1 and self.pending is None else max_size
            task = self._start(self._send(part, items, by_timeout))
            self.sends.add(task)
            task.add_done_callback(self.sends.discard)

    def _start(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """A task running `work` with this batch's client, not the one whose
        request happened to complete the batch."""
        with client.serving(self.client):
            return asyncio.ensure_future(work)

    async def _send(self, part: Any, items: int, by_timeout: bool) -> None:
        try:
            async with self.sending:
                await self.processor.next.consume(part)
            self.processor.series.sent(items, by_timeout)
        except ConsumerError as refusal:
            if refusal.retryable:
                self._hold(part, items, refusal)
            else:
                self._give_up(items, str(refusal))
        except Exception as failure:
            self.processor.logger.exception("the next component failed on a batch")
            self._give_up(items, str(failure) or type(failure).__name__)

    def _hold(self, part: Any, items: int, refusal: ConsumerError) -> None:
        if not self.held:
            self.processor.logger.warning(
                "a batch of %d items was refused (%s); holding it and refusing new data "
                "until it is accepted",
                items,
                refusal,
            )
        self.held.append((part, items))
        self.refusal = refusal
        if self.retrying is None:
            self.retrying = self._start(self._offer_held())

    async def _offer_held(self) -> None:
        """Offer held batches again, oldest first, each after its refusal's delay."""
        try:
            while self.held:
                refusal = self.refusal
                delay = refusal.retry_after if refusal and refusal.retry_after else RETRY_SECS
                await asyncio.sleep(delay)
                await self._offer_once()
            self.processor.logger.info("the next component accepts data again")
        finally:
            self.retrying = None

    async def _offer_once(self) -> None:
        while self.held:
            part, items = self.held[0]
            try:
                async with self.sending:
                    await self.processor.next.consume(part)
            except ConsumerError as refusal:
                if refusal.retryable:
                    self.refusal = refusal
                    return
                self._give_up(items, str(refusal))
            except Exception as failure:
                self.processor.logger.exception("the next component failed on a batch")
                self._give_up(items, str(failure) or type(failure).__name__)
            self.held.popleft()

    def _give_up(self, items: int, reason: str) -> None:
        self.processor.logger.error(
            "dropping a batch of %d items the next component refused: %s", items, reason
        )

    async def shutdown(self) -> None:
        self._stop_timer()
        if self.pending is not None:
            self._flush(everything=True, by_timeout=True)
        if self.sends:
            await asyncio.gather(*self.sends, return_exceptions=True)
        if self.retrying is not None:
            self.retrying.cancel()
        with client.serving(self.client):
            await self._offer_once()
        while self.held:
            _, items = self.held.popleft()
            self._give_up(items, f"still refused at shutdown ({self.refusal})")
