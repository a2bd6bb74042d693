"""The ``healthcheckv2`` extension: config as upstream's; status aggregated from
component reports and answered over real HTTP and gRPC as upstream does."""

from __future__ import annotations

import http.client
import json
import logging
import socket
import ssl
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from sluice.collector.component import ComponentID, Host, Kind, Settings, Status
from sluice.collector.components.extensions import bearertokenauth
from sluice.collector.components.extensions.bearertokenauth.config import BearerTokenAuthConfig
from sluice.collector.components.extensions.healthcheck.config import (
    CheckCollectorPipeline,
    ResponseBody,
)
from sluice.collector.components.extensions.healthcheckv2 import FACTORY
from sluice.collector.components.extensions.healthcheckv2.aggregator import (
    ErrorPriority,
    Event,
    StatusAggregator,
)
from sluice.collector.components.extensions.healthcheckv2.config import (
    ComponentHealthSettings,
    GrpcSettings,
    HealthCheckV2Config,
    HttpSettings,
    PathSettings,
)
from sluice.collector.components.extensions.healthcheckv2.extension import (
    HealthCheckV2Extension,
)
from sluice.collector.components.extensions.healthcheckv2.grpc_health import (
    NOT_SERVING,
    SERVICE_UNKNOWN,
    SERVING,
    HealthCheckRequest,
    HealthCheckResponse,
)
from sluice.collector.components.receivers.otlp.config import (
    KeepaliveConfig,
    KeepaliveEnforcementPolicy,
)
from sluice.collector.configauth import AuthConfig
from sluice.collector.confighttp import HttpAuthConfig
from sluice.collector.configtls import TLSServerConfig
from sluice.collector.confmap.decode import Duration, Opaque
from sluice.collector.telemetry import ServiceTelemetry
from tests.collector.background import BackgroundLoop, background_loop, http_get
from tests.collector.helpers import CollectorProcess, free_ports
from tests.collector.testdata_configs import load_config
from tests.providers.test_tls import self_signed

TESTDATA = Path(__file__).parent / "testdata" / "healthcheckv2"
PIPELINES = {
    "traces": ["receiver:otlp", "processor:batch", "exporter:otlp"],
    "metrics/grpc": ["receiver:otlp", "processor:batch", "exporter:otlphttp/staging"],
}
COMPONENTS = ["receiver:otlp", "processor:batch", "exporter:otlp", "exporter:otlphttp/staging"]


def load(name: str) -> tuple[HealthCheckV2Config, list[str]]:
    return load_config(HealthCheckV2Config, TESTDATA / name)


def test_null_sections_stay_unset() -> None:
    # upstream's response_body, check_collector_pipeline, component_health
    # and the squashed ServerConfig's tls and auth are nil-default pointers;
    # mapstructure leaves them nil for a null
    config, problems = load("config_null_sections.yaml")
    assert problems == []
    assert config == FACTORY.default_config()


def test_default_config_is_the_v1_mode() -> None:
    config, problems = load("config_legacy.yaml")
    assert problems == []
    assert config == FACTORY.default_config()
    assert (config.use_v2, config.endpoint, config.path) == (False, "localhost:13133", "/")
    assert (config.http, config.grpc, config.component_health) == (None, None, None)


def test_legacy_keys_decode() -> None:
    config, problems = load("config_legacy_custom.yaml")
    assert problems == []
    assert config.endpoint == "localhost:13"
    assert config.path == "/health"
    assert config.response_body == ResponseBody("ALL OK", "NOT OK")
    assert config.check_collector_pipeline == CheckCollectorPipeline(enabled=True)


def test_upstream_readme_sample_decodes() -> None:
    config, problems = load("config_v2.yaml")
    assert problems == []
    assert config == HealthCheckV2Config(
        use_v2=True,
        component_health=ComponentHealthSettings(False, True, Duration(300)),
        http=HttpSettings(
            endpoint="localhost:13133",
            status=PathSettings(True, "/health/status"),
            config=PathSettings(True, "/health/config"),
        ),
        grpc=GrpcSettings("localhost:13132", "tcp"),
    )


def test_an_empty_http_section_is_on_with_defaults() -> None:
    config, problems = load("config_http_defaults.yaml")
    assert problems == []
    assert config.http == HttpSettings()
    assert config.http.status == PathSettings(True, "/status")
    assert config.http.config == PathSettings(False, "/config")
    assert config.grpc is None


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("config_missing_protocol.yaml", "must specify at least one protocol"),
        ("config_invalid_path.yaml", "http::status::path: path must start with /"),
        ("config_missing_http_endpoint.yaml", "http::endpoint: http endpoint required"),
        ("config_missing_grpc_endpoint.yaml", "grpc::endpoint: grpc endpoint required"),
        ("config_legacy_invalid_path.yaml", "path: path must start with /"),
        (
            "config_bad_transport.yaml",
            'grpc::transport: unsupported transport "udp" (valid: tcp, tcp4, tcp6, unix)',
        ),
    ],
)
def test_invalid_configs_name_the_key(name: str, problem: str) -> None:
    assert load(name)[1] == [problem]


