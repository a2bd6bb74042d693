"""The event loop Edge and the collector serve on: uvloop, with the GIL handed
between threads every millisecond instead of Python's default five.

A policy update parses and compiles on a thread of the serving process (the
compilers run in child processes, the rest in Python). uvloop takes the GIL
for each I/O callback and lets it go after it, so in one pass over its ready
sockets the loop asks for the GIL once per socket, and while that thread
computes, each ask waits for the thread's switch interval to run out. With 50
busy connections a request waited out dozens of those. Applying 10,000 new
policies under load (`bench/policy_load.py`'s scenario, with a client timing
every request), the longest request took 67-100 ms (median of 8 runs 84) with
5 ms and 23-75 ms (median of 11 runs 37) with 1 ms; throughput and the
update's duration did not move. When only the loop runs, nothing waits for the
GIL and the interval costs nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Coroutine
from typing import Any, Final, TypeVar

import uvloop

SWITCH_INTERVAL_S: Final = 0.001
"""How long a thread holds the GIL while another one waits for it."""

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run `main` to completion on a new uvloop event loop."""
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    return uvloop.run(main)
