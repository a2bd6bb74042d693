"""Running a collector: telemetry, extensions, the pipeline graph, readiness,
orderly shutdown on SIGTERM/SIGINT, and a config reload on SIGHUP.

Start order: the Prometheus endpoint, extensions (so health checks see every
status), exporters, then processors and connectors each after all it feeds
(a pipeline a connector feeds before the pipelines that export to it, as
upstream's reverse topological order), receivers last, so that no data
arrives before its path exists. Shutdown goes the other way: receivers stop
taking data and finish requests in flight, processors flush in pipeline
order, a pipeline before those its connectors feed (batches go out), exporters
drain their queues within the shutdown timeout, extensions stop last.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from collections.abc import Callable
from typing import Any

from sluice import heap
from sluice.collector.component import (
    BuildInfo,
    Component,
    ComponentID,
    ExtensionFactory,
    Host,
    Kind,
    Settings,
    Status,
    log_stability,
)
from sluice.collector.config import Config, level_text, meter_provider_problem
from sluice.collector.effective import effective_config
from sluice.collector.exporterhelper.exporter import user_agent
from sluice.collector.graph import Graph, build
from sluice.collector.telemetry import ServiceTelemetry, resource
from sluice.gostrconv import quoted
from sluice.logs import LogSampler, configure_logging, open_outputs

log = logging.getLogger("sluice.collector")

SHUTDOWN_SECS = 20.0
"""How long shutdown may take in all (queues drain within it)."""


class StartError(Exception):
    """A component that cannot be made or started, in upstream's service's
    words: ``failed to build extensions: failed to create extension "id":
    ...``, ``failed to start extensions: ...`` or ``cannot start pipelines: ...``."""


class ShutdownError(Exception):
    """Components whose shutdown failed, in upstream's service's words:
    ``failed to shutdown pipelines: ...`` and ``failed to shutdown
    extensions: ...``, each with its components' errors in the order they
    stopped, joined by ``; `` as Go's multierr joins them."""


TRACE_PROPAGATORS = ("tracecontext", "b3")
"""The ``service::telemetry::traces::propagators`` the service can set up."""

DEADLINE_EXCEEDED = "context deadline exceeded"
"""The error of a component that did not stop within the shutdown timeout
(Go's ``context.DeadlineExceeded``)."""


