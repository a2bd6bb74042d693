"""The collector's Prometheus endpoint, scraped over real HTTP."""

from __future__ import annotations

import gzip
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import Counter
from prometheus_client.parser import text_string_to_metric_families

from sluice import __version__
from sluice.collector.selfmetrics import DEFAULT_ENDPOINT, SelfMetricsServer
from sluice.collector.telemetry import ServiceTelemetry
from tests.collector.background import BackgroundLoop, background_loop, http_get
from tests.collector.helpers import CollectorProcess, free_ports, post_one_log


@pytest.fixture
def loop() -> Iterator[BackgroundLoop]:
    with background_loop() as running:
        yield running


@pytest.fixture
def served(loop: BackgroundLoop) -> Iterator[tuple[SelfMetricsServer, Counter]]:
    telemetry = ServiceTelemetry()
    counter = Counter("test_scrapes", "Test counter.", ["who"], registry=telemetry.registry)
    server = SelfMetricsServer(telemetry.registry, "127.0.0.1:0")
    loop.run(server.start())
    yield server, counter
    loop.run(server.stop())


def test_default_endpoint_is_upstreams() -> None:
    assert DEFAULT_ENDPOINT == "0.0.0.0:8888"
    assert SelfMetricsServer(ServiceTelemetry().registry).endpoint == DEFAULT_ENDPOINT


def test_metrics_expose_a_counter_as_it_grows(served: tuple[SelfMetricsServer, Counter]) -> None:
    server, counter = served
    assert server.port > 0
    counter.labels("me").inc(3)
    status, headers, body = http_get(server.port, "/metrics")
    assert (status, headers["content-type"]) == (200, "text/plain; version=0.0.4; charset=utf-8")
    text = body.decode()
    assert "# TYPE test_scrapes_total counter" in text
    assert 'test_scrapes_total{who="me"} 3.0' in text
    # A family with no series yet is not listed, as in upstream's exporter.
    assert "otelcol_receiver_accepted_log_records" not in text
    counter.labels("me").inc()
    assert 'test_scrapes_total{who="me"} 4.0' in http_get(server.port, "/metrics")[2].decode()


def test_openmetrics_when_the_scraper_asks(served: tuple[SelfMetricsServer, Counter]) -> None:
    server, counter = served
    counter.labels("me").inc()
    accept = "application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.3"
    status, headers, body = http_get(server.port, "/metrics", {"Accept": accept})
    assert status == 200
    assert headers["content-type"].startswith("application/openmetrics-text; version=1.0.0")
    assert 'test_scrapes_total{who="me"} 1.0' in body.decode()
    assert body.endswith(b"# EOF\n")


def test_gzip_when_accepted(served: tuple[SelfMetricsServer, Counter]) -> None:
    server, counter = served
    counter.labels("zipped").inc()
    status, headers, body = http_get(server.port, "/metrics", {"Accept-Encoding": "gzip"})
    assert (status, headers["content-encoding"]) == (200, "gzip")
    assert b'test_scrapes_total{who="zipped"} 1.0' in gzip.decompress(body)


@pytest.mark.parametrize("target", ["/", "/metric", "/metrics/", "/debug"])
def test_other_paths_are_not_found(served: tuple[SelfMetricsServer, Counter], target: str) -> None:
    status, headers, body = http_get(served[0].port, target)
    assert (status, body) == (404, b"404 page not found\n")
    assert headers["x-content-type-options"] == "nosniff", "Go's http.NotFound sets it"


def test_unclean_paths_are_redirected(served: tuple[SelfMetricsServer, Counter]) -> None:
    """Upstream serves /metrics on an http.ServeMux, which redirects first."""
    status, headers, _ = http_get(served[0].port, "/a/../metrics")
    assert (status, headers["location"]) == (301, "/metrics")


def test_stop_closes_the_port(loop: BackgroundLoop) -> None:
    server = SelfMetricsServer(ServiceTelemetry().registry, "127.0.0.1:0")
    assert server.port == 0
    loop.run(server.start())
    port = server.port
    loop.run(server.stop())
    assert server.port == 0
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    loop.run(server.stop())  # twice is harmless


