"""The Datadog Agent's traffic through Edge: each call family lands where the
Agent would send it, and Agent metrics (protobuf series v2, JSON series v1,
sketches) are filtered like logs. The Agent's calls are replayed as it makes
them (``agent_replay.py``) against real Edge processes and one recording
upstream per family."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from sluice.edge.config import parse_config
from sluice.edge.datadog_intake import datadog_site, default_api_url
from sluice.providers.config import ConfigError
from sluice.telemetry.wire.agent_payload_pb2 import MetricPayload, SketchPayload
from tests.edge.agent_replay import (
    API,
    LOGS,
    METRICS,
    SERIES,
    AgentCall,
    agent_calls,
    series_payload,
    sketch_payload,
)
from tests.edge.helpers import (
    EdgeLauncher,
    EdgeProcess,
    Prometheus,
    Recorded,
    Reply,
    Upstream,
    compress,
    policies,
)

AGENT_KEY = "agent-api-key-0123456789abcdef"
ENV_KEY = "env-api-key-fedcba9876543210"
PROTOBUF = "application/x-protobuf"
POLICIES = policies(
    {
        "id": "drop-debug-logs",
        "name": "drop debug logs",
        "log": {"match": [{"log_field": "status", "exact": "debug"}], "keep": "none"},
    },
    {
        "id": "drop-health-logs",
        "name": "drop health checks",
        "log": {"match": [{"log_field": "message", "contains": "healthz"}], "keep": "none"},
    },
    {
        "id": "drop-debug-metrics",
        "name": "drop app.debug.*",
        "metric": {"match": [{"metric_field": "name", "starts_with": "app.debug."}], "keep": False},
    },
    {
        "id": "drop-staging-metrics",
        "name": "drop env:staging",
        "metric": {"match": [{"datapoint_attribute": "env", "exact": "staging"}], "keep": False},
    },
)
FILTERED = {"series v2", "series v1", "sketches", "logs"}
"""The calls policies apply to; every other one is forwarded byte for byte."""


@pytest.fixture
def families() -> Iterator[dict[str, Upstream]]:
    """One recording upstream per family, answering as Datadog's intakes do."""
    servers = {family: Upstream() for family in (LOGS, METRICS, API)}
    for server in servers.values():
        server.respond = Reply(202, b"{}")
    yield servers
    for server in servers.values():
        server.stop()


def replay(edge: EdgeProcess, calls: list[AgentCall]) -> None:
    for call in calls:
        answer = edge.request(call.method, call.target, call.body, call.headers)
        assert answer.status == 202, (call.name, answer)


def names(message: Any, field: str = "series") -> list[str]:
    return [item.metric for item in getattr(message, field)]


def test_the_agents_calls_land_where_the_agent_sends_each_family(
    start_edge: EdgeLauncher, upstream: Upstream, families: dict[str, Upstream]
) -> None:
    edge = start_edge(
        POLICIES,
        program="sluice-edge-datadog",
        log_level="debug",
        logs_url=families[LOGS].url,
        metrics_url=families[METRICS].url,
        api_url=families[API].url,
    )
    calls = agent_calls(AGENT_KEY)
    replay(edge, calls)
    assert upstream.received() == []  # upstream_url is only the fallback
    by_name: dict[str, Recorded] = {}
    for family, server in families.items():
        sent = [call for call in calls if call.family == family]
        got = server.received()
        assert [r.target for r in got] == [call.target for call in sent], family
        for call, received in zip(sent, got, strict=True):
            by_name[call.name] = received
            assert received.method == call.method
            for name, value in call.headers:  # the Agent's headers, as it sent them
                assert received.all(name) == [value], (call.name, name)
            if call.name not in FILTERED:
                assert received.body == (call.body or b""), call.name
    assert "?api_key=" + AGENT_KEY in by_name["validate"].target

    series = MetricPayload.FromString(by_name["series v2"].decoded())
    assert names(series) == ["datadog.agent.running", "system.cpu.user", "app.queue.depth"]
    original = series_payload(SERIES)
    assert list(series.series) == [original.series[i] for i in (0, 1, 4)]  # points and all
    v1 = json.loads(by_name["series v1"].decoded())
    assert [s["metric"] for s in v1["series"]] == ["app.v1.kept"]
    assert v1["series"][0]["points"] == [[1_763_726_400, 2.0]]
    sketches = SketchPayload.FromString(by_name["sketches"].decoded())
    assert names(sketches, "sketches") == ["app.request.latency"]
    assert sketches.sketches[0].dogsketches[0].k == [1, 340, 1372]
    assert sketches.metadata.agent_version  # the payload's own metadata is kept
    logs = json.loads(by_name["logs"].decoded())
    assert [r["message"] for r in logs] == ["payment accepted", "refund issued"]

    metrics = Prometheus.parse(edge.metrics())
    # Datadog batches count under their signal's telemetry type, as OTLP's do.
    assert metrics.results("metrics")["dropped"] == 4
    assert metrics.results("logs")["dropped"] == 2
    fail_open = [
        v for (name, _), v in metrics.samples.items() if name == "sluice_edge_fail_open_total"
    ]
    assert fail_open and not any(fail_open)  # nothing forwarded unread
    assert edge.terminate() == 0
    assert AGENT_KEY not in edge.stderr()


