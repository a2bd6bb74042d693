"""The parent process of ``workers: N`` (N > 1), as gunicorn's arbiter or
nginx's master process is: it starts the workers, replaces one that exits
while Edge runs, forwards SIGTERM/SIGINT to every live worker (SIGHUP to
every serving one), and waits for them all before the caller removes the
group's directory.

- A worker that exits while Edge runs (killed by the out-of-memory killer or
  by hand, crashed) is logged at error level (its slot, pid, and exit code or
  signal), its last published counters are kept (:meth:`GroupRecord.retire`)
  and a new worker takes its slot on the same port (SO_REUSEPORT), counted in
  ``sluice_edge_worker_restarts_total``.
- Crash loops: the first unexpected exit is replaced at once; while workers
  keep exiting, replacements wait :data:`RESTART_DELAYS_SECS` (the k-th exit
  within :data:`CRASH_WINDOW_SECS`), and the exit after those (the fifth
  within a minute) stops Edge with exit status 1, so that the orchestrator's
  restart policy (Kubernetes' back-off) takes over and the failure shows. A
  worker of the first start that exits before it served (a port in use, a
  broken environment) stops Edge at once: its replacements would fail alike.
- A supervisor killed by SIGKILL takes its workers with it: each gets SIGTERM
  from the kernel (:func:`end_with_parent`) and drains.
- Stopping (SIGTERM or SIGINT, or giving up): SIGTERM goes to every worker
  not yet reaped (a pid is only reaped here, so it cannot belong to another
  process; an error on one worker does not stop the others'), pending
  replacements are dropped, and the supervisor waits for every worker, which
  drains on its own (:data:`sluice.edge.app.DRAIN_SECS`). A worker still
  running `stop_secs` after the signal is killed. The exit status is 0 when
  every worker that served exited 0; a worker the signal reached while it was
  still starting served nothing, so its death by the signal is no failure.
"""

from __future__ import annotations

import ctypes
import logging
import multiprocessing
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing import resource_tracker
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from pathlib import Path
from types import FrameType
from typing import Any

from sluice.edge.config import EdgeConfig
from sluice.edge.group import GroupRecord, worker_name

log = logging.getLogger(__name__)

RESTART_DELAYS_SECS = (0.0, 1.0, 2.0, 4.0)
"""The wait before a replacement, by how many workers exited unexpectedly
within :data:`CRASH_WINDOW_SECS` before this one (none: at once, so that
capacity comes back after a one-off kill); one exit more stops Edge."""
CRASH_WINDOW_SECS = 60.0
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)

PR_SET_PDEATHSIG = 1
"""prctl(2): the signal a process gets when its parent dies (Linux)."""

WorkerTarget = Callable[[EdgeConfig, str, str, str, Connection], None]
"""Runs one worker: ``(config, distribution, group directory, worker name,
connection)``; it sends one message on the connection once it serves."""


class RestartBudget:
    """When a worker that exited unexpectedly is replaced: after
    ``delays[k]`` seconds when k other unexpected exits happened within
    `window` seconds before it; never (give up) when there were more."""

    def __init__(
        self,
        delays: tuple[float, ...] = RESTART_DELAYS_SECS,
        window: float = CRASH_WINDOW_SECS,
    ) -> None:
        self.delays = delays
        self.window = window
        self._exits: list[float] = []

    def exited(self, now: float) -> float | None:
        """Note an unexpected exit at `now` (monotonic seconds): the wait
        before its replacement, or None to give up."""
        self._exits = [at for at in self._exits if now - at < self.window] + [now]
        earlier = len(self._exits) - 1
        return self.delays[earlier] if earlier < len(self.delays) else None

    @property
    def recent(self) -> int:
        """Unexpected exits within the window, as of the last one."""
        return len(self._exits)


@dataclass
class _Worker:
    slot: int
    name: str
    pid: int
    process: BaseProcess
    started: Connection | None
    """Where the worker reports that it serves (None once it did, or died)."""
    first: bool
    """Started with Edge, not as a replacement."""
    serving: bool = False


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _outcome(code: int) -> str:
    return f"was killed by {_signal_name(-code)}" if code < 0 else f"exited with code {code}"


def _fields(worker: _Worker, code: int) -> dict[str, Any]:
    ended = {"signal": _signal_name(-code)} if code < 0 else {"exit_code": code}
    return {"fields": {"worker": worker.slot, "pid": worker.pid, **ended}}


