"""The debug exporter's normal and detailed texts for upstream's own test
inputs (``pdata/testdata`` and the v0.115 ``exporter/debugexporter`` tests),
compared with upstream's expected texts (``internal/otlptext/testdata/*.out``
and the strings of ``internal/normal/*_test.go``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from sluice.collector import pdata
from sluice.collector.components.exporters.debug.exporter import render
from sluice.policy import Signal
from tests.collector.components import pdata_testdata as testdata
from tests.collector.components.batches import TESTDATA

GOLDEN = TESTDATA / "debug/upstream"


def _embedded_maps() -> ExportLogsServiceRequest:
    request = ExportLogsServiceRequest()
    record = (
        request.resource_logs.add()
        .scope_logs.add()
        .log_records.add(time_unix_nano=testdata.END, severity_number=9, severity_text="INFO")
    )
    body = record.body.kvlist_value.values
    testdata.put_str(body, "key1", "val1")
    inner = body.add(key="key2").value.kvlist_value.values
    testdata.put_str(inner, "key21", "val21")
    testdata.put_str(inner, "key22", "val22")
    attribute = record.attributes.add(key="key1").value.kvlist_value.values
    testdata.put_str(attribute, "key11", "val11")
    testdata.put_str(attribute, "key12", "val12")
    deeper = attribute.add(key="key13").value.kvlist_value.values
    testdata.put_str(deeper, "key131", "val131")
    testdata.put_str(record.attributes, "key2", "val2")
    return request


DETAILED: list[tuple[Signal, Callable[[], Any], str]] = [
    (Signal.LOG, ExportLogsServiceRequest, "logs/empty.out"),
    (Signal.LOG, lambda: testdata.generate_logs(1), "logs/one_record.out"),
    (Signal.LOG, lambda: testdata.generate_logs(2), "logs/two_records.out"),
    (Signal.LOG, _embedded_maps, "logs/embedded_maps.out"),
    (Signal.METRIC, ExportMetricsServiceRequest, "metrics/empty.out"),
    (
        Signal.METRIC,
        testdata.generate_metrics_all_types,
        "metrics/metrics_with_all_types.out",
    ),
    (Signal.METRIC, lambda: testdata.generate_metrics(2), "metrics/two_metrics.out"),
    (
        Signal.METRIC,
        testdata.generate_metrics_metric_type_invalid,
        "metrics/invalid_metric_type.out",
    ),
    (Signal.TRACE, ExportTraceServiceRequest, "traces/empty.out"),
    (Signal.TRACE, lambda: testdata.generate_traces(2), "traces/two_spans.out"),
]


def _as_passed(signal: Signal, request: Any) -> Any:
    """`request` as the pipeline hands it to an exporter (logs are lean)."""
    return pdata.lean_logs(request) if signal is Signal.LOG else request


@pytest.mark.parametrize(("signal", "make", "golden"), DETAILED, ids=[c[2] for c in DETAILED])
def test_detailed_text_is_upstreams_golden_file(
    signal: Signal, make: Callable[[], Any], golden: str
) -> None:
    text = render("detailed", signal, _as_passed(signal, make()))
    assert text.splitlines() == (GOLDEN / golden).read_text().splitlines()
    assert text == (GOLDEN / golden).read_text()


def _log(body: str, *attributes: tuple[str, str]) -> Any:
    request = ExportLogsServiceRequest()
    record = request.resource_logs.add().scope_logs.add().log_records.add()
    record.body.string_value = body
    for key, value in attributes:
        testdata.put_str(record.attributes, key, value)
    return request


def _two_logs() -> Any:
    request = _log("Single line log message", ("key1", "value1"), ("key2", "value2"))
    second = request.resource_logs[0].scope_logs[0].log_records.add()
    second.body.string_value = "Multi-line\nlog message"
    testdata.put_str(second.attributes, "mykey2", "myvalue2")
    testdata.put_str(second.attributes, "mykey1", "myvalue1")
    return request


def _log_with_maps() -> Any:
    request = ExportLogsServiceRequest()
    record = request.resource_logs.add().scope_logs.add().log_records.add()
    body = record.body.kvlist_value.values
    testdata.put_str(body, "app", "CurrencyConverter")
    event = body.add(key="event").value.kvlist_value.values
    testdata.put_str(event, "operation", "convert")
    testdata.put_str(event, "result", "success")
    conversion = record.attributes.add(key="conversion").value.kvlist_value.values
    source = conversion.add(key="source").value.kvlist_value.values
    testdata.put_str(source, "currency", "USD")
    source.add(key="amount").value.double_value = 34.22
    destination = conversion.add(key="destination").value.kvlist_value.values
    testdata.put_str(destination, "currency", "EUR")
    testdata.put_str(record.attributes, "service", "payments")
    return request


def _metric(name: str) -> tuple[ExportMetricsServiceRequest, Any]:
    request = ExportMetricsServiceRequest()
    metric = request.resource_metrics.add().scope_metrics.add().metrics.add(name=name)
    return request, metric


def _http_attributes(point: Any) -> None:
    point.attributes.add(key="http.response.status_code").value.int_value = 200
    testdata.put_str(point.attributes, "http.request.method", "GET")


def _number(kind: str, name: str, value: float, state: str, cpu: str) -> Any:
    request, metric = _metric(name)
    point = getattr(metric, kind).data_points.add(as_double=value)
    testdata.put_str(point.attributes, "state", state)
    testdata.put_str(point.attributes, "cpu", cpu)
    return request


def _histogram(exponential: bool) -> Any:
    request, metric = _metric("http.server.request.duration")
    kind = metric.exponential_histogram if exponential else metric.histogram
    point = kind.data_points.add(count=1340, sum=99.573, min=0.017, max=8.13)
    _http_attributes(point)
    if not exponential:
        point.explicit_bounds.extend([0.125, 0.5, 1, 3])
        point.bucket_counts.extend([1324, 13, 0, 2, 1])
    return request


def _summary() -> Any:
    request, metric = _metric("summary")
    point = metric.summary.data_points.add(count=1340, sum=99.573)
    _http_attributes(point)
    point.quantile_values.add(quantile=0.01, value=15)
    return request


def _span() -> Any:
    request = ExportTraceServiceRequest()
    span = request.resource_spans.add().scope_spans.add().spans.add(name="span-name")
    span.trace_id, span.span_id = testdata.TRACE_ID, testdata.SPAN_ID
    testdata.put_str(span.attributes, "key1", "value1")
    testdata.put_str(span.attributes, "key2", "value2")
    return request


HTTP = "http.server.request.duration{http.response.status_code=200,http.request.method=GET}"
NORMAL: list[tuple[str, Signal, Callable[[], Any], str]] = [
    ("empty logs", Signal.LOG, ExportLogsServiceRequest, ""),
    (
        "one log record",
        Signal.LOG,
        lambda: _log("Single line log message", ("key1", "value1"), ("key2", "value2")),
        "Single line log message key1=value1 key2=value2\n",
    ),
    (
        "multiline log",
        Signal.LOG,
        lambda: _log(
            "First line of the log message\n  second line of the log message",
            ("key1", "value1"),
            ("key2", "value2"),
        ),
        "First line of the log message\n  second line of the log message key1=value1 key2=value2\n",
    ),
    (
        "two log records",
        Signal.LOG,
        _two_logs,
        "Single line log message key1=value1 key2=value2\n"
        "Multi-line\nlog message mykey2=myvalue2 mykey1=myvalue1\n",
    ),
    (
        "log with maps in body and attributes",
        Signal.LOG,
        _log_with_maps,
        '{"app":"CurrencyConverter","event":{"operation":"convert","result":"success"}} '
        'conversion={"destination":{"currency":"EUR"},"source":{"amount":34.22,"currency":"USD"}}'
        " service=payments\n",
    ),
    ("empty metrics", Signal.METRIC, ExportMetricsServiceRequest, ""),
    (
        "sum data point",
        Signal.METRIC,
        lambda: _number("sum", "system.cpu.time", 123.456, "user", "0"),
        "system.cpu.time{state=user,cpu=0} 123.456\n",
    ),
    (
        "gauge data point",
        Signal.METRIC,
        lambda: _number("gauge", "system.cpu.utilization", 78.901234567, "free", "8"),
        "system.cpu.utilization{state=free,cpu=8} 78.901234567\n",
    ),
    (
        "histogram",
        Signal.METRIC,
        lambda: _histogram(exponential=False),
        f"{HTTP} count=1340 sum=99.573 min=0.017 max=8.13 le0.125=1324 le0.5=13 le1=0 le3=2 1\n",
    ),
    (
        "exponential histogram",
        Signal.METRIC,
        lambda: _histogram(exponential=True),
        f"{HTTP} count=1340 sum=99.573 min=0.017 max=8.13\n",
    ),
    (
        "summary",
        Signal.METRIC,
        _summary,
        "summary{http.response.status_code=200,http.request.method=GET}"
        " count=1340 sum=99.573000 q0.01=15\n",
    ),
    ("empty traces", Signal.TRACE, ExportTraceServiceRequest, ""),
    (
        "one span",
        Signal.TRACE,
        _span,
        "span-name 0102030405060708090a0b0c0d0e0f10 1112131415161718 key1=value1 key2=value2\n",
    ),
]


@pytest.mark.parametrize(
    ("signal", "make", "expected"), [c[1:] for c in NORMAL], ids=[c[0] for c in NORMAL]
)
def test_normal_text_is_upstreams(signal: Signal, make: Callable[[], Any], expected: str) -> None:
    assert render("normal", signal, _as_passed(signal, make())) == expected


def test_nested_values_print_as_upstreams_databuffer_test() -> None:
    """``TestNestedArraySerializesCorrectly``, ``TestNestedMapSerializesCorrectly``."""
    request = ExportTraceServiceRequest()
    span = request.resource_spans.add().scope_spans.add().spans.add(name="s")
    values = span.attributes.add(key="slice").value.array_value.values
    values.add().string_value = "foo"
    values.add().int_value = 42
    values.add().array_value.values.add().string_value = "bar"
    values.add().bool_value = True
    values.add().double_value = 5.5
    mapped = span.attributes.add(key="map").value.kvlist_value.values
    testdata.put_str(mapped, "foo", "test")
    mapped.add(key="zoo").value.kvlist_value.values.add(key="bar").value.int_value = 13
    lines = render("detailed", Signal.TRACE, request).splitlines()
    assert lines[lines.index("Attributes:") + 1 :] == [
        '     -> slice: Slice(["foo",42,["bar"],true,5.5])',
        '     -> map: Map({"foo":"test","zoo":{"bar":13}})',
    ]