def test_families_fall_back_to_upstream_url_and_the_metrics_site(
    start_edge: EdgeLauncher, upstream: Upstream, families: dict[str, Upstream]
) -> None:
    upstream.respond = Reply(202, b"{}")
    calls = agent_calls(AGENT_KEY, encoding="deflate")
    plain = start_edge(POLICIES)  # no Datadog upstreams: everything to upstream_url
    replay(plain, calls)
    assert [r.target for r in upstream.received()] == [c.target for c in calls]
    upstream.reset()
    upstream.respond = Reply(202, b"{}")
    # metrics_url alone, not a Datadog host: the other API calls follow it (as
    # the Agent sends them all to its one dd_url); logs stay on upstream_url.
    edge = start_edge(POLICIES, metrics_url=families[METRICS].url)
    replay(edge, calls)
    assert [r.target for r in upstream.received()] == [c.target for c in calls if c.family == LOGS]
    assert [r.target for r in families[METRICS].received()] == [
        c.target for c in calls if c.family != LOGS
    ]


def test_distribution_points_go_to_the_metrics_family_unchanged(
    start_edge: EdgeLauncher, upstream: Upstream, families: dict[str, Upstream]
) -> None:
    """``/api/v1/distribution_points`` (the public API's distributions, which
    API clients and serverless libraries post to ``api.<site>``; the Agent
    sends its distributions as sketches) is not one of the routes EDGE.md
    section 2 filters: it is forwarded byte for byte, to ``metrics_url``
    with the rest of the metrics family, whatever the metric policies say."""
    edge = start_edge(
        POLICIES,
        program="sluice-edge-datadog",
        logs_url=families[LOGS].url,
        metrics_url=families[METRICS].url,
        api_url=families[API].url,
    )
    points = {
        "series": [
            {"metric": "app.debug.latency", "points": [[1_763_726_400, [1.0, 2.5]]]},
            {"metric": "app.latency", "points": [[1_763_726_400, [3.0]]], "tags": ["env:prod"]},
        ]
    }
    body = compress("gzip", json.dumps(points).encode())
    headers = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
    answer = edge.request("POST", "/api/v1/distribution_points", body, headers)
    assert answer.status == 202
    [got] = families[METRICS].received()
    assert (got.target, got.body) == ("/api/v1/distribution_points", body)
    assert got.header("Content-Encoding") == "gzip"
    assert families[API].received() == [] and upstream.received() == []
    metrics = Prometheus.parse(edge.metrics())
    assert metrics.get(
        "sluice_edge_requests_total", route="/api/v1/distribution_points", code="202"
    )
    assert metrics.results("metrics")["dropped"] == 0


@pytest.mark.parametrize("encoding", ["zstd", "gzip", "deflate", ""])
def test_protobuf_series_are_filtered_and_keep_their_encoding(
    start_edge: EdgeLauncher, upstream: Upstream, encoding: str
) -> None:
    upstream.respond = Reply(202, b"{}")
    edge = start_edge(POLICIES)
    payload = series_payload(SERIES)
    headers = {"Content-Type": PROTOBUF, "DD-API-KEY": AGENT_KEY}
    if encoding:
        headers["Content-Encoding"] = encoding
    body = compress(encoding, payload.SerializeToString())
    assert edge.request("POST", "/api/v2/series", body, headers).status == 202
    [got] = upstream.received()
    assert got.header("Content-Encoding") == (encoding or None)
    assert got.header("Content-Type") == PROTOBUF
    forwarded = MetricPayload.FromString(got.decoded())
    assert list(forwarded.series) == [payload.series[i] for i in (0, 1, 4)]


