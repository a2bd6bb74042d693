"""The ``zpages`` extension: config as upstream's, and every page, in HTML and
JSON, from a running collector (one process with several pipelines, a
connector and a processor whose name needs escaping)."""

from __future__ import annotations

import http.client
import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from sluice.collector.component import ComponentID, Host, Kind, Settings
from sluice.collector.components.extensions import bearertokenauth
from sluice.collector.components.extensions.bearertokenauth.config import BearerTokenAuthConfig
from sluice.collector.components.extensions.zpages import FACTORY
from sluice.collector.components.extensions.zpages.config import ExpvarConfig, ZPagesConfig
from sluice.collector.components.extensions.zpages.extension import ZPagesExtension, _wants_json
from sluice.collector.components.extensions.zpages.pages import FeatureGate, FeaturesPage
from sluice.collector.components.extensions.zpages.render import html
from sluice.collector.config import Config, TelemetryConfig, TracesTelemetry
from sluice.collector.confighttp import HttpAuthConfig
from sluice.collector.configtls import TLSServerConfig
from sluice.collector.confmap.decode import Opaque
from sluice.collector.cors import CorsConfig
from sluice.collector.telemetry import ServiceTelemetry
from tests.collector.background import background_loop, go_redirect, http_get
from tests.collector.components.package_checks import assert_imports_lazily, assert_validates
from tests.collector.helpers import CollectorProcess, free_ports
from tests.collector.testdata_configs import load_config

TESTDATA = Path(__file__).parent / "testdata" / "zpages"


def load(name: str) -> tuple[ZPagesConfig, list[str]]:
    return load_config(ZPagesConfig, TESTDATA / name)


# -- config ---------------------------------------------------------------------------


def test_default_config_is_upstreams() -> None:
    config, problems = load("config_default.yaml")
    assert problems == []
    assert config == FACTORY.default_config()
    assert (config.endpoint, config.expvar.enabled, config.tls) == ("localhost:55679", False, None)


def test_upstream_testdata_and_expvar_decode() -> None:
    config, problems = load("config_upstream.yaml")
    assert (problems, config.endpoint, config.transport) == ([], "localhost:56888", "tcp")
    config, problems = load("config_expvar.yaml")
    assert (problems, config.expvar) == ([], ExpvarConfig(enabled=True))


def test_server_settings_decode() -> None:
    config, problems = load("config_server_settings.yaml")
    assert problems == []
    assert config.tls == TLSServerConfig(cert_file="/path/to/cert", key_file="/path/to/key")
    assert config.cors == CorsConfig(allowed_origins=["https://*.example.com"], max_age=600)
    assert config.auth == HttpAuthConfig(authenticator="basicauth/ops")
    assert config.response_headers == {"X-Frame-Options": "DENY"}
    assert (config.read_header_timeout, config.idle_timeout, config.write_timeout) == (5, 60, 10)
    assert config.max_request_body_size == 1024


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        (
            "config_missing_endpoint.yaml",
            '"endpoint" is required when using the "zpages" extension',
        ),
        ("config_bad_port.yaml", 'endpoint: address localhost:zpages: invalid port "zpages"'),
        (
            "config_unix_transport.yaml",
            'transport: unsupported transport "unix" (zpages listens on tcp, tcp4 or tcp6)',
        ),
        ("config_unknown_key.yaml", "'' has invalid keys: tracez"),
    ],
)
def test_invalid_configs_name_the_key(name: str, problem: str) -> None:
    assert load(name)[1] == [problem]


def test_upstream_examples_validate() -> None:
    assert_validates(TESTDATA / "collector_upstream_examples.yaml")


def test_factory_describes_the_upstream_component_and_imports_lazily() -> None:
    assert (FACTORY.kind, FACTORY.component_type) == (Kind.EXTENSION, "zpages")
    assert FACTORY.module == "go.opentelemetry.io/collector/extension/zpagesextension"
    assert FACTORY.stability == {"extension": "beta"}
    assert_imports_lazily("sluice.collector.components.extensions.zpages", "extension")


# -- pages of a running collector --------------------------------------------------------


