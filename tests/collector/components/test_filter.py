"""The ``filter`` processor: config (upstream's testdata and README
examples), filtering of each signal in process, error modes, counters, and
the one-scan-per-record cost of pattern conditions."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest
import yaml
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from sluice.collector import pdata
from sluice.collector.component import ConsumerError
from sluice.collector.components.processors.filter import FACTORY
from sluice.collector.components.processors.filter.config import FilterConfig
from sluice.collector.confmap.decode import Problems, decode
from sluice.collector.telemetry import ServiceTelemetry
from sluice.policy import Signal
from sluice.policy.patterns import FieldScanner
from tests.collector.components.pipeline_data import Sink, log_bodies, logs, settings
from tests.collector.helpers import run_cli
from tests.collector.testdata_configs import load_config
from tests.ottl.items import add_attributes

TESTDATA = Path(__file__).parent / "testdata" / "filter"
PATH_ERROR = (
    'segment "{segment}" from path "{path}" is not a valid path nor a valid OTTL keyword for the '
    "{context} context - review https://github.com/open-telemetry/opentelemetry-collector-contrib"
    "/tree/main/pkg/ottl/contexts/ottl{context} to see all valid paths"
)


def config(**raw: Any) -> FilterConfig:
    problems = Problems()
    decoded = decode(FilterConfig, raw, "", problems)
    assert problems.lines == [] and list(decoded.validate()) == []
    return decoded


def run(processor: Any, *batches: Any) -> None:
    async def feed() -> None:
        for batch in batches:
            await processor.consume(batch)

    asyncio.run(feed())


def filtered(telemetry: ServiceTelemetry, items: str, processor: str = "filter") -> float:
    value = telemetry.registry.get_sample_value(
        f"otelcol_processor_filter_{items}_filtered_total", {"filter": processor}
    )
    return value or 0.0


# -- config ----------------------------------------------------------------------


def test_upstream_testdata_configs_load() -> None:
    ottl, problems = load_config(FilterConfig, TESTDATA / "config_ottl.yaml")
    assert problems == []
    assert ottl.mode == "ignore"
    assert ottl.logs.log_record == ['attributes["test"] == "pass"']
    assert ottl.metrics.metric == ['name == "pass"']
    assert ottl.traces.spanevent == ['attributes["test"] == "pass"']
    multiline, problems = load_config(FilterConfig, TESTDATA / "config_multiline.yaml")
    assert problems == [] and multiline.mode == "propagate"  # upstream's default
    assert len(multiline.traces.span) == 2
    upper, problems = load_config(FilterConfig, TESTDATA / "config_error_mode_upper.yaml")
    assert problems == [] and upper.mode == "silent"  # case-insensitive, as upstream


def test_config_problems_name_the_key_and_the_condition() -> None:
    def problems(name: str) -> list[str]:
        return load_config(FilterConfig, TESTDATA / name)[1]

    assert problems("config_error_mode_bad.yaml") == ["error_mode: unknown error mode fail"]
    syntax = problems("config_bad_syntax.yaml")
    assert [line.split(": ", 1)[0] for line in syntax] == [  # upstream's Validate order
        "traces::span[0]",
        "traces::spanevent[0]",
        "metrics::metric[0]",
        "metrics::datapoint[0]",
        "logs::log_record[0]",
    ]
    assert syntax[-1] == (
        'logs::log_record[0]: unable to parse OTTL condition "attributes[test] == \\"pass\\"": '
        'condition has invalid syntax: 1:12: unexpected token "test" (expected (<string> | '
        '<int>) "]")'
    )
    assert problems("config_unsupported.yaml") == [
        'logs::log_record[1]: unable to parse OTTL condition "IsMatch(ConvertCase(body, '
        '\\"lower\\"), \\"error\\")": error while parsing arguments for call to "IsMatch": '
        'invalid argument at position 0: function "ConvertCase" is not supported by Sluice '
        "(supported: IsMatch, IsString, IsInt, IsDouble, IsBool, IsMap, Len, HasAttrOnDatapoint, "
        "HasAttrKeyOnDatapoint, IsRootSpan)",
        'logs::log_record[2]: unable to parse OTTL condition "set(attributes[\\"x\\"], \\"y\\")": '
        'condition has invalid syntax: 1:26: unexpected token "<EOF>" (expected <opcomparison> '
        "Value)",
        'logs::log_record[3]: unable to parse OTTL condition "instrumentation_scope.nme == '
        '\\"x\\"": '
        + PATH_ERROR.format(segment="nme", path="instrumentation_scope.nme", context="scope"),
        'logs::log_record[4]: unable to parse OTTL condition "Len(body) > 1 + 1": math '
        "expressions are not supported by Sluice's OTTL subset",
    ]
    assert problems("config_logs_mix.yaml") == [
        "cannot use ottl conditions and include/exclude for logs at the same time",
    ]
    assert problems("config_spans_legacy.yaml") == []  # see test_filter_legacy.py
    assert problems("config_unknown_key.yaml") == ["logs: 'logs' has invalid keys: log_records"]
    assert problems("config_not_strings.yaml") == [
        "logs::log_record: 'logs.log_record': source data must be an array or slice, got map"
    ]


def _problems(raw: dict[str, Any]) -> list[str]:
    problems = Problems()
    decoded = decode(FilterConfig, raw, "", problems)
    return problems.lines + [f"{key}: {message}" for key, message in decoded.validate()]


def test_validation_stops_where_upstreams_does() -> None:
    """An error_mode upstream cannot decode stops its config there, and its
    Validate returns the first mix of OTTL conditions and include/exclude
    (spans, metrics, then logs) alone, before it parses any condition."""
    bad_condition = {"log_record": ["nope("]}
    assert _problems({"error_mode": "fail", "logs": bad_condition}) == [
        "error_mode: unknown error mode fail"
    ]
    legacy = {"match_type": "strict", "bodies": ["x"]}
    spans = {"match_type": "strict", "services": ["x"]}
    metrics = {"match_type": "strict", "metric_names": ["x"]}
    assert _problems(
        {
            "logs": {"log_record": ["nope("], "include": legacy},
            "metrics": {"metric": ["nope("], "exclude": metrics},
            "traces": {"span": ["nope("]},
            "spans": {"include": spans},
        }
    ) == [": cannot use ottl conditions and include/exclude for spans at the same time"]
    assert _problems(
        {
            "logs": {"log_record": ["nope("], "include": legacy},
            "metrics": {"metric": ['name == "x"'], "exclude": metrics},
        }
    ) == [": cannot use ottl conditions and include/exclude for metrics at the same time"]
    assert _problems({"logs": {"log_record": ["nope("], "exclude": legacy}}) == [
        ": cannot use ottl conditions and include/exclude for logs at the same time"
    ]


def test_a_function_of_another_context_is_upstreams_undefined_function() -> None:
    """The filter processor gives each context its own function set
    (``StandardMetricFuncs`` alone has the data point functions,
    ``StandardSpanFuncs`` alone ``IsRootSpan``): elsewhere the parser's
    error is its plain ``undefined function``."""
    assert _problems(
        {
            "traces": {"spanevent": ["IsRootSpan()"]},
            "metrics": {"datapoint": ['HasAttrOnDatapoint("a", "b")']},
        }
    ) == [
        'traces::spanevent[0]: unable to parse OTTL condition "IsRootSpan()": undefined '
        'function "IsRootSpan"',
        'metrics::datapoint[0]: unable to parse OTTL condition "HasAttrOnDatapoint(\\"a\\", '
        '\\"b\\")": undefined function "HasAttrOnDatapoint"',
    ]


def test_an_empty_condition_list_is_given_as_upstream_reads_it() -> None:
    """Upstream tells a list written empty (``[]``) from one not written (its
    Validate and processors test ``!= nil``): an empty list cannot sit with
    include/exclude either."""
    legacy = {"match_type": "strict", "bodies": ["x"]}
    assert _problems({"logs": {"log_record": [], "include": legacy}}) == [
        ": cannot use ottl conditions and include/exclude for logs at the same time"
    ]
    spans = {"match_type": "strict", "services": ["x"]}
    assert _problems({"traces": {"spanevent": []}, "spans": {"exclude": spans}}) == [
        ": cannot use ottl conditions and include/exclude for spans at the same time"
    ]
    assert _problems({"logs": {"log_record": None, "include": legacy}}) == []


def test_a_legacy_section_written_null_is_left_unset() -> None:
    """Upstream's include, exclude and severity_number are pointers, and
    mapstructure leaves a field as it is for a null input: written empty
    (``include:``) they stay unset, so they can sit with OTTL conditions."""
    logs = {"log_record": ['body == "x"'], "include": None, "exclude": None}
    assert _problems({"logs": logs}) == []
    spans = {"include": None, "exclude": None}
    assert _problems({"traces": {"span": ['name == "x"']}, "spans": spans}) == []
    decoded = decode(
        FilterConfig,
        {"logs": {"include": {"match_type": "strict", "severity_number": None}}},
        "",
        Problems(),
    )
    assert decoded.logs.include is not None
    assert decoded.logs.include.severity_number is None


def test_factory_describes_the_component() -> None:
    assert FACTORY.component_type == "filter"
    assert FACTORY.module == (
        "github.com/open-telemetry/opentelemetry-collector-contrib/processor/filterprocessor"
    )
    assert FACTORY.stability == {"logs": "alpha", "metrics": "alpha", "traces": "alpha"}
    assert FACTORY.needs_native
    assert FACTORY.default_config().mode == "propagate"


def _readme_processors() -> dict[str, Any]:
    """Every processor of the README's examples, each under its own id."""
    processors: dict[str, Any] = {}
    for path in sorted((TESTDATA / "readme").glob("*.yaml")):
        if path.stem == "troubleshooting":
            continue
        document = yaml.safe_load(path.read_text())
        for name, settings_ in document.get("processors", document).items():
            processors[f"filter/{path.stem}_{name.replace('/', '_')}"] = settings_
    return processors


