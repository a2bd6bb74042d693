"""An exporter built from a :class:`Sender`: per signal, a sending queue
drained by `num_consumers` tasks, retries with backoff, and upstream's
``otelcol_exporter_*`` counters.

With the queue, ``consume`` queues the batch and returns; a full queue
refuses it with a retryable error, so the receiver tells its client to retry
(upstream drops it). Without the queue, ``consume`` sends, retrying, and
raises :class:`~sluice.collector.component.ConsumerError` if the batch could
not be sent (a retryable failure stays retryable).

No batch is lost silently: each one that is given up on (permanent failure,
retries exhausted, still queued at the shutdown deadline) is logged as
upstream's exporterhelper logs it (``Exporting failed. Dropping data.``, or
``Rejecting data.`` when the failure goes back to the caller, with the
``error`` and the item count as fields) and counted in
``otelcol_exporter_send_failed_*``.
"""

from __future__ import annotations

import asyncio
import platform
from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any

from sluice import __version__
from sluice.collector import pdata
from sluice.collector.component import (
    SIGNAL_NAMES,
    BuildInfo,
    Consumer,
    Exporter,
    Host,
    Settings,
    refused,
)
from sluice.collector.exporterhelper.config import QueueSettings, RetrySettings
from sluice.collector.exporterhelper.queue import QueuedBatch, SendingQueue
from sluice.collector.exporterhelper.retry import Attempt, ExportError, RetryPolicy
from sluice.policy import Signal

_GOARCH = {
    "x86_64": "amd64",
    "amd64": "amd64",
    "aarch64": "arm64",
    "arm64": "arm64",
    "i386": "386",
    "i686": "386",
    "armv7l": "arm",
    "armv6l": "arm",
}
"""Machine names as Go's ``runtime.GOARCH`` spells them (others as they are)."""
_ARCH = _GOARCH.get(platform.machine().lower(), platform.machine().lower())
_PLATFORM = f"({platform.system().lower()}/{_ARCH})"
USER_AGENT = f"Sluice Collector/{__version__} {_PLATFORM}"
"""What exporters call themselves outside a distribution (upstream:
``<description>/<version> (<GOOS>/<GOARCH>)``, such as ``(linux/amd64)``)."""
DEFAULT_SHUTDOWN_SECS = 10.0
"""How long shutdown waits for queued batches to be sent."""
_REJECTION_LOG_EVERY = 1.0
"""Seconds between two error lines about a full queue (each counts the refusals since)."""
_RETRY_HINT = " Try enabling retry_on_failure config option to retry on retryable errors."
_QUEUE_HINT = " Try enabling sending_queue to survive temporary failures."
"""What upstream adds to its export failure messages when a section is off."""


def user_agent(build_info: BuildInfo) -> str:
    """What an exporter of the running distribution calls itself, as
    upstream: ``<description>/<version> (<GOOS>/<GOARCH>)`` of its build info
    (a builder manifest's ``dist.description`` and ``dist.version``);
    USER_AGENT when there is none."""
    if build_info == BuildInfo():
        return USER_AGENT
    return f"{build_info.description}/{build_info.version} {_PLATFORM}"


class Sender(ABC):
    """What an exporter does with one batch: encode it once (``prepare``),
    then send it as many times as the retry policy asks (the attempt)."""

    async def start(self, host: Host) -> None:
        """Connect, resolve authenticators (raises to fail the start)."""
        return None

    @abstractmethod
    async def prepare(self, signal: Signal, data: Any) -> Attempt:
        """The attempt that sends `data`; raises ExportError (permanent) if
        the data cannot be encoded. Attempts raise ExportError on failure."""

    async def close(self) -> None:
        return None