class Service:
    """One collector: build with :meth:`start`, stop with :meth:`shutdown`."""

    def __init__(
        self,
        config: Config,
        telemetry: ServiceTelemetry | None = None,
        build_info: BuildInfo | None = None,
    ):
        self.config = config
        self.telemetry = telemetry or ServiceTelemetry()
        self.host = Host(build_info)
        self.host.config = config
        self.shared: dict[str, Any] = {}
        self.graph = Graph()
        self.extensions: list[tuple[str, Component]] = []
        self.started: list[tuple[str, Component]] = []
        self._names: dict[int, str] = {}
        self.metrics_servers: list[Any] = []
        self.metric_readers: list[Any] = []
        """The periodic readers pushing the metrics (:mod:`sluice.collector.periodicreader`)."""

    async def _start(self, instance: str, component: Component) -> None:
        self.host.report_status(instance, Status.STARTING)
        try:
            await component.start(self.host)
        except Exception as problem:
            self.host.report_status(instance, Status.PERMANENT_ERROR, str(problem))
            kind, _, cid = instance.partition(":")
            if kind == "extension":
                fields = {"kind": kind, "name": cid, "error": str(problem)}
                log.error("Failed to start extension", extra={"fields": fields})
            else:
                # The kind as Go's component.Kind prints it ("Receiver").
                fields = {"error": str(problem), "type": kind.capitalize(), "id": cid}
                log.error("Failed to start component", extra={"fields": fields})
            raise
        self.started.append((instance, component))
        self.host.report_ok_if_starting(instance)

    async def start(self) -> None:
        """Start everything (raises on a component that cannot start, after
        stopping what had started)."""
        self.host.report_status("collector", Status.STARTING)
        try:
            await self._start_all()
        except BaseException as problem:
            try:
                await self.shutdown()
            except ShutdownError as failed:  # both, as upstream's multierr.Combine
                raise StartError(f"{problem}; {failed}") from problem
            raise
        self.host.report_status("collector", Status.OK)

    async def _start_all(self) -> None:
        traces = self.config.telemetry.traces
        if traces.level.lower() != "none" and any(
            p not in TRACE_PROPAGATORS for p in traces.propagators
        ):
            # upstream's config takes any name; its tracer provider does not
            raise StartError("failed to create tracer provider: unsupported trace propagator")
        # Upstream exports its own log and traces through OTel SDK providers
        # built from these (batch or simple processors, OTLP or console
        # exporters); Sluice has neither, and says so rather than drop them.
        _unsupported_processors("logs", "log is", self.config.telemetry.logs.processors)
        if traces.level.lower() != "none":  # upstream builds no tracer provider then
            _unsupported_processors("traces", "traces are", traces.processors)
        log.info("Setting up own telemetry...")
        metrics = self.config.telemetry.metrics
        unservable = meter_provider_problem(metrics)
        if unservable is not None:
            raise StartError(f"failed to create meter provider: {unservable}")
        periodic = metrics.periodic_readers()
        if not self.config.metrics_endpoints and not periodic:
            log.info("Skipped telemetry setup.")
        else:
            from sluice.collector.selfmetrics import SelfMetricsServer

            if metrics.address:
                log.warning(
                    "service::telemetry::metrics::address is being deprecated in favor of"
                    " service::telemetry::metrics::readers"
                )
            info = self.host.build_info
            attributes = resource(info.command, info.version, self.config.telemetry.resource)
            for endpoint in self.config.metrics_endpoints:
                fields = {"address": endpoint, "metrics level": level_text(metrics.level)}
                log.info("Serving metrics", extra={"fields": fields})
                server = SelfMetricsServer(self.telemetry.registry, endpoint, attributes)
                self.metrics_servers.append(server)
                await server.start()
            for reader_config in periodic:
                from sluice.collector.periodicreader import PeriodicMetricReader

                try:
                    reader = PeriodicMetricReader(
                        reader_config, self.telemetry.registry, attributes, user_agent(info)
                    )
                except (OSError, ValueError) as problem:
                    raise StartError(f"failed to create meter provider: {problem}") from problem
                self.metric_readers.append(reader)
                reader.start()
        comps = self.config.components
        connectors = comps[Kind.CONNECTOR]

        def instance(kind: str, cid: ComponentID) -> str:
            return f"{'connector' if cid in connectors else kind}:{cid}"

        self.host.pipelines = {
            str(p.id): [
                *(instance("receiver", c) for c in p.receivers),
                *(f"processor:{c}" for c in p.processors),
                *(instance("exporter", c) for c in p.exporters),
            ]
            for p in self.config.pipelines.values()
        }
        # As upstream's service.New: every extension and pipeline component
        # is made (each logging its stability) before anything starts.
        for cid in self.config.extensions:
            configured = comps[Kind.EXTENSION][cid]
            factory = configured.factory
            assert isinstance(factory, ExtensionFactory)
            settings = Settings(cid, Kind.EXTENSION, self.telemetry, "", self.shared)
            log_stability(settings.logger, factory.stability.get("extension"))
            try:
                extension = factory.create(settings, configured.config)
            except Exception as problem:
                raise StartError(
                    f"failed to build extensions: failed to create extension {quoted(str(cid))}: "
                    f"{problem}"
                ) from problem
            self.host.extensions[cid] = extension
            self.extensions.append((f"extension:{cid}", extension))
        self.graph = build(self.config, self.telemetry, self.shared)
        self.host.graph = self.graph
        info = self.host.build_info
        started = {"Version": info.version, "NumCPU": _num_cpu()}
        log.info("Starting %s...", info.command, extra={"fields": started})
        log.info("Starting extensions...")
        for name, extension in self.extensions:
            fields = {"kind": "extension", "name": name.partition(":")[2]}
            log.info("Extension is starting...", extra={"fields": fields})
            try:
                await self._start(name, extension)
            except Exception as problem:
                raise StartError(f"failed to start extensions: {problem}") from problem
            log.info("Extension started.", extra={"fields": fields})
        self._notify_config()
        try:
            await self._start_pipelines()
        except Exception as problem:
            raise StartError(f"cannot start pipelines: {problem}") from problem

    async def _start_pipelines(self) -> None:
        for cid, exporter in self.graph.exporters.items():
            await self._start(f"exporter:{cid}", exporter)
        for name, component in self.graph.flow:
            await self._start(name, component)
        for cid, receiver in self.graph.receivers.items():
            await self._start(f"receiver:{cid}", receiver)
        for pid in self.graph.pipelines:
            self.host.report_status(f"pipeline:{pid}", Status.OK)

    def _notify_config(self) -> None:
        """Hand the effective config to the extensions that watch it (upstream's
        ``ConfigWatcher``: ``healthcheckv2``'s config endpoint), once they
        have started and before the pipelines start."""
        effective: dict[str, Any] | None = None
        for _, extension in self.extensions:
            notify = getattr(extension, "notify_config", None)
            if notify is not None:
                if effective is None:
                    effective = effective_config(self.config)
                notify(effective)

    async def _stop(self, component: Component, deadline: float) -> str | None:
        """Stop `component`; its error, if its shutdown failed or did not end
        within the shutdown timeout. As upstream's ShutdownAll and
        extensions' Shutdown, a failure is reported as a PermanentError with
        that error (not logged here: it ends the collector's run)."""
        name = self._names.get(id(component))
        if name is None:
            return None  # never started
        self.host.report_status(name, Status.STOPPING)
        try:
            await asyncio.wait_for(component.shutdown(), max(deadline - time.monotonic(), 0.1))
        except TimeoutError:
            error = DEADLINE_EXCEEDED
        except Exception as problem:
            error = str(problem) or type(problem).__name__
        else:
            self.host.report_status(name, Status.STOPPED)
            return None
        self.host.report_status(name, Status.PERMANENT_ERROR, error)
        return error

    async def shutdown(self, timeout: float = SHUTDOWN_SECS) -> None:
        """Stop in order within `timeout` in all; then raise
        :class:`ShutdownError` if a component's shutdown failed or timed out
        (every other component is still stopped, as upstream).

        Receivers stop taking requests at once, but the requests they still
        answer may wait on a batch, so processors flush (in pipeline order,
        a pipeline before those its connectors feed) while receivers finish; exporters stop once no receiver can send them
        anything more, extensions last."""
        log.info("Starting shutdown...")
        self.host.report_status("collector", Status.STOPPING)
        deadline = time.monotonic() + timeout
        self._names = {id(c): name for name, c in self.started}
        receivers = [
            asyncio.ensure_future(self._stop(r, deadline)) for r in self.graph.receivers.values()
        ]
        # A few loop turns for every receiver to close its listeners (a request
        # arriving meanwhile is still handled: processors pass data on after
        # they stopped).
        await asyncio.sleep(0.01)
        flow = [await self._stop(component, deadline) for _, component in reversed(self.graph.flow)]
        pipelines = [*await asyncio.gather(*receivers), *flow]
        for exporter in self.graph.exporters.values():
            pipelines.append(await self._stop(exporter, deadline))
        for pid in self.graph.pipelines:
            self.host.report_status(f"pipeline:{pid}", Status.STOPPED)
        log.info("Stopping extensions...")
        extensions = [await self._stop(e, deadline) for _, e in reversed(self.extensions)]
        self.started.clear()
        log.info("Shutdown complete.")
        for server in self.metrics_servers:
            await server.stop()
        self.metrics_servers.clear()
        # As upstream's meter provider, each periodic reader pushes once more
        # (all at once, within what is left of the timeout); a push that
        # fails is its shutdown's error.
        left = max(deadline - time.monotonic(), 0.1)
        pushed = await asyncio.gather(*(reader.shutdown(left) for reader in self.metric_readers))
        self.metric_readers.clear()
        failures = [
            f"failed to shutdown {part}: {'; '.join(e for e in errors if e is not None)}"
            for part, errors in (
                ("pipelines", pipelines),
                ("extensions", extensions),
                ("meter provider", pushed),
            )
            if any(e is not None for e in errors)
        ]
        if failures:
            raise ShutdownError("; ".join(failures))