def test_every_readme_example_validates(tmp_path: Path) -> None:
    processors = _readme_processors()
    assert len(processors) == 8
    collector = {
        "receivers": {"otlp": {"protocols": {"http": {"endpoint": "127.0.0.1:4318"}}}},
        "processors": processors,
        "exporters": {"debug": {}},
        "service": {
            "pipelines": {
                signal: {
                    "receivers": ["otlp"],
                    "processors": list(processors),
                    "exporters": ["debug"],
                }
                for signal in ("logs", "metrics", "traces")
            }
        },
    }
    path = tmp_path / "readme.yaml"
    path.write_text(yaml.safe_dump(collector))
    result = run_cli("validate", "--config", str(path))
    assert (result.returncode, result.stdout, result.stderr) == (0, "config is valid\n", "")
    # The troubleshooting example is a whole config: only its filelog receiver
    # (not a Sluice component) stops it.
    example = TESTDATA / "readme" / "troubleshooting.yaml"
    result = run_cli("validate", "--config", str(example))
    assert result.returncode == 1
    *problems, summary = result.stderr.splitlines()
    assert summary.endswith("the config does not load (1 problem(s))")
    assert 'receivers::filelog: unknown type: "filelog"' in problems[0]


# -- logs ------------------------------------------------------------------------


