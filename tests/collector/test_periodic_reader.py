"""``service::telemetry::metrics::readers`` with ``periodic`` readers: a real
collector pushing its own metrics to a real OTLP/HTTP recorder, a real
OTLP/gRPC server, or stdout, as upstream's SDK periodic reader does
(service/telemetry/internal/otelinit config.go, config_test TestMetricReader)."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from prometheus_client import Counter

from sluice import __version__
from sluice.collector import cli
from sluice.collector.components.processors.batch.telemetry import BatchTelemetry
from sluice.collector.factories import Factories
from sluice.collector.metricdata import MetricsView
from sluice.collector.metricreaders import MetricExporter, OtlpMetric, PeriodicReader
from sluice.collector.periodicreader import PeriodicMetricReader
from sluice.collector.service import Service, ShutdownError
from sluice.collector.telemetry import ServiceTelemetry
from sluice.policy import Signal
from tests.collector.components.grpc_sink import Answer, GrpcSink
from tests.collector.helpers import (
    BIN,
    READY,
    CollectorProcess,
    free_port,
    post_one_log,
    run_cli,
)
from tests.edge.helpers import Reply, Upstream


def _config(reader: dict[str, Any], http_port: int) -> dict[str, Any]:
    return {
        "receivers": {"otlp": {"protocols": {"http": {"endpoint": f"127.0.0.1:{http_port}"}}}},
        "exporters": {"debug": {}},
        "service": {
            "telemetry": {"metrics": {"readers": [reader]}},
            "pipelines": {"logs": {"receivers": ["otlp"], "exporters": ["debug"]}},
        },
    }


def _points(request: ExportMetricsServiceRequest) -> dict[str, list[tuple[dict[str, str], Any]]]:
    """Every data point's attributes and value, by metric name."""
    found: dict[str, list[tuple[dict[str, str], Any]]] = {}
    for resource_metrics in request.resource_metrics:
        for scope in resource_metrics.scope_metrics:
            for metric in scope.metrics:
                data = getattr(metric, metric.WhichOneof("data"))
                for point in data.data_points:
                    attributes = {kv.key: kv.value.string_value for kv in point.attributes}
                    value = getattr(point, point.WhichOneof("value") or "count", None)
                    found.setdefault(metric.name, []).append((attributes, value))
    return found


def _metric(request: ExportMetricsServiceRequest, name: str) -> tuple[str, Any]:
    """(scope name, metric) of `name`."""
    for resource_metrics in request.resource_metrics:
        for scope in resource_metrics.scope_metrics:
            for metric in scope.metrics:
                if metric.name == name:
                    return scope.scope.name, metric
    raise AssertionError(f"{name} not pushed")


def _accepted_logs(request: ExportMetricsServiceRequest) -> int:
    points = _points(request).get("otelcol_receiver_accepted_log_records", [])
    return sum(value for _, value in points)