def test_unix_transport_takes_a_socket_path() -> None:
    assert load("config_unix_transport.yaml")[1] == []


def test_ipv4_and_ipv6_only_tcp_transports_are_accepted() -> None:
    """Upstream's gRPC section is a confignet address: ``tcp4`` and ``tcp6``
    are valid transports there, as for the otlp receiver."""
    config, problems = load("config_tcp4_transport.yaml")
    assert problems == []
    assert config.grpc is not None and config.grpc.transport == "tcp4"


def test_factory_describes_the_upstream_component() -> None:
    assert FACTORY.kind is Kind.EXTENSION
    assert FACTORY.component_type == "healthcheckv2"
    assert FACTORY.module.endswith("/extension/healthcheckv2extension")
    assert FACTORY.stability == {"extension": "development"}


# -- aggregation ----------------------------------------------------------------


def test_error_statuses_carry_their_earliest_event_and_lifecycle_the_latest() -> None:
    aggregator = StatusAggregator()
    pipelines = ["traces"]
    aggregator.record("receiver:otlp", Event(Status.OK, "", 10), pipelines)
    aggregator.record("exporter:otlp", Event(Status.RECOVERABLE_ERROR, "first", 20), pipelines)
    aggregator.record("processor:batch", Event(Status.RECOVERABLE_ERROR, "second", 30), pipelines)
    assert aggregator.root.event == Event(Status.RECOVERABLE_ERROR, "first", 20)
    for instance in ("exporter:otlp", "processor:batch"):
        aggregator.record(instance, Event(Status.OK, "", 40), pipelines)
    assert aggregator.root.event == Event(Status.OK, "", 40)
    aggregator.record("receiver:otlp", Event(Status.STOPPED, "", 50), pipelines)
    assert aggregator.root.event == Event(Status.STOPPING, "", 50), "a synthetic event"


@pytest.mark.parametrize(
    ("priority", "expected"),
    [
        (ErrorPriority.PERMANENT, Status.PERMANENT_ERROR),
        (ErrorPriority.RECOVERABLE, Status.RECOVERABLE_ERROR),
    ],
)
def test_error_priority(priority: ErrorPriority, expected: Status) -> None:
    aggregator = StatusAggregator(priority)
    aggregator.record("receiver:otlp", Event(Status.PERMANENT_ERROR, "", 1), ["traces"])
    aggregator.record("exporter:otlp", Event(Status.RECOVERABLE_ERROR, "", 2), ["traces"])
    assert aggregator.root.event.status is expected


@pytest.mark.parametrize(
    ("mix", "expected"),
    [
        ({Status.OK, Status.FATAL_ERROR, Status.STARTING}, Status.FATAL_ERROR),
        ({Status.OK, Status.STARTING, Status.STOPPING}, Status.STARTING),
        ({Status.OK, Status.STOPPING, Status.PERMANENT_ERROR}, Status.STOPPING),
        ({Status.OK, Status.STOPPED}, Status.STOPPING),
        ({Status.STOPPED}, Status.STOPPED),
    ],
)
def test_lifecycle_precedence(mix: set[Status], expected: Status) -> None:
    aggregator = StatusAggregator()
    for n, status in enumerate(sorted(mix, key=lambda s: s.value)):
        aggregator.record(f"receiver:r{n}", Event(status, "", n + 1), ["traces"])
    assert aggregator.root.event.status is expected


# -- running ----------------------------------------------------------------------


@pytest.fixture
def loop() -> Iterator[BackgroundLoop]:
    with background_loop() as running:
        yield running


