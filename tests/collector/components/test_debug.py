"""The debug exporter: its output at each verbosity, in the log or on stdout,
and its sampling."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from sluice.collector import pdata
from sluice.collector.component import Host
from sluice.collector.components.exporters.debug import FACTORY
from sluice.collector.components.exporters.debug.config import DebugConfig
from sluice.collector.components.exporters.debug.exporter import Sampler
from sluice.collector.confmap.decode import Problems, decode
from sluice.collector.internal.go_text import float_v, value_as_string
from sluice.logs import JsonFormatter, LogfmtFormatter
from sluice.policy import Signal
from tests.collector.components.batches import TESTDATA, counter, load_config, settings

START = 1_581_452_772_000_000_321
END = 1_581_452_773_000_000_789
EVENT = 1_581_452_773_000_000_123
TRACE_ID = bytes.fromhex("0102030405060708090a0b0c0d0e0f10")
SPAN_ID = bytes.fromhex("1112131415161718")


def one_log_record() -> Any:
    request = ExportLogsServiceRequest()
    resource = request.resource_logs.add()
    resource.resource.attributes.add(key="resource-attr").value.string_value = "resource-attr-val-1"
    record = resource.scope_logs.add().log_records.add(
        time_unix_nano=END, severity_text="Info", severity_number=9
    )
    record.body.string_value = "This is a log message"
    record.attributes.add(key="app").value.string_value = "server"
    record.attributes.add(key="instance_num").value.int_value = 1
    record.trace_id = bytes.fromhex("08040201000000000000000000000000")
    record.span_id = bytes.fromhex("0102040800000000")
    return pdata.lean_logs(request)


def two_spans() -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    resource = request.resource_spans.add()
    resource.resource.attributes.add(key="resource-attr").value.string_value = "resource-attr-val-1"
    scope = resource.scope_spans.add()
    a = scope.spans.add(name="operationA", trace_id=TRACE_ID, span_id=SPAN_ID)
    a.trace_state = "ot=th:0"
    a.start_time_unix_nano, a.end_time_unix_nano = START, END
    a.status.code, a.status.message = 2, "status-cancelled"
    event = a.events.add(name="event-with-attr", time_unix_nano=EVENT, dropped_attributes_count=2)
    event.attributes.add(key="span-event-attr").value.string_value = "span-event-attr-val"
    b = scope.spans.add(name="operationB", start_time_unix_nano=START, end_time_unix_nano=END)
    link = b.links.add(dropped_attributes_count=4)
    link.attributes.add(key="span-link-attr").value.string_value = "span-link-attr-val"
    return request


def some_metrics() -> ExportMetricsServiceRequest:
    request = ExportMetricsServiceRequest()
    scope = request.resource_metrics.add().scope_metrics.add()
    gauge = scope.metrics.add(name="gauge-double", unit="1")
    point = gauge.gauge.data_points.add(start_time_unix_nano=START, time_unix_nano=END)
    point.as_double = 1.23
    point.attributes.add(key="label-1").value.string_value = "label-value-1"
    total = scope.metrics.add(name="sum-int", unit="1")
    total.sum.is_monotonic, total.sum.aggregation_temporality = True, 2
    total.sum.data_points.add(start_time_unix_nano=START, time_unix_nano=END, as_int=456)
    histogram = scope.metrics.add(name="histogram", unit="1").histogram
    histogram.aggregation_temporality = 2
    point = histogram.data_points.add(start_time_unix_nano=START, time_unix_nano=END, count=1)
    point.sum = point.min = point.max = 15.0
    point.explicit_bounds.append(1.0)
    point.bucket_counts.extend([0, 1])
    exemplar = point.exemplars.add(
        trace_id=TRACE_ID, span_id=SPAN_ID, time_unix_nano=EVENT, as_double=15.0
    )
    exemplar.filtered_attributes.add(key="exemplar-attachment").value.string_value = "x"
    exponential = scope.metrics.add(name="exponential-histogram", unit="1")
    exponential.exponential_histogram.aggregation_temporality = 1
    point = exponential.exponential_histogram.data_points.add(
        start_time_unix_nano=START, time_unix_nano=END, count=5, sum=0.15, scale=1, zero_count=1
    )
    point.negative.offset, point.positive.offset = -1, 1
    point.negative.bucket_counts.extend([1, 1])
    point.positive.bucket_counts.extend([1, 1])
    return request


def export(config: DebugConfig, signal: Signal, data: Any, times: int = 1) -> float:
    """Send `data` `times` times; the exporter's sent counter for the signal."""
    used = settings("debug")

    async def main() -> None:
        exporter = FACTORY.create(used, config, frozenset({signal}))
        await exporter.start(Host())
        for _ in range(times):
            await exporter.consumer(signal).consume(data)
        await exporter.shutdown()

    asyncio.run(main())
    family = {Signal.LOG: "log_records", Signal.METRIC: "metric_points", Signal.TRACE: "spans"}
    return counter(used, f"otelcol_exporter_sent_{family[signal]}_total", exporter="debug")


