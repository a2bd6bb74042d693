"""Heap profiles from ``tracemalloc``: the memory Python allocated and still
holds, by the stack that allocated it.

Tracing costs every allocation time and memory (each live block keeps its
stack), so it is off until it is wanted: the first ``/debug/pprof/heap``
request starts it (with :data:`FRAMES` frames per stack) and it stays on
until the extension stops, so that later requests see what was allocated
since. Started that way, the first answer covers only the moment since;
``?seconds=N`` on that request waits N seconds first. To trace from process
start instead, run the collector with Python's own ``PYTHONTRACEMALLOC=<frames>``.

tracemalloc records files and lines, not functions: each frame's function
is found from the code objects of the module loaded from its file (learnt
once per file and kept).
"""

from __future__ import annotations

import gc
import sys
import tracemalloc
from collections.abc import Iterator
from types import CodeType, FunctionType
from typing import Any

from sluice.collector.components.extensions.pprof.builder import ProfileBuilder, code_filename

FRAMES = 32
"""Frames kept per allocation when a request starts tracing."""


class SourceFunctions:
    """Which function a line of a loaded module belongs to, from the code
    objects the module holds (its functions, methods and classes, and the
    functions, lambdas and comprehensions nested in them), not from its
    source: parsing source while tracemalloc traces every allocation of the
    syntax tree takes minutes."""

    def __init__(self) -> None:
        self._files: dict[str, list[tuple[str, int]]] = {}
        """File -> (qualname, first line) of every line, index 0 unused."""

    def function(self, filename: str, line: int) -> tuple[str, int]:
        """(qualname, first line) of the innermost function or class around
        `line`; ``<module>`` at the top level or when the file is unknown."""
        lines = self._files.get(filename)
        if lines is None:
            lines = self._files[filename] = _painted(filename)
        return lines[line] if 0 < line < len(lines) else _TOP

    def learn_loaded(self) -> None:
        """Learn every loaded module now (a tenth of a second), before
        tracing starts: under tracing the same work takes ten times longer."""
        for name, module in list(sys.modules.items()):
            filename = code_filename(name, module)
            if filename is not None and filename not in self._files:
                self._files[filename] = _painted(filename)


_TOP = ("<module>", 1)


def _painted(filename: str) -> list[tuple[str, int]]:
    """Every line's innermost function: outer spans first, inner ones over them."""
    spans = []
    for code in _codes(filename):
        lines = [line for _, _, line in code.co_lines() if line is not None]
        last = max(lines, default=code.co_firstlineno)
        spans.append((code.co_firstlineno, -last, code.co_qualname))
    if not spans:
        return []
    spans.sort()
    painted = [_TOP] * (max(-last for _, last, _ in spans) + 1)
    for first, negative_last, qualname in spans:
        painted[first : 1 - negative_last] = [(qualname, first)] * (1 - negative_last - first)
    return painted


def _codes(filename: str) -> Iterator[CodeType]:
    """The code objects of `filename` that its loaded module reaches."""
    modules = [m for n, m in list(sys.modules.items()) if code_filename(n, m) == filename]
    pending: list[Any] = [value for m in modules for value in vars(m).values()]
    seen: set[int] = set()
    while pending:
        item = pending.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, CodeType):
            if item.co_filename == filename:
                yield item
            pending.extend(c for c in item.co_consts if isinstance(c, CodeType))
        elif isinstance(item, FunctionType):
            pending.append(item.__code__)
            pending.append(getattr(item, "__wrapped__", None))
        elif isinstance(item, staticmethod | classmethod):
            pending.append(item.__func__)
        elif isinstance(item, property):
            pending.extend((item.fget, item.fset, item.fdel))
        elif isinstance(item, type) and any(item.__module__ == m.__name__ for m in modules):
            pending.extend(vars(item).values())


def ensure_tracing(functions: SourceFunctions) -> bool:
    """Start tracing unless it runs (learning the loaded modules' functions
    first); True when this call started it."""
    if tracemalloc.is_tracing():
        return False
    functions.learn_loaded()
    tracemalloc.start(FRAMES)
    return True


def snapshot(collect: bool) -> tracemalloc.Snapshot:
    """What is allocated now (after a full collection with `collect`, as
    Go's ``?gc=1``)."""
    if collect:
        gc.collect()
    return tracemalloc.take_snapshot()


def heap_profile(
    now: tracemalloc.Snapshot,
    before: tracemalloc.Snapshot | None,
    functions: SourceFunctions,
    start_ns: int,
    duration_ns: int = 0,
) -> bytes:
    """``inuse_objects/count`` and ``inuse_space/bytes`` by stack; with
    `before`, the change since it (negative where memory was freed), as Go's
    ``?seconds=N`` delta profiles."""
    builder = ProfileBuilder(
        [("inuse_objects", "count"), ("inuse_space", "bytes")], ("space", "bytes"), 1, start_ns
    )
    if before is None:
        stats = [(s.traceback, s.count, s.size) for s in now.statistics("traceback")]
    else:
        stats = [
            (d.traceback, d.count_diff, d.size_diff)
            for d in now.compare_to(before, "traceback")
            if d.count_diff or d.size_diff
        ]
    spots: dict[tuple[str, int], int] = {}
    for traceback, count, size in stats:
        # tracemalloc's own (file, line) pairs, oldest first (a Frame object
        # per frame would cost more than the rest); most of them recur.
        frames: list[tuple[str, int]] = traceback._frames[::-1]  # type: ignore[attr-defined]
        for spot in frames:
            if spot not in spots:
                qualname, first = functions.function(*spot)
                name = builder.qualified(qualname, spot[0])
                spots[spot] = builder.location(name, spot[0], first, spot[1])
        builder.sample([spots[spot] for spot in frames], [count, size])
    return builder.gzipped(duration_ns)