class Running:
    """A started extension; its host knows `PIPELINES`."""

    def __init__(self, loop: BackgroundLoop, config: HealthCheckV2Config):
        self.loop = loop
        self.host = Host()
        token = ComponentID("bearertokenauth")
        self.host.extensions[token] = bearertokenauth.FACTORY.create(
            Settings(token, Kind.EXTENSION, ServiceTelemetry()),
            BearerTokenAuthConfig(token=Opaque("s3cret")),
        )
        self.host.pipelines = {p: list(members) for p, members in PIPELINES.items()}
        settings = Settings(ComponentID("healthcheckv2"), Kind.EXTENSION, ServiceTelemetry())
        extension = FACTORY.create(settings, config)
        assert isinstance(extension, HealthCheckV2Extension)
        self.extension = extension
        loop.run(extension.start(self.host))
        self.port = extension.listener.port if extension.listener is not None else 0

    def report(self, instance: str, status: Status, error: str = "") -> None:
        self.loop.call(self.host.report_status, instance, status, error)

    def report_all(self, status: Status, instances: list[str] = COMPONENTS) -> None:
        for instance in instances:
            self.report(instance, status)

    def start_collector(self) -> None:
        """What the service reports while it starts everything."""
        self.report("extension:healthcheckv2", Status.STARTING)
        self.report("extension:healthcheckv2", Status.OK)
        self.report_all(Status.STARTING)
        self.report_all(Status.OK)
        self.report("collector", Status.OK)

    def get(self, target: str = "/status") -> tuple[int, dict[str, str], bytes]:
        return http_get(self.port, target)

    def status(self, target: str = "/status") -> tuple[int, dict[str, Any]]:
        code, headers, body = self.get(target)
        assert headers["content-type"] == "application/json"
        return code, json.loads(body)

    def stop(self) -> None:
        self.loop.run(self.extension.shutdown())


def v2(**config: Any) -> HealthCheckV2Config:
    http = config.pop("http", HttpSettings(endpoint="127.0.0.1:0"))
    return HealthCheckV2Config(use_v2=True, http=http, **config)


@pytest.fixture
def start(loop: BackgroundLoop) -> Iterator[Any]:
    started: list[Running] = []

    def start(config: HealthCheckV2Config) -> Running:
        started.append(Running(loop, config))
        return started[-1]

    yield start
    for running in started:
        running.stop()


def test_every_lifecycle_transition_and_its_code(start: Any) -> None:
    hc = start(v2())
    code, body = hc.status()
    assert (code, body["status"], body["status_time"]) == (
        503,
        "StatusNone",
        "0001-01-01T00:00:00Z",
    )

    hc.report_all(Status.STARTING)
    assert hc.status()[0] == 503
    assert hc.status()[1]["status"] == "StatusStarting"

    hc.report_all(Status.OK)
    hc.report("extension:healthcheckv2", Status.STARTING)
    hc.report("extension:healthcheckv2", Status.OK)
    assert hc.status()[0] == 503, "held until the collector is ready"
    assert hc.status()[1]["status"] == "StatusStarting"
    hc.report("collector", Status.OK)
    assert hc.status()[0] == 200
    assert hc.status()[1]["status"] == "StatusOK"

    hc.report("exporter:otlp", Status.RECOVERABLE_ERROR, "rpc error: code = ResourceExhausted")
    code, body = hc.status()
    assert (code, body["status"], body["error"], body["healthy"]) == (
        200,
        "StatusRecoverableError",
        "rpc error: code = ResourceExhausted",
        True,
    )
    hc.report("exporter:otlp", Status.OK)
    assert hc.status()[0] == 200
    assert hc.status()[1]["status"] == "StatusOK"

    hc.report("collector", Status.STOPPING)
    assert hc.status()[0] == 200, "v2 follows the components' own reports"
    hc.report("receiver:otlp", Status.STOPPING)
    assert hc.status()[0] == 503
    assert hc.status()[1]["status"] == "StatusStopping"
    hc.report_all(Status.STOPPING)
    hc.report_all(Status.STOPPED)
    assert hc.status()[0] == 503
    assert hc.status()[1]["status"] == "StatusStopping", "extensions still ok"
    hc.report("extension:healthcheckv2", Status.STOPPING)
    hc.report("extension:healthcheckv2", Status.STOPPED)
    assert hc.status()[1]["status"] == "StatusStopped"


def test_permanent_and_fatal_errors_are_final(start: Any) -> None:
    # upstream's service drops any report after them (its status FSM)
    hc = start(v2())
    hc.start_collector()
    hc.report("exporter:otlp", Status.PERMANENT_ERROR, "bad config")
    assert hc.status()[0] == 200
    assert hc.status()[1]["status"] == "StatusPermanentError"
    for later in (Status.OK, Status.FATAL_ERROR, Status.STOPPING):
        hc.report("exporter:otlp", later)
        assert hc.status()[1]["status"] == "StatusPermanentError"
    hc.report("exporter:otlphttp/staging", Status.FATAL_ERROR, "port taken")
    code, body = hc.status()
    assert (code, body["status"], body["healthy"]) == (500, "StatusFatalError", True)
    hc.report("exporter:otlphttp/staging", Status.OK)
    assert hc.status()[0] == 500