def stdout(verbosity: str) -> DebugConfig:
    return DebugConfig(verbosity=verbosity, use_internal_logger=False)


# -- config -----------------------------------------------------------------------


def test_defaults_are_upstreams() -> None:
    config, problems = load_config(DebugConfig, TESTDATA / "debug/config_default.yaml", "debug")
    assert problems == []
    assert config == DebugConfig("basic", 2, 1, True)


def test_verbosity_is_read_in_any_case() -> None:
    config, problems = load_config(
        DebugConfig, TESTDATA / "debug/config_verbosity.yaml", "debug/detailed"
    )
    assert problems == []
    assert (config.level, config.sampling_initial, config.sampling_thereafter) == (
        "detailed",
        10,
        50,
    )
    assert not config.use_internal_logger


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("none", 'verbosity: verbosity level "None" is not supported'),
        ("typo", 'verbosity: unknown metrics level "loud"'),
    ],
)
def test_unsupported_verbosity(name: str, problem: str) -> None:
    _, problems = load_config(
        DebugConfig, TESTDATA / f"debug/config_verbosity_{name}.yaml", "debug"
    )
    assert problems == [problem]


def test_an_unknown_verbosity_is_named_as_upstream_lower_cases_it() -> None:
    """configtelemetry.Level's UnmarshalText lower-cases the text first."""
    assert list(DebugConfig(verbosity="Verbose").validate()) == [
        ("verbosity", 'unknown metrics level "verbose"')
    ]
    # Go's %q: quotes and control characters escaped.
    assert list(DebugConfig(verbosity='Lo"ud\n').validate()) == [
        ("verbosity", 'unknown metrics level "lo\\"ud\\n"')
    ]


@pytest.mark.parametrize(
    ("verbosity", "level", "problem"),
    [
        (2, "detailed", None),
        (1.5, "normal", None),
        (4294967296, "basic", None),  # wraps as Go's int32 conversion
        (-1, "none", 'verbosity: verbosity level "None" is not supported'),
        (3, "", 'verbosity: verbosity level "" is not supported'),
        (
            True,
            "basic",
            "verbosity: 'verbosity' expected type 'configtelemetry.Level', got unconvertible "
            "type 'bool', value: 'true'",
        ),
    ],
)
def test_a_number_is_the_verbosity_of_that_level(
    verbosity: Any, level: str, problem: str | None
) -> None:
    """``verbosity`` is a configtelemetry.Level, an int32 read from text:
    a YAML number decodes straight into it, and Validate prints a level no
    name has as its String(), ``""``."""
    problems = Problems()
    config = decode(DebugConfig, {"verbosity": verbosity}, "", problems)
    for key, message in config.validate():
        problems.add(key, message)
    assert config.level == level
    assert problems.lines == ([problem] if problem else [])


# -- output ------------------------------------------------------------------------


def test_basic_writes_one_count_entry_per_batch_to_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """As upstream's zap entry: the message is the signal, the counts are fields."""
    with caplog.at_level(logging.INFO, logger="sluice.collector.exporter.debug"):
        sent = export(DebugConfig(), Signal.LOG, one_log_record())
    assert [(r.getMessage(), r.fields) for r in caplog.records] == [
        (
            "Logs",
            {
                "kind": "exporter",
                "data_type": "logs",
                "name": "debug",
                "resource logs": 1,
                "log records": 1,
            },
        )
    ]
    assert sent == 1