@pytest.fixture(scope="module")
def collector(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[CollectorProcess, int]]:
    http, zpages = free_ports(2)
    config = {
        "receivers": {"otlp": {"protocols": {"http": {"endpoint": f"127.0.0.1:{http}"}}}},
        "processors": {"batch": None, "batch/'b'": None},
        "exporters": {"debug": None},
        "connectors": {"forward": None},
        "extensions": {
            "zpages": {
                "endpoint": f"127.0.0.1:{zpages}",
                "expvar": {"enabled": True},
                "response_headers": {"X-Frame-Options": "DENY"},
            },
            "health_check": {"endpoint": "127.0.0.1:0"},
        },
        "service": {
            "telemetry": {"metrics": {"level": "none"}},
            "extensions": ["zpages", "health_check"],
            "pipelines": {
                "logs/in": {
                    "receivers": ["otlp"],
                    "processors": ["batch", "batch/'b'"],
                    "exporters": ["forward"],
                },
                "logs/out": {
                    "receivers": ["forward"],
                    "processors": ["batch"],
                    "exporters": ["debug"],
                },
                # No processor, but its fan-out feeds an editing pipeline.
                "logs/relay": {"receivers": ["otlp"], "exporters": ["forward"]},
                "traces": {"receivers": ["otlp"], "exporters": ["debug"]},
            },
        },
    }
    process = CollectorProcess(tmp_path_factory.mktemp("zpages"), config).wait_ready()
    yield process, zpages
    process.terminate()


def page(collector: tuple[CollectorProcess, int], target: str, **headers: str) -> Any:
    status, found, body = http_get(collector[1], target, headers)
    assert status == 200, body
    return found, body


def as_json(collector: tuple[CollectorProcess, int], target: str) -> Any:
    found, body = page(collector, target + ("&" if "?" in target else "?") + "format=json")
    assert found["content-type"] == "application/json"
    return json.loads(body)


def test_servicez_shows_build_and_runtime_info(collector: Any) -> None:
    found, body = page(collector, "/debug/servicez")
    assert found["content-type"] == "text/html; charset=utf-8"
    assert found["x-frame-options"] == "DENY", "response_headers apply to every page"
    text = body.decode()
    assert "<title>Service sluice-collector</title>" in text
    for link in ("pipelinez", "extensionz", "featurez", "expvarz"):
        assert f'<a href="{link}">{link}</a>' in text
    assert "Sluice collector: OpenTelemetry Collector distribution" in text
    data = as_json(collector, "/debug/servicez")
    assert set(data) == {"build_info", "runtime_info", "status", "pages"}
    assert data["build_info"]["command"] == "sluice-collector"
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", data["build_info"]["version"])
    runtime = data["runtime_info"]
    assert set(runtime) == {"start_timestamp", "uptime", "python", "os", "arch", "pid"}
    assert runtime["pid"] == str(collector[0].process.pid)
    assert runtime["start_timestamp"].endswith("Z")
    assert data["status"]["status"] == "StatusOK"
    assert data["pages"] == ["pipelinez", "extensionz", "featurez", "expvarz"]


def test_pipelinez_html_names_every_component_escaped(collector: Any) -> None:
    text = page(collector, "/debug/pipelinez")[1].decode()
    assert "batch/'b'" not in text, "names are escaped"
    assert ">batch/&#x27;b&#x27;</a>" in text
    # upstream's page title, and MutatesData as its template prints a Go bool
    assert "<title>builtPipelines</title>" in text
    rows = re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td>", text)
    assert rows == [
        ("logs/in", "logs", "true"),
        ("logs/out", "logs", "true"),
        ("logs/relay", "logs", "true"),
        ("traces", "traces", "false"),
    ]
    assert "forward (connector)</a>" in text
    assert "zcomponentname=batch%2F%27b%27&amp;zcomponentkind=processor" in text
    assert text.count('<span class="ok"') >= 10


