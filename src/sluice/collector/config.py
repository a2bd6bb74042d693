"""The collector config: decode every section with its factories, validate the
service graph, and report every problem with its key path (upstream's
wording where upstream has one). Nothing here starts anything."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sluice.collector.component import (
    SIGNAL_NAMES,
    SIGNAL_TYPE,
    SIGNALS_BY_NAME,
    ComponentConfig,
    ComponentID,
    ConnectorFactory,
    Factory,
    Kind,
)
from sluice.collector.confmap.decode import (
    ComponentName,
    Duration,
    LevelNumber,
    Problems,
    TelemetryLevel,
    ZapLevel,
    decode,
    invalid_keys,
    join,
    not_a_map,
    shallow,
)
from sluice.collector.cycles import cycle_message
from sluice.collector.factories import Factories
from sluice.collector.metricreaders import MetricReader, PeriodicReader, reader_problem
from sluice.gostrconv import atoi, quoted
from sluice.policy import Signal
from sluice.transport.listener import parse_endpoint, split_host_port

PROFILES_GATE = "service.profilesSupport"
"""The feature gate upstream's profiles pipelines need (Sluice has no profiles)."""

TOP_KEYS = ("receivers", "processors", "exporters", "connectors", "extensions", "service")


class ConfigInvalid(Exception):
    """The config does not load; `problems` holds one line per problem."""

    def __init__(self, problems: list[str], paths: list[str] | None = None):
        super().__init__("\n".join(problems))
        self.problems = problems
        self.paths = paths or [""] * len(problems)
        """The key path of each problem ("" when it is about the whole config)."""


LOG_LEVELS = ("debug", "info", "warn", "error", "dpanic", "panic", "fatal")
"""zap's levels; ``dpanic``, ``panic`` and ``fatal`` log errors only."""


@dataclass
class LogsSampling:
    """zap's sampler on the collector's own log (:class:`sluice.logs.LogSampler`),
    on by default as upstream's."""

    enabled: bool = True
    tick: Duration = Duration(10.0)
    initial: int = 10
    thereafter: int = 100


@dataclass
class LogsTelemetry:
    level: ZapLevel = "info"
    """One of :data:`LOG_LEVELS` in any case ("" is info), as zap reads it,
    or zap's number of a level (-1 is debug)."""
    encoding: str = "console"
    """zap's encoder: ``console`` or ``json``. As upstream, any text loads;
    another stops the collector when it creates its logger."""
    development: bool = False
    disable_caller: bool = False
    disable_stacktrace: bool = False
    sampling: LogsSampling | None = field(default_factory=LogsSampling)
    """None (``sampling: null``) or not enabled: every record is logged."""
    output_paths: list[str] = field(default_factory=lambda: ["stderr"])
    error_output_paths: list[str] = field(default_factory=lambda: ["stderr"])
    initial_fields: dict[str, Any] = field(default_factory=dict)
    processors: list[Any] = field(default_factory=list)


@dataclass
class MetricsTelemetry:
    level: TelemetryLevel = "normal"
    """``none``, ``basic``, ``normal`` or ``detailed``, in any case (as
    upstream), or configtelemetry's number of a level (-1 is none)."""
    address: str = ""
    """v0.115's ``host:port`` form of the Prometheus endpoint."""
    readers: list[MetricReader] | None = None
    """None: not configured (the default endpoint); ``[]``: no metrics served."""

    def periodic_readers(self) -> list[PeriodicReader]:
        """The readers that push the metrics (none at level ``none``); a
        reader that also has ``pull`` is a pull reader, as upstream."""
        if self.level.lower() == "none":
            return []
        return [r.periodic for r in self.readers or () if r.pull is None and r.periodic]


@dataclass
class TracesTelemetry:
    level: TelemetryLevel = "basic"
    propagators: list[str] = field(default_factory=list)
    processors: list[Any] = field(default_factory=list)


@dataclass
class TelemetryConfig:
    logs: LogsTelemetry = field(default_factory=LogsTelemetry)
    metrics: MetricsTelemetry = field(default_factory=MetricsTelemetry)
    traces: TracesTelemetry = field(default_factory=TracesTelemetry)
    resource: dict[str, str | None] = field(default_factory=dict)


DEFAULT_METRICS_ENDPOINT = "0.0.0.0:8888"
METRICS_LEVELS = ("none", "basic", "normal", "detailed")


