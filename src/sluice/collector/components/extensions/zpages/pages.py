"""What each zPage shows, read from the host when the page is asked for.

Every page is built once as plain data (dataclasses); the HTML and the JSON
answers are two renderings of the same data, so they never disagree. The
content is upstream's (build and runtime info, pipelines with their
components, extensions, feature gates) plus each component's latest status,
which upstream's pages leave as a to-do.
"""

from __future__ import annotations

import os
import platform
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from sluice.collector.component import ComponentID, Host, Kind, StatusEvent
from sluice.collector.gotext import go_duration

PAGES = ("servicez", "pipelinez", "extensionz", "featurez")
"""Upstream's pages, below ``/debug/``, in the order the service page links them."""


def rfc3339(unix_ns: int) -> str:
    """UTC, to the microsecond (``2024-01-18T17:27:12.570394Z``)."""
    moment = datetime.fromtimestamp(unix_ns / 1e9, UTC)
    return moment.isoformat(timespec="microseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class StatusView:
    """A component's latest reported status."""

    status: str
    """``StatusOK``, ``StatusRecoverableError``... as upstream names them."""
    error: str
    since: str
    """When it was reported (RFC 3339, UTC)."""

    @classmethod
    def of(cls, event: StatusEvent | None) -> StatusView | None:
        if event is None:
            return None
        return cls(event.status.value, event.error, rfc3339(event.timestamp_ns))


@dataclass(frozen=True)
class ComponentView:
    id: str
    kind: str
    """``receiver``, ``processor``, ``exporter``, ``connector`` or ``extension``."""
    status: StatusView | None
    """None until the component reports (it has not started yet)."""


@dataclass(frozen=True)
class PipelineView:
    full_name: str
    input_type: str
    mutates_data: bool
    """Whether a processor of the pipeline edits the data it is given."""
    status: StatusView | None
    receivers: list[ComponentView]
    processors: list[ComponentView]
    exporters: list[ComponentView]


@dataclass(frozen=True)
class Selected:
    """The component a link on the page asked about (upstream's ``?z...name``)."""

    title: str
    component: ComponentView


@dataclass(frozen=True)
class ServicePage:
    build_info: dict[str, str]
    runtime_info: dict[str, str]
    status: StatusView | None
    """The collector's own status."""
    pages: list[str] = field(default_factory=list)
    """The other pages, by name (below ``/debug/``, as this one)."""


@dataclass(frozen=True)
class PipelinesPage:
    pipelines: list[PipelineView]
    selected: Selected | None = None


@dataclass(frozen=True)
class ExtensionsPage:
    extensions: list[ComponentView]
    selected: Selected | None = None


@dataclass(frozen=True)
class FeatureGate:
    id: str
    enabled: bool
    description: str
    stage: str
    from_version: str
    to_version: str
    reference_url: str


@dataclass(frozen=True)
class FeaturesPage:
    feature_gates: list[FeatureGate]
    """Sluice registers no feature gates: always empty, as the page says."""


LATENCY_BUCKETS = [">0s", ">10µs", ">100µs", ">1ms", ">10ms", ">100ms", ">1s", ">10s", ">1m40s"]
"""The span latency buckets upstream's tracez summary counts, by lower bound
(named as Go prints a ``time.Duration``)."""


@dataclass(frozen=True)
class SpanNameSummary:
    """One span name on tracez: spans running, finished per latency bucket,
    and finished with an error."""

    name: str
    active: int
    latency: list[int]
    errors: int


@dataclass(frozen=True)
class TracesPage:
    latency_buckets: list[str]
    spans: list[SpanNameSummary]
    """Always empty: Sluice's collector does not trace itself."""


Page = ServicePage | PipelinesPage | ExtensionsPage | FeaturesPage | TracesPage


def _component(host: Host, kind: str, cid: ComponentID | str) -> ComponentView:
    return ComponentView(str(cid), kind, StatusView.of(host.statuses.get(f"{kind}:{cid}")))


def service_page(host: Host, pages: tuple[str, ...]) -> ServicePage:
    info = host.build_info
    uptime = go_duration(max(time.time_ns() - host.start_time_ns, 0) // 1_000_000 * 1_000_000)
    return ServicePage(
        build_info={
            "command": info.command,
            "description": info.description,
            "version": info.version,
        },
        runtime_info={
            "start_timestamp": rfc3339(host.start_time_ns),
            "uptime": uptime,
            "python": f"{platform.python_implementation()} {platform.python_version()}",
            "os": sys.platform,
            "arch": platform.machine(),
            "pid": str(os.getpid()),
        },
        status=StatusView.of(host.statuses.get("collector")),
        pages=[name for name in pages if name != "servicez"],
    )


def pipelines_page(host: Host, query: dict[str, str]) -> PipelinesPage:
    config = host.config
    rows: list[PipelineView] = []
    if config is not None:
        connectors = config.components[Kind.CONNECTOR]
        mutating = {str(pid) for pid in host.graph.mutating} if host.graph else set()

        def edge(default: str, cid: ComponentID) -> ComponentView:
            return _component(host, "connector" if cid in connectors else default, cid)

        for pid, pipeline in sorted(config.pipelines.items(), key=lambda p: str(p[0])):
            rows.append(
                PipelineView(
                    full_name=str(pid),
                    input_type=pid.type,
                    mutates_data=str(pid) in mutating,
                    status=StatusView.of(host.statuses.get(f"pipeline:{pid}")),
                    receivers=[edge("receiver", c) for c in pipeline.receivers],
                    processors=[_component(host, "processor", c) for c in pipeline.processors],
                    exporters=[edge("exporter", c) for c in pipeline.exporters],
                )
            )
    # Upstream's links write the z-first names; its handler reads the z-last
    # ones (so there only a hand-written query shows a component): both work.
    in_pipeline = query.get("zpipelinename") or query.get("pipelinenamez", "")
    name = query.get("zcomponentname") or query.get("componentnamez", "")
    kind = query.get("zcomponentkind") or query.get("componentkindz", "")
    selected = None
    if in_pipeline and name and kind:
        # Upstream's heading names a processor within its pipeline.
        title = f"{kind}: {in_pipeline}/{name}" if kind == "processor" else f"{kind}: {name}"
        selected = Selected(
            title, _find(rows, in_pipeline, kind, name) or _component(host, kind, name)
        )
    return PipelinesPage(rows, selected)


def _find(rows: list[PipelineView], pipeline: str, role: str, name: str) -> ComponentView | None:
    """The component as the pipeline's row shows it (a connector's link
    names its role in the pipeline, receiver or exporter, not its kind)."""
    for row in rows:
        if row.full_name == pipeline:
            members = {
                "receiver": row.receivers,
                "processor": row.processors,
                "exporter": row.exporters,
            }
            return next((c for c in members.get(role, []) if c.id == name), None)
    return None


def extensions_page(host: Host, query: dict[str, str]) -> ExtensionsPage:
    ids = sorted(str(cid) for cid in (host.config.extensions if host.config else ()))
    name = query.get("zextensionname", "")
    selected = Selected(name, _component(host, "extension", name)) if name else None
    return ExtensionsPage([_component(host, "extension", cid) for cid in ids], selected)


def features_page() -> FeaturesPage:
    return FeaturesPage([])


def traces_page(host: Host) -> TracesPage | None:
    """tracez's summary; None when ``service::telemetry::traces::level`` is
    ``none`` (upstream's collector then has no tracer to sample, and no page)."""
    if host.config is not None and host.config.telemetry.traces.level.lower() == "none":
        return None
    return TracesPage(list(LATENCY_BUCKETS), [])