def test_pipelinez_json_has_every_pipeline_with_component_status(collector: Any) -> None:
    pipelines = {p["full_name"]: p for p in as_json(collector, "/debug/pipelinez")["pipelines"]}
    assert list(pipelines) == ["logs/in", "logs/out", "logs/relay", "traces"]
    incoming = pipelines["logs/in"]
    assert (incoming["input_type"], incoming["mutates_data"]) == ("logs", True)
    assert incoming["status"]["status"] == "StatusOK"

    def members(pipeline: Mapping[str, Any], role: str) -> list[tuple[str, str, str]]:
        return [(c["id"], c["kind"], c["status"]["status"]) for c in pipeline[role]]

    assert members(incoming, "receivers") == [("otlp", "receiver", "StatusOK")]
    assert members(incoming, "processors") == [
        ("batch", "processor", "StatusOK"),
        ("batch/'b'", "processor", "StatusOK"),
    ]
    assert members(incoming, "exporters") == [("forward", "connector", "StatusOK")]
    assert members(pipelines["logs/out"], "receivers") == [("forward", "connector", "StatusOK")]
    assert members(pipelines["traces"], "exporters") == [("debug", "exporter", "StatusOK")]
    assert pipelines["traces"]["processors"] == []


def test_pipelinez_shows_the_component_a_link_names(collector: Any) -> None:
    query = "?zpipelinename=logs%2Fin&zcomponentname=batch%2F%27b%27&zcomponentkind=processor"
    text = page(collector, "/debug/pipelinez" + query)[1].decode()
    assert "<h4>processor: logs/in/batch/&#x27;b&#x27;</h4>" in text
    selected = as_json(collector, "/debug/pipelinez" + query)["selected"]
    assert selected["title"] == "processor: logs/in/batch/'b'"
    assert selected["component"]["status"]["status"] == "StatusOK"
    connector = "?zpipelinename=logs%2Fout&zcomponentname=forward&zcomponentkind=receiver"
    selected = as_json(collector, "/debug/pipelinez" + connector)["selected"]
    assert (selected["title"], selected["component"]["kind"]) == ("receiver: forward", "connector")


def test_pipelinez_reads_the_parameters_upstreams_handler_reads(collector: Any) -> None:
    # upstream's links write zpipelinename...; its handler (service/internal/graph
    # zpages.go) reads pipelinenamez, componentnamez and componentkindz
    query = "?pipelinenamez=logs%2Fin&componentnamez=batch&componentkindz=processor"
    text = page(collector, "/debug/pipelinez" + query)[1].decode()
    assert "<h4>processor: logs/in/batch</h4>" in text
    query = "?pipelinenamez=traces&componentnamez=otlp&componentkindz=receiver"
    selected = as_json(collector, "/debug/pipelinez" + query)["selected"]
    assert (selected["title"], selected["component"]["kind"]) == ("receiver: otlp", "receiver")
    assert selected["component"]["status"]["status"] == "StatusOK"


def test_extensionz_lists_the_extensions_sorted(collector: Any) -> None:
    text = page(collector, "/debug/extensionz")[1].decode()
    assert '<a href="?zextensionname=health_check">health_check</a>' in text
    data = as_json(collector, "/debug/extensionz")
    assert [(e["id"], e["status"]["status"]) for e in data["extensions"]] == [
        ("health_check", "StatusOK"),
        ("zpages", "StatusOK"),
    ]
    assert data["selected"] is None
    chosen = as_json(collector, "/debug/extensionz?zextensionname=zpages")["selected"]
    assert (chosen["title"], chosen["component"]["kind"]) == ("zpages", "extension")


def test_featurez_says_there_are_no_feature_gates(collector: Any) -> None:
    text = page(collector, "/debug/featurez")[1].decode()
    assert "This distribution registers no feature gates" in text
    assert as_json(collector, "/debug/featurez") == {"feature_gates": []}


def test_accept_header_chooses_json(collector: Any) -> None:
    found, body = page(collector, "/debug/featurez", Accept="application/json")
    assert (found["content-type"], json.loads(body)) == ("application/json", {"feature_gates": []})
    browser = "text/html,application/xhtml+xml,application/json;q=0.9,*/*;q=0.8"
    assert page(collector, "/debug/featurez", Accept=browser)[0]["content-type"].startswith(
        "text/html"
    )
    assert page(collector, "/debug/featurez?format=html", Accept="application/json")[1].startswith(
        b"<!DOCTYPE html>"
    )