def test_a_periodic_otlp_http_reader_pushes_the_metrics_under_upstreams_names(
    tmp_path: Path,
) -> None:
    """The same metrics the Prometheus endpoint shows, as the SDK exports
    them: no ``_total``, upstream's units, scopes, integer counters,
    ``otel.signal``-style attribute keys and the service's resource."""
    upstream = Upstream()
    http_port = free_port()
    otlp = {
        "protocol": "http/protobuf",
        "endpoint": upstream.url,
        "headers": {"x-tenant": "t1"},
        "compression": "gzip",
    }
    reader = {"periodic": {"interval": 100, "exporter": {"otlp": otlp}}}
    collector = CollectorProcess(tmp_path, _config(reader, http_port)).wait_ready()
    try:
        post_one_log(http_port)
        upstream.wait_for(1)
        pushed: ExportMetricsServiceRequest | None = None
        for _ in range(50):
            recorded = upstream.wait_for(len(upstream.received()) + 1)[-1]
            pushed = ExportMetricsServiceRequest.FromString(gzip.decompress(recorded.body))
            if _accepted_logs(pushed):
                break
    finally:
        assert collector.terminate() == 0, collector.stderr()
        upstream.stop()
    assert pushed is not None
    headers = {name.lower(): value for name, value in recorded.headers}
    assert (recorded.method, recorded.target) == ("POST", "/v1/metrics")
    assert headers["content-type"] == "application/x-protobuf"
    assert headers["content-encoding"] == "gzip"
    assert headers["x-tenant"] == "t1"
    (resource_metrics,) = pushed.resource_metrics
    resource = {kv.key: kv.value.string_value for kv in resource_metrics.resource.attributes}
    assert resource["service.name"] == "sluice-collector"
    assert resource["service.version"] == __version__
    assert len(resource["service.instance.id"]) == 36
    points = _points(pushed)
    assert not [name for name in points if name.endswith("_total")]
    assert points["otelcol_receiver_accepted_log_records"] == [
        ({"receiver": "otlp", "transport": "http"}, 1)
    ]
    assert points["otelcol_exporter_sent_log_records"] == [({"exporter": "debug"}, 1)]
    scope, accepted = _metric(pushed, "otelcol_receiver_accepted_log_records")
    assert scope == "go.opentelemetry.io/collector/receiver/receiverhelper"
    assert accepted.unit == "{records}"
    assert accepted.description.startswith("Number of log records successfully pushed")
    assert accepted.sum.is_monotonic
    assert accepted.sum.aggregation_temporality == 2, "cumulative"
    scope, uptime = _metric(pushed, "otelcol_process_uptime")
    assert (scope, uptime.unit) == ("go.opentelemetry.io/collector/service", "s")
    assert uptime.sum.data_points[0].as_double > 0
    _, rss = _metric(pushed, "otelcol_process_memory_rss")
    assert (rss.unit, rss.gauge.data_points[0].as_int > 0) == ("By", True)
    log = collector.stderr()
    assert "Serving metrics" not in log, "only pull readers serve"
    assert "Skipped telemetry setup." not in log


def test_the_reader_pushes_once_more_at_shutdown(tmp_path: Path) -> None:
    """The default interval is 60 s: nothing is pushed while the collector
    runs briefly, and the SDK reader's shutdown pushes the last values."""
    upstream = Upstream()
    http_port = free_port()
    otlp = {"protocol": "http/protobuf", "endpoint": f"127.0.0.1:{upstream.port}/custom/path"}
    collector = CollectorProcess(
        tmp_path, _config({"periodic": {"exporter": {"otlp": otlp}}}, http_port)
    ).wait_ready()
    try:
        post_one_log(http_port)
        assert upstream.wait_for(1, timeout=0.5) == []
    finally:
        assert collector.terminate() == 0, collector.stderr()
    (recorded,) = upstream.wait_for(1)
    upstream.stop()
    assert recorded.target == "/custom/path", "the endpoint's path is used as it is"
    assert _accepted_logs(ExportMetricsServiceRequest.FromString(recorded.body)) == 1


def test_a_periodic_otlp_grpc_reader_pushes_over_grpc(tmp_path: Path) -> None:
    http_port = free_port()
    with GrpcSink() as sink:
        otlp = {
            "protocol": "grpc/protobuf",
            "endpoint": sink.endpoint,
            "headers": {"X-Tenant": "t2"},
            "temporality_preference": "delta",
        }
        reader = {"periodic": {"interval": 100, "timeout": 2000, "exporter": {"otlp": otlp}}}
        collector = CollectorProcess(tmp_path, _config(reader, http_port)).wait_ready()
        try:
            post_one_log(http_port)
            for _ in range(50):
                call = sink.wait_for(len(sink.calls) + 1)[-1]
                pushed = ExportMetricsServiceRequest.FromString(call.body)
                if _accepted_logs(pushed):
                    break
        finally:
            assert collector.terminate() == 0, collector.stderr()
    assert (call.signal, call.metadata["x-tenant"]) == ("metrics", "t2")
    _, accepted = _metric(pushed, "otelcol_receiver_accepted_log_records")
    assert accepted.sum.aggregation_temporality == 1, "delta"
    assert _accepted_logs(pushed) == 1


