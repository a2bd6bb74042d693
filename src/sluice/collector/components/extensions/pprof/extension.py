"""The ``pprof`` extension: Go's ``net/http/pprof`` endpoints, answered with
the Python process's profiles in the same pprof format, so that
``go tool pprof http://localhost:1777/debug/pprof/profile`` (or any pprof
reader) works against the collector.

Nothing here holds the event loop: while a CPU profile records, the handler
only sleeps (samples are taken by a signal handler, see :mod:`.cpu`), and
heap snapshots and the encoding of every profile run in worker threads.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import sys
import time
import tracemalloc
from html import escape
from typing import BinaryIO
from urllib.parse import parse_qs

from sluice.collector.component import Component, Host
from sluice.collector.components.extensions.pprof import heap
from sluice.collector.components.extensions.pprof.config import PprofConfig
from sluice.collector.components.extensions.pprof.cpu import (
    SAMPLER,
    ProfilingUnavailable,
    Recording,
)
from sluice.collector.components.extensions.pprof.stacks import threads_text
from sluice.collector.servemux import NOSNIFF, TEXT_PLAIN, not_found, redirect_answer
from sluice.transport.http_message import Request, Response
from sluice.transport.listener import HttpListener

PREFIX = "/debug/pprof/"
PATTERNS = (PREFIX, *(PREFIX + name for name in ("cmdline", "profile", "symbol", "trace")))
"""What ``net/http/pprof`` registers on Go's default ``ServeMux``: the
index serves the whole ``/debug/pprof/`` subtree."""
DEFAULT_SECONDS = 30
"""A CPU profile's length when ``seconds`` is missing or not a positive integer (Go's)."""
_INTEGER = re.compile(r"[+-]?[0-9]+")
_OCTETS = b"application/octet-stream"

PROFILES = {
    "profile": "CPU profile: where the Python threads spent CPU time for ?seconds=N "
    "(default 30). Open it with go tool pprof.",
    "heap": "Memory Python allocated and still holds, by allocating stack (tracemalloc; "
    "the first request starts tracing). ?seconds=N: the change over N seconds; ?gc=1: "
    "collect garbage first; ?debug=1: as text.",
    "threads": "Every thread's current stack, and the event loop's asyncio tasks, as text.",
    "cmdline": "The command line, arguments separated by NUL bytes.",
}

_running = False
"""Upstream allows one pprof extension per process (profiling settings are
process-wide); so does this one."""


class PprofExtension(Component):
    def __init__(self, config: PprofConfig, logger: logging.Logger):
        self.config = config
        self.logger = logger
        self.listener: HttpListener | None = None
        self.functions = heap.SourceFunctions()
        self._stopping = asyncio.Event()
        self._active = False
        self._traced_by_us = False
        self._run_recording: Recording | None = None
        self._run_file: BinaryIO | None = None

    async def start(self, host: Host) -> None:
        global _running
        if _running:
            raise RuntimeError("only a single pprof extension instance can be running per process")
        _running = self._active = True
        try:
            self.listener = await HttpListener.start(self.handle, self.config.endpoint)
            for key in ("block_profile_fraction", "mutex_profile_fraction"):
                if getattr(self.config, key) > 0:
                    self.logger.warning(
                        "%s has no effect: Python has no blocking or mutex contention profiler",
                        key,
                    )
            self.logger.info("Starting net/http/pprof server on %s", self.config.endpoint)
            if self.config.save_to_file:
                self._run_file = open(self.config.save_to_file, "wb")  # noqa: SIM115 (closed at shutdown)
                self._run_recording = SAMPLER.open()
        except BaseException:
            await self.shutdown()
            raise

    async def shutdown(self) -> None:
        global _running
        self._stopping.set()
        if self.listener is not None:
            await self.listener.stop()
            self.listener = None
        if self._run_recording is not None and self._run_file is not None:
            recording = SAMPLER.close(self._run_recording)
            try:
                self._run_file.write(await asyncio.to_thread(recording.profile))
                self.logger.info("CPU profile of the run written to %s", self.config.save_to_file)
            except OSError as problem:
                self.logger.error("cannot write %s: %s", self.config.save_to_file, problem)
        if self._run_file is not None:
            self._run_file.close()
        self._run_recording = self._run_file = None
        if self._traced_by_us:
            tracemalloc.stop()
            self._traced_by_us = False
        if self._active:
            _running = self._active = False

    async def handle(self, request: Request) -> Response:
        redirected = redirect_answer(request.method, request.path, request.query, PATTERNS)
        if redirected is not None:
            return redirected  # /debug/pprof goes to /debug/pprof/, as Go's ServeMux
        if request.path == PREFIX:
            return Response(200, _index(), content_type=b"text/html; charset=utf-8")
        if not request.path.startswith(PREFIX):
            return not_found()
        name = request.path[len(PREFIX) :]
        query = {k: v[0] for k, v in parse_qs(request.query, keep_blank_values=True).items()}
        if name == "profile":
            return await self._cpu(query)
        if name == "heap":
            return await self._heap(query)
        if name == "threads":
            return Response(200, threads_text().encode(), [NOSNIFF], content_type=TEXT_PLAIN)
        if name == "cmdline":
            return Response(200, "\x00".join(sys.argv).encode(), [NOSNIFF], TEXT_PLAIN)
        return _error(404, "Unknown profile")

    async def _wait(self, seconds: int) -> None:
        """`seconds`, or until the extension stops."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), seconds)

    async def _cpu(self, query: dict[str, str]) -> Response:
        seconds = _positive(query.get("seconds")) or DEFAULT_SECONDS
        try:
            recording = SAMPLER.open()
        except ProfilingUnavailable as problem:
            return _error(500, f"Could not enable CPU profiling: {problem}")
        try:
            await self._wait(seconds)
        finally:
            SAMPLER.close(recording)
        return _download("profile", await asyncio.to_thread(recording.profile))

    async def _heap(self, query: dict[str, str]) -> Response:
        collect = (_positive(query.get("gc")) or 0) > 0
        debug = (_positive(query.get("debug")) or 0) > 0
        seconds = _positive(query["seconds"]) if "seconds" in query else 0
        if seconds is None:
            return _error(400, 'invalid value for "seconds" - must be a positive integer')
        if seconds and debug:
            return _error(400, "seconds and debug params are incompatible")
        if await asyncio.to_thread(heap.ensure_tracing, self.functions):
            self._traced_by_us = True
            self.logger.warning(
                "tracemalloc started for /debug/pprof/heap (%d frames per allocation): "
                "allocations are slower until the collector stops",
                heap.FRAMES,
            )
        start_ns, started = time.time_ns(), time.monotonic_ns()
        before = None
        if seconds:
            before = await asyncio.to_thread(heap.snapshot, collect)
            await self._wait(seconds)
        now = await asyncio.to_thread(heap.snapshot, collect)
        if debug:
            text = await asyncio.to_thread(_heap_text, now)
            return Response(200, text, [NOSNIFF], content_type=TEXT_PLAIN)
        duration_ns = time.monotonic_ns() - started if seconds else 0
        body = await asyncio.to_thread(
            heap.heap_profile, now, before, self.functions, start_ns, duration_ns
        )
        return _download("heap-delta" if seconds else "heap", body)