def test_an_endpoint_in_use_fails_start(loop: BackgroundLoop) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        server = SelfMetricsServer(
            ServiceTelemetry().registry, f"127.0.0.1:{taken.getsockname()[1]}"
        )
        with pytest.raises(OSError):
            loop.run(server.start())
    finally:
        taken.close()


def test_help_texts_are_upstreams() -> None:
    """The descriptions of v0.115's generated telemetry (receiverhelper,
    exporterhelper, processorhelper), with their stability suffixes."""
    helps = {family.name: family.documentation for family in ServiceTelemetry().registry.collect()}
    assert helps["otelcol_receiver_accepted_spans"] == (
        "Number of spans successfully pushed into the pipeline. [alpha]"
    )
    assert helps["otelcol_receiver_refused_log_records"] == (
        "Number of log records that could not be pushed into the pipeline. [alpha]"
    )
    assert helps["otelcol_exporter_sent_log_records"] == (
        "Number of log record successfully sent to destination. [alpha]"
    )
    assert helps["otelcol_exporter_sent_metric_points"] == (
        "Number of metric points successfully sent to destination. [alpha]"
    )
    assert helps["otelcol_exporter_send_failed_spans"] == (
        "Number of spans in failed attempts to send to destination. [alpha]"
    )
    assert helps["otelcol_exporter_enqueue_failed_spans"] == (
        "Number of spans failed to be added to the sending queue. [alpha]"
    )
    assert helps["otelcol_processor_incoming_items"] == (
        "Number of items passed to the processor. [alpha]"
    )
    assert helps["otelcol_processor_outgoing_items"] == (
        "Number of items emitted from the processor. [alpha]"
    )
    assert helps["otelcol_exporter_queue_size"] == "Current size of the retry queue (in batches)"
    assert helps["otelcol_exporter_queue_capacity"] == (
        "Fixed capacity of the retry queue (in batches)"
    )


def test_the_process_metrics_are_served(served: tuple[SelfMetricsServer, Counter]) -> None:
    """Upstream's service registers them whatever the level (service_test's
    assertMetrics expects all six)."""
    server, _ = served
    text = http_get(server.port, "/metrics")[2].decode()
    values = {
        sample.name: sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }
    assert values["otelcol_process_uptime_total"] > 0
    assert values["otelcol_process_cpu_seconds_total"] > 0
    assert values["otelcol_process_memory_rss"] > 1 << 20
    assert values["otelcol_process_runtime_heap_alloc_bytes"] > 0
    heap = values["otelcol_process_runtime_heap_alloc_bytes"]
    assert values["otelcol_process_runtime_total_sys_memory_bytes"] >= heap
    assert values["otelcol_process_runtime_total_alloc_bytes_total"] > 0
    assert "# HELP otelcol_process_uptime_total Uptime of the process [alpha]" in text


def _scraped_labels(
    tmp_path: Path, resource: dict[str, Any] | None
) -> dict[str, list[dict[str, str]]]:
    """Every sample's labels, by family, scraped from a real collector
    whose ``service::telemetry::resource`` is `resource`."""
    http_port, metrics_port = free_ports(2)
    telemetry: dict[str, Any] = {"metrics": {"address": f"127.0.0.1:{metrics_port}"}}
    if resource is not None:
        telemetry["resource"] = resource
    config = {
        "receivers": {"otlp": {"protocols": {"http": {"endpoint": f"127.0.0.1:{http_port}"}}}},
        "exporters": {"debug": {}},
        "service": {
            "telemetry": telemetry,
            "pipelines": {"logs": {"receivers": ["otlp"], "exporters": ["debug"]}},
        },
    }
    collector = CollectorProcess(tmp_path, config).wait_ready()
    try:
        post_one_log(http_port)  # the components' series appear on traffic
        text = collector.metrics(metrics_port)
    finally:
        collector.terminate()
    return {
        family.name: [sample.labels for sample in family.samples]
        for family in text_string_to_metric_families(text)
    }


