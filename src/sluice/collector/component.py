"""The component model: kinds, ids, factories, consumers and their errors.

A factory turns a validated config into a running component; the service
wires components into pipelines through :class:`Consumer`, the one interface
data flows through. Components never know about each other.
"""

from __future__ import annotations

import enum
import logging
import re
import time
import unicodedata
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeAlias, TypeVar, cast

from sluice.policy import Signal

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

    from sluice.collector.config import Config
    from sluice.collector.graph import Graph
    from sluice.collector.telemetry import ServiceTelemetry


class Kind(enum.Enum):
    """What a component is; the value is its top-level config key."""

    RECEIVER = "receivers"
    PROCESSOR = "processors"
    EXPORTER = "exporters"
    CONNECTOR = "connectors"
    EXTENSION = "extensions"

    @property
    def singular(self) -> str:
        return self.value[:-1]


SIGNAL_NAMES: Mapping[Signal, str] = {
    Signal.LOG: "logs",
    Signal.METRIC: "metrics",
    Signal.TRACE: "traces",
}
"""Pipeline type (and ``otel_signal`` label) of each signal."""
SIGNALS_BY_NAME: Mapping[str, Signal] = {name: s for s, name in SIGNAL_NAMES.items()}

_TYPE = re.compile(r"^[a-zA-Z][0-9a-zA-Z_]{0,62}$")
SIGNAL_TYPE = re.compile(r"^[a-z]{1,62}$")
"""What a pipeline id's signal may be (upstream's ``pipeline.ID``), before
it is checked against the signals the service knows."""


@dataclass(frozen=True, order=True)
class ComponentID:
    """``type`` or ``type/name``, as written in the config."""

    type: str
    name: str = ""

    def __str__(self) -> str:
        return f"{self.type}/{self.name}" if self.name else self.type

    @classmethod
    def parse(cls, text: str, type_pattern: re.Pattern[str] = _TYPE) -> ComponentID:
        """Raises ValueError with upstream's wording for a malformed id. As
        upstream: the id splits at its first ``/`` (a name may hold more),
        each part is trimmed, and the name is checked before the type
        (`type_pattern`: :data:`SIGNAL_TYPE` for a pipeline's id)."""
        type_, sep, name = text.partition("/")
        type_ = type_.strip()
        if not type_:
            if not sep:
                raise ValueError("id must not be empty")
            raise ValueError(f'in "{text}" id: the part before / should not be empty')
        if sep:
            name = name.strip()
            if not name:
                raise ValueError(f'in "{text}" id: the part after / should not be empty')
            problem = name_problem(name)
            if problem:
                raise ValueError(f'in "{name}" id: {problem}')
        if not type_pattern.match(type_):
            raise ValueError(f'in "{text}" id: invalid character(s) in type "{type_}"')
        return cls(type_, name)


def name_problem(name: str) -> str:
    """What is wrong with a component or pipeline name, "" when nothing: at
    most 1,024 bytes, and no separators, control or format characters or
    symbols (Unicode categories Z, C and S), as upstream's ``[^\\pZ\\pC\\pS]+``."""
    size = len(name.encode("utf-8", "surrogatepass"))
    if size > 1024:
        return f'name "{name}" is longer than 1024 characters ({size} characters)'
    if any(unicodedata.category(c)[0] in "ZCS" for c in name):
        return f'invalid character(s) in name "{name}"'
    return ""


class ConsumerError(Exception):
    """Data a consumer did not take. Retryable errors make the receiver
    answer so that the sender retries (HTTP 503 with ``Retry-After``, gRPC
    ``UNAVAILABLE``); permanent ones are final (HTTP 500, gRPC ``INTERNAL``,
    as upstream). An error that stands for a server's answer (an exporter
    sending without a queue) has that answer's ``google.rpc.Code`` as `code`,
    which the receiver answers with instead, as upstream passes a status on."""

    def __init__(
        self,
        message: str,
        *,
        retryable: bool,
        retry_after: float | None = None,
        code: int | None = None,
    ):
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after
        self.code = code