def test_concise_body_has_upstreams_fields_in_order(start: Any) -> None:
    before = time.time()
    hc = start(v2())
    hc.start_collector()
    hc.report("exporter:otlp", Status.RECOVERABLE_ERROR, "<busy> & retrying")
    raw = hc.get()[2]
    assert b'"error":"\\u003cbusy\\u003e \\u0026 retrying"' in raw
    body = json.loads(raw)
    assert list(body) == ["start_time", "healthy", "status", "error", "status_time"]
    assert abs(_seconds(body["start_time"]) - before) < 1
    assert body["status_time"] >= body["start_time"]
    for query in ("?verbose=false", "?pipeline=traces"):
        assert "components" not in hc.status("/status" + query)[1]


def test_verbose_body_nests_components_by_pipeline(start: Any) -> None:
    hc = start(v2())
    hc.start_collector()
    hc.report("exporter:otlphttp/staging", Status.RECOVERABLE_ERROR, "resource exhausted")
    hc.report("pipeline:traces", Status.STOPPED)  # a pipeline's status is its components'
    code, body = hc.status("/status?verbose")
    assert code == 200
    assert list(body) == ["start_time", "healthy", "status", "error", "status_time", "components"]
    assert list(body["components"]) == ["extensions", "pipeline:metrics/grpc", "pipeline:traces"]
    extensions = body["components"]["extensions"]
    assert (extensions["status"], list(extensions["components"])) == (
        "StatusOK",
        ["extension:healthcheckv2"],
    )
    failing = body["components"]["pipeline:metrics/grpc"]
    assert (failing["status"], failing["error"]) == ("StatusRecoverableError", "resource exhausted")
    assert list(failing["components"]) == [
        "exporter:otlphttp/staging",
        "processor:batch",
        "receiver:otlp",
    ]
    leaf = failing["components"]["exporter:otlphttp/staging"]
    assert list(leaf) == ["healthy", "status", "error", "status_time"]
    assert failing["status_time"] == leaf["status_time"] == body["status_time"]
    healthy = body["components"]["pipeline:traces"]
    assert list(healthy) == ["healthy", "status", "status_time", "components"]
    assert {c["status"] for c in healthy["components"].values()} == {"StatusOK"}

    code, scoped = hc.status("/status?pipeline=metrics/grpc&verbose")
    assert code == 200
    assert list(scoped) == ["start_time", "healthy", "status", "error", "status_time", "components"]
    assert scoped["components"] == failing["components"]
    assert (
        hc.status("/status?pipeline=extensions&verbose")[1]["components"]
        == extensions["components"]
    )


def test_a_pipeline_scope_answers_its_own_code(start: Any) -> None:
    hc = start(v2())
    hc.start_collector()
    hc.report("exporter:otlp", Status.STOPPING)
    assert hc.status("/status?pipeline=traces")[0] == 503
    assert hc.status("/status?pipeline=metrics/grpc")[0] == 200
    code, headers, body = hc.get("/status?pipeline=logs")
    assert (code, body, "content-type" in headers) == (404, b"", False)


def test_include_permanent_errors_makes_them_unhealthy(start: Any) -> None:
    hc = start(v2(component_health=ComponentHealthSettings(include_permanent_errors=True)))
    hc.start_collector()
    hc.report("exporter:otlp", Status.PERMANENT_ERROR, "401 from the backend")
    code, body = hc.status("/status?verbose")
    assert (code, body["healthy"]) == (500, False)
    traces = body["components"]["pipeline:traces"]
    assert traces["healthy"] is False
    assert traces["components"]["exporter:otlp"]["healthy"] is False
    assert traces["components"]["receiver:otlp"]["healthy"] is True
    assert hc.status("/status?pipeline=metrics/grpc")[0] == 200


def test_include_recoverable_errors_counts_them_after_the_recovery_duration(start: Any) -> None:
    health = ComponentHealthSettings(
        include_recoverable_errors=True, recovery_duration=Duration(0.2)
    )
    hc = start(v2(component_health=health))
    hc.start_collector()
    hc.report("exporter:otlp", Status.RECOVERABLE_ERROR, "timeout")
    assert hc.status()[0] == 200
    assert hc.status()[1]["healthy"] is True
    time.sleep(0.25)
    code, body = hc.status()
    assert (code, body["healthy"], body["status"]) == (500, False, "StatusRecoverableError")
    hc.report("exporter:otlp", Status.OK)
    assert hc.status()[0] == 200


def test_only_recoverable_errors_counting_puts_them_first(start: Any) -> None:
    health = ComponentHealthSettings(include_recoverable_errors=True)
    hc = start(v2(component_health=health))
    hc.start_collector()
    hc.report("receiver:otlp", Status.PERMANENT_ERROR, "permanent")
    hc.report("exporter:otlp", Status.RECOVERABLE_ERROR, "recoverable")
    code, body = hc.status()
    assert (code, body["status"], body["error"]) == (500, "StatusRecoverableError", "recoverable")