def test_every_metric_carries_the_service_resource_and_target_info_holds_it(
    tmp_path: Path,
) -> None:
    """Upstream's service_test (ownMetricsTestCases, assertMetrics): the
    resource's service.name (the command), service.version and a random
    service.instance.id label every metric, and target_info is there."""
    families = _scraped_labels(tmp_path, None)
    assert families["target_info"] == [
        {
            "service_instance_id": families["target_info"][0]["service_instance_id"],
            "service_name": "sluice-collector",
            "service_version": __version__,
        }
    ]
    instance = families["target_info"][0]["service_instance_id"]
    assert len(instance) == 36, "a UUID"
    for name, samples in families.items():
        for labels in samples:
            assert labels["service_name"] == "sluice-collector", name
            assert labels["service_version"] == __version__, name
            assert labels["service_instance_id"] == instance, name
    accepted = families["otelcol_receiver_accepted_log_records"]
    assert {"receiver": "otlp", "transport": "http"}.items() <= accepted[0].items()


def test_configured_resource_attributes_label_every_metric_and_null_leaves_one_out(
    tmp_path: Path,
) -> None:
    """ownMetricsTestCases: a custom attribute is added, a configured
    service.instance.id replaces the random one, and a null value
    suppresses its attribute."""
    families = _scraped_labels(
        tmp_path,
        {"custom.resource-attr": "test_value", "service.instance.id": "mine", "service.name": None},
    )
    expected = {
        "custom_resource_attr": "test_value",
        "service_instance_id": "mine",
        "service_version": __version__,
    }
    assert families["target_info"] == [expected]
    for name, samples in families.items():
        for labels in samples:
            assert expected.items() <= labels.items(), name
            assert "service_name" not in labels, name


def _started_log(tmp_path: Path, metrics: dict[str, Any]) -> str:
    """What a real collector logs up to "Everything is ready" with
    ``service::telemetry::metrics`` set to `metrics`."""
    (http_port,) = free_ports(1)
    config = {
        "receivers": {"otlp": {"protocols": {"http": {"endpoint": f"127.0.0.1:{http_port}"}}}},
        "exporters": {"debug": {}},
        "service": {
            "telemetry": {"metrics": metrics},
            "pipelines": {"logs": {"receivers": ["otlp"], "exporters": ["debug"]}},
        },
    }
    collector = CollectorProcess(tmp_path, config).wait_ready()
    collector.terminate()
    return collector.stderr()


def test_the_service_logs_where_it_serves_metrics_and_that_address_is_deprecated(
    tmp_path: Path,
) -> None:
    """Upstream's service.New: "Setting up own telemetry...", a warning for
    the deprecated ``address`` form, then "Serving metrics" with the
    address and the level as configtelemetry prints it."""
    (metrics_port,) = free_ports(1)
    text = _started_log(tmp_path, {"level": "DETAILED", "address": f"127.0.0.1:{metrics_port}"})
    lines = text.splitlines()
    setup = next(i for i, line in enumerate(lines) if 'msg="Setting up own telemetry..."' in line)
    assert "level=warn" in lines[setup + 1]
    assert (
        'msg="service::telemetry::metrics::address is being deprecated in favor of'
        ' service::telemetry::metrics::readers"'
    ) in lines[setup + 1]
    assert lines[setup + 2].endswith(
        f'msg="Serving metrics" address=127.0.0.1:{metrics_port} "metrics level"=Detailed'
    )
    reader = {"pull": {"exporter": {"prometheus": {"host": "127.0.0.1", "port": metrics_port}}}}
    text = _started_log(tmp_path / "readers", {"readers": [reader]})
    assert "deprecated" not in text
    assert f'msg="Serving metrics" address=127.0.0.1:{metrics_port} "metrics level"=Normal' in text