def test_a_console_reader_prints_the_metrics_on_stdout(tmp_path: Path) -> None:
    http_port = free_port()
    reader = {"periodic": {"interval": 100, "exporter": {"console": {}}}}
    collector = CollectorProcess(tmp_path, _config(reader, http_port)).wait_ready()
    try:
        post_one_log(http_port)
        collector.wait_log(r"Everything is ready")
    finally:
        assert collector.terminate() == 0, collector.stderr()
    text = collector.stdout_path.read_text()
    decoder = json.JSONDecoder()
    documents, at = [], 0
    while at < len(text.rstrip()):
        document, end = decoder.raw_decode(text, at)
        documents.append(document)
        at = end + 1
    last = documents[-1]
    assert {"Key": "service.name", "Value": {"Type": "STRING", "Value": "sluice-collector"}} in (
        last["Resource"]
    )
    metrics = {
        metric["Name"]: (scope["Scope"]["Name"], metric)
        for scope in last["ScopeMetrics"]
        for metric in scope["Metrics"]
    }
    scope, accepted = metrics["otelcol_receiver_accepted_log_records"]
    assert scope == "go.opentelemetry.io/collector/receiver/receiverhelper"
    assert accepted["Unit"] == "{records}"
    assert accepted["Data"]["Temporality"] == "CumulativeTemporality"
    assert accepted["Data"]["IsMonotonic"] is True
    (point,) = accepted["Data"]["DataPoints"]
    assert point["Value"] == 1
    assert point["Attributes"] == [
        {"Key": "receiver", "Value": {"Type": "STRING", "Value": "otlp"}},
        {"Key": "transport", "Value": {"Type": "STRING", "Value": "http"}},
    ]


def test_a_failing_push_is_logged_and_the_collector_goes_on(tmp_path: Path) -> None:
    """The SDK reader reports a failed export and goes on; its shutdown's
    last push fails too, which is the meter provider's shutdown error (the
    collector exits 1 with it, as upstream's Run returns it)."""
    http_port, closed = free_port(), free_port()
    otlp = {"protocol": "http/protobuf", "endpoint": f"http://127.0.0.1:{closed}"}
    reader = {"periodic": {"interval": 50, "exporter": {"otlp": otlp}}}
    collector = CollectorProcess(tmp_path, _config(reader, http_port)).wait_ready()
    try:
        # Go's client names the resolved address as its dialer words it.
        collector.wait_log(
            rf'failed to upload metrics: Post \\"http://127\.0\.0\.1:{closed}/v1/metrics\\":'
            rf" dial tcp 127\.0\.0\.1:{closed}: connect: connection refused"
        )
        post_one_log(http_port)
        assert collector.process.poll() is None
    finally:
        code = collector.terminate()
    assert code == 1
    assert "failed to shutdown meter provider: failed to upload metrics:" in collector.stderr()


def _config_text(readers: str, http: str = "") -> str:
    """A logs pipeline from the otlp receiver (its HTTP protocol with `http`
    settings) to debug, with `readers` (YAML flow text)."""
    return f"""\
receivers:
  otlp:
    protocols:
      http: {http}
exporters:
  debug:
service:
  telemetry:
    metrics:
      readers: {readers}
  pipelines:
    logs:
      receivers: [otlp]
      exporters: [debug]
"""


def _loaded(readers: str) -> tuple[Any, list[str]]:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory, "collector.yaml")
        path.write_text(_config_text(readers))
        config, problems = cli.load([str(path)], [], Factories.load())
    return config, [p.removeprefix(f"{path}: ") for p in problems]


