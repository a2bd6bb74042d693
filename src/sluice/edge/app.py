"""Running Edge: providers in the background, the listener at once, graceful
shutdown on SIGTERM/SIGINT, and ``workers`` processes sharing the port (under
a parent that supervises them, :mod:`sluice.edge.supervisor`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import shutil
import signal
import socket
import tempfile
from collections.abc import Callable
from dataclasses import replace
from multiprocessing.connection import Connection
from pathlib import Path

from sluice import heap
from sluice.edge.config import EdgeConfig
from sluice.edge.datadog_intake import loggable_path
from sluice.edge.group import WorkerGroup
from sluice.edge.routes import Edge
from sluice.edge.supervisor import Supervisor, end_with_parent
from sluice.logs import configure_logging, redact_url
from sluice.policy.cache import CompileCache
from sluice.policy.databases import SIDECAR_BUDGET_MIB
from sluice.providers import PolicyRegistry, Provider, make_providers, stop_all
from sluice.providers.provider import STOP_GRACE_SECS
from sluice.transport import loop
from sluice.transport.connections import ConnectionTracker, ServerLimits
from sluice.transport.http_server import HttpServerProtocol
from sluice.transport.listener import bind

log = logging.getLogger("sluice.edge")

DRAIN_SECS = 10.0
STOP_MARGIN_SECS = 5.0
"""What a worker may take to stop beyond its drain and its providers' last
syncs before the parent kills it (see :func:`_stop_secs`)."""


async def serve(
    config: EdgeConfig,
    distribution: str,
    sock: socket.socket,
    ready: Callable[[int], None] | None = None,
    group: WorkerGroup | None = None,
) -> None:
    """Serve until SIGTERM/SIGINT, then drain and report. `ready(port)` is
    called once Edge serves; `group`: the worker group's shared counters, when
    this is one of ``workers``."""
    loop = asyncio.get_running_loop()
    # First of all: a stop signal arriving while Edge starts stops it
    # gracefully once it has started, rather than killing it.
    stopping = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stopping.set)
    providers: list[Provider] = []
    loop.add_signal_handler(signal.SIGHUP, _refresh, providers)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # a worker starts with it blocked
    registry = PolicyRegistry(cache=CompileCache.default(SIDECAR_BUDGET_MIB))
    providers += make_providers(list(config.policy_providers), registry, config.service)
    for provider in providers:
        provider.start()  # traffic before the first load passes unfiltered
    edge = Edge(config, registry, providers, distribution=distribution, group=group)
    limits = _within_descriptor_limit(config.limits)
    tracker = ConnectionTracker(
        limits, refused=lambda status: edge.metrics.request("server", status)
    )
    server = await loop.create_server(
        lambda: HttpServerProtocol(edge.handle, limits, tracker, loggable_path),
        sock=sock,
        backlog=1024,
    )
    background = [loop.create_task(heap.trim_after_traffic(lambda: tracker.bytes_in))]
    if group is not None:
        counts = edge.status.local_counts
        background.append(
            loop.create_task(group.publish_while_changing(counts, lambda: edge.metrics.requests))
        )
    port = sock.getsockname()[1]
    log.info(
        "%s listening on %s:%d, forwarding to %s (%d providers)",
        distribution,
        config.listen_address,
        port,
        redact_url(config.upstream_url),
        len(providers),
    )
    if ready is not None:
        ready(port)
    await stopping.wait()
    log.info("shutting down: no new connections, finishing requests in flight")
    server.close()
    for task in background:
        task.cancel()
    drained = await tracker.drain(DRAIN_SECS)
    if not drained:
        log.warning("requests still in flight after %.0f s; closing anyway", DRAIN_SECS)
    await loop.run_in_executor(None, stop_all, providers)  # final status syncs, bounded
    if group is not None:
        group.publish(edge.status.local_counts())  # what later scrapes show
    edge.close()
    log.info("stopped")


def _refresh(providers: list[Provider]) -> None:
    """SIGHUP: every policy provider polls now (a file is read again, a sync
    server asked), rather than at the end of its interval."""
    log.info(
        "SIGHUP: polling %d policy providers now (the config file is read at start only)",
        len(providers),
    )
    for provider in providers:
        provider.refresh()


DESCRIPTORS_SPARE = 128
"""File descriptors kept free of client connections: upstream connections,
policy files, the listening socket, logs."""


def _within_descriptor_limit(limits: ServerLimits) -> ServerLimits:
    """Raise the soft descriptor limit to the hard one, and lower
    max_connections if the limit still cannot hold that many clients (running
    out of descriptors would fail accept() and /_health with it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):
            pass
    room = soft - DESCRIPTORS_SPARE if soft != resource.RLIM_INFINITY else limits.max_connections
    if limits.max_connections <= room:
        return limits
    fitted = max(room, 16)
    log.warning(
        "max_connections %d lowered to %d: the process may open only %d files",
        limits.max_connections,
        fitted,
        soft,
    )
    return replace(limits, max_connections=fitted)


def _run_worker(
    config: EdgeConfig,
    distribution: str,
    group_dir: str = "",
    name: str = "",
    started: Connection | None = None,
) -> None:
    """Serve in this process: alone, or as the worker `name` of the group
    whose counters are in `group_dir`, telling the parent on `started` once
    it serves."""
    if started is not None:
        end_with_parent()
    configure_logging(config.log_level, config.log_format)
    try:
        sock = bind(config.listen_address, config.listen_port, reuse_port=bool(group_dir))
    except OSError as problem:  # in Go's words, as the collector's listeners say it
        log.error("cannot start Edge: %s", problem)
        raise SystemExit(1) from None
    group = WorkerGroup(Path(group_dir), name) if group_dir else None

    def report(port: int) -> None:
        if started is not None:
            with contextlib.suppress(OSError):  # the parent is gone: serve anyway
                started.send_bytes(b"serving")
            started.close()

    loop.run(serve(config, distribution, sock, ready=report, group=group))


def _group_directory() -> str:
    """A private directory for the workers' counter files: the temporary
    directory, else /dev/shm (containers with a read-only root keep it
    writable)."""
    for parent in (None, "/dev/shm"):
        try:
            return tempfile.mkdtemp(prefix="sluice-edge-", dir=parent)
        except OSError as problem:
            failure = problem
    raise OSError(f"no writable directory for the workers' metrics: {failure}")


def _stop_secs(config: EdgeConfig) -> float:
    """The longest a worker takes to stop: the drain, then its providers'
    last syncs, run at once (:func:`sluice.providers.stop_all`), and a margin."""
    longest = max((p.timeout_secs for p in config.policy_providers), default=0.0)
    return DRAIN_SECS + longest + STOP_GRACE_SECS + STOP_MARGIN_SECS


def run(config: EdgeConfig, distribution: str = "sluice-edge") -> int:
    """Run in the foreground; with ``workers > 1``, that many processes share
    the port (SO_REUSEPORT), each with its own providers and policies, their
    counters summed for every scrape (:mod:`sluice.edge.group`), under this
    process as their supervisor (:mod:`sluice.edge.supervisor`)."""
    configure_logging(config.log_level, config.log_format)
    if config.workers == 1:
        _run_worker(config, distribution)
        return 0
    try:
        group_dir = _group_directory()
    except OSError as problem:
        log.error("%s", problem)
        return 1
    try:
        supervisor = Supervisor(
            config, distribution, Path(group_dir), _run_worker, stop_secs=_stop_secs(config)
        )
        return supervisor.run()
    finally:
        shutil.rmtree(group_dir, ignore_errors=True)  # every worker has exited
