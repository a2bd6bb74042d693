"""The collector's own metrics as a Prometheus pull endpoint
(``service.telemetry.metrics``: ``http://<endpoint>/metrics``, default
``0.0.0.0:8888``).

Each scrape renders the service's registry (:mod:`sluice.collector.telemetry`)
in the format the scraper asks for (:mod:`sluice.transport.prometheus`). As
upstream's Prometheus reader (its exporter's resource-as-constant-labels
option), the service's resource attributes label every sample and make up
``target_info``.
Requests are routed as upstream's ``http.ServeMux`` routes them: other paths
get Go's ``http.NotFound``.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator, Mapping

from prometheus_client import CollectorRegistry
from prometheus_client.metrics_core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.samples import Sample

from sluice.collector.servemux import ServeMux
from sluice.transport.http_message import Request, Response
from sluice.transport.listener import HttpListener
from sluice.transport.prometheus import metrics_response

DEFAULT_ENDPOINT = "0.0.0.0:8888"
METRICS_PATH = "/metrics"
_BUCKET_LABELS = ("le", "quantile")
"""Written after a sample's other labels, as Go's client writes them."""


def label_name(key: str) -> str:
    """An attribute key as a Prometheus label name: every character outside
    ``[a-zA-Z0-9_]`` (and a leading digit) becomes ``_``."""
    name = re.sub(r"[^a-zA-Z0-9_]", "_", key)
    return f"_{name[1:]}" if name[:1].isdigit() else name


class WithResource(Collector):
    """`registry`'s metrics with `resource`'s attributes as labels on every
    sample (sorted by name, as Go's client sorts them), and ``target_info``
    (value 1) labelled with them. A family without samples is left out, as
    upstream's exporter writes only metrics that have data points."""

    def __init__(self, registry: CollectorRegistry, resource: Mapping[str, str]):
        self.registry = registry
        self.labels = {label_name(k): v for k, v in resource.items()}

    def _labelled(self, sample: Sample) -> Sample:
        labels = {**self.labels, **sample.labels}
        ordered = {k: labels[k] for k in sorted(labels) if k not in _BUCKET_LABELS}
        ordered.update((k, labels[k]) for k in _BUCKET_LABELS if k in labels)
        return sample._replace(labels=ordered)

    def collect(self) -> Iterator[Metric]:
        target = GaugeMetricFamily("target_info", "Target metadata", labels=sorted(self.labels))
        target.add_metric([self.labels[k] for k in sorted(self.labels)], 1)
        yield target
        for family in self.registry.collect():
            if not family.samples:
                continue
            labelled = copy.copy(family)  # a collector may hand out the same family again
            labelled.samples = [self._labelled(sample) for sample in family.samples]
            yield labelled


class SelfMetricsServer:
    """Serves `registry` at ``http://<endpoint>/metrics`` between
    :meth:`start` and :meth:`stop`, labelled with `resource` (the service's
    resource attributes, :func:`sluice.collector.telemetry.resource`)."""

    def __init__(
        self,
        registry: CollectorRegistry,
        endpoint: str = DEFAULT_ENDPOINT,
        resource: Mapping[str, str] | None = None,
    ):
        self.registry = CollectorRegistry(auto_describe=True)
        self.registry.register(WithResource(registry, resource or {}))
        self.endpoint = endpoint
        self.listener: HttpListener | None = None
        self._mux = ServeMux([(METRICS_PATH, None)])

    @property
    def port(self) -> int:
        """The bound port (the chosen one for port 0); 0 when not started."""
        return self.listener.port if self.listener is not None else 0

    async def start(self) -> None:
        """Bind and serve (raises OSError or ValueError for the endpoint)."""
        self.listener = await HttpListener.start(self.handle, self.endpoint)

    async def stop(self) -> None:
        if self.listener is not None:
            await self.listener.stop()
            self.listener = None

    async def handle(self, request: Request) -> Response:
        routed = self._mux.route(request)
        if isinstance(routed, Response):
            return routed
        return metrics_response(self.registry, request)
