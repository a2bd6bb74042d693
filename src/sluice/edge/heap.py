"""Give freed heap memory back to the operating system.

Request bodies are allocated in pieces below glibc's mmap threshold, so they
come from the process heap; after a burst (1 MiB bodies from many clients, a
flood of aborted uploads) the heap keeps its pages even once every byte is
free, and the resident size stays at the burst's peak. ``malloc_trim`` returns
free pages in the middle of the heap as well as at its top. It is called after
body traffic, at most every few seconds, from the event loop: a call walks the
free lists (well under a millisecond for Edge's heap).
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
from collections.abc import Callable

TRIM_EVERY_SECS = 5.0


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, or None on a C library without it (musl)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        trim = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


async def trim_after_traffic(bytes_seen: Callable[[], int]) -> None:
    """Forever: every TRIM_EVERY_SECS, trim the heap if `bytes_seen()` (a
    running count of body bytes received) moved since the last look."""
    trim = _malloc_trim()
    if trim is None:
        return
    last = bytes_seen()
    while True:
        await asyncio.sleep(TRIM_EVERY_SECS)
        now = bytes_seen()
        if now != last:
            last = now
            trim(0)
