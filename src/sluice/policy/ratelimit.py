"""Per-policy rate limiting with a fixed (tumbling) window."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


def monotonic_ms() -> float:
    return time.monotonic() * 1000.0


class RateLimiter:
    """Keeps at most `limit` decisions per `window_ms`.

    The window starts at the first decision and restarts at the first decision
    after it has expired (it is not aligned with the wall clock). Shared by all
    threads evaluating with the policy; state lives in memory only.
    """

    __slots__ = ("_clock", "_count", "_lock", "_start", "limit", "window_ms")

    def __init__(self, limit: int, window_ms: int, clock: Callable[[], float] = monotonic_ms):
        self.limit = limit
        self.window_ms = window_ms
        self._clock = clock
        self._start: float | None = None
        self._count = 0
        self._lock = threading.Lock()

    def allow(self) -> bool:
        now = self._clock()
        with self._lock:
            if self._start is None or now - self._start >= self.window_ms:
                self._start = now
                self._count = 0
            self._count += 1
            return self._count <= self.limit