def telemetry_level(level: str, path: str, problems: Problems) -> bool:
    """Whether `level` is one of :data:`METRICS_LEVELS` in any case, as
    upstream's ``configtelemetry.Level`` (of metrics and traces alike) reads
    it; its error shows the lower-cased text. Any number is a level."""
    if isinstance(level, LevelNumber) or level.lower() in METRICS_LEVELS:
        return True
    problems.add(path, f'unknown metrics level "{level.lower()}"')
    return False


def level_text(level: str) -> str:
    """A valid telemetry level as Go's ``configtelemetry.Level`` prints it
    (``Normal``); a number's text is already Go's."""
    return level if isinstance(level, LevelNumber) else level.capitalize()


def telemetry_notice(metrics: MetricsTelemetry) -> str | None:
    """What upstream's service prints on stdout (the config still loads)
    when metrics are on but ``readers: []`` (and no ``address``) leaves
    nothing to serve them."""
    if metrics.address or metrics.readers != [] or metrics.level.lower() == "none":
        return None
    return (
        "service::telemetry config validation failed: collector telemetry metrics reader"
        " should exist when metric level is not none"
    )


def metrics_endpoints(metrics: MetricsTelemetry, path: str, problems: Problems) -> tuple[str, ...]:
    """Where the Prometheus endpoints listen, one per pull reader (none:
    disabled, or a problem was added). As upstream, a configured
    ``address`` is checked at any level; it replaces the default reader, or
    is served after the configured ``readers``; ``readers: []`` alone serves
    no metrics."""
    if metrics.address:
        address = quoted(metrics.address)
        try:
            _, port = split_host_port(metrics.address)
        except ValueError as bad:
            problems.add(path, f"failing to parse metrics address {address}: {bad}")
            return ()
        try:
            atoi(port)
        except ValueError as bad:
            problems.add(
                path, f"failing to extract the port from the metrics address {address}: {bad}"
            )
            return ()
        try:
            parse_endpoint(metrics.address)
        except ValueError as bad:
            problems.add(path, str(bad))
            return ()
    if not telemetry_level(metrics.level, f"{path}::level", problems):
        return ()
    if metrics.level.lower() == "none":
        return ()
    if metrics.readers is None:
        return (metrics.address or DEFAULT_METRICS_ENDPOINT,)
    endpoints = [_pull_endpoint(r) for r in metrics.readers]
    if metrics.address:
        endpoints.append(metrics.address)
    for endpoint in endpoints:
        try:
            if endpoint:
                parse_endpoint(endpoint)
        except ValueError as bad:
            problems.add(path, str(bad))
            return ()
    return tuple(e for e in endpoints if e)


def meter_provider_problem(metrics: MetricsTelemetry) -> str | None:
    """What upstream's meter provider refuses when the service starts (the
    config itself validates), of the first reader it cannot make
    (:func:`sluice.collector.metricreaders.reader_problem`)."""
    if metrics.level.lower() == "none":
        return None
    for reader in metrics.readers or ():
        problem = reader_problem(reader)
        if problem is not None:
            return problem
    return None


def _pull_endpoint(reader: MetricReader) -> str:
    """The ``host:port`` of a pull reader's Prometheus exporter; "" for a
    periodic reader, or one the service refuses to start with
    (:func:`meter_provider_problem`)."""
    prometheus = reader.pull.exporter.prometheus if reader.pull is not None else None
    if prometheus is None or prometheus.host is None or prometheus.port is None:
        return ""
    host, port = prometheus.host, prometheus.port
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _logs_level(logs: LogsTelemetry, path: str, problems: Problems) -> None:
    """Check the level and keep it lower-cased, as zap reads it. A number
    below debug logs every level; one past fatal, which logs nothing in
    zap, is fatal (Sluice logs errors only there)."""
    if isinstance(logs.level, LevelNumber):
        logs.level = LOG_LEVELS[0] if logs.level.number < 0 else LOG_LEVELS[-1]
        return
    level = logs.level.lower() or "info"
    if level not in LOG_LEVELS:
        problems.add(f"{path}::level", f'unrecognized level: "{logs.level}"')
    logs.level = level


@dataclass
class ServiceConfig:
    """The service section's keys; its pipelines and telemetry are read from
    the raw map on their own (each pipeline by its id, the telemetry as
    upstream's own unmarshaler reads it)."""

    extensions: list[ComponentName] = field(default_factory=list)
    pipelines: Any = None
    telemetry: Any = None


@dataclass
class PipelineConfig:
    receivers: list[ComponentName] = field(default_factory=list)
    processors: list[ComponentName] = field(default_factory=list)
    exporters: list[ComponentName] = field(default_factory=list)


