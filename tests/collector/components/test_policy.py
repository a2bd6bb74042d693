"""The ``policy`` processor: config, filtering of each signal with a real
policy file, the policy counter, fail-open and shared registries."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import generate_latest

from sluice.collector.component import Host
from sluice.collector.components.processors.policy import FACTORY
from sluice.collector.components.processors.policy.config import PolicyConfig
from sluice.collector.components.processors.policy.registries import PolicyRegistries
from sluice.collector.confmap import expand
from sluice.collector.confmap.decode import Problems, decode
from sluice.collector.telemetry import ServiceTelemetry
from sluice.policy import Signal
from tests.collector.components.pipeline_data import (
    Sink,
    log_bodies,
    logs,
    metrics,
    settings,
    traces,
)

TESTDATA = Path(__file__).parent / "testdata" / "policy"
POLICIES = {
    "policies": [
        {
            "id": "drop-debug",
            "log": {"match": [{"log_field": "severity_text", "exact": "DEBUG"}], "keep": "none"},
        },
        {
            "id": "mask-cards",
            "log": {
                "match": [{"log_field": "body", "contains": "card"}],
                "keep": "all",
                "transform": {
                    "redact": [{"log_field": "body", "regex": "\\d{4}", "replacement": "####"}]
                },
            },
        },
        {
            "id": "keep-errors",
            "log": {"match": [{"log_field": "severity_text", "exact": "ERROR"}], "keep": "all"},
        },
        {
            "id": "drop-go-runtime",
            "metric": {"match": [{"metric_field": "name", "starts_with": "go."}], "keep": False},
        },
        {
            "id": "drop-health-spans",
            "trace": {
                "match": [{"trace_field": "name", "exact": "GET /healthz"}],
                "keep": {"percentage": 0},
            },
        },
    ]
}


def load(name: str) -> tuple[PolicyConfig, list[str]]:
    problems = Problems()
    raw = yaml.safe_load((TESTDATA / name).read_text())
    config = decode(PolicyConfig, raw, "processors::policy", problems)
    lines = list(problems.lines)
    lines += [f"{path}: {message}" for path, message in config.validate()]
    return config, lines


def expanded_config(raw: dict[str, Any]) -> PolicyConfig:
    """`raw` with its ``${...}`` expanded and decoded, as the collector loads
    a config (no problem expected)."""
    problems = Problems()
    expanded = expand.expand(raw, "processors::policy", problems)
    config = decode(PolicyConfig, expanded, "processors::policy", problems)
    assert problems.lines == []
    return config


def file_config(path: Path, **extra: Any) -> PolicyConfig:
    return PolicyConfig([{"type": "file", "id": "local", "path": str(path), **extra}])


def count(
    telemetry: ServiceTelemetry, signal: str, result: str, processor: str = "policy"
) -> float:
    value = telemetry.registry.get_sample_value(
        "otelcol_processor_policy_records_total",
        {"processor": processor, "telemetry_type": signal, "result": result},
    )
    return value or 0.0


@pytest.fixture
def policy_file(tmp_path: Path) -> Path:
    path = tmp_path / "policies.json"
    path.write_text(json.dumps(POLICIES))
    return path


# -- config --------------------------------------------------------------------


def test_a_file_provider_path_is_relative_to_the_current_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    config, problems = load("config_file.yaml")
    assert problems == []
    (provider,) = config.provider_configs()
    assert (provider.type, provider.id, provider.poll_interval_secs) == ("file", "local", 5.0)
    assert provider.path == str(tmp_path / "policies.json")


def test_provider_values_are_expanded_once_with_the_rest_of_the_config(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The collector expands ${env:...} in the whole config; the providers do
    not expand again, so a $$-escaped ${X} stays literal text."""
    monkeypatch.setenv("SLUICE_TEST_TOKEN", "s3cret")
    raw = {
        "providers": [
            {
                "type": "http",
                "id": "control-plane",
                "url": "https://policies.example.com/sync",
                "headers": [
                    {"name": "Authorization", "value": "Bearer ${env:SLUICE_TEST_TOKEN}"},
                    {"name": "X-Template", "value": "$${SLUICE_TEST_TOKEN}"},
                ],
            }
        ]
    }
    config = expanded_config(raw)
    (provider,) = config.provider_configs()
    assert provider.headers == (
        ("Authorization", "Bearer s3cret"),
        ("X-Template", "${SLUICE_TEST_TOKEN}"),
    )