def test_config_path_serves_the_notified_config(start: Any, loop: BackgroundLoop) -> None:
    http = HttpSettings(
        endpoint="127.0.0.1:0",
        status=PathSettings(True, "/"),
        config=PathSettings(True, "/config"),
    )
    hc = start(v2(http=http))
    code, headers, body = hc.get("/config")
    assert (code, body, "content-type" in headers) == (503, b"", False)
    loop.call(hc.extension.notify_config, {"receivers": {"otlp": None}, "exporters": {"a": 1}})
    code, headers, body = hc.get("/config")
    assert (code, headers["content-type"]) == (200, "application/json")
    assert body == b'{"exporters":{"a":1},"receivers":{"otlp":null}}'
    assert hc.get("/anything")[0] == 503, "the status path / serves the rest"


def test_a_running_collector_serves_its_effective_config(tmp_path: Path) -> None:
    # upstream's service calls NotifyConfig on ConfigWatcher extensions after
    # starting them, with the marshalled effective config (defaults filled
    # in, configopaque values redacted)
    health, otlp = free_ports(2)
    config = {
        "receivers": {"otlp": {"protocols": {"http": {"endpoint": f"127.0.0.1:{otlp}"}}}},
        "exporters": {
            "debug": {"verbosity": "normal"},
            "otlphttp": {"endpoint": "http://127.0.0.1:1", "headers": {"X-Key": "s3cret-key"}},
        },
        "extensions": {
            "bearertokenauth": {"token": "s3cret-token"},
            "healthcheckv2": {
                "use_v2": True,
                "http": {"endpoint": f"127.0.0.1:{health}", "config": {"enabled": True}},
            },
        },
        "service": {
            "telemetry": {"metrics": {"level": "none"}},
            "extensions": ["bearertokenauth", "healthcheckv2"],
            "pipelines": {
                "logs": {"receivers": ["otlp"], "exporters": ["debug"]},
                "traces": {"receivers": ["otlp"], "exporters": ["otlphttp"]},
            },
        },
    }
    process = CollectorProcess(tmp_path, config).wait_ready()
    try:
        code, headers, body = http_get(health, "/config")
    finally:
        process.terminate()
    assert (code, headers["content-type"]) == (200, "application/json")
    assert b"s3cret" not in body
    served = json.loads(body)
    assert served["extensions"]["bearertokenauth"]["token"] == "[REDACTED]"
    assert served["exporters"]["otlphttp"]["headers"] == {"X-Key": "[REDACTED]"}
    assert served["exporters"]["debug"]["verbosity"] == "normal"
    assert served["exporters"]["debug"]["sampling_initial"] == 2, "defaults are filled in"
    assert served["receivers"]["otlp"]["protocols"]["http"]["endpoint"] == f"127.0.0.1:{otlp}"
    assert served["service"]["extensions"] == ["bearertokenauth", "healthcheckv2"]
    assert served["service"]["pipelines"]["logs"] == {
        "receivers": ["otlp"],
        "processors": [],
        "exporters": ["debug"],
    }


def test_extensions_started_before_it_are_in_the_status(tmp_path: Path) -> None:
    # upstream's service makes every extension first and hands each status
    # report to all of them, so healthcheckv2 also sees the reports of the
    # extensions started before it
    health, otlp = free_ports(2)
    config = {
        "receivers": {"otlp": {"protocols": {"http": {"endpoint": f"127.0.0.1:{otlp}"}}}},
        "exporters": {"debug": {}},
        "extensions": {
            "bearertokenauth": {"token": "s3cret-token"},
            "healthcheckv2": {"use_v2": True, "http": {"endpoint": f"127.0.0.1:{health}"}},
        },
        "service": {
            "telemetry": {"metrics": {"level": "none"}},
            "extensions": ["bearertokenauth", "healthcheckv2"],
            "pipelines": {"logs": {"receivers": ["otlp"], "exporters": ["debug"]}},
        },
    }
    process = CollectorProcess(tmp_path, config).wait_ready()
    try:
        code, _, body = http_get(health, "/status?pipeline=extensions&verbose")
    finally:
        process.terminate()
    assert code == 200
    served = json.loads(body)
    assert sorted(served["components"]) == ["extension:bearertokenauth", "extension:healthcheckv2"]
    assert served["components"]["extension:bearertokenauth"]["status"] == "StatusOK"


