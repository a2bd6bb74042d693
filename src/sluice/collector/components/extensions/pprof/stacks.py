"""``/debug/pprof/threads``: every thread's current stack, then every asyncio
task of the event loop and where it waits, as text (Python's counterpart of
Go's ``goroutine?debug=2`` dump)."""

from __future__ import annotations

import asyncio
import sys
import threading
import traceback
from types import FrameType


def _frames(frames: list[FrameType]) -> list[str]:
    summary = traceback.StackSummary.extract(((f, f.f_lineno) for f in frames), lookup_lines=True)
    return summary.format()


def threads_text() -> str:
    """Call on the event loop's thread: its tasks are listed with it."""
    threads = {t.ident: t for t in threading.enumerate()}
    main = threading.main_thread().ident
    lines: list[str] = []
    for ident, frame in sorted(sys._current_frames().items(), key=lambda i: (i[0] != main, i[0])):
        thread = threads.get(ident)
        name = thread.name if thread is not None else "?"
        native = thread.native_id if thread is not None else None
        daemon = " daemon" if thread is not None and thread.daemon else ""
        lines.append(f"thread {name} (ident {ident}, native id {native}){daemon}:\n")
        lines.extend(traceback.format_stack(frame))
        lines.append("\n")
    tasks = sorted(asyncio.all_tasks(), key=lambda t: t.get_name())
    lines.append(f"asyncio tasks of the event loop: {len(tasks)}\n\n")
    for task in tasks:
        lines.append(f"task {task.get_name()} {task.get_coro()!r}:\n")
        lines.extend(_frames(task.get_stack()))
        lines.append("\n")
    return "".join(lines)