@dataclass(frozen=True)
class Pipeline:
    id: ComponentID
    signal: Signal
    receivers: tuple[ComponentID, ...]
    processors: tuple[ComponentID, ...]
    exporters: tuple[ComponentID, ...]


@dataclass
class Configured:
    """One configured component: its factory and decoded, validated config."""

    id: ComponentID
    factory: Factory[Any]
    config: ComponentConfig


@dataclass
class Config:
    components: dict[Kind, dict[ComponentID, Configured]]
    pipelines: dict[ComponentID, Pipeline]
    extensions: tuple[ComponentID, ...]
    telemetry: TelemetryConfig
    metrics_endpoints: tuple[str, ...]
    """The Prometheus endpoints of the service's own metrics (none: off)."""


def _section(
    raw: Any, kind: Kind, factories: Factories, problems: Problems
) -> dict[ComponentID, Configured]:
    found: dict[ComponentID, Configured] = {}
    raw = shallow(raw)
    if raw is None:
        return found
    if not isinstance(raw, Mapping):
        problems.add(kind.value, not_a_map(kind.value, raw))
        return found
    for key, value in raw.items():
        path = join(kind.value, str(key))
        try:
            cid = ComponentID.parse(str(key))
        except ValueError as bad:
            problems.add(path, str(bad))
            continue
        if cid in found:
            problems.add(kind.value, f'duplicate name "{key}" after unmarshaling {cid}')
            continue
        if not isinstance(shallow(value), Mapping | None):  # upstream reads each as a map first
            problems.add(path, not_a_map(f"[{key}]", shallow(value)))
            continue
        factory = factories.get(kind, cid.type)
        if factory is None and cid.type == "logging":  # upstream's answer, in any section
            problems.add(
                path, "the logging exporter has been deprecated, use the debug exporter instead"
            )
            continue
        if factory is None:
            valid = " ".join(factories.types(kind))
            problems.add(
                path, f'unknown type: "{cid.type}" for id: "{cid}" (valid values: [{valid}])'
            )
            continue
        before = len(problems.lines)
        config = decode(factory.config_type, value, path, problems, factory.default_config())
        if len(problems.lines) == before:
            for sub, message in config.validate():
                problems.add(join(path, sub) if sub else path, message)
        found[cid] = Configured(cid, factory, config)
    return found


def _ids(
    names: Sequence[str], path: str, problems: Problems, undecoded: Collection[str] = ()
) -> list[ComponentID]:
    """The ids `names` hold; a name whose key path is in `undecoded` did not
    decode (its problem is reported) and is left out, not read as an empty id."""
    ids = []
    for i, name in enumerate(names):
        if f"{path}[{i}]" in undecoded:
            continue
        try:
            ids.append(ComponentID.parse(name))
        except ValueError as bad:
            problems.add(f"{path}[{i}]", str(bad))
    return ids


def load(raw: Any, factories: Factories) -> Config:
    """Decode and validate a merged, expanded config map (raises ConfigInvalid)."""
    problems = Problems()
    if not raw:
        raise ConfigInvalid(["empty configuration file"])
    if not isinstance(raw, Mapping):
        raise ConfigInvalid([f"the config must be a map, got '{type(raw).__name__}'"])
    unknown = [k for k in raw if k not in TOP_KEYS]
    if unknown:
        problems.add("", invalid_keys("", unknown))
    components = {kind: _section(raw.get(kind.value), kind, factories, problems) for kind in Kind}
    service = shallow(raw.get("service"))
    before = len(problems.paths)
    spec = decode(ServiceConfig, service, "service", problems, name="service")
    undecoded = set(problems.paths[before:])
    if not isinstance(service, Mapping):
        service = {}
    # Upstream's telemetry config unmarshals itself (a confmap.Unmarshaler)
    # once it is a map: mapstructure names its keys from it ('logs.level').
    telemetry_raw = service.get("telemetry")
    if not isinstance(shallow(telemetry_raw), Mapping | None):
        problems.add("service::telemetry", not_a_map("service.telemetry", shallow(telemetry_raw)))
        telemetry_raw = None
    telemetry = decode(TelemetryConfig, telemetry_raw, "service::telemetry", problems)
    _logs_level(telemetry.logs, "service::telemetry::logs", problems)
    endpoints = metrics_endpoints(telemetry.metrics, "service::telemetry::metrics", problems)
    telemetry_level(telemetry.traces.level, "service::telemetry::traces::level", problems)
    # Upstream's first checks once the config decodes, whatever else is wrong:
    # a config that declares no component at all, or no receiver or no
    # exporter, says so (also when its pipelines name some).
    if not any(_declares(raw, kind) for kind in Kind):
        problems.add("", "empty configuration file")
    else:
        if not _declares(raw, Kind.RECEIVER):
            problems.add("", "no receiver configuration specified in config")
        if not _declares(raw, Kind.EXPORTER):
            problems.add("", "no exporter configuration specified in config")
    extensions = _ids(spec.extensions, "service::extensions", problems, undecoded)
    extensions = list(dict.fromkeys(extensions))  # started once each, as upstream
    pipelines = _pipelines(shallow(service.get("pipelines")), problems)
    # Upstream's order: the pipelines' own checks (the service's), then the
    # extensions the service names, then the components each pipeline names.
    # A component that is declared but refused (an unknown type, say) has
    # its own problem: upstream stops there, so naming it is not one more.
    declared = {kind: _declared_ids(raw.get(kind.value)) for kind in Kind}
    for cid in extensions:
        if cid not in declared[Kind.EXTENSION]:
            problems.add(
                "service::extensions", f'references extension "{cid}" which is not configured'
            )
    _references(pipelines, declared, problems)
    if not problems:
        _check_graph(components, pipelines, problems)
    if problems:
        raise ConfigInvalid(problems.lines, problems.paths)
    return Config(components, pipelines, tuple(extensions), telemetry, endpoints)