def test_expvarz_serves_the_process_variables(collector: Any) -> None:
    found, body = page(collector, "/debug/expvarz")
    assert found["content-type"] == "application/json; charset=utf-8"
    data = json.loads(body)
    assert "--config" in data["cmdline"]
    assert data["python"]["threads"] >= 1 and data["python"]["resident_bytes"] > 0
    assert len(data["python"]["gc_stats"]) == 3


def test_tracez_is_served_with_its_summary_table(collector: Any) -> None:
    # upstream's own tests GET /debug/tracez and expect 200 (the collector's
    # tracer provider is an SDK one unless traces::level is none)
    found, body = page(collector, "/debug/tracez")
    assert found["content-type"] == "text/html; charset=utf-8"
    text = body.decode()
    assert "<title>Trace Spans</title>" in text
    head = re.findall(r"<th>(.*?)</th>", text)
    assert head == [
        "Name",
        "active",
        *(f"&gt;{b}" for b in ("0s", "10µs", "100µs", "1ms", "10ms", "100ms", "1s", "10s")),
        "&gt;1m40s",
        "Errors",
    ]
    data = as_json(collector, "/debug/tracez")
    assert data["spans"] == []
    assert data["latency_buckets"] == [h.replace("&gt;", ">") for h in head[2:-1]]


@pytest.mark.parametrize("path", ["/debug/rpcz", "/debug/servicez/", "/"])
def test_other_paths_are_not_found(collector: Any, path: str) -> None:
    status, _, body = http_get(collector[1], path)
    assert (status, body) == (404, b"404 page not found\n")


def test_paths_that_are_not_clean_are_redirected(collector: Any) -> None:
    # Upstream's pages are on a Go ServeMux (every page an exact path): a
    # path with empty, "." or ".." segments is answered 301 to the clean
    # one, query kept, inside confighttp's handlers (response_headers apply).
    for target, location in [
        ("//debug/servicez", "/debug/servicez"),
        ("/debug/./pipelinez?format=json", "/debug/pipelinez?format=json"),
        ("/debug/x/../featurez", "/debug/featurez"),
        ("/debug//rpcz", "/debug/rpcz"),
    ]:
        status, headers, body = http_get(collector[1], target)
        assert (status, headers["location"], headers["content-type"], body) == go_redirect(
            location
        ), target
        assert headers["x-frame-options"] == "DENY"
    # no page is a subtree: a trailing slash is another (unknown) path
    assert http_get(collector[1], "/debug/servicez/")[0] == 404


# -- server settings, in process ---------------------------------------------------------


@pytest.fixture
def serve() -> Iterator[Any]:
    """Start a zpages extension (auth through a ``bearertokenauth`` extension
    accepting the token ``s3cret``) on a background loop; yields a function
    of its config keys returning the port."""
    started: list[ZPagesExtension] = []
    with background_loop() as loop:

        def start(host_config: Config | None = None, **config: Any) -> int:
            host = Host()
            host.config = host_config
            token_id = ComponentID("bearertokenauth")
            host.extensions[token_id] = bearertokenauth.FACTORY.create(
                Settings(token_id, Kind.EXTENSION, ServiceTelemetry()),
                BearerTokenAuthConfig(token=Opaque("s3cret")),
            )
            settings = Settings(ComponentID("zpages"), Kind.EXTENSION, ServiceTelemetry())
            extension = FACTORY.create(settings, ZPagesConfig(endpoint="127.0.0.1:0", **config))
            assert isinstance(extension, ZPagesExtension)
            loop.run(extension.start(host))
            started.append(extension)
            assert extension.listener is not None
            return extension.listener.port

        yield start
        for extension in started:
            loop.run(extension.shutdown())


def request(port: int, method: str, target: str, **headers: str) -> tuple[int, dict[str, str]]:
    status, answer_headers, _ = exchange(port, method, target, **headers)
    return status, answer_headers


def exchange(
    port: int, method: str, target: str, **headers: str
) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request(method, target, headers=headers)
        response = connection.getresponse()
        body = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, body
    finally:
        connection.close()


