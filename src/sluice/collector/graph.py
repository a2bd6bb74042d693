"""Pipelines as a graph of components: one instance per receiver, exporter
and connector route (connector id, exporting signal, receiving signal), as
upstream's graph nodes, processors per pipeline, fan-out between them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sluice.collector import pdata
from sluice.collector.component import (
    SIGNAL_NAMES,
    Component,
    ComponentID,
    Connector,
    ConnectorFactory,
    Consumer,
    ConsumerError,
    Exporter,
    ExporterFactory,
    Kind,
    Processor,
    ProcessorFactory,
    ReceiverFactory,
    Settings,
    log_stability,
)
from sluice.collector.config import Config, Pipeline
from sluice.collector.telemetry import ProcessorMetrics, ServiceTelemetry
from sluice.policy import Signal


class Fanout(Consumer):
    """Hands data to every consumer in turn. Consumers that edit data get a
    copy whenever another consumer will read the same data; the last editor
    gets the original when nobody else reads it."""

    def __init__(self, consumers: Sequence[Consumer]):
        self.readers = [c for c in consumers if not c.mutates_data]
        self.editors = [c for c in consumers if c.mutates_data]
        # As upstream's fan-out: it edits the data it is given only when it
        # hands it to an editor as is, with no reader beside.
        self.mutates_data = bool(self.editors) and not self.readers

    async def consume(self, data: Any) -> None:
        # Editors first, then readers, as upstream's fan-out: its joined
        # error names theirs in that order.
        errors: list[ConsumerError] = []
        for i, consumer in enumerate(self.editors):
            last = i == len(self.editors) - 1 and not self.readers
            try:
                await consumer.consume(data if last else pdata.copy(data))
            except ConsumerError as error:
                errors.append(error)
        for consumer in self.readers:
            try:
                await consumer.consume(data)
            except ConsumerError as error:
                errors.append(error)
        if len(errors) == 1:
            raise errors[0]
        if errors:
            raise ConsumerError(
                "; ".join(str(e) for e in errors),
                # Permanent when one of them is, as upstream's joined error
                # (consumererror.IsPermanent finds it in the chain).
                retryable=all(e.retryable for e in errors),
                retry_after=max((e.retry_after or 0.0 for e in errors), default=None) or None,
                code=next((e.code for e in errors if e.code is not None), None),
            )


def single(consumers: Sequence[Consumer]) -> Consumer:
    return consumers[0] if len(consumers) == 1 else Fanout(consumers)


class _Counted(Consumer):
    """Counts items into a processor (incoming) or out of it (outgoing)."""

    def __init__(self, signal: Signal, inner: Consumer, counter: Any):
        self.signal = signal
        self.inner = inner
        self.counter = counter
        self.mutates_data = inner.mutates_data

    async def consume(self, data: Any) -> None:
        self.counter.inc(pdata.item_count(self.signal, data))
        await self.inner.consume(data)


class _Entry(Consumer):
    """A pipeline's entry (upstream's capabilities node): it mutates data
    when any processor of the pipeline does, not only its first, or its
    fan-out to exporters does, so the fan-out before it hands it data of its
    own."""

    def __init__(self, inner: Consumer, mutates_data: bool):
        self.inner = inner
        self.mutates_data = mutates_data

    async def consume(self, data: Any) -> None:
        await self.inner.consume(data)


@dataclass
class Graph:
    """The built components. Exporters start first and receivers last;
    processors and connectors between them in `flow` order, so that every
    component starts after all it feeds (upstream's reverse topological
    order). Shutdown goes the other way."""

    receivers: dict[ComponentID, Component] = field(default_factory=dict)
    flow: list[tuple[str, Component]] = field(default_factory=list)
    """The processors and connectors (``processor:id`` or ``connector:id``,
    the component), each after every component it feeds: the order they
    were created in, as each needs its next consumer."""
    exporters: dict[ComponentID, Exporter] = field(default_factory=dict)
    pipelines: list[ComponentID] = field(default_factory=list)
    mutating: set[ComponentID] = field(default_factory=set)
    """The pipelines that mutate data (upstream's capabilities node)."""


def _log_stability_per_signal(
    made: Settings, stability: Mapping[str, str], signals: Iterable[Signal]
) -> None:
    """Upstream makes a receiver or an exporter once per signal, each logging
    its stability level for that signal (``data_type``)."""
    for signal in signals:
        name = SIGNAL_NAMES[signal]
        log_stability(made.logger, stability.get(name), data_type=name)


def build(config: Config, telemetry: ServiceTelemetry, shared: dict[str, Any]) -> Graph:
    """Create every component the pipelines use (raises ValueError on a cycle
    of connectors)."""
    graph = Graph(pipelines=list(config.pipelines))
    comps = config.components

    def settings(kind: Kind, cid: ComponentID, pipeline: str = "") -> Settings:
        return Settings(cid, kind, telemetry, pipeline, shared)

    for cid, configured in comps[Kind.EXPORTER].items():
        pipelines = config.pipelines.values()
        signals = list(dict.fromkeys(p.signal for p in pipelines if cid in p.exporters))
        if signals:
            factory = configured.factory
            assert isinstance(factory, ExporterFactory)
            made = settings(Kind.EXPORTER, cid)
            _log_stability_per_signal(made, factory.stability, signals)
            graph.exporters[cid] = factory.create(made, configured.config, frozenset(signals))

    entries: dict[ComponentID, Consumer] = {}
    building: set[ComponentID] = set()
    connectors: dict[tuple[ComponentID, Signal, Signal], Connector] = {}

    def entry(pipeline: Pipeline) -> Consumer:
        """The consumer a receiver (or connector) of `pipeline` feeds."""
        if pipeline.id in entries:
            return entries[pipeline.id]
        if pipeline.id in building:
            raise ValueError(
                f"cycle detected: pipeline {pipeline.id} feeds itself through connectors"
            )
        building.add(pipeline.id)
        targets: list[Consumer] = []
        for cid in pipeline.exporters:
            if cid in comps[Kind.CONNECTOR]:
                targets.extend(_connector_routes(cid, pipeline))
            else:
                targets.append(graph.exporters[cid].consumer(pipeline.signal))
        nxt: Consumer = single(targets)
        mutates = nxt.mutates_data
        created: list[Processor] = []
        for cid in reversed(pipeline.processors):
            configured = comps[Kind.PROCESSOR][cid]
            factory = configured.factory
            assert isinstance(factory, ProcessorFactory)
            metrics: ProcessorMetrics | None = None
            if factory.counts_items:
                metrics = telemetry.processor(str(cid), pipeline.signal)
                nxt = _Counted(pipeline.signal, nxt, metrics.outgoing)
            made = settings(Kind.PROCESSOR, cid, str(pipeline.id))
            signal_name = SIGNAL_NAMES[pipeline.signal]
            log_stability(
                made.logger, factory.stability.get(signal_name), pipeline=str(pipeline.id)
            )
            processor = factory.create(
                made,
                configured.config,
                pipeline.signal,
                nxt,
            )
            created.append(processor)
            graph.flow.append((f"processor:{cid}", processor))
            nxt = processor
            if metrics is not None:
                nxt = _Counted(pipeline.signal, processor, metrics.incoming)
        mutates = mutates or any(p.mutates_data for p in created)
        if mutates:
            graph.mutating.add(pipeline.id)
        if mutates and not nxt.mutates_data:
            nxt = _Entry(nxt, mutates_data=True)
        building.discard(pipeline.id)
        entries[pipeline.id] = nxt
        return nxt

    def _connector_routes(cid: ComponentID, source: Pipeline) -> list[Consumer]:
        """The connectors `source` exports to through `cid`: one per signal
        of the pipelines that receive from it, shared by every pipeline of
        `source`'s signal that exports to it."""
        factory = comps[Kind.CONNECTOR][cid].factory
        assert isinstance(factory, ConnectorFactory)
        signals = dict.fromkeys(
            target.signal
            for target in config.pipelines.values()
            if cid in target.receivers and (source.signal, target.signal) in factory.routes
        )
        return [_connector(cid, source.signal, signal) for signal in signals]

    def _connector(cid: ComponentID, source: Signal, target: Signal) -> Connector:
        connector = connectors.get((cid, source, target))
        if connector is not None:
            return connector
        configured = comps[Kind.CONNECTOR][cid]
        factory = configured.factory
        assert isinstance(factory, ConnectorFactory)
        consumers = [
            entry(pipeline)
            for pipeline in config.pipelines.values()
            if cid in pipeline.receivers and pipeline.signal is target
        ]
        made = settings(Kind.CONNECTOR, cid)
        names = SIGNAL_NAMES[source], SIGNAL_NAMES[target]
        log_stability(
            made.logger,
            factory.stability.get("_to_".join(names)),
            exporter_in_pipeline=names[0],
            receiver_in_pipeline=names[1],
        )
        connector = factory.create(made, configured.config, source, target, single(consumers))
        connectors[(cid, source, target)] = connector
        graph.flow.append((f"connector:{cid}", connector))
        return connector

    for pipeline in config.pipelines.values():
        entry(pipeline)
    for cid, configured in comps[Kind.RECEIVER].items():
        consumers: dict[Signal, list[Consumer]] = {}
        for pipeline in config.pipelines.values():
            if cid in pipeline.receivers:
                consumers.setdefault(pipeline.signal, []).append(entries[pipeline.id])
        if consumers:
            factory = configured.factory
            assert isinstance(factory, ReceiverFactory)
            made = settings(Kind.RECEIVER, cid)
            _log_stability_per_signal(made, factory.stability, consumers)
            graph.receivers[cid] = factory.create(
                made,
                configured.config,
                {signal: single(c) for signal, c in consumers.items()},
            )
    return graph