def test_series_mapping_name_type_unit_tags_and_host(
    start_edge: EdgeLauncher, upstream: Upstream
) -> None:
    def drop(pid: str, matcher: dict[str, Any]) -> dict[str, Any]:
        return {"id": pid, "name": pid, "metric": {"match": [matcher], "keep": False}}

    upstream.respond = Reply(202, b"{}")
    edge = start_edge(
        policies(
            drop("counts", {"metric_type": "sum"}),
            drop("ms", {"metric_field": "unit", "exact": "ms"}),
            drop("db-host", {"resource_attribute": "host", "exact": "db-1"}),
            drop("otel-host", {"resource_attribute": "host.name", "exact": "db-2"}),
            drop("otel-service", {"resource_attribute": "service.name", "exact": "noisy"}),
            drop("bare-tag", {"datapoint_attribute": "canary", "exists": True}),
            drop("regex-tag", {"datapoint_attribute": "team", "regex": "^pay"}),
        )
    )
    payload = series_payload(
        [
            {"metric": "kept.gauge", "tags": ["team:core"], "unit": "byte"},
            {"metric": "a.count", "type": MetricPayload.COUNT},
            {"metric": "a.rate", "type": MetricPayload.RATE},
            {"metric": "a.latency", "unit": "ms"},
            {"metric": "a.db", "host": "db-1"},
            {"metric": "a.db2", "host": "db-2"},
            {"metric": "a.canary", "tags": ["canary", "team:core"]},
            {"metric": "a.payments", "tags": ["team:payments"]},
            {"metric": "a.noisy", "tags": ["env:prod", "service:noisy"]},
            {"metric": "kept.quiet", "tags": ["service:quiet"]},
            {"metric": "kept.untyped", "type": MetricPayload.UNSPECIFIED},
        ]
    )
    body = payload.SerializeToString()
    assert edge.post("/api/v2/series", body, PROTOBUF).status == 202
    [got] = upstream.received()
    kept = names(MetricPayload.FromString(got.body))
    assert kept == ["kept.gauge", "kept.quiet", "kept.untyped"]


def test_all_dropped_is_202_none_dropped_is_forwarded_byte_for_byte(
    start_edge: EdgeLauncher, upstream: Upstream
) -> None:
    upstream.respond = Reply(202, b"{}")
    edge = start_edge(POLICIES)
    dropped = series_payload([{"metric": "app.debug.a"}, {"metric": "app.debug.b"}])
    answer = edge.post(
        "/api/v2/series",
        compress("zstd", dropped.SerializeToString()),
        PROTOBUF,
        content_encoding="zstd",
    )
    assert (answer.status, answer.json()) == (202, {})
    sketches = sketch_payload([{"metric": "app.debug.latency"}])
    assert edge.post("/api/beta/sketches", sketches.SerializeToString(), PROTOBUF).status == 202
    assert upstream.received() == []
    kept = compress("zstd", series_payload(SERIES[:2]).SerializeToString())
    assert edge.post("/api/v2/series", kept, PROTOBUF, content_encoding="zstd").status == 202
    [got] = upstream.received()
    assert got.body == kept


def test_unreadable_series_are_forwarded_unchanged_and_counted(
    start_edge: EdgeLauncher, upstream: Upstream
) -> None:
    upstream.respond = Reply(202, b"{}")
    edge = start_edge(POLICIES)
    broken = b"\x0a\xff\xff\xff\x0f" + b"x" * 10  # a series longer than the body
    for path, body, kind in (
        ("/api/v2/series", broken, PROTOBUF),
        ("/api/beta/sketches", broken, PROTOBUF),
        ("/api/v2/series", b'{"series": 5}', "application/json"),
        ("/api/v1/series", b"not json", "application/json"),
    ):
        assert edge.post(path, body, kind).status == 202
        assert upstream.received()[-1].body == body
    metrics = Prometheus.parse(edge.metrics())
    assert metrics.get("sluice_edge_fail_open_total", route="/api/v2/series") == 2
    assert metrics.get("sluice_edge_fail_open_total", route="/api/beta/sketches") == 1
    assert metrics.get("sluice_edge_fail_open_total", route="/api/v1/series") == 1