def end_with_parent() -> None:
    """In a worker: get SIGTERM (and drain, as on any SIGTERM) when the
    supervisor dies. Its own death by SIGKILL runs no code of its own, and
    its workers would serve on, unsupervised and unscraped (Linux; elsewhere
    they still do)."""
    parent = multiprocessing.parent_process()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
            return
    except (OSError, AttributeError):
        return
    if parent is not None and os.getppid() != parent.pid:
        os.kill(os.getpid(), signal.SIGTERM)  # it died before the signal was set


def _send(worker: _Worker, signum: int) -> None:
    try:
        os.kill(worker.pid, signum)
    except OSError as problem:  # gone already: its sentinel tells
        log.debug("worker %d (pid %d) not signalled: %s", worker.slot, worker.pid, problem)


def _pending_signals(fd: int) -> list[int]:
    """The signal numbers the wakeup fd carried (one byte each)."""
    received = b""
    while True:
        try:
            chunk = os.read(fd, 64)
        except BlockingIOError:
            return list(received)
        if not chunk:
            return list(received)
        received += chunk


def _keep_running(signum: int, frame: FrameType | None) -> None:
    """The handler of the stop signals and SIGHUP: the wakeup fd takes them to the loop."""


class Supervisor:
    """Runs ``config.workers`` workers of `target` until they are all stopped."""

    def __init__(
        self,
        config: EdgeConfig,
        distribution: str,
        directory: Path,
        target: WorkerTarget,
        stop_secs: float,
    ) -> None:
        self.config = config
        self.distribution = distribution
        self.target = target
        self.stop_secs = stop_secs
        self.record = GroupRecord(directory)
        self.budget = RestartBudget()
        self._context = multiprocessing.get_context("spawn")
        self._workers: list[_Worker] = []
        self._due: dict[int, tuple[float, str]] = {}
        """Replacements waiting: slot -> (when, why its worker ended)."""
        self._serial = 0
        self._stopping = False
        self._deadline: float | None = None
        self._failed = False

    def run(self) -> int:
        """Start the workers and supervise them until they are all stopped:
        0 after a clean stop, 1 when a worker failed it or Edge gave up."""
        wake, wake_write = os.pipe()
        os.set_blocking(wake, False)
        os.set_blocking(wake_write, False)
        previous_fd = signal.set_wakeup_fd(wake_write)
        previous = {
            signum: signal.signal(signum, _keep_running)
            for signum in (*STOP_SIGNALS, signal.SIGHUP)
        }
        try:
            self.record.write()
            for slot in range(self.config.workers):
                if not self._stopping:  # a worker that could not start gives up
                    self._start(slot, first=True)
            while self._workers or self._due:
                ready = wait(self._watched(wake), self._timeout())
                for worker in [w for w in self._workers if w.started in ready]:
                    self._served(worker)
                for worker in [w for w in self._workers if w.process.sentinel in ready]:
                    self._exited(worker)
                if wake in ready:
                    for signum in _pending_signals(wake):
                        if signum == signal.SIGHUP:
                            self._hang_up()
                        else:
                            self._stop(signum)
                self._start_due()
                self._kill_overdue()
        finally:
            self._abandon()
            signal.set_wakeup_fd(previous_fd)
            for signum, handler in previous.items():
                signal.signal(signum, handler)
            os.close(wake)
            os.close(wake_write)
        return 1 if self._failed else 0

    # -- the loop's steps -------------------------------------------------------------

    def _watched(self, wake: int) -> list[Any]:
        watched: list[Any] = [wake]
        for worker in self._workers:
            watched.append(worker.process.sentinel)
            if worker.started is not None:
                watched.append(worker.started)
        return watched

    def _timeout(self) -> float | None:
        moments = [when for when, _ in self._due.values()]
        if self._deadline is not None:
            moments.append(self._deadline)
        return max(0.0, min(moments) - time.monotonic()) if moments else None

    def _start(self, slot: int, first: bool) -> int | None:
        """Start a worker in `slot`: its pid (None: it could not start, handled)."""
        name = worker_name(self._serial)
        self._serial += 1
        started, report = self._context.Pipe(duplex=False)
        process = self._context.Process(
            target=self.target,
            args=(self.config, self.distribution, str(self.record.directory), name, report),
            name=f"sluice-edge {name}",
        )
        # The worker starts with SIGINT blocked (a signal mask survives exec):
        # Ctrl-C reaches the whole process group, and a worker still importing
        # would die of it with a traceback; this process stops the workers
        # instead. Edge unblocks it once its handlers are in place. The
        # resource tracker every spawn needs is started first: starting it
        # unblocks SIGINT on its way out, which the first worker would inherit.
        resource_tracker.ensure_running()
        masked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            process.start()
        except OSError as problem:
            started.close()
            log.error("cannot start worker %d: %s; %s", slot, problem, self._ended(slot, first))
            return None
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, masked)
            report.close()
        assert process.pid is not None
        self._workers.append(_Worker(slot, name, process.pid, process, started, first))
        return process.pid

    def _served(self, worker: _Worker) -> None:
        assert worker.started is not None
        try:
            worker.started.recv_bytes()
            worker.serving = True
        except (EOFError, OSError):
            pass  # it died before it served: its sentinel tells
        worker.started.close()
        worker.started = None
        self._count_serving()

    def _exited(self, worker: _Worker) -> None:
        worker.process.join()
        code = worker.process.exitcode
        assert code is not None
        worker.process.close()
        if worker.started is not None:
            worker.started.close()
        self._workers.remove(worker)
        self._count_serving()
        outcome = _outcome(code)
        fields = _fields(worker, code)
        if self._stopping:
            # A worker the signal reached while it started had served nothing.
            clean = code == 0 or not worker.serving
            self._failed |= not clean
            if code == 0:
                outcome = "stopped"
            else:
                outcome += " while stopping" if worker.serving else " before it served"
            level = logging.INFO if clean else logging.ERROR
            log.log(level, "worker %d (pid %d) %s", worker.slot, worker.pid, outcome, extra=fields)
            return
        self.record.retire(worker.name)
        first = worker.first and not worker.serving
        log.error(
            "worker %d (pid %d) %s; %s",
            worker.slot,
            worker.pid,
            outcome,
            self._ended(worker.slot, first, "killed" if code < 0 else "exited"),
            extra=fields,
        )

    def _ended(self, slot: int, first: bool, reason: str = "exited") -> str:
        """The worker of `slot` ended while Edge runs: schedule its replacement
        or give up; says which."""
        if first:
            self._give_up()
            return "it never served: stopping Edge"
        delay = self.budget.exited(time.monotonic())
        recent = f"{self.budget.recent} workers exited within {self.budget.window:.0f} s"
        if delay is None:
            self._give_up()
            return f"{recent}: stopping Edge"
        self._due[slot] = (time.monotonic() + delay, reason)
        return f"replacing it in {delay:g} s ({recent})" if delay else "replacing it"

    def _start_due(self) -> None:
        now = time.monotonic()
        for slot, (when, reason) in sorted(self._due.items()):
            if when > now:
                continue
            del self._due[slot]
            pid = self._start(slot, first=False)
            if pid is not None:
                self.record.restarted(reason)
                log.info("worker %d restarted as pid %d", slot, pid)

    def _count_serving(self) -> None:
        serving = sum(worker.serving for worker in self._workers)
        if serving != self.record.serving:
            self.record.serving = serving
            self.record.write()

    def _hang_up(self) -> None:
        """SIGHUP to every serving worker (each polls its policy providers
        now); one still starting loads them afresh anyway, and would not
        survive the signal before its handler is in place."""
        serving = [worker for worker in self._workers if worker.serving]
        log.info("SIGHUP: passing it on to %d serving workers", len(serving))
        for worker in serving:
            _send(worker, signal.SIGHUP)

    # -- stopping ---------------------------------------------------------------------

    def _stop(self, signum: int) -> None:
        if not self._stopping:
            log.info(
                "%s: stopping %d workers (each finishes its requests in flight)",
                _signal_name(signum),
                len(self._workers),
            )
        self._stop_all()

    def _give_up(self) -> None:
        self._failed = True
        self._stop_all()

    def _stop_all(self) -> None:
        """SIGTERM to every worker not reaped yet, and no more replacements.
        Workers stop alike on SIGTERM and SIGINT; SIGTERM ends one that is
        still starting without a KeyboardInterrupt traceback."""
        if not self._stopping:
            self._stopping = True
            self._due.clear()
            self._deadline = time.monotonic() + self.stop_secs
        for worker in self._workers:
            _send(worker, signal.SIGTERM)

    def _kill_overdue(self) -> None:
        if self._deadline is None or time.monotonic() < self._deadline:
            return
        self._deadline = None
        if self._workers:
            log.error(
                "workers still running %.0f s after the stop: killing pids %s",
                self.stop_secs,
                ", ".join(str(worker.pid) for worker in self._workers),
            )
            for worker in self._workers:
                _send(worker, signal.SIGKILL)

    def _abandon(self) -> None:
        """After an error in the loop: stop the workers left, so that none
        outlives the parent (or keeps it from exiting)."""
        for worker in self._workers:
            _send(worker, signal.SIGTERM)
        for worker in self._workers:
            worker.process.join(self.stop_secs)
            if worker.process.exitcode is None:
                _send(worker, signal.SIGKILL)
                worker.process.join()