def make(conditions: dict[str, Any], signal: Signal, telemetry: ServiceTelemetry | None = None, sink: Sink | None = None, name: str = "filter") -> tuple[Any, Sink]:  # fmt: skip
    sink = sink or Sink()
    processor = FACTORY.create(
        settings(name, telemetry=telemetry), config(**conditions), signal, sink
    )
    return processor, sink


def test_logs_are_dropped_pruned_counted_and_kept_records_leave_unchanged() -> None:
    telemetry = ServiceTelemetry()
    processor, sink = make(
        {
            "logs": {
                "log_record": [
                    'IsMatch(body, ".*password.*")',
                    'severity_text == "WARN" and IsMatch(body, "^slow")',
                    'resource.attributes["service.name"] == "healthcheck"',
                ]
            }
        },
        Signal.LOG,
        telemetry,
    )
    batch = logs(("WARN", "password=hunter2"), ("ERROR", "disk full"), ("WARN", "slow"))
    records = [r for rl in batch.resource_logs for sl in rl.scope_logs for r in sl.log_records]
    health = logs(("ERROR", "ok"), service="healthcheck", resources=2)
    run(processor, batch, health, logs(("WARN", "kept")))

    first, last = sink.received
    assert log_bodies(first) == ["disk full"]
    kept = [r for rl in first.resource_logs for sl in rl.scope_logs for r in sl.log_records]
    assert kept == records[1:2]  # the same wire bytes
    assert log_bodies(last) == ["kept"]  # the health request left nothing: not passed on
    assert filtered(telemetry, "logs") == 4