def _declared_ids(section: Any) -> set[ComponentID]:
    """The ids a component section lists, whether or not each is configured."""
    section = shallow(section)
    if not isinstance(section, Mapping):
        return set()
    ids = set()
    for key in section:
        try:
            ids.add(ComponentID.parse(str(key)))
        except ValueError:
            continue  # its own problem
    return ids


def _declares(raw: Mapping[str, Any], kind: Kind) -> bool:
    """Whether the config's section of `kind` lists at least one component
    (configured or not: an unknown type is its own problem)."""
    section = shallow(raw.get(kind.value))
    if isinstance(section, Mapping):
        return bool(section)
    return section is not None  # another type is its own problem


def _pipelines(raw: Any, problems: Problems) -> dict[ComponentID, Pipeline]:
    prefix = "service::pipelines config validation failed"
    if not raw:
        problems.add("", f"{prefix}: service must have at least one pipeline")
        return {}
    if not isinstance(raw, Mapping):
        problems.add("service::pipelines", not_a_map("service.pipelines", raw))
        return {}
    pipelines: dict[ComponentID, Pipeline] = {}
    for key, value in raw.items():
        path = join("service::pipelines", str(key))
        try:
            pid = ComponentID.parse(str(key), SIGNAL_TYPE)
        except ValueError as bad:
            problems.add(path, str(bad))
            continue
        if pid in pipelines:
            problems.add("service::pipelines", f'duplicate name "{key}" after unmarshaling {pid}')
            continue
        signal = SIGNALS_BY_NAME.get(pid.type)
        if signal is None:
            problem = (
                f'profiling signal support is at alpha level, gated under the "{PROFILES_GATE}" '
                "feature gate"
                if pid.type == "profiles"
                else f'unknown signal "{pid.type}"'
            )
            problems.add("", f'{prefix}: pipeline "{pid}": {problem}')
            continue
        before = len(problems.paths)
        spec = decode(PipelineConfig, value, path, problems, name=f"service.pipelines[{key}]")
        # Upstream stops at a decoding error: what did not decode is not also
        # an empty list or an empty id.
        undecoded = set(problems.paths[before:])
        # A receiver or exporter listed twice is one consumer (upstream's graph
        # keys them by id): the data is received and sent once.
        receivers = list(
            dict.fromkeys(_ids(spec.receivers, f"{path}::receivers", problems, undecoded))
        )
        processors = _ids(spec.processors, f"{path}::processors", problems, undecoded)
        exporters = list(
            dict.fromkeys(_ids(spec.exporters, f"{path}::exporters", problems, undecoded))
        )
        if not spec.receivers and f"{path}::receivers" not in undecoded:
            problems.add("", f'{prefix}: pipeline "{pid}": must have at least one receiver')
        if not spec.exporters and f"{path}::exporters" not in undecoded:
            problems.add("", f'{prefix}: pipeline "{pid}": must have at least one exporter')
        seen: set[ComponentID] = set()
        for cid in processors:
            if cid in seen:
                problems.add(
                    "", f'{prefix}: pipeline "{pid}": references processor "{cid}" multiple times'
                )
            seen.add(cid)
        pipelines[pid] = Pipeline(
            pid, signal, tuple(receivers), tuple(processors), tuple(exporters)
        )
    return pipelines