def _num_cpu() -> int:
    """The CPUs this process may run on (Go's ``runtime.NumCPU``)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def log_as(config: Config) -> None:
    """Log as `config`'s ``service::telemetry::logs`` says (level, encoding,
    sampling, output paths, initial fields); OSError (upstream's words) when
    zap has no such encoder or an output cannot be opened (checked in that
    order, as zap's Config.Build)."""
    logs = config.telemetry.logs
    if not logs.encoding:
        raise OSError("failed to create logger: no encoder name specified")
    if logs.encoding not in ("console", "json"):
        raise OSError(
            f"failed to create logger: no encoder registered for name {quoted(logs.encoding)}"
        )
    sampling = logs.sampling
    sampler = None
    if sampling is not None and sampling.enabled:
        sampler = LogSampler(sampling.tick, sampling.initial, sampling.thereafter)
    try:
        output = open_outputs(logs.output_paths)
    except OSError as problem:
        raise OSError(f"failed to create logger: {problem}") from None
    configure_logging(logs.level.lower(), logs.encoding, sampler, output, logs.initial_fields)


Reload = Callable[[], tuple[Config | None, list[str]]]
"""Reads the config again from its sources: the config, or its problems."""


async def _started(config: Config, build_info: BuildInfo | None) -> Service | None:
    """A started service on `config`, or None (logged) when it cannot start."""
    service = Service(config, build_info=build_info)
    try:
        await service.start()
    except Exception as problem:
        log.error("cannot start the collector: %s", problem)
        return None
    log.info("Everything is ready. Begin running and processing data.")
    return service


async def run(
    config: Config,
    ready: Any = None,
    build_info: BuildInfo | None = None,
    reload: Reload | None = None,
) -> int:
    """Run until SIGTERM/SIGINT; 0 after a clean stop, 1 when start or
    shutdown failed (upstream's Run returns the shutdown's error, and after
    a reload exits with it instead of starting the new config).

    SIGHUP reloads the config (as upstream's collector does): it is read
    again with `reload` and, when it loads, the running service shuts down
    as on SIGTERM and a new one starts on it. A config that does not load is
    logged and the running service goes on (upstream exits); a reloaded
    config whose service cannot start is logged and the previous config
    starts again (exit 1 if that fails too)."""
    loop = asyncio.get_running_loop()
    signals: asyncio.Queue[int] = asyncio.Queue()
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        loop.add_signal_handler(signum, signals.put_nowait, signum)
    service = await _started(config, build_info)
    while service is not None:
        trimmer = loop.create_task(heap.trim_after_traffic(service.telemetry.items_received))
        if ready is not None:
            ready(service)
        loaded = await _next_config(signals, reload)
        trimmer.cancel()
        try:
            await service.shutdown()
        except ShutdownError as failed:
            # upstream's Run returns the error, and its main exits 1 with it
            why = "failed to shutdown " + (
                "service after error" if loaded is None else "the retiring config"
            )
            log.error("collector server run finished with error: %s: %s", why, failed)
            return 1
        if loaded is None:
            return 0
        try:
            log_as(loaded)
            service = await _started(loaded, build_info)
        except OSError as problem:
            log.error("cannot start the collector: %s", problem)
            service = None
        if service is not None:
            config = loaded
            continue
        log.error("the reloaded config cannot start; starting the previous config again")
        log_as(config)
        service = await _started(config, build_info)
    return 1


async def _next_config(signals: asyncio.Queue[int], reload: Reload | None) -> Config | None:
    """Waits for a stop signal (None) or a SIGHUP whose config loads (that config)."""
    while True:
        signum = await signals.get()
        log.info("Received signal from OS", extra={"fields": {"signal": _signal_name(signum)}})
        if signum != signal.SIGHUP:
            return None
        if reload is None:
            log.warning("SIGHUP ignored: this collector has no config source to read again")
            continue
        loaded, problems = await asyncio.to_thread(reload)
        if loaded is not None:
            log.warning("Config updated, restart service")
            return loaded
        for line in problems:
            log.error("config reload: %s", line)
        log.error("config reload failed; the running config stays in effect")


def _signal_name(signum: int) -> str:
    """A signal as Go prints it (``hangup``, ``terminated``, ``interrupt``)."""
    return (signal.strsignal(signum) or signal.Signals(signum).name).lower()


def _unsupported_processors(signal: str, exported: str, processors: list[object]) -> None:
    """Warn that ``service::telemetry::<signal>::processors`` is ignored."""
    if not processors:
        return
    many = len(processors) > 1
    log.warning(
        f"service::telemetry::{signal}::processors is not supported: the collector's own"
        f" {exported} not exported, the {len(processors)} configured"
        f" processor{'s are' if many else ' is'} ignored"
    )