def refused(message: str, retry_after: float = 1.0) -> ConsumerError:
    """A retryable refusal: memory pressure or a full queue."""
    return ConsumerError(message, retryable=True, retry_after=retry_after)


def permanent(message: str) -> ConsumerError:
    """Data that will never be accepted, whoever retries it."""
    return ConsumerError(message, retryable=False)


class Consumer(ABC):
    """Takes one signal's data: an OTLP export request message (see
    :mod:`sluice.collector.pdata`). Returning means the data is accepted;
    raising :class:`ConsumerError` means it is not."""

    mutates_data: bool = False
    """Whether :meth:`consume` edits the message: fan-out then gives it a copy."""

    @abstractmethod
    async def consume(self, data: Any) -> None: ...


class Component:
    """Something with a lifecycle. ``start`` runs before data flows; ``shutdown``
    after upstream components stopped sending, and flushes what it holds."""

    async def start(self, host: Host) -> None:
        return None

    async def shutdown(self) -> None:
        return None


class Status(enum.Enum):
    """Component status, as upstream's ``componentstatus``."""

    STARTING = "StatusStarting"
    OK = "StatusOK"
    RECOVERABLE_ERROR = "StatusRecoverableError"
    PERMANENT_ERROR = "StatusPermanentError"
    FATAL_ERROR = "StatusFatalError"
    STOPPING = "StatusStopping"
    STOPPED = "StatusStopped"


_ERRORS = frozenset({Status.RECOVERABLE_ERROR, Status.PERMANENT_ERROR, Status.FATAL_ERROR})
TRANSITIONS: Mapping[Status | None, frozenset[Status]] = {
    None: frozenset({Status.STARTING}),
    Status.STARTING: _ERRORS | {Status.OK, Status.STOPPING},
    Status.OK: _ERRORS | {Status.STOPPING},
    Status.RECOVERABLE_ERROR: frozenset(
        {Status.OK, Status.PERMANENT_ERROR, Status.FATAL_ERROR, Status.STOPPING}
    ),
    Status.PERMANENT_ERROR: frozenset(),
    Status.FATAL_ERROR: frozenset(),
    Status.STOPPING: _ERRORS | {Status.STOPPED},
    Status.STOPPED: frozenset(),
}
"""The statuses a component may go to from each (None: nothing reported
yet), as upstream's service allows; any other report is dropped. Permanent
and fatal errors and Stopped are final, and a status never follows itself."""
_COMPONENT_KINDS = frozenset(kind.singular for kind in Kind)


@dataclass(frozen=True)
class BuildInfo:
    """The distribution that runs (upstream's ``component.BuildInfo``)."""

    command: str = ""
    description: str = ""
    version: str = ""


@dataclass(frozen=True)
class StatusEvent:
    """The latest status an instance reported, and when (ns since the epoch)."""

    status: Status
    error: str
    timestamp_ns: int


class Host:
    """What the service offers running components: the extensions (auth,
    health), a place to report status, and what the service runs (for
    pages that describe it, such as zpages)."""

    def __init__(self, build_info: BuildInfo | None = None) -> None:
        self.extensions: dict[ComponentID, Component] = {}
        self.status_listeners: list[Callable[[str, Status, str], None]] = []
        self.pipelines: dict[str, list[str]] = {}
        """Pipeline id -> the ``kind:id`` instances in it (a status report
        names only the instance; health checks group it by pipeline)."""
        self.build_info = build_info or BuildInfo()
        self.start_time_ns = time.time_ns()
        """When the service was made (upstream's ``StartTimestamp``)."""
        self.statuses: dict[str, StatusEvent] = {}
        """The latest report of every instance, so that a component that
        starts late still sees what was reported before it listened."""
        self.config: Config | None = None
        """The running config (pipelines, extensions), set before anything starts."""
        self.graph: Graph | None = None
        """The built components, set once the pipelines are built."""

    def report_status(self, instance: str, status: Status, error: str = "") -> None:
        """`instance` is ``kind:id`` (``receiver:otlp``, ``pipeline:logs``...).

        A component's report that is not a valid transition from its last
        (:data:`TRANSITIONS`) is dropped, unseen by listeners, as upstream's
        service drops it; the service's own (``collector``, ``pipeline:``)
        are taken as they come."""
        if instance.partition(":")[0] in _COMPONENT_KINDS:
            last = self.statuses.get(instance)
            if status not in TRANSITIONS[last.status if last is not None else None]:
                return
        self.statuses[instance] = StatusEvent(status, error, time.time_ns())
        for listener in self.status_listeners:
            listener(instance, status, error)

    def report_ok_if_starting(self, instance: str) -> None:
        """StatusOK once a component has started, unless it reported
        something else while starting (upstream's ``ReportOKIfStarting``)."""
        last = self.statuses.get(instance)
        if last is not None and last.status is Status.STARTING:
            self.report_status(instance, Status.OK)