def test_http_server_keys_apply_to_the_v2_server(start: Any) -> None:
    # upstream builds the v2 HTTP server with confighttp's ToServer around
    # its mux: auth, response_headers... apply to every path
    http = HttpSettings(
        endpoint="127.0.0.1:0",
        auth=HttpAuthConfig("bearertokenauth"),
        response_headers={"X-Probe": "yes"},
    )
    hc = start(v2(http=http))
    code, headers, body = hc.get("/status")
    assert (code, body) == (401, b"Unauthorized\n")
    assert headers["x-probe"] == "yes"
    code, headers, _ = http_get(hc.port, "/status", {"Authorization": "Bearer s3cret"})
    assert (code, headers["x-probe"]) == (503, "yes")


def test_http_server_keys_apply_in_the_v1_mode(start: Any) -> None:
    hc = start(HealthCheckV2Config(endpoint="127.0.0.1:0", auth=HttpAuthConfig("bearertokenauth")))
    assert hc.get("/")[0] == 401
    assert http_get(hc.port, "/", {"Authorization": "Bearer s3cret"})[0] == 503


def test_server_keys_decode_and_are_checked() -> None:
    config, problems = load("config_server_keys.yaml")
    # with use_v2 the top-level server keys are not used, so not checked
    assert problems == ['http::compression_algorithms: unsupported compression algorithm "bogus"']
    assert config.response_headers == {"X-A": "1"}
    assert config.http is not None and config.http.response_headers == {"X-B": "2"}
    assert config.http.auth is not None and config.http.auth.authenticator == "bearertokenauth"
    assert config.http.read_timeout == 3.0


def test_other_paths_and_disabled_paths_answer_404(start: Any) -> None:
    hc = start(v2())
    assert hc.get("/config")[0::2] == (404, b"404 page not found\n")
    assert hc.get("/")[0] == 404


def test_paths_are_redirected_as_gos_servemux_does(start: Any) -> None:
    # Upstream's HTTP service routes on a Go ServeMux: a path with empty,
    # "." or ".." segments is answered 301 to the clean one, and a subtree's
    # root without its slash 301 to the root with it, query kept.
    hc = start(v2())
    status, headers, body = hc.get("//status?verbose")
    assert (status, headers["location"], body) == (
        301,
        "/status?verbose",
        b'<a href="/status?verbose">Moved Permanently</a>.\n\n',
    )
    legacy = start(HealthCheckV2Config(endpoint="127.0.0.1:0", path="/health/"))
    status, headers, _ = legacy.get("/health")
    assert (status, headers["location"]) == (301, "/health/")


def test_v1_mode_answers_upstreams_v1_body_from_component_status(start: Any) -> None:
    hc = start(HealthCheckV2Config(endpoint="127.0.0.1:0"))
    code, _, body = hc.get("/")
    assert (code, body) == (
        503,
        b'{"status":"Server not available","upSince":"0001-01-01T00:00:00Z","uptime":""}',
    )
    hc.start_collector()
    code, body = hc.status("/anywhere")
    assert (code, body["status"], list(body)) == (
        200,
        "Server available",
        ["status", "upSince", "uptime"],
    )
    assert abs(_seconds(body["upSince"]) - hc.extension.start_ns / 1e9) < 0.001
    hc.report("exporter:otlp", Status.FATAL_ERROR, "gone")
    assert hc.get("/")[0] == 503, "v1 mode answers 503 for a fatal error"


def test_v1_mode_response_body(start: Any) -> None:
    hc = start(
        HealthCheckV2Config(
            endpoint="127.0.0.1:0", path="/health", response_body=ResponseBody("up", "down")
        )
    )
    assert hc.get("/health")[0::2] == (503, b"down")
    hc.start_collector()
    assert hc.get("/health")[0::2] == (200, b"up")
    assert hc.get("/")[0] == 404


def test_shutdown_stops_listening(loop: BackgroundLoop) -> None:
    hc = Running(loop, v2())
    hc.stop()
    assert hc.host.status_listeners == []
    with pytest.raises(OSError):
        http_get(hc.port, "/status")


# -- gRPC ---------------------------------------------------------------------------


def grpc_config(**health: Any) -> HealthCheckV2Config:
    return HealthCheckV2Config(
        use_v2=True,
        grpc=GrpcSettings(endpoint="127.0.0.1:0"),
        component_health=ComponentHealthSettings(**health) if health else None,
    )


