"""The ``forward`` connector: same-signal routes only, data and errors pass
through unchanged."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

from sluice.collector.component import ComponentID, ConsumerError, Kind, Settings, refused
from sluice.collector.components.connectors.forward import FACTORY
from sluice.collector.components.connectors.forward.config import ForwardConfig
from sluice.collector.confmap.decode import Problems, decode
from sluice.collector.telemetry import ServiceTelemetry
from sluice.policy import Signal
from tests.collector.components.pipeline_data import Sink, traces

TESTDATA = Path(__file__).parent / "testdata" / "forward"


def connector_settings() -> Settings:
    return Settings(ComponentID("forward"), Kind.CONNECTOR, ServiceTelemetry())


def load(name: str) -> list[str]:
    problems = Problems()
    raw = yaml.safe_load((TESTDATA / name).read_text())
    decode(ForwardConfig, raw, "connectors::forward", problems)
    return problems.lines


def test_config_has_no_keys() -> None:
    assert load("config_empty.yaml") == []
    assert load("config_unknown_key.yaml") == ["connectors::forward: '' has invalid keys: unknown"]


def test_routes_connect_each_signal_to_itself() -> None:
    assert FACTORY.routes == frozenset((s, s) for s in Signal)
    assert FACTORY.stability == {
        "logs_to_logs": "beta",
        "metrics_to_metrics": "beta",
        "traces_to_traces": "beta",
    }
    with pytest.raises(ValueError, match="forward connects a signal to itself"):
        FACTORY.create(connector_settings(), ForwardConfig(), Signal.LOG, Signal.TRACE, Sink())


def test_data_and_errors_pass_through() -> None:
    sink = Sink()
    connector = FACTORY.create(
        connector_settings(), ForwardConfig(), Signal.TRACE, Signal.TRACE, sink
    )
    request = traces("GET /")
    asyncio.run(connector.consume(request))
    assert sink.received == [request] and sink.received[0] is request
    assert not connector.mutates_data

    sink.error = refused("sending queue is full")
    with pytest.raises(ConsumerError, match="sending queue is full"):
        asyncio.run(connector.consume(traces("GET /")))
