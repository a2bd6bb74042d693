"""Retrying one batch: exponential backoff between attempts, and a server's
requested delay honoured. (Each exporter bounds an attempt itself: the HTTP
client's timeout, the gRPC deadline.)

Only a retryable :class:`ExportError` is retried. The error that ends the
sequence keeps upstream's wording (``not retryable error: Permanent error:
…``, ``no more retries left: …``, ``request will be cancelled before next
retry: …``), so the log line that reports the loss says why.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable

from sluice.collector.component import ConsumerError
from sluice.collector.exporterhelper.config import RetrySettings
from sluice.collector.gotext import go_duration

Attempt = Callable[[], Awaitable[None]]
"""One try at sending a prepared batch."""


class ExportError(ConsumerError):
    """A failed attempt. `retryable` failures may succeed later (the server
    was unavailable, throttled, timed out); others never will (the server
    refused the data). `retry_after` is the server's requested delay (s);
    `code` the ``google.rpc.Code`` the server's answer stands for, if any.
    The one that ends a batch is, as it is, the exporter's refusal of it to
    whoever waits on the outcome."""


def throttled(message: str, delay: float) -> str:
    """The text of upstream's throttle error (exporterhelper's
    ``NewThrottleRetry``) around `message`: the server's delay in seconds as
    Go writes a duration (``0s`` when it named none)."""
    return f"Throttle ({go_duration(round(delay * 1e9))}), error: {message}"


class Backoff:
    """Upstream's exponential backoff: each delay is drawn uniformly within
    ``interval * (1 ± randomization_factor)``; the interval then grows by
    `multiplier`, up to `max_interval`. ``next_delay`` answers None once
    the drawn delay would take the sequence past `max_elapsed_time` (0:
    never); a server's requested delay (`at_least`) only lengthens the wait,
    as upstream, which checks the elapsed time before applying it."""

    def __init__(self, settings: RetrySettings, started: float, draw: Callable[[], float]):
        self.settings = settings
        self.started = started
        self.interval = float(settings.initial_interval)
        self._draw = draw

    def next_delay(self, now: float, at_least: float = 0.0) -> float | None:
        s = self.settings
        spread = s.randomization_factor * self.interval
        delay = self.interval - spread + self._draw() * 2 * spread
        self.interval = min(self.interval * s.multiplier, float(s.max_interval))
        if s.max_elapsed_time and (now - self.started) + delay > s.max_elapsed_time:
            return None
        return max(delay, at_least)


class RetryPolicy:
    """Runs attempts for the batches of one exporter signal.

    ``stop_by(deadline)`` (at shutdown) ends waits that would finish after
    `deadline`: such a batch fails at once instead of holding shutdown up.
    """

    def __init__(
        self,
        settings: RetrySettings,
        logger: logging.Logger,
        draw: Callable[[], float] = random.random,
    ):
        self.settings = settings
        self.logger = logger
        self._draw = draw
        self._deadline: float | None = None
        self._stopping = asyncio.Event()

    def stop_by(self, deadline: float) -> None:
        """From now on, no wait may end after `deadline` (event loop time)."""
        self._deadline = deadline
        self._stopping.set()

    async def run(self, attempt: Attempt) -> None:
        """Send until success; raises the ExportError that ended the sequence."""
        loop = asyncio.get_running_loop()
        backoff = Backoff(self.settings, loop.time(), self._draw)
        while True:
            try:
                await attempt()
                return
            except ExportError as failure:
                error = failure
            if not error.retryable:
                # Upstream's exporters return such a failure as
                # consumererror.NewPermanent; without retries nothing wraps it again.
                error = _final("Permanent error", error)
                raise _final("not retryable error", error) if self.settings.enabled else error
            if not self.settings.enabled:
                raise error
            now = loop.time()
            delay = backoff.next_delay(now, error.retry_after or 0.0)
            if delay is None:
                raise _final("no more retries left", error)
            if self._deadline is not None and now + delay > self._deadline:
                raise _final("request will be cancelled before next retry", error)
            interval = go_duration(round(delay * 1e9))
            self.logger.info(
                "Exporting failed. Will retry the request after interval.",
                extra={"fields": {"error": str(error), "interval": interval}},
            )
            if not await self._wait(now + delay):
                raise _final("request will be cancelled before next retry", error)

    async def _wait(self, until: float) -> bool:
        """Sleep until `until`; False as soon as shutdown's deadline comes first."""
        loop = asyncio.get_running_loop()
        while True:
            if self._deadline is not None and until > self._deadline:
                return False
            remaining = until - loop.time()
            if remaining <= 0:
                return True
            if self._stopping.is_set():
                await asyncio.sleep(remaining)
                return True
            try:
                async with asyncio.timeout(remaining):
                    await self._stopping.wait()
            except TimeoutError:
                return True


def _final(reason: str, error: ExportError) -> ExportError:
    return ExportError(
        f"{reason}: {error}",
        retryable=error.retryable,
        retry_after=error.retry_after,
        code=error.code,
    )