def test_entries_in_the_log_carry_the_exporters_fields(caplog: pytest.LogCaptureFixture) -> None:
    """Upstream logs through the collector's exporter logger, which adds
    kind, data_type and name to each entry, the text's too."""
    with caplog.at_level(logging.INFO, logger="sluice.collector.exporter.debug"):
        export(DebugConfig(verbosity="normal"), Signal.TRACE, two_spans())
    exporter = {"kind": "exporter", "data_type": "traces", "name": "debug"}
    assert [r.fields for r in caplog.records] == [
        {**exporter, "resource spans": 1, "spans": 2},
        exporter,
    ]


def test_the_count_entry_in_the_json_and_console_logs(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="sluice.collector.exporter.debug"):
        export(DebugConfig(), Signal.METRIC, some_metrics())
    [record] = caplog.records
    entry = json.loads(JsonFormatter().format(record))
    assert (entry["msg"], entry["resource metrics"], entry["metrics"], entry["data points"]) == (
        "Metrics",
        1,
        4,
        4,
    )
    assert (
        LogfmtFormatter()
        .format(record)
        .endswith(
            ' msg="Metrics" kind=exporter data_type=metrics name=debug'
            ' "resource metrics"=1 metrics=4 "data points"=4'
        )
    )


def test_basic_counts_for_metrics_and_traces(capsys: pytest.CaptureFixture[str]) -> None:
    export(stdout("basic"), Signal.METRIC, some_metrics())
    export(stdout("basic"), Signal.TRACE, two_spans())
    assert capsys.readouterr().out == (
        'Metrics\t{"resource metrics": 1, "metrics": 4, "data points": 4}\n'
        'Traces\t{"resource spans": 1, "spans": 2}\n'
    )


def test_normal_writes_a_line_per_record(capsys: pytest.CaptureFixture[str]) -> None:
    export(stdout("normal"), Signal.LOG, one_log_record())
    export(stdout("normal"), Signal.TRACE, two_spans())
    export(stdout("normal"), Signal.METRIC, some_metrics())
    assert capsys.readouterr().out.split("\n") == [
        'Logs\t{"resource logs": 1, "log records": 1}',
        "This is a log message app=server instance_num=1",
        "",
        'Traces\t{"resource spans": 1, "spans": 2}',
        "operationA 0102030405060708090a0b0c0d0e0f10 1112131415161718",
        "operationB  ",
        "",
        'Metrics\t{"resource metrics": 1, "metrics": 4, "data points": 4}',
        "gauge-double{label-1=label-value-1} 1.23",
        "sum-int{} 456",
        "histogram{} count=1 sum=15 min=15 max=15 le1=0 1",
        "exponential-histogram{} count=5 sum=0.15",
        "",
        "",
    ]


def test_normal_in_the_log_is_one_entry_per_batch(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="sluice.collector.exporter.debug"):
        export(DebugConfig(verbosity="normal"), Signal.LOG, one_log_record())
    # The text is the message whole, its last line break too, as upstream's
    # logger.Info(string(buf)).
    assert [r.getMessage() for r in caplog.records][1:] == [
        "This is a log message app=server instance_num=1\n"
    ]


DETAILED_LOG = (TESTDATA / "debug/one_record.out").read_text()

DETAILED_TRACES = (TESTDATA / "debug/two_spans.out").read_text()

DETAILED_METRICS_TAIL = (TESTDATA / "debug/metrics_tail.out").read_text()


def test_detailed_on_stdout_is_upstreams_text(capsys: pytest.CaptureFixture[str]) -> None:
    export(stdout("detailed"), Signal.LOG, one_log_record())
    export(stdout("detailed"), Signal.TRACE, two_spans())
    out = capsys.readouterr().out
    assert out == (
        'Logs\t{"resource logs": 1, "log records": 1}\n'
        + DETAILED_LOG
        + "\n"
        + 'Traces\t{"resource spans": 1, "spans": 2}\n'
        + DETAILED_TRACES
        + "\n"
    )


