"""Pause Python's cyclic garbage collector while a large object graph is built.

Loading or compiling 10,000 policies creates a few hundred thousand objects
that all stay alive. Each allocation burst triggers young collections, and
every tenth of those a full one that walks everything already alive, so the
work grows with the square of the graph: with the collector running, building
10,000 parsed policies from cache took 245 ms, without it 64 ms. None of these
objects is garbage, so there is nothing to find; cycles made meanwhile
elsewhere (the event loop keeps running) are collected once the pause ends.

Pauses nest and may overlap across threads: the collector is re-enabled when
the last one ends, and only if it was enabled when the first one began.
"""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_was_enabled = False


def _after_fork_in_child() -> None:
    """A forked child (the compiler's, a parse's) starts with the lock free:
    another thread may have held it at the fork."""
    global _lock
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)


@contextmanager
def collection_paused() -> Iterator[None]:
    """Run the body with the cyclic collector disabled."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
