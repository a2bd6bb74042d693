"""The ``health_check`` extension: config as upstream's, and its answers over
real HTTP as the service reports the collector's lifecycle."""

from __future__ import annotations

import http.client
import json
import logging
import re
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from sluice.collector.component import ComponentID, Host, Kind, Settings, Status
from sluice.collector.components.extensions.healthcheck import FACTORY
from sluice.collector.components.extensions.healthcheck.config import (
    CheckCollectorPipeline,
    HealthCheckConfig,
    ResponseBody,
)
from sluice.collector.components.extensions.healthcheck.extension import HealthCheckExtension
from sluice.collector.confighttp import HttpAuthConfig
from sluice.collector.configtls import TLSServerConfig
from sluice.collector.gotext import (
    go_duration,
    go_json,
    go_time,
)
from sluice.collector.telemetry import ServiceTelemetry
from tests.collector.background import BackgroundLoop, background_loop, go_redirect, http_get
from tests.collector.testdata_configs import load_config
from tests.providers.test_tls import self_signed

TESTDATA = Path(__file__).parent / "testdata" / "health_check"
NOT_AVAILABLE = b'{"status":"Server not available","upSince":"0001-01-01T00:00:00Z","uptime":""}'
GO_DURATION = re.compile(r"^(\d+h)?(\d+m)?\d+(\.\d+)?(ns|µs|ms|s)$")


def load(name: str) -> tuple[HealthCheckConfig, list[str]]:
    return load_config(HealthCheckConfig, TESTDATA / name)


def test_default_config_is_upstreams() -> None:
    config, problems = load("config_default.yaml")
    assert problems == []
    assert config == FACTORY.default_config()
    assert (config.endpoint, config.path, config.response_body) == ("0.0.0.0:13133", "/", None)
    assert config.check_collector_pipeline == CheckCollectorPipeline(False, "5m", 5)


def test_custom_config_decodes_every_key() -> None:
    config, problems = load("config_custom.yaml")
    assert problems == []
    assert config == HealthCheckConfig(
        endpoint="localhost:13",
        path="/health/status",
        response_body=ResponseBody("ALL OK", "NOT OK"),
        check_collector_pipeline=CheckCollectorPipeline(False, "5m", 5),
    )


def test_null_sections_stay_unset() -> None:
    # upstream's response_body and its squashed ServerConfig's tls, cors and
    # auth are pointers that default to nil; mapstructure leaves a field as
    # it is for a null, so the JSON body is kept and no TLS is needed
    config, problems = load("config_null_sections.yaml")
    assert problems == []
    assert (config.response_body, config.tls, config.cors, config.auth) == (None,) * 4


def test_upstreams_http_server_keys_are_accepted() -> None:
    # upstream squashes confighttp.ServerConfig into the config: its keys load
    config, problems = load("config_server_keys.yaml")
    assert problems == []
    assert config.auth is not None and config.auth.authenticator == "basicauth"
    assert config.response_headers == {"X-Probe": "yes"}
    assert (config.read_timeout, config.idle_timeout) == (5.0, 60.0)
    assert config.unused_server_keys == [
        "cors",
        "max_request_body_size",
        "include_metadata",
        "response_headers",
        "compression_algorithms",
    ]


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("config_missing_endpoint.yaml", "endpoint: bad config: endpoint must be specified"),
        (
            "config_invalid_threshold.yaml",
            "check_collector_pipeline::exporter_failure_threshold: "
            "bad config: exporter_failure_threshold expects a positive number",
        ),
        ("config_invalid_path.yaml", "path: bad config: path must start with /"),
        (
            "config_invalid_interval.yaml",
            'check_collector_pipeline::interval: time: unknown unit "x" in duration "5x"',
        ),
        ("config_unknown_key.yaml", "'' has invalid keys: port"),
        ("config_bad_port.yaml", 'endpoint: address localhost:http: invalid port "http"'),
    ],
)
def test_invalid_configs_name_the_key(name: str, problem: str) -> None:
    assert load(name)[1] == [problem]


def test_factory_describes_the_upstream_component_and_imports_lazily() -> None:
    assert FACTORY.kind is Kind.EXTENSION
    assert FACTORY.component_type == "health_check"
    assert FACTORY.module.endswith("/extension/healthcheckextension")
    assert FACTORY.stability == {"extension": "beta"}
    probe = (
        "import sys, sluice.collector.components.extensions.healthcheck;"
        "print('sluice.collector.components.extensions.healthcheck.extension' in sys.modules)"
    )
    imported = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert imported.stdout.strip() == "False", imported.stderr


# -- running ----------------------------------------------------------------------