class SignalExporter(Consumer):
    """One signal's way through an exporter."""

    def __init__(
        self,
        settings: Settings,
        signal: Signal,
        sender: Sender,
        queue: QueueSettings,
        retry: RetrySettings,
    ):
        self.signal = signal
        self.sender = sender
        self.exporter_id = str(settings.id)
        self.logger = settings.signal_logger(signal)
        metrics = settings.telemetry.exporter(self.exporter_id)
        self.sent = metrics.sent[signal]
        self.send_failed = metrics.send_failed[signal]
        self.enqueue_failed = metrics.enqueue_failed[signal]
        self.retry = RetryPolicy(retry, self.logger)
        self.settings = queue
        self.queue: SendingQueue | None = None
        if queue.enabled:
            self.queue = SendingQueue(queue.queue_size)
            settings.telemetry.queue(
                self.exporter_id, signal, lambda: float(self._queue_size()), queue.queue_size
            )
        self._tasks: list[asyncio.Task[None]] = []
        self._sending = 0
        self._settled = asyncio.Event()
        self._closed = False
        self.failure_hint = ("" if retry.enabled else _RETRY_HINT) + (
            "" if queue.enabled else _QUEUE_HINT
        )
        # Upstream applies the exporter's options a second time once its
        # queue exists, after handing the hint to the queue: its own message
        # (a full queue) then carries the hint twice.
        self.rejection_hint = self.failure_hint * 2 if queue.enabled else self.failure_hint
        self._rejected_items = 0
        self._rejection_logged_at = float("-inf")

    def _queue_size(self) -> int:
        return self.queue.used if self.queue is not None else 0

    def start(self) -> None:
        if self.queue is not None:
            self._tasks = [
                asyncio.create_task(self._send_queued(), name=f"{self.exporter_id}-sender-{i}")
                for i in range(self.settings.num_consumers)
            ]

    async def consume(self, data: Any) -> None:
        if self._closed:
            raise refused(f"exporter {self.exporter_id} is shutting down")
        items = pdata.item_count(self.signal, data)
        if self.queue is None:
            failure = await self._deliver([data], items, queued=False)
            if failure is not None:
                raise failure
            return
        batch = QueuedBatch(data, items, self._weigh(data, items))
        if self.settings.wait_for_result:
            batch.outcome = asyncio.get_running_loop().create_future()
        # A batch larger than the whole queue never fits: upstream's bounded
        # queue refuses it as full too, never waiting for room.
        if self.settings.blocks and batch.size <= self.queue.capacity:
            await self.queue.put(batch)
        elif not self.queue.offer(batch):
            self.enqueue_failed.inc(items)
            self._report_rejection(items)
            # Upstream's ErrQueueIsFull, which the receiver hands to the sender as it is.
            raise refused("sending queue is full")
        if batch.outcome is not None:
            await batch.outcome

    def _weigh(self, data: Any, items: int) -> int:
        sizer = self.settings.sizer
        if sizer == "items":
            return items
        if sizer == "bytes":
            return int(data.ByteSize())
        return 1

    def _report_rejection(self, items: int) -> None:
        """Upstream's entry for a full queue, once a second at most: its
        ``rejected_items`` counts the items refused since the last one."""
        self._rejected_items += items
        now = asyncio.get_running_loop().time()
        if now - self._rejection_logged_at < _REJECTION_LOG_EVERY:
            return
        self.logger.error(
            "Exporting failed. Rejecting data." + self.rejection_hint,
            extra={
                "fields": {"error": "sending queue is full", "rejected_items": self._rejected_items}
            },
        )
        self._rejection_logged_at = now
        self._rejected_items = 0

    async def _deliver(self, held: list[Any], items: int, queued: bool) -> ExportError | None:
        """Send the one message in `held` with retries; count and log the
        outcome. The failure, if any. The message is let go once encoded
        (`held` emptied), so a batch waiting on its upstream or on retries
        holds only its encoded bytes."""
        try:
            attempt = await self.sender.prepare(self.signal, held.pop())
            await self.retry.run(attempt)
        except ExportError as failure:
            self._lost(items, str(failure), queued)
            return failure
        except Exception as bug:  # a sender's bug must not end a sending task
            self.logger.exception("exporter %s failed unexpectedly", self.exporter_id)
            self._lost(items, f"unexpected error: {bug!r}", queued)
            return ExportError(f"unexpected error: {bug!r}", retryable=False)
        self.sent.inc(items)
        return None

    def _lost(self, items: int, reason: str, queued: bool) -> None:
        """Count and log a batch given up on: upstream's queue sender drops
        a queued one, its base exporter rejects one sent without the queue."""
        self.send_failed.inc(items)
        if queued:
            message, counted = "Exporting failed. Dropping data.", "dropped_items"
        else:
            message, counted = "Exporting failed. Rejecting data.", "rejected_items"
        self.logger.error(
            message + self.failure_hint, extra={"fields": {"error": reason, counted: items}}
        )

    async def _send_queued(self) -> None:
        assert self.queue is not None
        while True:
            batch = await self.queue.take()
            self._sending += 1
            try:
                held, batch.data = [batch.data], None
                failure = await self._deliver(held, batch.items, queued=True)
            except asyncio.CancelledError:
                self._lost(batch.items, "shutdown deadline passed while sending", True)
                _settle(batch, ExportError("exporter shut down", retryable=True))
                raise
            finally:
                self._sending -= 1
                self._settled.set()
            _settle(batch, failure)

    async def shutdown(self, deadline: float) -> None:
        """Stop taking data and retrying (as upstream, each queued batch gets
        one more attempt); send what is queued until `deadline` (loop time);
        count and log what is still queued then (also when the caller
        cancels the shutdown first)."""
        self._closed = True
        self.retry.stop()
        if self.queue is None:
            return
        try:
            async with asyncio.timeout_at(deadline):
                while len(self.queue) or self._sending:
                    self._settled.clear()
                    await self._settled.wait()
        except TimeoutError:
            pass
        finally:
            await self._abandon()

    async def _abandon(self) -> None:
        """Stop the sending tasks; what they or the queue still hold is lost."""
        assert self.queue is not None
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        left = self.queue.take_all()
        if left:
            items = sum(batch.items for batch in left)
            self._lost(items, f"{len(left)} batches still queued at the shutdown deadline", True)
            for batch in left:
                _settle(batch, ExportError("exporter shut down", retryable=True))


def _settle(batch: QueuedBatch, failure: ExportError | None) -> None:
    if batch.outcome is None or batch.outcome.done():
        return
    if failure is None:
        batch.outcome.set_result(None)
    else:
        batch.outcome.set_exception(failure)


class QueuedRetryExporter(Exporter):
    """An exporter of `signals` that sends through `sender`, with a queue
    and retries as configured."""

    def __init__(
        self,
        settings: Settings,
        signals: Iterable[Signal],
        sender: Sender,
        queue: QueueSettings,
        retry: RetrySettings,
    ):
        self.sender = sender
        self.signals = {
            signal: SignalExporter(settings, signal, sender, queue, retry) for signal in signals
        }

    def consumer(self, signal: Signal) -> Consumer:
        try:
            return self.signals[signal]
        except KeyError:
            raise ValueError(f"this exporter was not made for {SIGNAL_NAMES[signal]}") from None

    async def start(self, host: Host) -> None:
        await self.sender.start(host)
        for signal_exporter in self.signals.values():
            signal_exporter.start()

    async def shutdown(self, timeout: float = DEFAULT_SHUTDOWN_SECS) -> None:
        """Stop taking data, send what is queued within `timeout` seconds, close."""
        deadline = asyncio.get_running_loop().time() + timeout
        await asyncio.gather(*(s.shutdown(deadline) for s in self.signals.values()))
        await self.sender.close()