def test_detailed_metrics(capsys: pytest.CaptureFixture[str]) -> None:
    export(stdout("detailed"), Signal.METRIC, some_metrics())
    out = capsys.readouterr().out
    assert (
        "NumberDataPoints #0\nData point attributes:\n     -> label-1: Str(label-value-1)\n" in out
    )
    assert "Value: 1.230000\n" in out
    assert "     -> IsMonotonic: true\n     -> AggregationTemporality: Cumulative\n" in out
    assert out.endswith(DETAILED_METRICS_TAIL + "\n")


def test_detailed_in_the_log(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="sluice.collector.exporter.debug"):
        export(DebugConfig(verbosity="detailed"), Signal.LOG, one_log_record())
    summary, text = [r.getMessage() for r in caplog.records]
    assert summary == "Logs"
    assert text == DETAILED_LOG


# -- sampling and values --------------------------------------------------------------


def test_sampling_writes_the_first_lines_of_each_second_then_every_nth(
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = DebugConfig(sampling_initial=2, sampling_thereafter=3, use_internal_logger=False)
    sent = export(config, Signal.LOG, one_log_record(), times=10)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 + 2  # the 1st, 2nd, 5th and 8th within the second
    assert sent == 10  # sampling only thins the output


def test_the_sampler_starts_again_each_second() -> None:
    now = [0.0]
    sampler = Sampler(1, 0, clock=lambda: now[0])
    assert [sampler.allows("Logs") for _ in range(3)] == [True, False, False]
    assert sampler.allows("Traces")
    now[0] = 1.0
    assert sampler.allows("Logs")


def test_negative_sampling_counts_wrap_as_zaps_unsigned_ones() -> None:
    """zap's sampler holds both numbers as uint64: a negative
    sampling_initial lets every entry through, a negative
    sampling_thereafter none after the initial ones."""
    assert all(Sampler(-1, 0, clock=lambda: 0.0).allows("Logs") for _ in range(5))
    first_only = Sampler(1, -1, clock=lambda: 0.0)
    assert [first_only.allows("Logs") for _ in range(4)] == [True, False, False, False]


def test_each_signal_samples_its_own_entries(capsys: pytest.CaptureFixture[str]) -> None:
    """Upstream makes an exporter, and so a sampler, per signal: entries of
    logs never use up the count of the same message for traces."""
    config = DebugConfig(
        verbosity="normal", sampling_initial=1, sampling_thereafter=0, use_internal_logger=False
    )

    async def main() -> None:
        exporter = FACTORY.create(settings("debug"), config, frozenset({Signal.LOG, Signal.TRACE}))
        await exporter.start(Host())
        # Both texts are empty, so both entries have the message "".
        await exporter.consumer(Signal.LOG).consume(pdata.lean_logs(ExportLogsServiceRequest()))
        await exporter.consumer(Signal.TRACE).consume(ExportTraceServiceRequest())
        await exporter.shutdown()

    asyncio.run(main())
    assert capsys.readouterr().out == (
        'Logs\t{"resource logs": 0, "log records": 0}\n'
        "\n"
        'Traces\t{"resource spans": 0, "spans": 0}\n'
        "\n"
    )


def test_values_print_as_pdata_prints_them() -> None:
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue

    value = AnyValue()
    kv = value.kvlist_value.values.add(key="b")
    kv.value.double_value = 1e21
    nested = value.kvlist_value.values.add(key="a").value.array_value.values
    nested.add().string_value = "<x&y>"
    nested.add().bytes_value = b"\x01\x02"
    nested.add().bool_value = True
    nested.add()
    assert value_as_string(value) == '{"a":["\\u003cx\\u0026y\\u003e","AQI=",true,null],"b":1e+21}'
    assert [float_v(x) for x in (1e6, 999999.5, 1e-05, 0.0001, -0.0)] == [
        "1e+06",
        "999999.5",
        "1e-05",
        "0.0001",
        "-0",
    ]
