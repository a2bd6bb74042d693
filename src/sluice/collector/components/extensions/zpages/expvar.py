"""``/debug/expvarz``: the process's variables as one JSON object, the way
Go's ``expvar`` handler serves ``cmdline`` and ``memstats``.

Go's ``memstats`` describe Go's allocator, which a Python process does not
have; ``python`` holds the interpreter's counterparts instead (garbage
collector generations and collections, allocated blocks, threads, resident
memory).
"""

from __future__ import annotations

import gc
import json
import resource
import sys
import threading
from typing import Any

from sluice.heap import resident_bytes


def variables() -> bytes:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    try:
        resident = resident_bytes()
    except OSError:  # no /proc
        resident = 0
    python: dict[str, Any] = {
        "version": sys.version,
        "allocated_blocks": sys.getallocatedblocks(),
        "gc_counts": list(gc.get_count()),
        "gc_thresholds": list(gc.get_threshold()),
        "gc_stats": gc.get_stats(),
        "threads": threading.active_count(),
        "resident_bytes": resident,
        "max_resident_bytes": usage.ru_maxrss * 1024,
        "user_cpu_seconds": usage.ru_utime,
        "system_cpu_seconds": usage.ru_stime,
    }
    return json.dumps({"cmdline": sys.argv, "python": python}, indent=2).encode()