def test_records_with_every_record_dropped_prune_scopes_and_resources() -> None:
    processor, sink = make({"logs": {"log_record": ['severity_text == "DEBUG"']}}, Signal.LOG)
    batch = logs(("DEBUG", "a"), ("DEBUG", "b"), resources=2)
    keep = logs(("INFO", "c"))
    batch.resource_logs.extend(keep.resource_logs)
    run(processor, batch)
    (received,) = sink.received
    assert len(received.resource_logs) == 1
    assert log_bodies(received) == ["c"]


def test_a_signal_without_conditions_passes_untouched() -> None:
    processor, sink = make({"traces": {"span": ["true"]}}, Signal.LOG)
    batch = logs(("DEBUG", "a"))
    run(processor, batch)
    assert sink.received == [batch]


def test_a_filtered_counter_appears_with_the_first_batch_it_filters() -> None:
    """Upstream's processors add the dropped count (0 too) once per batch
    they filter, and its OpenTelemetry counters have no series before that;
    a signal without conditions records nothing."""
    telemetry = ServiceTelemetry()
    shared: dict[str, Any] = {}
    filter_config = config(logs={"log_record": ['severity_text == "DEBUG"']})
    log_processor = FACTORY.create(
        settings("filter", shared, telemetry), filter_config, Signal.LOG, Sink()
    )
    trace_sink = Sink()
    trace_processor = FACTORY.create(
        settings("filter", shared, telemetry, "traces"), filter_config, Signal.TRACE, trace_sink
    )
    sample = telemetry.registry.get_sample_value
    logs_filtered = "otelcol_processor_filter_logs_filtered_total"
    spans_filtered = "otelcol_processor_filter_spans_filtered_total"
    assert sample(logs_filtered, {"filter": "filter"}) is None
    run(log_processor, logs(("INFO", "kept")))
    assert sample(logs_filtered, {"filter": "filter"}) == 0.0
    run(log_processor, logs(("DEBUG", "dropped")))
    assert sample(logs_filtered, {"filter": "filter"}) == 1.0
    run(trace_processor, ExportTraceServiceRequest())
    assert len(trace_sink.received) == 1
    assert sample(spans_filtered, {"filter": "filter"}) is None


def test_an_empty_condition_list_still_walks_and_prunes_the_batch() -> None:
    """As upstream's processor with an empty condition list: nothing is
    dropped, but empty scopes and resources are removed and the
    (zero) count recorded."""
    telemetry = ServiceTelemetry()
    processor, sink = make({"logs": {"log_record": []}}, Signal.LOG, telemetry)
    batch = logs(("INFO", "kept"))
    batch.resource_logs[0].scope_logs.add()  # no records
    batch.resource_logs.add()  # no scopes
    run(processor, batch)
    (received,) = sink.received
    assert len(received.resource_logs) == 1
    assert len(received.resource_logs[0].scope_logs) == 1
    assert log_bodies(received) == ["kept"]
    assert (
        telemetry.registry.get_sample_value(
            "otelcol_processor_filter_logs_filtered_total", {"filter": "filter"}
        )
        == 0.0
    )