S = TypeVar("S")


ComponentLog: TypeAlias = "logging.Logger | logging.LoggerAdapter[logging.Logger]"
"""Where a component logs: its logger, or a view of it adding fields."""


class WithFields(logging.LoggerAdapter[logging.Logger]):
    """A logger whose entries carry `fields` before their own (zap's
    ``With``): the structured fields of ``extra={"fields": ...}``."""

    def process(self, msg: Any, kwargs: Any) -> tuple[Any, Any]:
        extra = dict(kwargs.get("extra") or {})
        extra["fields"] = {**(self.extra or {}), **(extra.get("fields") or {})}
        kwargs["extra"] = extra
        return msg, kwargs


@dataclass
class Settings:
    """What a factory gets besides the config."""

    id: ComponentID
    kind: Kind
    telemetry: ServiceTelemetry
    pipeline: str = ""
    """The pipeline id, for processors (each pipeline has its own)."""
    shared: dict[str, Any] = field(default_factory=dict)
    """Per-service objects components of one type share (the policy
    processors' registries), keyed by the component type's choice."""

    @property
    def logger(self) -> logging.Logger:
        return logging.getLogger(f"sluice.collector.{self.kind.singular}.{self.id}")

    def signal_logger(self, signal: Signal) -> ComponentLog:
        """The logger of this component for `signal`, whose entries carry
        upstream's ``kind``, ``data_type`` and ``name`` fields before their
        own, as the collector's component loggers add them to every entry
        (service/internal/components/loggers.go)."""
        fields = {
            "kind": self.kind.singular,
            "data_type": SIGNAL_NAMES[signal],
            "name": str(self.id),
        }
        return WithFields(self.logger, fields)

    def service_wide(self, key: str, make: Callable[[CollectorRegistry], S]) -> S:
        """The object components of one type share in the service (under
        `key` in `shared`), made from the service's metric registry by the
        first of them to ask."""
        found = self.shared.get(key)
        if found is None:
            found = self.shared[key] = make(self.telemetry.registry)
        return cast(S, found)


Problem = tuple[str, str]
"""(key path below the component, message); an empty path is the component itself."""


class Validated(Protocol):
    """A config section that checks itself."""

    def validate(self) -> Iterable[Problem]: ...


def section_problems(key: str, section: Validated | None) -> Iterator[Problem]:
    """A nested section's problems with their keys below `key` (none when
    the section is absent)."""
    if section is None:
        return
    for below, message in section.validate():
        yield (f"{key}::{below}" if below else key), message


class ComponentConfig:
    """Base of every component's typed config (a dataclass)."""

    def validate(self) -> Iterable[Problem]:
        """Problems beyond the types the decoder checks (each names its key)."""
        return ()


C = TypeVar("C", bound=ComponentConfig)

CORE_VERSION = "0.115.0"
"""The OpenTelemetry Collector release whose config format and component
behaviour Sluice's core follows (what a builder manifest's versions name)."""


STABILITY_MESSAGES: Mapping[str, str] = {
    "unmaintained": "Unmaintained component. Actively looking for contributors. Component will"
    " become deprecated after 3 months of remaining unmaintained.",
    "deprecated": "Deprecated component. Will be removed in future releases.",
    "development": "Development component. May change in the future.",
    "alpha": "Alpha component. May change in the future.",
    "beta": "Beta component. May change in the future.",
    "stable": "Stable component.",
}
"""What upstream's service logs of a component's stability level as it creates it."""