class HealthClient:
    def __init__(self, port: int):
        self.channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        encode, decode = HealthCheckRequest.SerializeToString, HealthCheckResponse.FromString
        self.check_call = self.channel.unary_unary(
            "/grpc.health.v1.Health/Check", request_serializer=encode, response_deserializer=decode
        )
        self.watch_call = self.channel.unary_stream(
            "/grpc.health.v1.Health/Watch", request_serializer=encode, response_deserializer=decode
        )

    def check(self, service: str = "") -> int:
        return int(self.check_call(HealthCheckRequest(service=service), timeout=5).status)

    def watch(self, service: str = "") -> Any:
        return self.watch_call(HealthCheckRequest(service=service), timeout=5)


@pytest.fixture
def grpc_health(start: Any) -> Iterator[Any]:
    clients: list[HealthClient] = []

    def make(config: HealthCheckV2Config) -> tuple[Running, HealthClient]:
        hc = start(config)
        assert hc.extension.grpc is not None and hc.extension.listener is None
        clients.append(HealthClient(hc.extension.grpc.port))
        return hc, clients[-1]

    yield make
    for client in clients:
        client.channel.close()


def test_grpc_server_keys_apply(grpc_health: Any) -> None:
    # upstream's grpc section is a configgrpc.ServerConfig built with ToServer:
    # its auth interceptor refuses unauthenticated calls
    settings = GrpcSettings(
        endpoint="127.0.0.1:0",
        auth=AuthConfig("bearertokenauth"),
        max_recv_msg_size_mib=1,
        keepalive=KeepaliveConfig(enforcement_policy=KeepaliveEnforcementPolicy(min_time=10.0)),
    )
    _, client = grpc_health(HealthCheckV2Config(use_v2=True, grpc=settings))
    with pytest.raises(grpc.RpcError) as failed:
        client.check()
    assert (failed.value.code(), failed.value.details()) == (
        grpc.StatusCode.UNAUTHENTICATED,
        "missing or empty authorization header: Authorization",
    )
    with pytest.raises(grpc.RpcError) as failed:
        next(iter(client.watch()))
    assert failed.value.code() == grpc.StatusCode.UNAUTHENTICATED
    good = (("authorization", "Bearer s3cret"),)
    answer = client.check_call(HealthCheckRequest(service=""), timeout=5, metadata=good)
    assert int(answer.status) == NOT_SERVING


def test_grpc_server_keys_decode_and_are_checked() -> None:
    config, problems = load("config_grpc_server_keys.yaml")
    assert problems == [
        "grpc::max_recv_msg_size_mib: invalid max_recv_msg_size_mib value, "
        f"must be between 1 and {(2**63 - 1) // 2**20}: -1"
    ]
    assert config.grpc is not None and config.grpc.auth is not None
    assert config.grpc.auth.authenticator == "bearertokenauth"
    assert config.grpc.keepalive is not None


def test_grpc_check_serves_the_collector_and_each_pipeline(grpc_health: Any) -> None:
    hc, client = grpc_health(grpc_config())
    assert client.check() == NOT_SERVING
    hc.start_collector()
    assert (client.check(), client.check("traces")) == (SERVING, SERVING)
    hc.report("exporter:otlphttp/staging", Status.PERMANENT_ERROR, "x")
    assert client.check("metrics/grpc") == SERVING
    hc.report("exporter:otlp", Status.FATAL_ERROR, "x")
    assert (client.check(), client.check("traces"), client.check("metrics/grpc")) == (
        NOT_SERVING,
        NOT_SERVING,
        SERVING,
    )
    with pytest.raises(grpc.RpcError) as failed:
        client.check("logs")
    assert (failed.value.code(), failed.value.details()) == (
        grpc.StatusCode.NOT_FOUND,
        "Service not found.",
    )


def test_grpc_over_an_ipv4_only_transport(grpc_health: Any) -> None:
    settings = GrpcSettings(endpoint="127.0.0.1:0", transport="tcp4")
    hc, client = grpc_health(HealthCheckV2Config(use_v2=True, grpc=settings))
    hc.start_collector()
    assert client.check() == SERVING


def test_grpc_check_with_component_health(grpc_health: Any) -> None:
    hc, client = grpc_health(grpc_config(include_permanent_errors=True))
    hc.start_collector()
    hc.report("exporter:otlp", Status.PERMANENT_ERROR, "x")
    assert (client.check("traces"), client.check("metrics/grpc")) == (NOT_SERVING, SERVING)


def test_grpc_watch_streams_changes_of_serving_status(grpc_health: Any) -> None:
    hc, client = grpc_health(grpc_config())
    stream = client.watch("traces")
    assert next(stream).status == SERVICE_UNKNOWN
    hc.report("receiver:otlp", Status.STARTING)
    assert next(stream).status == NOT_SERVING
    hc.start_collector()
    assert next(stream).status == SERVING
    hc.report("exporter:otlp", Status.RECOVERABLE_ERROR, "x")  # still serving: nothing sent
    hc.report("exporter:otlp", Status.FATAL_ERROR, "x")
    assert next(stream).status == NOT_SERVING
    stream.cancel()


