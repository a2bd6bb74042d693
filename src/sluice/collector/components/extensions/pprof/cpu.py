"""CPU profiles of every Python thread, sampled on CPU time as Go's are.

While a recording is open (a ``/debug/pprof/profile`` request, or the whole
run with ``save_to_file``), the kernel sends the process ``SIGPROF`` for
every 10 ms of CPU it uses (``setitimer(ITIMER_PROF)``). Python runs the
handler on the main thread, which runs the event loop, at its next bytecode:
the interrupted frame is exactly where the loop's Python code was burning
CPU. Each sample charges a thread the CPU time it used since the previous
sample (per-thread CPU clocks) at the stack it is in now: the main thread's
interrupted stack, and every other thread's current stack
(``sys._current_frames``). A thread that waited used no CPU and leaves no
sample; an idle process gets no signals at all.

Why not a sampler thread reading ``sys._current_frames``: it needs the GIL
to read stacks, and uvloop hands the GIL over between every I/O callback, so
such a thread almost only ever sees the loop between callbacks (measured:
99% of the CPU charged to ``asyncio.Runner.run``), never inside them.

Cost: per sample (every 10 ms of CPU, only while recording), one stack walk
per thread that used CPU, bounded at :data:`MAX_DEPTH` frames, and a
dictionary update per open recording: tens of microseconds, well under 1% of
the CPU. Recordings are opened and closed on the main thread only, where the
handler runs, so nothing here takes a lock (a lock taken by a signal handler
could be held by the code it interrupted).
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from types import CodeType, FrameType
from typing import Any

from sluice.collector.components.extensions.pprof.builder import ProfileBuilder

PERIOD_NS = 10_000_000
"""CPU time between samples (Go's 100 Hz)."""
MAX_DEPTH = 128
"""Deeper stacks keep their innermost frames."""
_PER_THREAD_CLOCKS = sys.platform.startswith("linux")
"""Only Linux lets one thread read another's CPU clock; elsewhere only the
main thread is sampled."""

Stack = tuple[tuple[CodeType, int], ...]
"""(code, line) pairs, innermost first."""


class ProfilingUnavailable(Exception):
    """CPU profiling cannot start here (the message says why)."""


def _thread_cpu_ns(native_id: int) -> int:
    """CPU time another thread has used (raises OSError once it is gone).
    Linux's clock id for a thread's CPU time, as glibc's
    ``pthread_getcpuclockid`` builds it, and safe for a thread that exited."""
    return time.clock_gettime_ns(((~native_id) << 3) | 6)


def _stack(frame: FrameType | None) -> Stack:
    stack: list[tuple[CodeType, int]] = []
    while frame is not None and len(stack) < MAX_DEPTH:
        stack.append((frame.f_code, frame.f_lineno or 0))
        frame = frame.f_back
    return tuple(stack)


class Recording:
    """CPU time seen while it is open, by thread name and stack:
    [samples, nanoseconds]."""

    def __init__(self) -> None:
        self.start_ns = time.time_ns()
        self._opened = time.monotonic_ns()
        self.duration_ns = 0
        self.samples: dict[tuple[str, Stack], list[int]] = {}

    def closed(self) -> None:
        self.duration_ns = time.monotonic_ns() - self._opened

    def profile(self) -> bytes:
        """The gzipped pprof profile (``samples/count``, ``cpu/nanoseconds``)."""
        builder = ProfileBuilder(
            [("samples", "count"), ("cpu", "nanoseconds")],
            ("cpu", "nanoseconds"),
            PERIOD_NS,
            self.start_ns,
        )
        names: dict[CodeType, str] = {}
        for (thread, stack), values in self.samples.items():
            locations = []
            for code, line in stack:
                name = names.get(code)
                if name is None:
                    name = names[code] = builder.qualified(code.co_qualname, code.co_filename)
                locations.append(
                    builder.location(name, code.co_filename, code.co_firstlineno, line)
                )
            builder.sample(locations, values, thread)
        return builder.gzipped(self.duration_ns)


class CpuSampler:
    """Feeds every open :class:`Recording` from ``SIGPROF``; the timer runs
    only while a recording is open. One per process (signals are)."""

    def __init__(self) -> None:
        self._recordings: list[Recording] = []
        self._installed = False
        self._main_used = 0
        self._used: dict[int, int] = {}
        """Native thread id -> its CPU time at the previous sample."""

    def open(self) -> Recording:
        """Start a recording (on the main thread: raises
        :class:`ProfilingUnavailable` elsewhere)."""
        if threading.current_thread() is not threading.main_thread():
            raise ProfilingUnavailable("the event loop does not run on the main thread")
        if not self._installed:
            # Installed once and left in place: restoring the default action
            # could let a signal still in flight end the process.
            signal.signal(signal.SIGPROF, self._on_signal)
            signal.siginterrupt(signal.SIGPROF, False)
            self._installed = True
        recording = Recording()
        if not self._recordings:
            self._main_used = time.thread_time_ns()
            self._used = {}
            seconds = PERIOD_NS / 1e9
            signal.setitimer(signal.ITIMER_PROF, seconds, seconds)
        self._recordings.append(recording)
        return recording

    def close(self, recording: Recording) -> Recording:
        """Stop feeding `recording` (the timer stops with the last one)."""
        if recording in self._recordings:
            self._recordings.remove(recording)
            if not self._recordings:
                signal.setitimer(signal.ITIMER_PROF, 0, 0)
        recording.closed()
        return recording

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        try:
            if self._recordings:
                self._record(self._sample(frame))
        except Exception:  # never into the interrupted code
            return

    def _sample(self, frame: FrameType | None) -> list[tuple[tuple[str, Stack], int]]:
        """(thread name and stack, CPU ns since the previous sample) of every
        thread that used CPU."""
        seen = []
        now = time.thread_time_ns()
        used, self._main_used = now - self._main_used, now
        main = threading.main_thread()
        if used > 0 and frame is not None:
            seen.append(((main.name, _stack(frame)), used))
        if not _PER_THREAD_CLOCKS:
            return seen
        # threading's own table, read without its lock (which the
        # interrupted code may hold), as threading.current_thread does.
        threads: dict[int, Any] = threading._active  # type: ignore[attr-defined]
        before, self._used = self._used, {}
        for ident, at in sys._current_frames().items():
            thread = threads.get(ident)
            if ident == main.ident or thread is None or thread.native_id is None:
                continue
            try:
                now = _thread_cpu_ns(thread.native_id)
            except OSError:
                continue  # exited meanwhile
            self._used[thread.native_id] = now
            previous = before.get(thread.native_id)
            if previous is not None and now > previous:
                seen.append(((thread.name, _stack(at)), now - previous))
        return seen

    def _record(self, seen: list[tuple[tuple[str, Stack], int]]) -> None:
        for recording in self._recordings:
            samples = recording.samples
            for key, cpu in seen:
                values = samples.get(key)
                if values is None:
                    samples[key] = [1, cpu]
                else:
                    values[0] += 1
                    values[1] += cpu


SAMPLER = CpuSampler()