# -- metrics ---------------------------------------------------------------------


def metrics_batch() -> ExportMetricsServiceRequest:
    request = ExportMetricsServiceRequest()
    resource = request.resource_metrics.add()
    add_attributes(resource.resource.attributes, [("service.name", "checkout")])
    scope = resource.scope_metrics.add()
    requests = scope.metrics.add(name="http.requests")
    for method, value in (("GET", 1), ("POST", 2), ("GET", 3)):
        add_attributes(requests.sum.data_points.add(as_int=value).attributes, [("method", method)])
    phase = scope.metrics.add(name="k8s.pod.phase")
    phase.gauge.data_points.add(as_int=4)
    histogram = scope.metrics.add(name="latency")
    histogram.histogram.data_points.add(count=2)
    histogram.histogram.data_points.add(count=3)
    other = request.resource_metrics.add().scope_metrics.add()
    other.metrics.add(name="go.goroutines").gauge.data_points.add(as_int=9)
    return request


def metric_names(request: ExportMetricsServiceRequest) -> list[tuple[str, int]]:
    return [
        (m.name, pdata.metric_points(m))
        for rm in request.resource_metrics
        for sm in rm.scope_metrics
        for m in sm.metrics
    ]


def test_metrics_and_data_points_are_dropped_and_emptied_metrics_removed() -> None:
    telemetry = ServiceTelemetry()
    processor, sink = make(
        {
            "metrics": {
                "metric": ["type == METRIC_DATA_TYPE_HISTOGRAM", 'IsMatch(name, "^go\\\\.")'],
                "datapoint": [
                    'attributes["method"] == "POST"',
                    'metric.name == "k8s.pod.phase" and value_int == 4',
                ],
            }
        },
        Signal.METRIC,
        telemetry,
    )
    run(processor, metrics_batch())
    (received,) = sink.received
    assert metric_names(received) == [("http.requests", 2)]
    assert len(received.resource_metrics) == 1  # the go.* resource emptied and pruned
    assert filtered(telemetry, "datapoints") == 5  # 2 histogram + 1 POST + 1 phase + 1 go


def test_metric_conditions_see_the_data_points() -> None:
    processor, sink = make(
        {"metrics": {"metric": ['HasAttrOnDatapoint("method", "GET")']}}, Signal.METRIC
    )
    run(processor, metrics_batch())
    (received,) = sink.received
    assert [name for name, _ in metric_names(received)] == [
        "k8s.pod.phase",
        "latency",
        "go.goroutines",
    ]


# -- traces ----------------------------------------------------------------------


def traces_batch() -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    scope = request.resource_spans.add().scope_spans.add()
    for name, kind, events in (
        ("GET /healthz", 2, ["ping"]),
        ("GET /cart", 2, ["grpc.call", "cache.miss"]),
        ("SELECT", 3, ["grpc.retry"]),
    ):
        span = scope.spans.add(name=name, kind=kind)
        for event in events:
            span.events.add(name=event)
    return request


def test_spans_and_span_events_are_dropped_and_spans_keep_when_events_go() -> None:
    telemetry = ServiceTelemetry()
    processor, sink = make(
        {
            "traces": {
                "span": ['name == "GET /healthz"'],
                "spanevent": [
                    'IsMatch(name, ".*grpc.*")',
                    'span.kind == SPAN_KIND_SERVER and name == "ping"',
                ],
            }
        },
        Signal.TRACE,
        telemetry,
    )
    run(processor, traces_batch())
    (received,) = sink.received
    spans = received.resource_spans[0].scope_spans[0].spans
    assert [(s.name, [e.name for e in s.events]) for s in spans] == [
        ("GET /cart", ["cache.miss"]),
        ("SELECT", []),  # every event dropped: the span stays
    ]
    assert filtered(telemetry, "spans") == 1