def log_stability(logger: logging.Logger, level: str | None, **fields: str) -> None:
    """Upstream's builders' line as they create a component: at info for a
    level below alpha (development, deprecated...), at debug from alpha on."""
    message = STABILITY_MESSAGES.get(level or "", "Stability level of component is undefined")
    quiet = level in ("alpha", "beta", "stable")
    logger.log(logging.DEBUG if quiet else logging.INFO, message, extra={"fields": fields})


class Factory(Generic[C]):
    """Makes one component type from its config.

    `stability` maps a signal name (``logs``, ``metrics``, ``traces``; for
    connectors ``logs_to_logs``...; for extensions ``extension``) to
    upstream's stability level (``development``, ``alpha``, ``beta``,
    ``stable``). `module` is the upstream module path the builder maps, and
    `version` the release of it whose behaviour the component follows.
    """

    kind: ClassVar[Kind]
    component_type: ClassVar[str]
    module: ClassVar[str]
    stability: ClassVar[Mapping[str, str]]
    config_type: ClassVar[type[Any]]
    needs_native: ClassVar[bool] = False
    """Needs a native regex library, Hyperscan/Vectorscan or RE2 (the
    builder's ``cgo_enabled``)."""
    version: ClassVar[str] = CORE_VERSION

    def default_config(self) -> C:
        config: C = self.config_type()
        return config

    @property
    def signals(self) -> frozenset[Signal]:
        return frozenset(SIGNALS_BY_NAME[s] for s in self.stability if s in SIGNALS_BY_NAME)

    def signal_problems(self, config: C, signal: Signal) -> Iterable[Problem]:
        """Problems of `config` in a pipeline of `signal`: what upstream finds
        only when it creates the component for that signal (the attributes
        processor's ``include`` properties differ by signal)."""
        return ()


class ReceiverFactory(Factory[C]):
    kind = Kind.RECEIVER

    def create(
        self, settings: Settings, config: C, consumers: Mapping[Signal, Consumer]
    ) -> Component:
        """One receiver for every pipeline that names it; `consumers` holds
        the fan-out of each signal it feeds."""
        raise NotImplementedError


class Processor(Component, Consumer):
    """A pipeline stage: consumes, then hands what is left to the next consumer."""


class ProcessorFactory(Factory[C]):
    kind = Kind.PROCESSOR
    counts_items: ClassVar[bool] = True
    """Whether the service counts the items into and out of it
    (``otelcol_processor_incoming_items``, ``outgoing_items``), as upstream's
    processorhelper does for the processors built on it."""

    def create(self, settings: Settings, config: C, signal: Signal, next_: Consumer) -> Processor:
        raise NotImplementedError


class Exporter(Component):
    """Sends data out; one instance serves every pipeline that names it."""

    def consumer(self, signal: Signal) -> Consumer:
        raise NotImplementedError


class ExporterFactory(Factory[C]):
    kind = Kind.EXPORTER

    def create(self, settings: Settings, config: C, signals: frozenset[Signal]) -> Exporter:
        raise NotImplementedError


class Connector(Component, Consumer):
    """The exporter of one pipeline that is the receiver of others."""


class ConnectorFactory(Factory[C]):
    kind = Kind.CONNECTOR

    def create(
        self, settings: Settings, config: C, source: Signal, target: Signal, next_: Consumer
    ) -> Connector:
        raise NotImplementedError

    @property
    def routes(self) -> frozenset[tuple[Signal, Signal]]:
        """(exporter-side signal, receiver-side signal) pairs it supports."""
        pairs = set()
        for key in self.stability:
            source, _, target = key.partition("_to_")
            pairs.add((SIGNALS_BY_NAME[source], SIGNALS_BY_NAME[target]))
        return frozenset(pairs)


class ExtensionFactory(Factory[C]):
    kind = Kind.EXTENSION

    def create(self, settings: Settings, config: C) -> Component:
        raise NotImplementedError