def test_every_pull_reader_and_the_address_serve_the_same_metrics(tmp_path: Path) -> None:
    """service/telemetry testdata/config_deprecated_address_and_readers.yaml:
    upstream serves a Prometheus endpoint per configured reader, and the
    deprecated ``address`` one after them; each is logged."""
    http_port, *ports = free_ports(4)
    readers = [
        {"pull": {"exporter": {"prometheus": {"host": "127.0.0.1", "port": port}}}}
        for port in ports[:2]
    ]
    telemetry = {"metrics": {"address": f"127.0.0.1:{ports[2]}", "readers": readers}}
    config = {
        "receivers": {"otlp": {"protocols": {"http": {"endpoint": f"127.0.0.1:{http_port}"}}}},
        "exporters": {"debug": {}},
        "service": {
            "telemetry": telemetry,
            "pipelines": {"logs": {"receivers": ["otlp"], "exporters": ["debug"]}},
        },
    }
    collector = CollectorProcess(tmp_path, config).wait_ready()
    try:
        post_one_log(http_port)
        for port in ports:
            assert "otelcol_receiver_accepted_log_records_total{" in collector.metrics(port)
    finally:
        collector.terminate()
    served = [line for line in collector.stderr().splitlines() if "Serving metrics" in line]
    assert [line.split("address=")[1].split()[0] for line in served] == [
        f"127.0.0.1:{port}" for port in ports
    ]


def test_no_metrics_logs_that_telemetry_setup_was_skipped(tmp_path: Path) -> None:
    """Upstream's logsAboutMeterProvider at level none."""
    text = _started_log(tmp_path, {"level": "none"})
    assert 'msg="Skipped telemetry setup."' in text
    assert "Serving metrics" not in text


def _families(text: str) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    """Every sample's value by family and by its labels (the resource's left
    out), from a scrape; a family without samples is absent, as in Go's."""
    resource = {"service_instance_id", "service_name", "service_version"}
    found: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = tuple(sorted((k, v) for k, v in sample.labels.items() if k not in resource))
            found.setdefault(sample.name, {})[labels] = sample.value
    return found


def test_component_series_appear_on_their_first_operation_for_a_signal(tmp_path: Path) -> None:
    """Upstream's receiverhelper, processorhelper and exporterhelper add to
    their counters when an operation ends (obsreport's recordMetrics,
    recordInOut), and the SDK reports a series only once it was added to:
    a fresh collector lists none of them (service_test's assertMetrics
    expects only target_info and the process metrics), and one log request
    makes the logs series appear (refused and send_failed with 0), not the
    other signals' nor enqueue_failed."""
    http_port, metrics_port = free_ports(2)
    config = {
        "receivers": {"otlp": {"protocols": {"http": {"endpoint": f"127.0.0.1:{http_port}"}}}},
        "processors": {"attributes": {"actions": [{"key": "k", "value": "v", "action": "insert"}]}},
        "exporters": {"debug": {}},
        "service": {
            "telemetry": {"metrics": {"address": f"127.0.0.1:{metrics_port}"}},
            "pipelines": {
                name: {"receivers": ["otlp"], "processors": ["attributes"], "exporters": ["debug"]}
                for name in ("logs", "metrics", "traces")
            },
        },
    }
    collector = CollectorProcess(tmp_path, config).wait_ready()
    try:
        fresh = collector.metrics(metrics_port)
        post_one_log(http_port)
        after = collector.metrics(metrics_port)
    finally:
        collector.terminate()
    assert "otelcol_receiver" not in fresh
    assert "otelcol_processor" not in fresh
    assert "otelcol_exporter" not in fresh
    components = {
        name: series
        for name, series in _families(after).items()
        if name.startswith(("otelcol_receiver", "otelcol_processor", "otelcol_exporter"))
    }
    receiver = (("receiver", "otlp"), ("transport", "http"))
    processor = (("otel_signal", "logs"), ("processor", "attributes"))
    exporter = (("exporter", "debug"),)
    assert components == {
        "otelcol_receiver_accepted_log_records_total": {receiver: 1.0},
        "otelcol_receiver_refused_log_records_total": {receiver: 0.0},
        "otelcol_processor_incoming_items_total": {processor: 1.0},
        "otelcol_processor_outgoing_items_total": {processor: 1.0},
        "otelcol_exporter_sent_log_records_total": {exporter: 1.0},
        "otelcol_exporter_send_failed_log_records_total": {exporter: 0.0},
    }