def _references(
    pipelines: dict[ComponentID, Pipeline],
    declared: dict[Kind, set[ComponentID]],
    problems: Problems,
) -> None:
    """The components each pipeline names that no section lists."""
    for pid, pipeline in pipelines.items():
        path = join("service::pipelines", str(pid))
        for cid in pipeline.receivers:
            if cid not in declared[Kind.RECEIVER] and cid not in declared[Kind.CONNECTOR]:
                problems.add(path, f'references receiver "{cid}" which is not configured')
        for cid in pipeline.processors:
            if cid not in declared[Kind.PROCESSOR]:
                problems.add(path, f'references processor "{cid}" which is not configured')
        for cid in pipeline.exporters:
            if cid not in declared[Kind.EXPORTER] and cid not in declared[Kind.CONNECTOR]:
                problems.add(path, f'references exporter "{cid}" which is not configured')


def _check_graph(
    components: dict[Kind, dict[ComponentID, Configured]],
    pipelines: dict[ComponentID, Pipeline],
    problems: Problems,
) -> None:
    """What upstream finds only when building pipelines, in its order:
    ambiguous ids, connectors used on one side only, cycles, then signals a
    component does not support or its config for a signal."""
    connectors = components[Kind.CONNECTOR]
    for cid in connectors:
        for kind in (Kind.EXPORTER, Kind.RECEIVER):
            if cid in components[kind]:
                problems.add(
                    join("connectors", str(cid)),
                    f'ambiguous ID: Found both "{cid}" {kind.singular} and "{cid}" connector. '
                    f"Change one of the components' IDs to eliminate ambiguity "
                    f'(e.g. rename "{cid}" connector to "{cid}/connector")',
                )
    routes_of: dict[ComponentID, frozenset[tuple[Signal, Signal]]] = {}
    for cid, configured in connectors.items():
        factory = configured.factory
        assert isinstance(factory, ConnectorFactory)
        routes = routes_of[cid] = factory.routes
        # As upstream, by signal: the message names the pipelines' signal, once.
        as_exporter = list(
            dict.fromkeys(p.signal for p in pipelines.values() if cid in p.exporters)
        )
        as_receiver = list(
            dict.fromkeys(p.signal for p in pipelines.values() if cid in p.receivers)
        )
        for signal in as_exporter:
            if not any((signal, other) in routes for other in as_receiver):
                problems.add(
                    join("connectors", str(cid)),
                    f'connector "{cid}" used as exporter in {SIGNAL_NAMES[signal]} pipeline but not used in any supported receiver pipeline',
                )
        for signal in as_receiver:
            if not any((other, signal) in routes for other in as_exporter):
                problems.add(
                    join("connectors", str(cid)),
                    f'connector "{cid}" used as receiver in {SIGNAL_NAMES[signal]} pipeline but not used in any supported exporter pipeline',
                )
    # Upstream's order: connectors are checked as it lays out the graph, then
    # the graph is sorted (a cycle stops it there), then components are created.
    if not problems:
        cycle = cycle_message(pipelines.values(), routes_of)
        if cycle is not None:
            problems.add("service::pipelines", cycle)
    checked: set[tuple[Kind, ComponentID, Signal]] = set()
    for pid, pipeline in pipelines.items():
        name = pid.type
        path = join("service::pipelines", str(pid))
        for kind, ids in (
            (Kind.RECEIVER, pipeline.receivers),
            (Kind.PROCESSOR, pipeline.processors),
            (Kind.EXPORTER, pipeline.exporters),
        ):
            for cid in ids:
                if cid in connectors:
                    continue
                factory = components[kind][cid].factory
                if pipeline.signal not in factory.signals:
                    # Upstream names a processor (one per pipeline) by its
                    # pipeline, a receiver or exporter by the pipeline's signal.
                    created = (
                        f'"{cid}" processor, in pipeline "{pid}"'
                        if kind is Kind.PROCESSOR
                        else f'"{cid}" {kind.singular} for data type "{name}"'
                    )
                    problems.add(
                        path, f"failed to create {created}: telemetry type is not supported"
                    )
                elif (kind, cid, pipeline.signal) not in checked:
                    checked.add((kind, cid, pipeline.signal))
                    where = join(kind.value, str(cid))
                    config = components[kind][cid].config
                    for sub, message in factory.signal_problems(config, pipeline.signal):
                        problems.add(
                            join(where, sub) if sub else where,
                            f'{message} (creating it for pipeline "{pid}")',
                        )
