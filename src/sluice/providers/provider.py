"""What every provider shares: a background thread that polls, with
exponential backoff and jitter after failures, never longer than the poll
interval, until it is stopped."""

from __future__ import annotations

import logging
import random
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence

from sluice.providers.config import ProviderConfig
from sluice.providers.registry import PolicyRegistry

log = logging.getLogger(__name__)

BACKOFF_START_SECS = 1.0
STOP_GRACE_SECS = 1.0
"""How much longer than its timeout :func:`stop_all` waits for a provider."""


class Provider(ABC):
    """One configured source of policies feeding a registry."""

    def __init__(self, config: ProviderConfig, registry: PolicyRegistry, order: int = 0):
        self.config = config
        self.registry = registry
        self.order = order
        self.failures = 0
        """Consecutive failed polls (0 after a success)."""
        self.errors = 0
        """Failed polls since the start (never reset)."""
        self.last_error = ""
        self.loaded = threading.Event()
        """Set once the provider has delivered a policy set."""
        self._stop = threading.Event()
        self._wake = threading.Event()
        """Ends the wait for the next poll: set by :meth:`refresh` and on stop."""
        self._thread: threading.Thread | None = None

    @abstractmethod
    def poll(self) -> bool:
        """One attempt to fetch and apply policies; True on success. Must not raise."""

    @property
    def interval(self) -> float:
        return self.config.poll_interval_secs

    def next_delay(self, ok: bool) -> float:
        if ok:
            self.failures = 0
            return self.interval
        self.failures += 1
        self.errors += 1
        backoff = min(self.interval, BACKOFF_START_SECS * 2 ** (self.failures - 1))
        return float(backoff * random.uniform(0.5, 1.0))

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                ok = self.poll()
            except Exception:  # a provider bug must not kill the thread: fail open
                log.exception("provider %s: unexpected error", self.config.id)
                ok = False
            self._wake.wait(self.next_delay(ok))
            self._wake.clear()

    def start(self) -> None:
        """Poll in a background (daemon) thread."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name=f"provider-{self.config.id}", daemon=True
            )
            self._thread.start()

    def refresh(self) -> None:
        """Poll now rather than at the end of the current wait (once the poll
        in progress, if any, has finished)."""
        self._wake.set()

    def stop(self) -> None:
        """Stop polling, waiting at most ``timeout_secs`` for a poll in progress."""
        self._halt(time.monotonic() + self.config.timeout_secs)

    def _halt(self, deadline: float) -> bool:
        """Stop the polling thread, waiting for a poll in progress until
        `deadline` (monotonic). True when no poll is running any more; a poll
        still running is left behind in its daemon thread."""
        self._stop.set()
        self._wake.set()
        thread, self._thread = self._thread, None
        if thread is None:
            return True
        thread.join(max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            log.warning("provider %s: a poll is still running; not waiting for it", self.config.id)
            return False
        return True

    def _record(self, ok: bool, error: str = "") -> bool:
        if ok:
            if self.last_error:
                log.info("provider %s: recovered", self.config.id)
            self.last_error = ""
        elif error != self.last_error:
            # last_error says what failed; what that means for the policies
            # is said here and by whoever shows it (Edge's /_health), once.
            kept = "; its last good policies stay active" if self.loaded.is_set() else ""
            log.error("provider %s: %s%s", self.config.id, error, kept)
            self.last_error = error
        return ok


def stop_all(providers: Sequence[Provider]) -> None:
    """Stop every provider at once, so that shutdown takes as long as the
    slowest provider's timeout, not their sum. A provider that overruns its
    timeout (plus :data:`STOP_GRACE_SECS`) is abandoned: it runs in a daemon
    thread, which cannot keep the process alive."""
    stoppers = [
        threading.Thread(target=p.stop, name=f"stop-{p.config.id}", daemon=True) for p in providers
    ]
    for stopper in stoppers:
        stopper.start()
    longest = max((p.config.timeout_secs for p in providers), default=0.0)
    deadline = time.monotonic() + longest + STOP_GRACE_SECS
    for provider, stopper in zip(providers, stoppers, strict=True):
        stopper.join(max(0.0, deadline - time.monotonic()))
        if stopper.is_alive():
            log.warning("provider %s did not stop in time; leaving it behind", provider.config.id)