def _positive(text: str | None) -> int | None:
    """A positive integer as Go's ``strconv.ParseInt`` reads it, else None."""
    if text is None or not _INTEGER.fullmatch(text):
        return None
    value = int(text)
    return value if value > 0 else None


def _download(filename: str, body: bytes) -> Response:
    disposition = f'attachment; filename="{filename}"'.encode()
    return Response(
        200, body, [NOSNIFF, (b"Content-Disposition", disposition)], content_type=_OCTETS
    )


def _error(status: int, text: str) -> Response:
    """Go's ``serveError``: the text and a marker header."""
    return Response(
        status, (text + "\n").encode(), [(b"X-Go-Pprof", b"1"), NOSNIFF], content_type=TEXT_PLAIN
    )


def _heap_text(snapshot: tracemalloc.Snapshot) -> bytes:
    stats = snapshot.statistics("lineno")
    count = sum(s.count for s in stats)
    size = sum(s.size for s in stats)
    lines = [f"heap profile: {count} blocks, {size} bytes in use (tracemalloc, by line)"]
    for stat in stats:
        frame = stat.traceback[0]
        lines.append(f"{stat.size} bytes in {stat.count} blocks: {frame.filename}:{frame.lineno}")
    return ("\n".join(lines) + "\n").encode()


def _index() -> bytes:
    rows = "\n".join(
        f'<tr><td><a href="{name}{"?seconds=30" if name == "profile" else ""}">{name}</a></td>'
        f"<td>{escape(text)}</td></tr>"
        for name, text in PROFILES.items()
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>/debug/pprof/</title>
<style>body {{ font-family: system-ui, sans-serif; margin: 1.5em; }}
td {{ padding: 0.3em 0.8em; vertical-align: top; }}</style></head>
<body>
<h2>/debug/pprof/</h2>
<p>Profiles of this Python process in pprof's format
(<code>go tool pprof http://HOST:PORT/debug/pprof/profile?seconds=30</code>):</p>
<table>
{rows}
</table>
<p>Go's block, mutex, goroutine, allocs, threadcreate and trace profiles have no
counterpart in Python and are not served.</p>
</body></html>
""".encode()