def test_a_whole_value_reference_fills_text_keys_with_its_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Upstream decodes providers into policy-go's ProviderConfig, whose id,
    path, url and header name and value are strings: a ``${env:X}`` standing
    alone there is the variable's text even when it reads as a number, a
    boolean or a list in YAML; a number key takes the YAML value."""
    env = {"PROVIDER_ID": "0123", "API_KEY": "12345678", "FLAG": "true", "POLL_SECS": "5"}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    raw = {
        "providers": [
            {
                "type": "http",
                "id": "${env:PROVIDER_ID}",
                "url": "https://policies.example.com/sync",
                "headers": [
                    {"name": "X-Api-Key", "value": "${env:API_KEY}"},
                    {"name": "X-Flag", "value": "${env:FLAG}"},
                ],
                "poll_interval_secs": "${env:POLL_SECS}",
            }
        ]
    }
    config = expanded_config(raw)
    assert list(config.validate()) == []
    (provider,) = config.provider_configs()
    assert provider.id == "0123"
    assert provider.headers == (("X-Api-Key", "12345678"), ("X-Flag", "true"))
    assert provider.poll_interval_secs == 5.0


def test_config_problems_name_the_provider_key() -> None:
    assert load("config_missing_path.yaml")[1] == [
        "providers[0]: 'path' is required for a file provider"
    ]
    assert load("config_bad_url.yaml")[1] == [
        "providers[1]::url: expected an http:// or https:// URL, got "
        "'ftp://policies.example.com/sync'"
    ]
    assert load("config_empty.yaml")[1] == ["providers: at least one policy provider is required"]
    assert load("config_grpc_no_port.yaml")[1] == [  # as in Edge, not gRPC's port 443
        "providers[0]::url: a port is required (only http:// and https:// URLs have a "
        "default: 80, 443), got 'grpc://policies.example.com'"
    ]
    assert load("config_many_problems.yaml")[1] == [  # every problem, not the first one only
        "providers[0]: 'path' is required for a file provider",
        "providers[1]::url: expected an http:// or https:// URL, got "
        "'ftp://policies.example.com/sync'",
        "providers[2]::poll_interval_secs: expected a number from 0.01 to 86400, got 0",
        "providers[4]::id: duplicate provider id 'local'",
    ]
    assert FACTORY.default_config().validate()  # providers are required
    assert load("config_unknown_key.yaml")[1] == [
        "processors::policy: '' has invalid keys: enabled"
    ]
    assert load("config_unknown_provider_key.yaml")[1] == [
        "providers[0]::poll_interval: unknown key (did you mean 'poll_interval_secs'?)"
    ]


def test_factory_describes_the_component() -> None:
    assert FACTORY.component_type == "policy"
    assert FACTORY.module == "github.com/usetero/tero-collector-distro/processor/policyprocessor"
    assert FACTORY.stability == {"logs": "alpha", "metrics": "development", "traces": "development"}
    assert FACTORY.needs_native
    assert FACTORY.signals == frozenset(Signal)


# -- filtering -----------------------------------------------------------------


async def run(processors: list[Any], work: Any) -> Any:
    host = Host()
    for processor in processors:
        await processor.start(host)
    try:
        return await work()
    finally:
        for processor in processors:
            await processor.shutdown()


def test_logs_are_dropped_transformed_and_counted(policy_file: Path) -> None:
    telemetry = ServiceTelemetry()
    sink = Sink()
    processor = FACTORY.create(
        settings("policy", telemetry=telemetry), file_config(policy_file), Signal.LOG, sink
    )
    batch = logs(
        ("DEBUG", "noise"),
        ("INFO", "card 1234"),
        ("INFO", "card on file"),  # the redact finds no digits: kept, not transformed
        ("ERROR", "boom"),
        ("INFO", "hello"),
    )

    asyncio.run(run([processor], lambda: processor.consume(batch)))
    asyncio.run(processor.consume(logs(("DEBUG", "flushed at shutdown"), ("INFO", "late"))))

    received, late = sink.received
    assert log_bodies(received) == ["card ####", "card on file", "boom", "hello"]
    assert log_bodies(late) == ["late"]  # the last policies still apply
    assert count(telemetry, "logs", "dropped") == 2
    assert count(telemetry, "logs", "transformed") == 1
    assert count(telemetry, "logs", "kept") == 2
    assert count(telemetry, "logs", "no_match") == 2
    exposition = generate_latest(telemetry.registry).decode()
    assert (
        'otelcol_processor_policy_records_total{processor="policy",'
        'result="dropped",telemetry_type="logs"} 2.0' in exposition
    )


def test_metrics_and_traces_are_filtered_and_counted(policy_file: Path) -> None:
    telemetry = ServiceTelemetry()
    shared: dict[str, Any] = {}
    metric_sink, trace_sink = Sink(), Sink()
    config = file_config(policy_file)
    metric_processor = FACTORY.create(
        settings("policy", shared, telemetry, "metrics"), config, Signal.METRIC, metric_sink
    )
    trace_processor = FACTORY.create(
        settings("policy", shared, telemetry, "traces"), config, Signal.TRACE, trace_sink
    )

    async def work() -> None:
        await metric_processor.consume(metrics("go.gc.count", "http.requests", points=3))
        await trace_processor.consume(traces("GET /healthz", "GET /orders"))

    asyncio.run(run([metric_processor, trace_processor], work))

    (metric_request,) = metric_sink.received
    names = [m.name for m in metric_request.resource_metrics[0].scope_metrics[0].metrics]
    assert names == ["http.requests"]
    (trace_request,) = trace_sink.received
    assert [s.name for s in trace_request.resource_spans[0].scope_spans[0].spans] == ["GET /orders"]
    assert count(telemetry, "metrics", "dropped") == 1  # one per metric (data point group)
    assert count(telemetry, "metrics", "no_match") == 1
    assert count(telemetry, "traces", "dropped") == 1
    assert count(telemetry, "traces", "no_match") == 1


def test_the_counter_has_the_results_of_the_spec_from_the_start(policy_file: Path) -> None:
    """COLLECTOR.md section 4: dropped, kept, sampled, no_match, transformed,
    each at 0 before any record; a record that cannot be read shows up as
    ``malformed`` only once there has been one."""
    telemetry = ServiceTelemetry()
    policy_settings = settings("policy", telemetry=telemetry)
    FACTORY.create(policy_settings, file_config(policy_file), Signal.LOG, Sink())

    def results() -> dict[str, float]:
        (family,) = [
            f for f in telemetry.registry.collect() if f.name == "otelcol_processor_policy_records"
        ]
        return {s.labels["result"]: s.value for s in family.samples if s.name.endswith("_total")}

    spec = {"dropped": 0, "kept": 0, "sampled": 0, "transformed": 0, "no_match": 0}
    assert results() == spec
    PolicyRegistries.of(policy_settings).counter("policy", Signal.LOG).malformed += 1
    assert results() == {**spec, "malformed": 1}


def test_a_batch_whose_records_are_all_dropped_goes_nowhere(policy_file: Path) -> None:
    telemetry = ServiceTelemetry()
    sink = Sink()
    processor = FACTORY.create(
        settings("policy/debug", telemetry=telemetry), file_config(policy_file), Signal.LOG, sink
    )
    asyncio.run(run([processor], lambda: processor.consume(logs(("DEBUG", "a"), ("DEBUG", "b")))))
    assert sink.received == []
    assert count(telemetry, "logs", "dropped", "policy/debug") == 2


def test_without_policies_for_the_signal_data_passes_untouched(tmp_path: Path) -> None:
    path = tmp_path / "logs-only.json"
    path.write_text(json.dumps({"policies": POLICIES["policies"][:1]}))
    telemetry = ServiceTelemetry()
    sink = Sink()
    processor = FACTORY.create(
        settings("policy", telemetry=telemetry), file_config(path), Signal.TRACE, sink
    )
    batch = traces("GET /healthz")
    asyncio.run(run([processor], lambda: processor.consume(batch)))
    assert sink.received == [batch]
    assert count(telemetry, "traces", "no_match") == 0  # nothing was evaluated


# -- fail-open -----------------------------------------------------------------


def dead_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_provider_failing_at_start_does_not_stop_the_collector(
    caplog: pytest.LogCaptureFixture,
) -> None:
    url = f"http://127.0.0.1:{dead_port()}/v1/policy/sync"
    config = PolicyConfig([{"type": "http", "id": "server", "url": url, "timeout_secs": 1}])
    sink = Sink()
    processor = FACTORY.create(settings("policy"), config, Signal.LOG, sink)
    batch = logs(("DEBUG", "noise"))
    started = time.monotonic()
    with caplog.at_level(logging.ERROR):
        asyncio.run(run([processor], lambda: processor.consume(batch)))
    assert time.monotonic() - started < 1.5
    assert sink.received == [batch]  # unfiltered, not lost
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert any("server" in message and "unfiltered" in message for message in errors), errors


def test_data_passes_until_policies_arrive(tmp_path: Path) -> None:
    path = tmp_path / "later.json"
    sink = Sink()
    processor = FACTORY.create(
        settings("policy"), file_config(path, poll_interval_secs=0.02), Signal.LOG, sink
    )

    async def work() -> None:
        await processor.consume(logs(("DEBUG", "before")))
        path.write_text(json.dumps(POLICIES))
        registry = processor.registry
        deadline = time.monotonic() + 2
        while not registry.snapshot.count(Signal.LOG) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        await processor.consume(logs(("DEBUG", "after"), ("INFO", "hello")))

    asyncio.run(run([processor], work))
    assert [log_bodies(r) for r in sink.received] == [["before"], ["hello"]]


class _FailingSnapshot:
    def count(self, signal: Signal) -> int:
        return 1

    def evaluate(self, signal: Signal, view: Any, batch: Any) -> Any:
        raise RuntimeError("policy bug")


class _FailingRegistry:
    snapshot = _FailingSnapshot()


def test_an_evaluation_failure_passes_the_batch_on(
    policy_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sink = Sink()
    processor = FACTORY.create(settings("policy"), file_config(policy_file), Signal.LOG, sink)
    batch = logs(("DEBUG", "one"), ("INFO", "two"))

    async def work() -> None:
        processor.registry = _FailingRegistry()
        await processor.consume(batch)

    with caplog.at_level(logging.ERROR):
        asyncio.run(work())
    (received,) = sink.received
    assert log_bodies(received) == ["one", "two"]
    assert any("policy evaluation failed" in r.getMessage() for r in caplog.records)


# -- sharing -------------------------------------------------------------------


def test_processors_with_equal_provider_lists_share_one_registry(policy_file: Path) -> None:
    shared: dict[str, Any] = {}
    telemetry = ServiceTelemetry()
    config = file_config(policy_file)
    other = file_config(policy_file, poll_interval_secs=7)
    logs_processor = FACTORY.create(
        settings("policy", shared, telemetry, "logs"), config, Signal.LOG, Sink()
    )
    traces_processor = FACTORY.create(
        settings("policy", shared, telemetry, "traces"), config, Signal.TRACE, Sink()
    )
    other_processor = FACTORY.create(
        settings("policy/other", shared, telemetry, "logs/2"), other, Signal.LOG, Sink()
    )
    registries = PolicyRegistries.of(settings("policy", shared, telemetry))
    configs = config.provider_configs()

    async def scenario() -> None:
        host = Host()
        for processor in (logs_processor, traces_processor, other_processor):
            await processor.start(host)
        assert logs_processor.registry is traces_processor.registry
        assert other_processor.registry is not logs_processor.registry
        assert len(registries.providers(configs)) == 1
        await logs_processor.shutdown()
        (provider,) = registries.providers(configs)  # still polling for traces
        await traces_processor.shutdown()
        assert registries.providers(configs) == []
        assert provider._thread is None  # stopped
        await other_processor.shutdown()

    asyncio.run(scenario())