@pytest.mark.parametrize(
    ("readers", "problem"),
    [
        (
            "[{periodic: {exporter: {otlp: {protocol: http/protobuf, bogus: 1}}}}]",
            "service::telemetry::metrics::readers[0]::periodic::exporter::otlp: "
            "'metrics.readers[0].periodic.exporter.otlp' has invalid keys: bogus",
        ),
        (
            "[{periodic: {interval: 5s, exporter: {console: {}}}}]",
            "service::telemetry::metrics::readers[0]::periodic::interval: "
            "'metrics.readers[0].periodic.interval' expected type 'int', got unconvertible "
            "type 'string', value: '5s'",
        ),
        (
            "[{push: {}}]",
            "service::telemetry::metrics::readers[0]: 'metrics.readers[0]' has invalid keys: push",
        ),
        (
            "[{periodic: {exporter: {otlp: {protocol: grpc/protobuf, headers: [a]}}}}]",
            "service::telemetry::metrics::readers[0]::periodic::exporter::otlp::headers: "
            "'metrics.readers[0].periodic.exporter.otlp.headers' expected a map, got 'slice'",
        ),
    ],
)
def test_unknown_keys_and_values_of_the_wrong_type_are_config_errors(
    readers: str, problem: str
) -> None:
    config, problems = _loaded(readers)
    assert config is None
    assert problems == [problem]


@pytest.mark.parametrize(
    ("readers", "problem"),
    [
        (
            "[{periodic: {exporter: {otlp: {protocol: grpc, endpoint: 'localhost:4317'}}}}]",
            "unsupported protocol grpc",
        ),
        (
            "[{periodic: {exporter: {otlp: {protocol: http/protobuf, compression: zstd}}}}]",
            'unsupported compression "zstd"',
        ),
        (
            "[{periodic: {exporter: {otlp: {protocol: grpc/protobuf,"
            " temporality_preference: invalid}}}}]",
            'unsupported temporality preference "invalid"',
        ),
        (
            "[{periodic: {exporter: {otlp: {protocol: grpc/protobuf, endpoint: ' '}}}}]",
            'parse "http:// ": invalid character " " in host name',
        ),
        ("[{periodic: {exporter: {}}}]", "no valid metric exporter"),
        ("[{periodic: {exporter: {console: }}}]", "no valid metric exporter"),
        (
            "[{periodic: {exporter: {prometheus: {host: localhost, port: 1}}}}]",
            "no valid metric exporter",
        ),
        ("[{pull: {exporter: {console: {}}}}]", "no valid metric exporter"),
        ("[{}]", "unsupported metric reader type {<nil> <nil>}"),
    ],
)
def test_readers_the_meter_provider_cannot_make_pass_validate_and_stop_the_start(
    tmp_path: Path, readers: str, problem: str
) -> None:
    """config_test TestMetricReader's errors: upstream's config decodes them
    and its meter provider refuses them when the service starts."""
    config, problems = _loaded(readers)
    assert problems == [] and config is not None
    path = tmp_path / "collector.yaml"
    path.write_text(_config_text(readers, f"{{endpoint: '127.0.0.1:{free_port()}'}}"))
    result = run_cli("--config", str(path))
    assert result.returncode == 1
    logged = problem.replace('"', '\\"')  # in the log line's quoted msg
    assert f"failed to create meter provider: {logged}" in result.stderr


def test_delta_temporality_reports_what_was_added_since_the_previous_push() -> None:
    """The SDK's delta sums: a counter's point holds what was added since the
    previous collection, and a series nothing was added to is left out;
    ``lowmemory`` keeps observable counters cumulative."""
    telemetry = ServiceTelemetry()
    accepted = telemetry.receiver("otlp", "grpc").accepted[Signal.LOG]
    view = MetricsView(telemetry.registry, {"service.name": "x"}, "delta")
    accepted.inc(3)
    first = _points(view.collect())
    assert first["otelcol_receiver_accepted_log_records"] == [
        ({"receiver": "otlp", "transport": "grpc"}, 3)
    ]
    accepted.inc(2)
    assert _points(view.collect())["otelcol_receiver_accepted_log_records"][0][1] == 2
    assert "otelcol_receiver_accepted_log_records" not in _points(view.collect())
    low = MetricsView(telemetry.registry, {}, "lowmemory").collect()
    _, uptime = _metric(low, "otelcol_process_uptime")
    assert uptime.sum.aggregation_temporality == 2, "cumulative"
    test = Counter("test_pushes", "A test's counter.", registry=telemetry.registry)
    test.inc()
    scope, metric = _metric(MetricsView(telemetry.registry, {}).collect(), "test_pushes")
    assert (scope, metric.sum.data_points[0].as_double) == ("sluice", 1.0)