@pytest.mark.parametrize(("level", "served"), [("none", 404), ("None", 404), ("basic", 200)])
def test_tracez_follows_the_collectors_traces_level(serve: Any, level: str, served: int) -> None:
    # upstream: traces::level none gives the collector a no-op tracer
    # provider, on which zpages cannot register, so tracez is not served
    telemetry = TelemetryConfig(traces=TracesTelemetry(level=level))
    port = serve(host_config=Config({}, {}, (), telemetry, None))
    assert request(port, "GET", "/debug/tracez")[0] == served
    assert request(port, "GET", "/debug/servicez")[0] == 200


def test_auth_refuses_requests_before_any_page(serve: Any) -> None:
    port = serve(auth=HttpAuthConfig("bearertokenauth", ["token"]))
    good = {"Authorization": "Bearer s3cret"}
    # v0.115's confighttp authInterceptor: Go's http.Error with the status text
    status, headers, body = exchange(port, "GET", "/debug/servicez")
    assert (status, body) == (401, b"Unauthorized\n")
    assert headers["content-type"] == "text/plain; charset=utf-8"
    assert headers["x-content-type-options"] == "nosniff"
    assert request(port, "GET", "/debug/nope", **good)[0] == 404
    status, _, body = exchange(port, "GET", "/debug/servicez", Authorization="Bearer wrong")
    assert (status, body) == (401, b"Unauthorized\n")
    assert request(port, "GET", "/debug/servicez", **good)[0] == 200
    assert request(port, "GET", "/debug/servicez?authorization=Bearer%20s3cret")[0] == 401
    # request_params hands a query parameter to the authenticator as a header
    port = serve(auth=HttpAuthConfig("bearertokenauth", ["authorization"]))
    assert request(port, "GET", "/debug/servicez?authorization=Bearer%20s3cret")[0] == 200
    # as upstream, the parameter's first value is the one the authenticator reads
    twice = "/debug/servicez?authorization=Bearer%20s3cret&authorization=wrong"
    assert request(port, "GET", twice)[0] == 200
    twice = "/debug/servicez?authorization=wrong&authorization=Bearer%20s3cret"
    assert request(port, "GET", twice)[0] == 401
    # an empty value is a value: the header it stands for is not used
    empty = "/debug/servicez?authorization=&authorization=Bearer%20s3cret"
    assert request(port, "GET", empty, **good)[0] == 401


def test_cors_preflight_and_allowed_origin(serve: Any) -> None:
    port = serve(cors=CorsConfig(allowed_origins=["https://ops.example.com"]))
    origin = {"Origin": "https://ops.example.com"}
    status, headers = request(
        port, "OPTIONS", "/debug/servicez", **origin, **{"Access-Control-Request-Method": "GET"}
    )
    assert (status, headers["access-control-allow-origin"]) == (204, "https://ops.example.com")
    status, headers = request(port, "GET", "/debug/featurez", **origin)
    assert (status, headers["access-control-allow-origin"]) == (200, "https://ops.example.com")
    assert (
        "access-control-allow-origin"
        not in request(port, "GET", "/debug/featurez", Origin="https://evil.example.org")[1]
    )


def test_a_bare_host_shows_empty_pages(serve: Any) -> None:
    port = serve()
    for path, note in (("/debug/pipelinez", b"No pipelines."), ("/debug/extensionz", b"No ext")):
        status, _, body = http_get(port, path)
        assert status == 200 and note in body


def test_feature_gates_render_as_a_table_escaped() -> None:
    gate = FeatureGate("x.<y>", True, "a & b", "Alpha", "v1", "", "https://example.com")
    title, body = html(FeaturesPage([gate]))
    assert title == "Feature Gates"
    assert "<td>x.&lt;y&gt;</td><td>true</td><td>a &amp; b</td><td>Alpha</td>" in "".join(body)


@pytest.mark.parametrize(
    ("query", "accept", "wanted"),
    [
        ({}, None, False),
        ({"format": "json"}, None, True),
        ({"format": "JSON"}, b"text/html", True),
        ({"format": "html"}, b"application/json", False),
        ({}, b"application/json", True),
        ({}, b"application/json, text/html", True),
        ({}, b"text/html, application/json", False),
        ({}, b"*/*", False),
    ],
)
def test_wants_json(query: dict[str, str], accept: bytes | None, wanted: bool) -> None:
    assert _wants_json(query, accept) is wanted