@pytest.fixture
def loop() -> Iterator[BackgroundLoop]:
    with background_loop() as running:
        yield running


class Running:
    """A started extension, its host, and a client for its port."""

    def __init__(self, loop: BackgroundLoop, **config: Any):
        self.loop = loop
        self.host = Host()
        settings = Settings(ComponentID("health_check"), Kind.EXTENSION, ServiceTelemetry())
        extension = FACTORY.create(settings, HealthCheckConfig(endpoint="127.0.0.1:0", **config))
        assert isinstance(extension, HealthCheckExtension)
        self.extension = extension
        loop.run(extension.start(self.host))
        assert extension.listener is not None
        self.port = extension.listener.port

    def report(self, instance: str, status: Status, error: str = "") -> None:
        self.loop.call(self.host.report_status, instance, status, error)

    def get(self, target: str = "/") -> tuple[int, dict[str, str], bytes]:
        return http_get(self.port, target)

    def stop(self) -> None:
        self.loop.run(self.extension.shutdown())


@pytest.fixture
def start(loop: BackgroundLoop) -> Iterator[Any]:
    started: list[Running] = []

    def start(**config: Any) -> Running:
        started.append(Running(loop, **config))
        return started[-1]

    yield start
    for running in started:
        running.stop()


def test_unavailable_until_the_collector_is_ready_then_available_until_it_stops(start: Any) -> None:
    hc = start()
    status, headers, body = hc.get()
    assert (status, headers["content-type"], body) == (503, "application/json", NOT_AVAILABLE)

    hc.report("receiver:otlp", Status.STARTING)
    hc.report("receiver:otlp", Status.OK)
    assert hc.get()[0] == 503, "components starting are not the collector being ready"

    before = time.time()
    hc.report("collector", Status.OK)
    status, headers, body = hc.get()
    assert (status, headers["content-type"]) == (200, "application/json")
    answer = json.loads(body)
    assert list(answer) == ["status", "upSince", "uptime"]
    assert answer["status"] == "Server available"
    assert abs(datetime.fromisoformat(answer["upSince"]).timestamp() - before) < 1
    assert GO_DURATION.match(answer["uptime"]), answer["uptime"]

    hc.report("exporter:otlp", Status.FATAL_ERROR, "boom")
    assert hc.get()[0] == 200, "v1 ignores component status"

    hc.report("collector", Status.STOPPING)
    status, headers, body = hc.get()
    assert "date" in headers, "Go's server dates every answer"
    del headers["date"]
    assert (status, headers, body) == (
        503,
        {"content-type": "application/json", "content-length": str(len(NOT_AVAILABLE))},
        NOT_AVAILABLE,
    )


def test_up_since_is_kept_while_ready_and_reset_by_a_restart(start: Any) -> None:
    hc = start()
    hc.report("collector", Status.OK)
    first = json.loads(hc.get()[2])["upSince"]
    time.sleep(0.01)
    hc.report("collector", Status.OK)
    assert json.loads(hc.get()[2])["upSince"] == first
    hc.report("collector", Status.STOPPING)
    hc.report("collector", Status.OK)
    assert json.loads(hc.get()[2])["upSince"] > first


