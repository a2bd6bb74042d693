"""Give freed heap memory back to the operating system, and tell how much
the C heap and the process hold.

glibc keeps freed heap pages for reuse: after a burst (compiling pattern
databases, 1 MiB bodies from many clients, a flood of aborted uploads) the
resident size stays at the burst's peak even once every byte is free, which
matters in a 64 MiB sidecar. ``malloc_trim`` returns free pages in the middle
of the heap as well as at its top; a call walks the free lists (well under a
millisecond for Sluice's heap). On a C library without it (musl) this does
nothing.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import os
from collections.abc import Callable
from typing import Any

_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")

TRIM_EVERY_SECS = 5.0
"""After traffic, how often (at most) the event loop trims the heap."""


M_ARENA_MAX = -8
"""glibc's mallopt parameter for the number of malloc arenas."""
ARENAS = 2
"""Malloc arenas for the collector: the event loop's and one for its worker
threads (exporter compression, gRPC) to share. glibc's default (8 per core)
gives each worker thread its own arena, whose freed pages stay resident:
capping saved 10-20 MiB of peak RSS under gRPC load (bench/README.md). Edge,
which does no body work off the event loop, keeps the default: there the cap
cost 12-24% of throughput on 1 MiB bodies and saved nothing."""


def _libc_function(symbol: str) -> Callable[..., int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        function: Callable[..., int] = getattr(ctypes.CDLL(name), symbol)
    except (OSError, AttributeError):  # not glibc
        return None
    return function


_MALLOC_TRIM = _libc_function("malloc_trim")
_MALLOPT = _libc_function("mallopt")


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


_MALLINFO2: Any = _libc_function("mallinfo2")  # glibc 2.33+
if _MALLINFO2 is not None:
    _MALLINFO2.restype = _MallInfo2
    _MALLINFO2.argtypes = []


def resident_bytes() -> int:
    """The process's resident set size (``/proc/self/statm``)."""
    with open("/proc/self/statm", "rb") as statm:
        return int(statm.read().split()[1]) * _PAGE_SIZE


def c_heap() -> tuple[int, int] | None:
    """The C heap's bytes in use and bytes obtained from the OS (glibc's
    ``mallinfo2``); None where the C library cannot tell."""
    if _MALLINFO2 is None:
        return None
    info = _MALLINFO2()
    return info.uordblks + info.hblkhd, info.arena + info.hblkhd


def limit_arenas() -> None:
    """Cap malloc arenas at :data:`ARENAS` (call before starting threads;
    does nothing where ``MALLOC_ARENA_MAX`` is set or glibc is absent)."""
    if _MALLOPT is not None and "MALLOC_ARENA_MAX" not in os.environ:
        _MALLOPT(M_ARENA_MAX, ARENAS)


def release_free_memory() -> None:
    """Give the C heap's free memory back to the OS, now."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


async def trim_after_traffic(bytes_seen: Callable[[], int]) -> None:
    """Forever: every TRIM_EVERY_SECS, release free memory if `bytes_seen()`
    (a running count of body bytes received) moved since the last look."""
    if _MALLOC_TRIM is None:
        return
    last = bytes_seen()
    while True:
        await asyncio.sleep(TRIM_EVERY_SECS)
        now = bytes_seen()
        if now != last:
            last = now
            release_free_memory()