def test_sketches_and_series_pass_undecoded_without_metric_policies(
    start_edge: EdgeLauncher, upstream: Upstream
) -> None:
    upstream.respond = Reply(202, b"{}")
    edge = start_edge(policies(POLICIES["policies"][0]))  # a log policy only
    for path in ("/api/v2/series", "/api/beta/sketches"):
        body = b"\x28\xb5\x2f\xfd not really zstd"
        answer = edge.post(path, body, PROTOBUF, content_encoding="zstd")
        assert answer.status == 202  # not decompressed, so not refused: the upstream decides
        assert upstream.received()[-1].body == body
    metrics = Prometheus.parse(edge.metrics())
    for path in ("/api/v2/series", "/api/beta/sketches"):
        assert metrics.has("sluice_edge_fail_open_total", route=path)
        assert metrics.get("sluice_edge_fail_open_total", route=path) == 0


def test_env_api_key_is_added_to_every_datadog_family_only(
    start_edge: EdgeLauncher, upstream: Upstream
) -> None:
    upstream.respond = Reply(202, b"{}")
    edge = start_edge(POLICIES, program="sluice-edge-datadog", env={"DD_API_KEY": ENV_KEY})
    for call in agent_calls(AGENT_KEY):
        headers = [(k, v) for k, v in call.headers if k.lower() != "dd-api-key"]
        assert edge.request(call.method, call.target, call.body, headers).status == 202
    assert edge.request("POST", "/custom/path", b"x").status == 202
    received: list[Recorded] = upstream.received()
    assert all(r.all("DD-API-KEY") == [ENV_KEY] for r in received[:-1])
    assert received[-1].all("DD-API-KEY") == []  # not a Datadog path: no key added


def test_api_url_defaults_to_the_main_endpoint_of_the_metrics_site() -> None:
    assert datadog_site("https://api.datadoghq.eu") == "datadoghq.eu"
    assert datadog_site("https://api.us3.datadoghq.com/") == "us3.datadoghq.com"
    assert datadog_site("https://7-64-3-app.agent.datadoghq.com") == "datadoghq.com"
    assert datadog_site("https://http-intake.logs.ap1.datadoghq.com") == "ap1.datadoghq.com"
    assert datadog_site("https://api.ddog-gov.com") == "ddog-gov.com"
    assert datadog_site("https://notdatadoghq.com") is None
    assert datadog_site("http://relay:8080") is None
    assert default_api_url("https://api.datadoghq.eu") == "https://app.datadoghq.eu"
    assert default_api_url("https://api.us5.datadoghq.com") == "https://app.us5.datadoghq.com"
    assert default_api_url("http://relay:8080/base") == "http://relay:8080/base"

    def config(**doc: str) -> Any:
        return parse_config({"upstream_url": "http://collector:4318", **doc}, "edge.json")

    assert config().datadog_api_url == "http://collector:4318"
    assert config(metrics_url="https://api.datadoghq.eu").datadog_api_url == (
        "https://app.datadoghq.eu"
    )
    explicit = config(metrics_url="https://api.datadoghq.eu", api_url="https://other:1")
    assert explicit.datadog_api_url == "https://other:1"
    with pytest.raises(ConfigError, match=r"edge\.json: api_url: expected http"):
        config(api_url="app.datadoghq.com")


def test_every_method_and_legacy_path_follows_its_family(
    start_edge: EdgeLauncher, upstream: Upstream, families: dict[str, Upstream]
) -> None:
    upstream.respond = Reply(202, b"{}")
    edge = start_edge(
        POLICIES,
        logs_url=families[LOGS].url,
        metrics_url=families[METRICS].url,
        api_url=families[API].url,
    )
    requests = [
        ("POST", "/v1/input/0123abcd", LOGS),  # the Agent's legacy logs HTTP intake
        ("GET", "/api/v2/logs", LOGS),
        ("PUT", "/api/v2/series", METRICS),
        ("GET", "/api/beta/sketches?x=1", METRICS),
        ("POST", "/api/v2/events", API),
        ("POST", "/v1/logs", None),  # OTLP, and any other path: upstream_url
        ("GET", "/somewhere/else", None),
    ]
    for method, target, _ in requests:
        assert edge.request(method, target, b"[]").status == 202, target
    for family, server in [*families.items(), (None, upstream)]:
        expected = [(m, t) for m, t, f in requests if f == family]
        assert [(r.method, r.target) for r in server.received()] == expected, family
    counted = Prometheus.parse(edge.metrics())
    assert counted.get("sluice_edge_requests_total", route="datadog_api", code="202") == 1
    assert counted.get("sluice_edge_requests_total", route="datadog_logs_legacy", code="202") == 1