def test_the_readme_example_pushes_to_a_second_collector(tmp_path: Path) -> None:
    """The README's periodic reader example (on free ports, a short
    interval), pushing to a second collector's OTLP receiver."""
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    (example,) = [b for b in re.findall(r"```yaml\n(.*?)```", readme, re.S) if "periodic:" in b]
    backend_port, own_port = free_port(), free_port()
    backend_config = {
        "receivers": {"otlp": {"protocols": {"http": {"endpoint": f"127.0.0.1:{backend_port}"}}}},
        "exporters": {"debug": {"verbosity": "detailed"}},
        "service": {
            "telemetry": {"metrics": {"level": "none"}},
            "pipelines": {"metrics": {"receivers": ["otlp"], "exporters": ["debug"]}},
        },
    }
    backend = CollectorProcess(tmp_path / "backend", backend_config).wait_ready()
    text = example.replace("4318", str(backend_port)).replace("4328", str(own_port))
    collector = CollectorProcess(tmp_path, text.replace("interval: 10000", "interval: 100"))
    try:
        collector.wait_ready()
        backend.wait_log(r"otelcol_process_uptime")
    finally:
        assert collector.terminate() == 0, collector.stderr()
        backend.terminate()
    assert '"Name": "otelcol_process_uptime"' in collector.stdout_path.read_text(), (
        "the console reader's push at shutdown"
    )


