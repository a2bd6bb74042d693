"""The ``forward`` connector's factory: logs to logs, metrics to metrics,
traces to traces."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from sluice.collector.component import Connector, ConnectorFactory, Consumer, Settings
from sluice.collector.components.connectors.forward.config import ForwardConfig
from sluice.policy import Signal


class ForwardConnectorFactory(ConnectorFactory[ForwardConfig]):
    component_type = "forward"
    module = "go.opentelemetry.io/collector/connector/forwardconnector"
    stability: ClassVar[Mapping[str, str]] = {
        "logs_to_logs": "beta",
        "metrics_to_metrics": "beta",
        "traces_to_traces": "beta",
    }
    config_type = ForwardConfig

    def create(
        self,
        settings: Settings,
        config: ForwardConfig,
        source: Signal,
        target: Signal,
        next_: Consumer,
    ) -> Connector:
        """`source` is `target`: the service only asks for supported routes."""
        from sluice.collector.components.connectors.forward.connector import ForwardConnector

        if source is not target:
            raise ValueError(f"forward connects a signal to itself, not {source} to {target}")
        return ForwardConnector(next_)