def test_grpc_watch_waits_out_the_recovery_duration(grpc_health: Any) -> None:
    config = grpc_config(include_recoverable_errors=True, recovery_duration=Duration(0.2))
    hc, client = grpc_health(config)
    hc.start_collector()
    stream = client.watch()
    assert next(stream).status == SERVING
    began = time.monotonic()
    hc.report("exporter:otlp", Status.RECOVERABLE_ERROR, "x")
    assert next(stream).status == NOT_SERVING
    assert time.monotonic() - began >= 0.15
    hc.report("exporter:otlp", Status.OK)
    assert next(stream).status == SERVING
    stream.cancel()


def test_grpc_watch_ends_when_the_extension_stops(grpc_health: Any, loop: BackgroundLoop) -> None:
    hc, client = grpc_health(grpc_config())
    stream = client.watch()
    assert next(stream).status == NOT_SERVING
    hc.stop()
    with pytest.raises(grpc.RpcError) as ended:
        next(stream)
    assert (ended.value.code(), ended.value.details()) == (
        grpc.StatusCode.CANCELLED,
        "Server shutting down.",
    )


def test_http_and_grpc_together(start: Any) -> None:
    config = v2(grpc=GrpcSettings(endpoint="127.0.0.1:0"))
    hc = start(config)
    assert hc.extension.grpc is not None
    client = HealthClient(hc.extension.grpc.port)
    try:
        hc.start_collector()
        assert (hc.status()[0], client.check()) == (200, SERVING)
    finally:
        client.channel.close()


def test_start_failure_releases_what_started(loop: BackgroundLoop) -> None:
    config = v2(grpc=GrpcSettings(endpoint="999.999.999.999:1"))
    extension = HealthCheckV2Extension(config, logging.getLogger("test"))
    host = Host()
    with pytest.raises(Exception):  # noqa: B017 - grpc raises RuntimeError, the resolver OSError
        loop.run(extension.start(host))
    assert (extension.listener, host.status_listeners) == (None, [])


def test_an_http_port_in_use_is_named_as_upstream_names_it(loop: BackgroundLoop) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config = v2(http=HttpSettings(endpoint=f"127.0.0.1:{port}"))
        extension = HealthCheckV2Extension(config, logging.getLogger("test"))
        busy = f"listen tcp 127.0.0.1:{port}: bind: address already in use"
        with pytest.raises(OSError, match=f"^failed to bind to address 127.0.0.1:{port}: {busy}$"):
            loop.run(extension.start(Host()))


def test_a_grpc_port_in_use_is_named_in_gos_words(loop: BackgroundLoop) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config = v2(grpc=GrpcSettings(endpoint=f"127.0.0.1:{port}"))
        extension = HealthCheckV2Extension(config, logging.getLogger("test"))
        busy = f"^listen tcp 127.0.0.1:{port}: bind: address already in use$"
        with pytest.raises(OSError, match=busy):
            loop.run(extension.start(Host()))


def _seconds(go_time: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(go_time).timestamp()


# -- TLS ----------------------------------------------------------------------------


def test_tls_problems_are_named_under_their_section() -> None:
    assert load("config_tls_no_certificate.yaml")[1] == [
        "http::tls: a server needs a certificate: set cert_file and key_file",
        "grpc::tls: a server needs a certificate: set cert_file and key_file",
    ]


def test_https_status_and_grpc_over_tls(start: Any, tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    tls = TLSServerConfig(cert_file=str(cert), key_file=str(key))
    hc = start(
        v2(
            http=HttpSettings(endpoint="127.0.0.1:0", tls=tls),
            grpc=GrpcSettings("127.0.0.1:0", tls=tls),
        )
    )
    hc.start_collector()
    client = ssl.create_default_context(cafile=str(cert))
    connection = http.client.HTTPSConnection("127.0.0.1", hc.port, context=client, timeout=5)
    try:
        connection.request("GET", "/status")
        assert connection.getresponse().status == 200
    finally:
        connection.close()
    assert hc.extension.grpc is not None
    credentials = grpc.ssl_channel_credentials(cert.read_bytes())
    channel = grpc.secure_channel(f"localhost:{hc.extension.grpc.port}", credentials)
    try:
        check = channel.unary_unary(
            "/grpc.health.v1.Health/Check",
            request_serializer=HealthCheckRequest.SerializeToString,
            response_deserializer=HealthCheckResponse.FromString,
        )
        assert check(HealthCheckRequest(service=""), timeout=5).status == SERVING
    finally:
        channel.close()
