"""Retrying one batch: exponential backoff between attempts, and a server's
requested delay honoured. (Each exporter bounds an attempt itself: the HTTP
client's timeout, the gRPC deadline.)

Only a retryable :class:`ExportError` is retried. The error that ends the
sequence keeps upstream's wording (``not retryable error: Permanent error:
…``, ``no more retries left: …``, ``interrupted due to shutdown: …``), so
the log line that reports the loss says why.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable

from sluice.collector.component import ComponentLog, ConsumerError
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

    ``stop()`` (at shutdown) ends retrying, as upstream shuts its retry
    sender down before draining the queue: a batch waiting for its next
    attempt, or failing from then on, fails at once.
    """

    def __init__(
        self,
        settings: RetrySettings,
        logger: ComponentLog,
        draw: Callable[[], float] = random.random,
    ):
        self.settings = settings
        self.logger = logger
        self._draw = draw
        self._stopping = asyncio.Event()

    def stop(self) -> None:
        """From now on, no failed attempt is retried."""
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
            delay = backoff.next_delay(loop.time(), error.retry_after or 0.0)
            if delay is None:
                raise _final("no more retries left", error)
            interval = go_duration(round(delay * 1e9))
            self.logger.info(
                "Exporting failed. Will retry the request after interval.",
                extra={"fields": {"error": str(error), "interval": interval}},
            )
            if not await self._wait(delay):
                # experr's shutdown error: not permanent, it wraps the failure.
                raise _final("interrupted due to shutdown", error)

    async def _wait(self, delay: float) -> bool:
        """Sleep `delay` seconds; False at once when the policy is (or gets) stopped."""
        if self._stopping.is_set():
            return False
        try:
            async with asyncio.timeout(delay):
                await self._stopping.wait()
        except TimeoutError:
            return True
        return False


def _final(reason: str, error: ExportError) -> ExportError:
    return ExportError(
        f"{reason}: {error}",
        retryable=error.retryable,
        retry_after=error.retry_after,
        code=error.code,
    )