# -- error modes -----------------------------------------------------------------

FAILING = 'Len(attributes["missing"]) > 0'


def test_propagate_refuses_the_batch_naming_the_condition(caplog: pytest.LogCaptureFixture) -> None:
    processor, sink = make({"logs": {"log_record": [FAILING]}}, Signal.LOG)
    with pytest.raises(ConsumerError) as refused:
        run(processor, logs(("INFO", "a")))
    assert not refused.value.retryable
    assert str(refused.value).startswith(f"failed to eval condition: {FAILING}, target arg must be")
    assert sink.received == []
    assert "failed processing logs" in caplog.text


def test_ignore_keeps_the_item_and_logs_once_per_condition_and_batch(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    telemetry = ServiceTelemetry()
    processor, sink = make(
        {"error_mode": "ignore", "logs": {"log_record": [FAILING, 'body == "drop me"']}},
        Signal.LOG,
        telemetry,
    )
    run(processor, logs(("INFO", "a"), ("INFO", "drop me"), ("INFO", "b")))
    (received,) = sink.received
    assert log_bodies(received) == ["a", "b"]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert f"failed to eval condition '{FAILING}' on 3 item(s)" in warnings[0]
    assert filtered(telemetry, "logs") == 1


def test_silent_keeps_the_item_and_logs_nothing(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    processor, sink = make({"error_mode": "silent", "logs": {"log_record": [FAILING]}}, Signal.LOG)
    run(processor, logs(("INFO", "a")))
    assert log_bodies(sink.received[0]) == ["a"]
    assert "failed" not in caplog.text


def test_an_error_before_a_true_pattern_condition_surfaces_after_one_does_not() -> None:
    """Pattern-only conditions are answered from one scan, yet the order of
    evaluation is upstream's: the first condition that is true or fails wins."""
    failing_first, _ = make({"logs": {"log_record": [FAILING, 'IsMatch(body, "a")']}}, Signal.LOG)
    with pytest.raises(ConsumerError):
        run(failing_first, logs(("INFO", "a")))
    matching_first, sink = make(
        {"logs": {"log_record": ['IsMatch(body, "a")', FAILING]}}, Signal.LOG
    )
    run(matching_first, logs(("INFO", "a"), ("INFO", "ab")))  # dropped before FAILING runs
    assert sink.received == []  # everything dropped, nothing refused
    with pytest.raises(ConsumerError):
        run(matching_first, logs(("INFO", "x")))  # reaches FAILING


def test_a_malformed_record_is_an_error_not_a_silent_drop() -> None:
    processor, sink = make(
        {"error_mode": "ignore", "logs": {"log_record": ['body == "x"']}}, Signal.LOG
    )
    batch = logs(("INFO", "x"), ("INFO", "y"))
    batch.resource_logs[0].scope_logs[0].log_records.append(b"\xff\xff\xff")
    run(processor, batch)
    (received,) = sink.received
    records = received.resource_logs[0].scope_logs[0].log_records
    assert list(records)[-1] == b"\xff\xff\xff"  # kept as it came
    assert len(records) == 2


# -- cost ------------------------------------------------------------------------


def test_a_thousand_pattern_conditions_scan_each_body_once(monkeypatch: pytest.MonkeyPatch) -> None:
    scanned: list[Any] = []
    compute = FieldScanner.compute

    def counting(self: FieldScanner, value: object) -> tuple[int, ...]:
        scanned.append(value)
        return compute(self, value)

    monkeypatch.setattr(FieldScanner, "compute", counting)
    conditions = [f'IsMatch(body, "^message {i}$")' for i in range(1000)]
    processor, sink = make({"logs": {"log_record": conditions}}, Signal.LOG)
    run(processor, logs(*[("INFO", f"message {i}") for i in range(0, 2000, 7)]))
    (received,) = sink.received
    assert log_bodies(received) == [f"message {i}" for i in range(1001, 2000, 7)]
    assert scanned == [f"message {i}".encode() for i in range(0, 2000, 7)]  # once each