def test_a_last_push_to_a_silent_endpoint_ends_within_the_shutdown_timeout() -> None:
    """The readers' last pushes are part of the service's shutdown: a reader
    whose endpoint accepts and never answers (with a push timeout longer
    than the shutdown's) fails when the shutdown timeout runs out, and two
    such readers do not take twice that."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        endpoint = f"http://127.0.0.1:{silent.getsockname()[1]}"
        otlp = f"{{protocol: http/protobuf, endpoint: '{endpoint}', timeout: 60000}}"
        reader = f"{{periodic: {{timeout: 60000, exporter: {{otlp: {otlp}}}}}}}"
        text = _config_text(f"[{reader}, {reader}]", f"{{endpoint: 127.0.0.1:{free_port()}}}")
        config, problems = cli.load([f"yaml:{text}"], [], Factories.load())
        assert config is not None, problems
        service = Service(config)

        async def run() -> tuple[float, BaseException | None]:
            await service.start()
            began = time.monotonic()
            try:
                await service.shutdown(1.0)
            except ShutdownError as failed:
                return time.monotonic() - began, failed
            return time.monotonic() - began, None

        took, failed = asyncio.run(run())
    assert took < 2.5
    assert str(failed) == (
        "failed to shutdown meter provider: failed to upload metrics: context deadline exceeded;"
        " failed to upload metrics: context deadline exceeded"
    )


@pytest.mark.parametrize(
    ("headers", "problem"),
    [
        ({"x-tenant": "a\r\nx-injected: 1"}, 'net/http: invalid header field value for "X-Tenant"'),
        ({"x-tenant": "a\x00"}, 'net/http: invalid header field value for "X-Tenant"'),
        ({"x tenant": "a"}, 'net/http: invalid header field name "x tenant"'),
        ({"": "a"}, 'net/http: invalid header field name ""'),
    ],
)
def test_a_header_that_http_cannot_carry_fails_each_push_and_is_never_sent(
    headers: dict[str, str], problem: str
) -> None:
    """As Go's HTTP client refuses a request whose header name is not a
    token or whose value holds a control character (a line break would
    inject one more header), each OTLP/HTTP push fails and sends nothing."""
    upstream = Upstream()
    otlp = OtlpMetric(protocol="http/protobuf", endpoint=upstream.url, headers=headers)

    async def last_push() -> str | None:
        registry = ServiceTelemetry().registry
        reader = PeriodicMetricReader(PeriodicReader(MetricExporter(otlp=otlp)), registry, {}, "a")
        return await reader.shutdown()

    try:
        error = asyncio.run(last_push())
        assert upstream.wait_for(1, timeout=0.3) == []
    finally:
        upstream.stop()
    assert error == f'failed to upload metrics: Post "{upstream.url}/v1/metrics": {problem}'


@pytest.mark.parametrize(
    ("headers", "problem"),
    [
        ({"X Tenant": "a"}, 'header key "x tenant" contains illegal characters not in [0-9a-z-_.]'),
        ({"": "a"}, "there is an empty key in the header"),
        (
            {"x-tenant": "a\nb"},
            'header key "x-tenant" contains value with non-printable ASCII characters',
        ),
        (
            {"x-tenant": "é"},
            'header key "x-tenant" contains value with non-printable ASCII characters',
        ),
    ],
)
def test_metadata_grpc_cannot_carry_fails_each_push_as_grpc_go_refuses_it(
    headers: dict[str, str], problem: str
) -> None:
    """grpc-go refuses a call whose metadata key (lowercased) is not in
    ``[0-9a-z-_.]`` or whose value is not printable ASCII (but for a
    ``-bin`` key): an Internal status, and nothing is sent."""
    with GrpcSink() as sink:
        otlp = OtlpMetric(protocol="grpc/protobuf", endpoint=sink.endpoint, headers=headers)

        async def last_push() -> str | None:
            registry = ServiceTelemetry().registry
            exporter = MetricExporter(otlp=otlp)
            return await PeriodicMetricReader(
                PeriodicReader(exporter), registry, {}, "a"
            ).shutdown()

        error = asyncio.run(last_push())
        assert sink.wait_for(1, timeout=0.3) == []
    assert error == f"failed to upload metrics: rpc error: code = Internal desc = {problem}"


def test_a_console_reader_whose_stdout_nobody_reads_does_not_stall_the_collector(
    tmp_path: Path,
) -> None:
    """Upstream's console exporter writes from the SDK reader's own
    goroutine: a stdout pipe nobody reads stops the pushes, not the
    receivers. Here the pipe fills within a few pushes, and the OTLP
    receiver still answers, and the collector still stops on SIGTERM."""
    http_port = free_port()
    reader = {"periodic": {"interval": 10, "timeout": 200, "exporter": {"console": {}}}}
    config_path = tmp_path / "collector.yaml"
    config_path.write_text(json.dumps(_config(reader, http_port)))
    stderr_path = tmp_path / "collector.stderr"
    unread, stdout = os.pipe()
    with stderr_path.open("wb") as stderr:
        process = subprocess.Popen(
            [str(BIN / "sluice-collector"), "--config", str(config_path)],
            stdout=stdout,
            stderr=stderr,
        )
    os.close(stdout)
    try:
        deadline = time.monotonic() + 30
        while READY not in stderr_path.read_text():
            assert process.poll() is None and time.monotonic() < deadline, stderr_path.read_text()
            time.sleep(0.02)
        post_one_log(http_port)
        time.sleep(1.0)  # a hundred pushes: far more than a pipe holds
        for _ in range(3):
            post_one_log(http_port)
        assert process.poll() is None
        process.send_signal(signal.SIGTERM)
        process.wait(15)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(unread)
    log = stderr_path.read_text()
    assert "Shutdown complete." in log, log
    assert re.search(r'(?m)^.*level=error .*msg="context deadline exceeded"$', log), log


class _TimedExporter:
    """Records when each push starts; push n takes ``durations[n]`` seconds."""

    def __init__(self, durations: list[float]):
        self.durations = durations
        self.starts: list[float] = []

    async def export(self, request: ExportMetricsServiceRequest) -> None:
        self.starts.append(time.monotonic())
        pushed = len(self.starts)
        await asyncio.sleep(self.durations[pushed - 1] if pushed <= len(self.durations) else 0)

    async def close(self) -> None:
        return None


@pytest.mark.parametrize(
    ("durations", "expected"),
    [
        # pushes that take half the interval do not push the next one back
        ([0.1, 0.1, 0.1, 0.1], [0.2, 0.4, 0.6, 0.8]),
        # a push that outlasts the interval: the ticks it missed make one
        # push as soon as it ends, then the pushes keep to the ticks
        ([0.5, 0.0, 0.0, 0.0], [0.2, 0.7, 0.8, 1.0]),
    ],
)
def test_pushes_keep_to_the_interval_as_the_sdk_readers_ticker(
    durations: list[float], expected: list[float]
) -> None:
    """The SDK's PeriodicReader pushes on a ``time.Ticker`` of ``interval``
    (sdk/metric periodic_reader.go run): the time a push takes does not
    delay the next, and ticks missed while a push ran (a Go ticker's
    channel holds one) make a single push right after it."""
    exporter = _TimedExporter(durations)

    async def run() -> float:
        registry = ServiceTelemetry().registry
        config = PeriodicReader(MetricExporter(console={}), interval=200, timeout=1000)
        reader = PeriodicMetricReader(config, registry, {}, "a")
        reader.exporter = exporter
        began = time.monotonic()
        reader.start()
        while len(exporter.starts) < len(durations):
            await asyncio.sleep(0.01)
        await reader.shutdown()
        return began

    began = asyncio.run(run())
    starts = [round(start - began, 2) for start in exporter.starts[: len(durations)]]
    assert starts == pytest.approx(expected, abs=0.07)


def test_the_last_push_failing_is_only_the_shutdowns_error(tmp_path: Path) -> None:
    """As upstream's service.Shutdown: "Shutdown complete." is logged once
    pipelines and extensions have stopped, then the meter provider shuts
    down (each reader's last push); a last push that fails is not reported
    on its own (the SDK reader's Shutdown returns it) but is the error the
    collector exits with."""
    http_port, closed = free_port(), free_port()
    otlp = {"protocol": "http/protobuf", "endpoint": f"http://127.0.0.1:{closed}"}
    reader = {"periodic": {"exporter": {"otlp": otlp}}}
    collector = CollectorProcess(tmp_path, _config(reader, http_port)).wait_ready()
    assert collector.terminate() == 1
    lines = collector.stderr().splitlines()
    order = [
        next(i for i, line in enumerate(lines) if text in line)
        for text in ("Starting shutdown...", "Shutdown complete.", "run finished with error")
    ]
    assert order == sorted(order), lines
    (failed,) = [line for line in lines if "failed to upload metrics" in line]
    assert "failed to shutdown meter provider: failed to upload metrics: Post" in failed


@pytest.mark.parametrize("protocol", ["http/protobuf", "grpc/protobuf"])
@pytest.mark.parametrize(("timeout", "fails"), [(0, False), (-1, False), (None, True)])
def test_an_otlp_timeout_of_0_or_less_sets_no_limit_per_request(
    monkeypatch: pytest.MonkeyPatch, protocol: str, timeout: int | None, fails: bool
) -> None:
    """contrib config hands an OTLP ``timeout`` to the exporter as it is,
    and otlpmetrichttp (Go's http.Client Timeout) and otlpmetricgrpc
    (exportContext) set no deadline for 0 or less: only the reader's
    ``timeout`` bounds the push. Without a ``timeout`` the exporters'
    default applies (shortened here so that the test is quick)."""
    monkeypatch.setattr("sluice.collector.metricreaders.DEFAULT_OTLP_TIMEOUT_MS", 200)

    async def last_push(endpoint: str) -> str | None:
        otlp = OtlpMetric(protocol=protocol, endpoint=endpoint, timeout=timeout)
        config = PeriodicReader(MetricExporter(otlp=otlp), timeout=3000)
        registry = ServiceTelemetry().registry
        return await PeriodicMetricReader(config, registry, {}, "a").shutdown()

    if protocol == "http/protobuf":
        upstream = Upstream()
        upstream.respond = Reply(delay=0.6)
        try:
            failed = asyncio.run(last_push(upstream.url))
        finally:
            upstream.stop()
    else:
        with GrpcSink(respond=Answer(delay=0.6)) as sink:
            failed = asyncio.run(last_push(sink.endpoint))
    assert (failed is not None) == fails, failed


def test_histogram_points_carry_min_and_max_as_the_sdk_sends_them() -> None:
    """The SDK's explicit bucket histograms record min and max (sdk/metric
    aggregate histogram.go, NoMinMax off): over all the values with
    cumulative temporality, over those since the previous collection with
    delta."""
    telemetry = ServiceTelemetry()
    series = BatchTelemetry(telemetry.registry).instance("batch", lambda: 0)
    cumulative = MetricsView(telemetry.registry, {})
    delta = MetricsView(telemetry.registry, {}, "delta")

    def point(view: MetricsView) -> Any:
        _, metric = _metric(view.collect(), "otelcol_processor_batch_batch_send_size")
        (found,) = metric.histogram.data_points
        return found

    for items in (30, 7, 120):
        series.sent(items, by_timeout=True)
    first = point(cumulative)
    assert (first.HasField("min"), first.HasField("max")) == (True, True)
    assert (first.min, first.max, first.count) == (7, 120, 3)
    first = point(delta)
    assert (first.min, first.max, first.count) == (7, 120, 3)
    for items in (40, 60):
        series.sent(items, by_timeout=False)
    second = point(cumulative)
    assert (second.min, second.max, second.count) == (7, 120, 5)
    second = point(delta)
    assert (second.min, second.max, second.count) == (40, 60, 2)


def test_a_console_push_that_times_out_fails_without_the_otlp_exporters_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``failed to upload metrics:`` is the OTLP exporters' wrapping of
    their upload errors (otlpmetrichttp and otlpmetricgrpc exporter.go);
    the console exporter (stdoutmetric) returns its errors as they are."""
    release = threading.Event()

    class Stuck:
        def write(self, text: str) -> int:
            release.wait(5)
            return len(text)

        def flush(self) -> None:
            return None

    monkeypatch.setattr(sys, "stdout", Stuck())

    async def last_push() -> str | None:
        config = PeriodicReader(MetricExporter(console={}), timeout=200)
        return await PeriodicMetricReader(config, ServiceTelemetry().registry, {}, "a").shutdown()

    try:
        assert asyncio.run(last_push()) == "context deadline exceeded"
    finally:
        release.set()


def test_a_console_push_without_a_stdout_fails_at_once_as_a_closed_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Python has no ``sys.stdout`` (None) when the collector starts with its
    stdout closed; Go's stdoutmetric then fails each write with ``bad file
    descriptor``. The writer thread raised instead, leaving the write never
    settled, so every later push waited out the reader's whole timeout."""
    monkeypatch.setattr(sys, "stdout", None)

    async def pushes() -> tuple[list[str | None], float]:
        config = PeriodicReader(MetricExporter(console={}), timeout=3000)
        reader = PeriodicMetricReader(config, ServiceTelemetry().registry, {}, "a")
        began = time.monotonic()
        errors = [await reader.push(), await reader.shutdown()]
        return errors, time.monotonic() - began

    errors, took = asyncio.run(pushes())
    assert errors == ["write /dev/stdout: bad file descriptor"] * 2
    assert took < 2
