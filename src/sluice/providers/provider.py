"""What every provider shares: a background thread that polls, with
exponential backoff and jitter after failures, never longer than the poll
interval, until it is stopped."""

from __future__ import annotations

import logging
import random
import threading
from abc import ABC, abstractmethod

from sluice.providers.config import ProviderConfig
from sluice.providers.registry import PolicyRegistry

log = logging.getLogger(__name__)

BACKOFF_START_SECS = 1.0


class Provider(ABC):
    """One configured source of policies feeding a registry."""

    def __init__(self, config: ProviderConfig, registry: PolicyRegistry, order: int = 0):
        self.config = config
        self.registry = registry
        self.order = order
        self.failures = 0
        """Consecutive failed polls (0 after a success)."""
        self.last_error = ""
        self.loaded = threading.Event()
        """Set once the provider has delivered a policy set."""
        self._stop = threading.Event()
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
        backoff = min(self.interval, BACKOFF_START_SECS * 2 ** (self.failures - 1))
        return float(backoff * random.uniform(0.5, 1.0))

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                ok = self.poll()
            except Exception:  # a provider bug must not kill the thread: fail open
                log.exception("provider %s: unexpected error", self.config.id)
                ok = False
            self._stop.wait(self.next_delay(ok))

    def start(self) -> None:
        """Poll in a background (daemon) thread."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name=f"provider-{self.config.id}", daemon=True
            )
            self._thread.start()

    def stop(self) -> None:
        """Stop polling (waits for a poll in progress to finish)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.config.timeout_secs + 5)
            self._thread = None

    def _record(self, ok: bool, error: str = "") -> bool:
        if ok:
            if self.last_error:
                log.info("provider %s: recovered", self.config.id)
            self.last_error = ""
        elif error != self.last_error:
            log.error("provider %s: %s", self.config.id, error)
            self.last_error = error
        return ok