def test_state_changes_are_logged_with_the_status_as_a_field(
    start: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Upstream's HealthCheck.Set: ``Health Check state change`` with the zap
    field ``status`` (``ready``, ``unavailable``), at every Ready and
    NotReady; shutdown calls NotReady even when the collector never became
    ready (a failed start)."""
    hc = start()
    with caplog.at_level(logging.INFO, "sluice"):
        hc.report("collector", Status.STARTING)
        hc.report("collector", Status.STOPPING)
        hc.report("collector", Status.OK)
        hc.report("collector", Status.STOPPING)
    changes = [
        (r.getMessage(), getattr(r, "fields", None))
        for r in caplog.records
        if "state change" in r.getMessage()
    ]
    assert changes == [
        ("Health Check state change", {"status": "unavailable"}),
        ("Health Check state change", {"status": "ready"}),
        ("Health Check state change", {"status": "unavailable"}),
    ]


def test_root_path_serves_every_path(start: Any) -> None:
    hc = start()
    assert hc.get("/anything/at/all?x=1")[0] == 503


def test_custom_path_serves_only_that_path(start: Any) -> None:
    hc = start(path="/health")
    hc.report("collector", Status.OK)
    assert hc.get("/health")[0] == 200
    assert hc.get("/health?probe=1")[0] == 200
    status, headers, body = hc.get("/")
    assert (status, headers["content-type"], body) == (
        404,
        "text/plain; charset=utf-8",
        b"404 page not found\n",
    )
    assert hc.get("/health/more")[0] == 404


def test_subtree_path_serves_below_it(start: Any) -> None:
    hc = start(path="/health/")
    assert hc.get("/health/live")[0] == 503
    assert hc.get("/healthz")[0] == 404


def test_paths_are_redirected_as_gos_servemux_does(start: Any) -> None:
    # Upstream serves the path on a Go ServeMux: the subtree's root without
    # its slash, and a path with empty, "." or ".." segments, are answered
    # 301 (query kept, http.Redirect's HTML body for GET), served or not.
    hc = start(path="/health/")
    for target, location in [
        ("/health", "/health/"),
        ("/health?probe=1", "/health/?probe=1"),
        ("//health/", "/health/"),
        ("/x/../health", "/health/"),
        ("/health/./live", "/health/live"),
        ("//other", "/other"),
    ]:
        status, headers, body = hc.get(target)
        assert (status, headers["location"], headers["content-type"], body) == go_redirect(
            location
        ), target
    status, headers, _ = start().get("/a//b")
    assert (status, headers["location"]) == (301, "/a/b")
    exact = start(path="/health")
    assert exact.get("/health/")[0] == 404
    assert exact.get("/health/.")[1]["location"] == "/health"


def test_response_body_replaces_the_json(start: Any) -> None:
    hc = start(response_body=ResponseBody("ALL OK", "NOT OK"))
    status, headers, body = hc.get()
    assert (status, headers["content-type"], body) == (503, "text/plain; charset=utf-8", b"NOT OK")
    hc.report("collector", Status.OK)
    assert hc.get()[0::2] == (200, b"ALL OK")
    hc.report("collector", Status.STOPPING)
    assert hc.get()[0::2] == (503, b"NOT OK")


def test_response_body_with_only_healthy_sends_an_empty_unhealthy_body(start: Any) -> None:
    hc = start(response_body=ResponseBody(healthy="ALL OK"))
    status, headers, body = hc.get()
    assert (status, body, "content-type" in headers) == (503, b"", False)
    hc.report("collector", Status.OK)
    assert hc.get()[0::2] == (200, b"ALL OK")


def test_response_body_type_is_sniffed_as_go_does(start: Any) -> None:
    # upstream writes the text without a Content-Type: Go's server sniffs it
    hc = start(response_body=ResponseBody("<html><body>up</body></html>", '<?xml version="1.0"?>'))
    status, headers, _ = hc.get()
    assert (status, headers["content-type"]) == (503, "text/xml; charset=utf-8")
    hc.report("collector", Status.OK)
    status, headers, body = hc.get()
    assert (status, headers["content-type"]) == (200, "text/html; charset=utf-8")
    assert body == b"<html><body>up</body></html>"


def test_check_collector_pipeline_enabled_is_ignored_as_upstream(
    start: Any, caplog: pytest.LogCaptureFixture
) -> None:
    # upstream removed the pipeline handler (contrib #33470, v0.103): from
    # then on the section is decoded and validated, and the answers are the
    # usual ones, 503 with the JSON status while not ready
    with caplog.at_level(logging.WARNING):
        hc = start(check_collector_pipeline=CheckCollectorPipeline(enabled=True), path="/health")
    assert "check_collector_pipeline is deprecated and ignored" in caplog.text
    status, headers, body = hc.get("/health")
    assert (status, headers["content-type"], body) == (503, "application/json", NOT_AVAILABLE)
    hc.report("collector", Status.OK)
    status, _, body = hc.get("/health")
    assert (status, json.loads(body)["status"]) == (200, "Server available")
    hc.report("collector", Status.STOPPING)
    assert hc.get("/health")[0::2] == (503, NOT_AVAILABLE)


def test_check_collector_pipeline_enabled_keeps_the_response_body_answers(start: Any) -> None:
    hc = start(
        check_collector_pipeline=CheckCollectorPipeline(enabled=True),
        response_body=ResponseBody("ALL OK", "NOT OK"),
    )
    assert hc.get()[0::2] == (503, b"NOT OK")
    hc.report("collector", Status.OK)
    assert hc.get()[0::2] == (200, b"ALL OK")
    hc.report("collector", Status.STOPPING)
    assert hc.get()[0::2] == (503, b"NOT OK")


def test_middleware_keys_are_not_applied_as_upstream(
    start: Any, caplog: pytest.LogCaptureFixture
) -> None:
    # upstream builds its server with them, then replaces the handler with
    # its own, so the response headers (and cors, auth...) never apply
    with caplog.at_level(logging.WARNING):
        hc = start(response_headers={"X-Probe": "yes"})
    assert "response_headers: not applied" in caplog.text
    status, headers, _ = hc.get()
    assert (status, "x-probe" in headers) == (503, False)


def test_a_missing_authenticator_fails_start(loop: BackgroundLoop) -> None:
    extension = HealthCheckExtension(
        HealthCheckConfig(endpoint="127.0.0.1:0", auth=HttpAuthConfig("nope")),
        logging.getLogger("test"),
    )
    with pytest.raises(ValueError, match='failed to resolve authenticator "nope"'):
        loop.run(extension.start(Host()))
    assert extension.listener is None


def test_port_in_use_fails_start(loop: BackgroundLoop) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        port = taken.getsockname()[1]
        extension = HealthCheckExtension(
            HealthCheckConfig(endpoint=f"127.0.0.1:{port}"), logging.getLogger("test")
        )
        host = Host()
        busy = f"listen tcp 127.0.0.1:{port}: bind: address already in use"
        with pytest.raises(OSError, match=f"^failed to bind to address 127.0.0.1:{port}: {busy}$"):
            loop.run(extension.start(host))
        assert host.status_listeners == []
    finally:
        taken.close()


def test_shutdown_closes_the_port_and_stops_listening_to_the_host(loop: BackgroundLoop) -> None:
    hc = Running(loop)
    assert hc.host.status_listeners == [hc.extension.on_status]
    hc.stop()
    assert hc.host.status_listeners == []
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", hc.port), timeout=1).close()
    hc.stop()  # twice is harmless


def test_shutdown_without_start_is_harmless(loop: BackgroundLoop) -> None:
    extension = HealthCheckExtension(HealthCheckConfig(), logging.getLogger("test"))
    loop.run(extension.shutdown())


# -- Go text forms -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ns", "text"),
    [
        (0, "0s"),
        (1, "1ns"),
        (999, "999ns"),
        (1_500, "1.5µs"),
        (1_000_000, "1ms"),
        (1_234_567, "1.234567ms"),
        (1_500_000_000, "1.5s"),
        (90_000_000_000, "1m30s"),
        (3_600_000_000_000, "1h0m0s"),
        (3_723_000_000_001, "1h2m3.000000001s"),
        (-1_500_000_000, "-1.5s"),
    ],
)
def test_go_duration(ns: int, text: str) -> None:
    assert go_duration(ns) == text


def test_go_time_in_utc_and_at_an_offset(monkeypatch: pytest.MonkeyPatch) -> None:
    at = 1_700_000_000_120_000_000  # 2023-11-14T22:13:20.12Z
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    try:
        assert go_time(at) == "2023-11-14T22:13:20.12Z"
        assert go_time(at - 120_000_000) == "2023-11-14T22:13:20Z"
        monkeypatch.setenv("TZ", "EST+5")
        time.tzset()
        assert go_time(at + 1) == "2023-11-14T17:13:20.120000001-05:00"
    finally:
        monkeypatch.undo()
        time.tzset()
    assert go_time(0) == "0001-01-01T00:00:00Z"


def test_go_json_is_compact_with_html_safe_escapes() -> None:
    assert go_json({"b": "<a&b>", "a": "é\u2028"}) == (
        b'{"b":"\\u003ca\\u0026b\\u003e","a":"\xc3\xa9\\u2028"}'
    )
    assert go_json({"b": 1, "a": {"d": None, "c": True}}, sort_keys=True) == (
        b'{"a":{"c":true,"d":null},"b":1}'
    )


# -- TLS ----------------------------------------------------------------------------


def test_tls_without_a_certificate_is_a_config_error() -> None:
    assert load("config_tls_no_certificate.yaml")[1] == [
        "tls: a server needs a certificate: set cert_file and key_file"
    ]


def test_https_with_the_configured_certificate(start: Any, tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    hc = start(tls=TLSServerConfig(cert_file=str(cert), key_file=str(key)))
    hc.report("collector", Status.OK)
    client = ssl.create_default_context(cafile=str(cert))
    connection = http.client.HTTPSConnection("127.0.0.1", hc.port, context=client, timeout=5)
    try:
        connection.request("GET", "/")
        response = connection.getresponse()
        assert (response.status, json.loads(response.read())["status"]) == (200, "Server available")
    finally:
        connection.close()
    with pytest.raises(OSError):
        hc.get()  # plain HTTP is not answered


def test_tls_keys_decode() -> None:
    config, problems = load("config_tls.yaml")
    assert problems == []
    assert config.tls == TLSServerConfig(
        ca_file="/path/to/ca", cert_file="/path/to/cert", key_file="/path/to/key"
    )
