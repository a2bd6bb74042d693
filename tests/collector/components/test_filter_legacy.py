"""The ``filter`` processor's legacy include/exclude (``logs.include`` /
``logs.exclude``, ``spans.include`` / ``spans.exclude``): upstream's
testdata and README examples load, each of its processors keeps exactly
what upstream's does on one batch, errors use upstream's wording, and
records are read only as far as the properties need."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest
import yaml
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from sluice.collector import pdata
from sluice.collector.component import ConsumerError
from sluice.collector.components.processors.filter import FACTORY
from sluice.collector.components.processors.filter.config import FilterConfig
from sluice.collector.confmap.decode import Problems, decode
from sluice.collector.telemetry import ServiceTelemetry
from sluice.policy import Signal
from sluice.telemetry.pdata_text import value_as_string
from tests.collector.components.pipeline_data import Sink, settings
from tests.collector.helpers import run_cli
from tests.ottl.items import add_attributes, set_any

TESTDATA = Path(__file__).parent / "testdata" / "filter" / "legacy"


def processors(name: str) -> dict[str, Any]:
    """The processors of a testdata file (a whole collector config or just
    processors)."""
    document = yaml.safe_load((TESTDATA / name).read_text())
    found: dict[str, Any] = document.get("processors", document)
    return found


def problems_of(raw: Any) -> list[str]:
    """Load problems, then those of creating it for logs and for traces."""
    problems = Problems()
    config = decode(FilterConfig, raw, "", problems)
    for key, message in config.validate():
        problems.add(key, message)
    for signal in (Signal.LOG, Signal.TRACE):
        for key, message in FACTORY.signal_problems(config, signal):
            problems.add(key, message)
    return problems.lines


def metric_problems(raw: Any) -> list[str]:
    """Load problems, then those of creating it for metrics."""
    problems = Problems()
    config = decode(FilterConfig, raw, "", problems)
    for key, message in config.validate():
        problems.add(key, message)
    for key, message in FACTORY.signal_problems(config, Signal.METRIC):
        problems.add(key, message)
    return problems.lines


def create(raw: Any, signal: Signal, telemetry: ServiceTelemetry | None = None) -> tuple[Any, Sink]:
    problems = Problems()
    config = decode(FilterConfig, raw, "", problems)
    assert problems.lines == [] and list(config.validate()) == []
    sink = Sink()
    return FACTORY.create(settings("filter", telemetry=telemetry), config, signal, sink), sink


def run(processor: Any, *batches: Any) -> None:
    async def feed() -> None:
        for batch in batches:
            await processor.consume(batch)

    asyncio.run(feed())


# -- one batch for every upstream testdata processor ------------------------------

Record = tuple[Any, str, int, dict[str, Any]]  # body, severity text and number, attributes

WORLD: list[tuple[dict[str, Any], list[Record]]] = [
    (
        {"host.name": "host1", "should_include": "true"},
        [
            ("IMPORTANT: disk", "INFO", 9, {"should_include": "true", "host.name": "host1"}),
            ("This is an important event", "DEBUG", 5, {"should_exclude": "true"}),
            (
                "MINOR: cache",
                "INFO2",
                10,
                {"should_include": "probably_true", "should_exclude": "false"},
            ),
            ("This event is not important", "ERROR", 17, {}),
            (5, "", 0, {"host.name": "banned_host_1"}),
        ],
    ),
    (
        {"host.name": "banned_host_7", "should_include": "true", "should_exclude": "true"},
        [
            ("IMPORTANT: cpu", "WARN", 13, {"should_include": "true"}),
            ("DEBUG2 thing", "DEBUG2", 6, {}),
        ],
    ),
    (
        {
            "host.name": "mycustomhost2",
            "should_include": "probably_true",
            "should_exclude": "false",
        },
        [
            ("fatal", "FATAL", 21, {"should_include": "true", "should_exclude": "true"}),
            ("MINOR: x", "INFO", 9, {"host.name": "mycustomhost2"}),
        ],
    ),
]
A = [
    "IMPORTANT: disk",
    "This is an important event",
    "MINOR: cache",
    "This event is not important",
    "5",
]
B = ["IMPORTANT: cpu", "DEBUG2 thing"]
C = ["fatal", "MINOR: x"]


def world(*extra: bytes) -> Any:
    """WORLD as a lean request; `extra` raw records appended to the first scope."""
    request = ExportLogsServiceRequest()
    for resource_attributes, records in WORLD:
        resource = request.resource_logs.add()
        add_attributes(resource.resource.attributes, list(resource_attributes.items()))
        scope = resource.scope_logs.add()
        scope.scope.name = "app"
        for body, text, number, attributes in records:
            record = scope.log_records.add(severity_text=text, severity_number=number)  # type: ignore[arg-type]
            set_any(record.body, body)
            add_attributes(record.attributes, list(attributes.items()))
    lean = pdata.lean_logs(request)
    lean.resource_logs[0].scope_logs[0].log_records.extend(extra)
    return lean


def bodies(requests: list[Any]) -> list[str]:
    return [
        value_as_string(record.body)
        for request in requests
        for rl in pdata.full_logs(request).resource_logs
        for sl in rl.scope_logs
        for record in sl.log_records
    ]


def kept(raw: Any) -> list[str]:
    processor, sink = create(raw, Signal.LOG)
    run(processor, world())
    return bodies(sink.received)


EVERYTHING = A + B + C
EXPECTED = {
    "config_logs_strict.yaml": {
        "filter/empty": EVERYTHING,
        "filter/include": A + B,
        "filter/exclude": A + C,
        "filter/includeexclude": A,
    },
    "config_logs_regexp.yaml": {
        "filter/empty": EVERYTHING,
        "filter/include": A + C,
        "filter/exclude": A + C,
        "filter/includeexclude": A + B,  # unanchored: "false" matches (probably_false|false)
    },
    "config_logs_severity_strict.yaml": {
        "filter/include": [A[0], C[1]],
        "filter/exclude": [A[0], *A[2:], B[0], *C],
        "filter/includeexclude": [A[0], C[1]],
    },
    "config_logs_severity_regexp.yaml": {
        "filter/include": [A[0], A[2], C[1]],  # unanchored: INFO and INFO2
        "filter/exclude": [A[0], *A[2:], B[0], *C],
        "filter/includeexclude": [A[0], A[2], C[1]],
    },
    "config_logs_body_strict.yaml": {
        "filter/include": [A[1]],
        "filter/exclude": [*A[:3], A[4], *B, *C],
        "filter/includeexclude": [A[1]],
    },
    "config_logs_body_regexp.yaml": {
        "filter/include": [A[0], B[0]],
        "filter/exclude": [A[0], A[1], A[3], A[4], *B, C[0]],
        "filter/includeexclude": [A[0], B[0]],
    },
    "config_logs_min_severity.yaml": {
        "filter/include": [A[0], *A[2:], B[0], *C],  # 9 and above, and undefined
        "filter/exclude": [*A[:3], A[4], *B, C[1]],  # ERROR and above; undefined kept
        "filter/includeexclude": [A[0], A[2], A[4], B[0], C[1]],
    },
    "config_logs_record_attributes_strict.yaml": {
        "filter/empty": EVERYTHING,
        "filter/include": [A[0], B[0], C[0]],
        "filter/exclude": [A[0], *A[2:], *B, C[1]],
        "filter/includeexclude": [A[0], B[0]],
    },
    "config_logs_record_attributes_regexp.yaml": {
        "filter/empty": EVERYTHING,
        "filter/include": [A[0], C[1]],
        "filter/exclude": [*A[:4], *B, *C],
        "filter/includeexclude": [A[0], B[0], C[0]],
    },
}


def test_upstream_testdata_configs_load_and_are_valid_for_logs() -> None:
    for name, expected in EXPECTED.items():
        found = processors(name)
        assert sorted(found) == sorted(expected), name
        for raw in found.values():
            assert problems_of(raw) == []


@pytest.mark.parametrize(
    ("name", "processor", "expected"),
    [(name, p, bodies) for name, cases in EXPECTED.items() for p, bodies in cases.items()],
)
def test_each_upstream_testdata_processor_keeps_what_upstreams_does(
    name: str, processor: str, expected: list[str]
) -> None:
    assert kept(processors(name)[processor]) == expected


def test_severity_min_is_a_name_or_number_in_any_case() -> None:
    def include(least: Any) -> list[str]:
        return kept({"logs": {"include": {"severity_number": {"min": least}}}})

    warn_and_above = [A[3], B[0], C[0]]
    assert include("WARN") == include("warn") == include("13") == warn_and_above
    # Upstream's min is text (a logSeverity string): an unquoted number is refused.
    assert problems_of({"logs": {"include": {"severity_number": {"min": 13}}}}) == [
        "logs::include::severity_number::min: 'logs.include.severity_number.min' expected type "
        "'filterconfig.logSeverity', got unconvertible type 'int', value: '13'"
    ]
    assert include("info2") == [A[2], A[3], B[0], C[0]]
    assert include("") == [x for x in EVERYTHING if x != A[4]]  # every defined severity


def test_record_attribute_values_are_matched_by_type_and_text() -> None:
    """strict compares typed values (1 is not "1"); regexp matches the value's
    text (an int's digits)."""

    def matching(match_type: str, value: Any) -> list[str]:
        processor, sink = create(
            {
                "logs": {
                    "include": {
                        "match_type": match_type,
                        "record_attributes": [{"key": "n", "value": value}],
                    }
                }
            },
            Signal.LOG,
        )
        request = ExportLogsServiceRequest()
        scope = request.resource_logs.add().scope_logs.add()
        for body, n in (("int", 17), ("string", "17"), ("none", None)):
            record = scope.log_records.add()
            record.body.string_value = body
            if n is not None:
                add_attributes(record.attributes, [("n", n)])
        run(processor, pdata.lean_logs(request))
        return bodies(sink.received)

    assert matching("strict", 17) == ["int"]
    assert matching("strict", "17") == ["string"]
    assert matching("regexp", "^1") == ["int", "string"]
    assert matching("regexp", "^2") == []


# -- config problems -------------------------------------------------------------

UPSTREAM_ATTRIBUTES = (
    'at least one of "attributes", "libraries",  or "resources" field must be specified'
)
INVALID = {
    "filter/no_match_type": [
        "logs::include: failed to build skip matcher: error creating log record body filters: "
        "unrecognized match_type: '', valid types are: [regexp strict]"
    ],
    "filter/bad_regexp": [
        "logs::exclude: failed to build skip matcher: error creating log record body filters: "
        "error parsing regexp: missing closing ): `(`"
    ],
    "filter/regexp_int_value": [
        "logs::include: failed to build skip matcher: error creating attribute filters: "
        'match_type=regexp for "retries" only supports Str, but found Int'
    ],
    "filter/empty_key": [
        "logs::include: failed to build skip matcher: error creating resource filters: "
        "can't have empty key in the list of attributes"
    ],
    "filter/unknown_key": ["logs::include: 'logs.include' has invalid keys: severity_text"],
    "filter/mix": ["cannot use ottl conditions and include/exclude for logs at the same time"],
    "filter/spans_mix": [
        "cannot use ottl conditions and include/exclude for spans at the same time"
    ],
    "filter/spans_log_property": [
        "spans::include: log_bodies should not be specified for trace spans"
    ],
    "filter/metrics_mix": [
        "cannot use ottl conditions and include/exclude for metrics at the same time"
    ],
}


@pytest.mark.parametrize("processor", sorted(INVALID))
def test_invalid_legacy_configs_have_upstreams_wording(processor: str) -> None:
    assert problems_of(processors("config_invalid.yaml")[processor]) == INVALID[processor]


def test_upstreams_invalid_testdata_is_refused() -> None:
    (severity,) = processors("config_logs_invalid_severity.yaml").values()
    assert problems_of(severity) == [
        "logs::include::severity_number::min: 'INVALID_SEVERITY' is not a valid severity: "
        "not a valid severity"
    ]
    (spans,) = processors("config_traces_invalid.yaml").values()
    assert problems_of(spans) == [f"spans::exclude: {UPSTREAM_ATTRIBUTES}"]
    # A list written as one string is split on commas (as upstream's decoder
    # does), so what fails is the missing match_type: include's, as upstream
    # builds include first and stops at its error.
    (traces,) = processors("config_traces.yaml").values()
    assert problems_of(traces) == [
        "spans::include: error creating attribute filters: unrecognized match_type: '', "
        "valid types are: [regexp strict]"
    ]


def test_upstreams_readme_examples_validate_in_their_pipelines(tmp_path: Path) -> None:
    """The log examples load in a logs pipeline, ``filter/1`` (legacy metric
    matching) in a metrics pipeline. Upstream's own span example has
    ``match_type: regex``, which upstream refuses too."""
    found = processors("readme.yaml")
    assert metric_problems(found["filter/1"]) == []
    found.pop("filter/1")
    logs = [p for p in found if p != "filter"]
    assert len(logs) == 6
    collector = {
        "receivers": {"otlp": {"protocols": {"http": {"endpoint": "127.0.0.1:0"}}}},
        "processors": found,
        "exporters": {"debug": {}},
        "service": {
            "pipelines": {
                signal: {"receivers": ["otlp"], "processors": ids, "exporters": ["debug"]}
                for signal, ids in (("logs", logs), ("traces", ["filter"]))
            }
        },
    }
    path = tmp_path / "readme.yaml"
    path.write_text(yaml.safe_dump(collector))
    result = run_cli("validate", "--config", str(path))
    assert result.returncode == 1
    assert result.stderr.splitlines()[:-1] == [
        f"{path}: processors::filter::spans::exclude: error creating library name filters: "
        "unrecognized match_type: 'regex', valid types are: [regexp strict] (creating it for "
        'pipeline "traces")',
    ]


# -- behaviour -------------------------------------------------------------------


def test_dropped_records_are_counted_containers_pruned_kept_bytes_unchanged() -> None:
    telemetry = ServiceTelemetry()
    processor, sink = create(
        processors("config_logs_strict.yaml")["filter/include"], Signal.LOG, telemetry
    )
    batch = world()
    before = [list(sl.log_records) for rl in batch.resource_logs for sl in rl.scope_logs]
    run(processor, batch)
    (received,) = sink.received
    assert [
        list(sl.log_records) for rl in received.resource_logs for sl in rl.scope_logs
    ] == before[:2]
    assert len(received.resource_logs) == 2  # the third resource emptied: pruned
    assert telemetry.registry.get_sample_value(
        "otelcol_processor_filter_logs_filtered_total", {"filter": "filter"}
    ) == len(C)


def test_a_batch_left_empty_is_not_passed_on() -> None:
    processor, sink = create(
        {"logs": {"include": {"match_type": "strict", "bodies": ["none"]}}}, Signal.LOG
    )
    run(processor, world())
    assert sink.received == []


BROKEN = b"\xff\xff\xff"


def test_records_are_not_read_when_the_resource_decides() -> None:
    """A resource-only match decides whole scopes: a record that cannot be
    read is dropped or kept with its scope, without an error."""
    include = processors("config_logs_strict.yaml")["filter/includeexclude"]
    processor, sink = create(include, Signal.LOG)
    run(processor, world(BROKEN))  # the first resource: kept wholesale
    (received,) = sink.received
    assert list(received.resource_logs[0].scope_logs[0].log_records)[-1] == BROKEN
    exclude = {
        "logs": {
            "exclude": {
                "match_type": "strict",
                "resource_attributes": [{"key": "host.name", "value": "host1"}],
            }
        }
    }
    processor, sink = create(exclude, Signal.LOG)
    run(processor, world(BROKEN))  # the first resource: dropped wholesale
    assert bodies(sink.received) == B + C


def test_an_unreadable_record_fails_as_a_condition_would(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    bodies_include = {"match_type": "regexp", "bodies": ["^IMPORTANT"]}
    processor, sink = create({"logs": {"include": bodies_include}}, Signal.LOG)
    with pytest.raises(ConsumerError) as refused:
        run(processor, world(BROKEN))
    assert not refused.value.retryable
    assert str(refused.value).startswith("failed to eval condition: logs.include/exclude, ")
    assert sink.received == []
    processor, sink = create(
        {"error_mode": "ignore", "logs": {"include": bodies_include}}, Signal.LOG
    )
    run(processor, world(BROKEN))
    (received,) = sink.received
    records = [r for rl in received.resource_logs for sl in rl.scope_logs for r in sl.log_records]
    assert records[1] == BROKEN  # kept, between the two matching records
    assert len(records) == 3
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "'logs.include/exclude' on 1 item(s)" in warnings[0]


def test_legacy_log_matching_leaves_other_signals_untouched() -> None:
    raw = processors("config_logs_strict.yaml")["filter/include"]
    processor, sink = create(raw, Signal.TRACE)
    batch = ExportTraceServiceRequest()
    batch.resource_spans.add().scope_spans.add().spans.add(name="x")
    run(processor, batch)
    assert sink.received == [batch]


# -- spans -----------------------------------------------------------------------


def test_spans_include_exclude_as_the_attributes_processors_selection() -> None:
    telemetry = ServiceTelemetry()
    processor, sink = create(
        {
            "spans": {
                "include": {"match_type": "strict", "services": ["checkout", "cart"]},
                "exclude": {
                    "match_type": "regexp",
                    "span_names": ["^GET /health"],
                    "attributes": [{"key": "synthetic"}],
                },
            }
        },
        Signal.TRACE,
        telemetry,
    )
    request = ExportTraceServiceRequest()
    for service, spans in (
        (
            "checkout",
            [("GET /cart", {}), ("GET /healthz", {"synthetic": True}), ("GET /health", {})],
        ),
        ("billing", [("charge", {})]),
        ("cart", [("GET /healthz", {"synthetic": False}), ("add", {"user": "u1"})]),
    ):
        resource = request.resource_spans.add()
        add_attributes(resource.resource.attributes, [("service.name", service)])
        scope = resource.scope_spans.add()
        for name, attributes in spans:
            add_attributes(scope.spans.add(name=name).attributes, list(attributes.items()))
    run(processor, request)
    (received,) = sink.received
    kept_spans = [
        (rs.resource.attributes[0].value.string_value, s.name)
        for rs in received.resource_spans
        for ss in rs.scope_spans
        for s in ss.spans
    ]
    # Excluded only when the name AND the attribute key match.
    assert kept_spans == [("checkout", "GET /cart"), ("checkout", "GET /health"), ("cart", "add")]
    assert (
        telemetry.registry.get_sample_value(
            "otelcol_processor_filter_spans_filtered_total", {"filter": "filter"}
        )
        == 3
    )


# -- legacy metric matching ------------------------------------------------------

METRIC_NAMES = [
    "full_name_match",
    "not_exact_string_match",
    "prefix/test/match",
    "prefix_test_match",
    "prefixprefix/test/match",
    "test/match/suffix",
    "test_match_suffix",
    "test/match/suffixsuffix",
    "test/contains/match",
    "test_contains_match",
    "random",
    "full/name/match",
    "full_name_match",
    "not_exact_string_match",
]
"""Upstream's metrics_test.go inMetricNames; each metric has two points."""
REGEXP_KEPT = [
    "full_name_match",
    "prefix/test/match",
    "prefix_test_match",
    "prefixprefix/test/match",
    "test/match/suffix",
    "test_match_suffix",
    "test/match/suffixsuffix",
    "test/contains/match",
    "test_contains_match",
    "full/name/match",
    "full_name_match",
]


def metrics_request(*resources: tuple[dict[str, str], list[str]]) -> Any:
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
        ExportMetricsServiceRequest,
    )

    request = ExportMetricsServiceRequest()
    for attributes, names in resources:
        resource = request.resource_metrics.add()
        add_attributes(resource.resource.attributes, list(attributes.items()))
        scope = resource.scope_metrics.add()
        for name in names:
            metric = scope.metrics.add(name=name)
            metric.gauge.data_points.add(as_int=1)
            metric.gauge.data_points.add(as_int=2)
    return request


def kept_names(sink: Sink) -> list[list[str]]:
    return [
        [m.name for sm in rm.scope_metrics for m in sm.metrics]
        for batch in sink.received
        for rm in batch.resource_metrics
    ]


@pytest.mark.parametrize("name", ["config_strict.yaml", "config_regexp.yaml"])
def test_upstreams_legacy_metric_testdata_loads(name: str) -> None:
    for processor, raw in processors(name).items():
        assert metric_problems(raw or {}) == [], processor


@pytest.mark.parametrize(
    ("processor", "kept"),
    [
        ("filter/include", REGEXP_KEPT),
        ("filter/unlimitedcache", REGEXP_KEPT),
        ("filter/exclude", ["not_exact_string_match", "random", "not_exact_string_match"]),
        ("filter/limitedcache", ["not_exact_string_match", "random", "not_exact_string_match"]),
    ],
)
def test_legacy_metric_names_keep_what_upstream_keeps(processor: str, kept: list[str]) -> None:
    """Upstream's metrics_test.go includeFilter / excludeFilter cases."""
    telemetry = ServiceTelemetry()
    filter_, sink = create(processors("config_regexp.yaml")[processor], Signal.METRIC, telemetry)
    run(filter_, metrics_request(({"attr1": "attr1/val1"}, METRIC_NAMES)))
    assert kept_names(sink) == [kept]
    dropped = telemetry.registry.get_sample_value(
        "otelcol_processor_filter_datapoints_filtered_total", {"filter": "filter"}
    )
    assert dropped == 2 * (len(METRIC_NAMES) - len(kept))


def test_legacy_metric_strict_include_then_exclude() -> None:
    filter_, sink = create(processors("config_strict.yaml")["filter/includeexclude"], Signal.METRIC)
    run(filter_, metrics_request(({}, ["hello_world", "hello/world", "other"])))
    assert kept_names(sink) == [["hello/world"]]


def test_legacy_metric_resource_attributes_decide_resources_on_their_own() -> None:
    """A resource lacking include's resource_attributes is dropped whole; one
    holding exclude's too, whatever its metrics' names; an include without
    names keeps every metric of the resources it keeps (upstream's
    includeWithRegexResourceAttributesOnly, excludeWithRegexResourceAttributes)."""
    raw = {
        "metrics": {
            "include": {
                "match_type": "regexp",
                "resource_attributes": [{"key": "attr1", "value": "(attr1/val1|attr1/val2)"}],
            },
            "exclude": {
                "match_type": "strict",
                "metric_names": ["random"],
                "resource_attributes": [{"key": "drop"}],
            },
        }
    }
    telemetry = ServiceTelemetry()
    filter_, sink = create(raw, Signal.METRIC, telemetry)
    run(
        filter_,
        metrics_request(
            ({"attr1": "attr1/val1"}, ["a", "random"]),
            ({"attr1": "attr1/val3"}, ["b"]),
            ({"attr1": "attr1/val2", "drop": "x"}, ["c"]),
            ({"attr1": "attr1/val2"}, ["d"]),
        ),
    )
    assert kept_names(sink) == [["a"], ["d"]]
    dropped = telemetry.registry.get_sample_value(
        "otelcol_processor_filter_datapoints_filtered_total", {"filter": "filter"}
    )
    assert dropped == 2 * 3


def test_an_empty_legacy_metric_include_passes_metrics_untouched() -> None:
    """Upstream's emptyFilterInclude: no names and no resource attributes
    build no matcher, so nothing is filtered (nor counted)."""
    telemetry = ServiceTelemetry()
    filter_, sink = create(
        processors("config_strict.yaml")["filter/empty"], Signal.METRIC, telemetry
    )
    request = metrics_request(({}, ["a", "b"]))
    run(filter_, request)
    assert kept_names(sink) == [["a", "b"]]
    assert (
        telemetry.registry.get_sample_value(
            "otelcol_processor_filter_datapoints_filtered_total", {"filter": "filter"}
        )
        is None
    )


@pytest.mark.parametrize(
    ("properties", "problem"),
    [
        (
            {"include": {"metric_names": ["a"]}},
            "metrics::include: unrecognized match_type: '', valid types are: [regexp strict]",
        ),
        (
            {"exclude": {"match_type": "regexp", "metric_names": ["(a"]}},
            "metrics::exclude: error parsing regexp: missing closing ): `(a`",
        ),
        (
            {
                "include": {"match_type": "strict", "metric_names": ["(a"]},
                "exclude": {"match_type": "regexp", "resource_attributes": [{"key": ""}]},
            },
            "metrics::exclude: can't have empty key in the list of attributes",
        ),
        (
            {"include": {"match_type": "expr", "expressions": ['HasLabel("a")']}},
            "metrics::include: match_type expr (the expr language) is not supported by Sluice's "
            "filter processor; write the expressions as OTTL conditions (metrics.datapoint)",
        ),
    ],
)
def test_legacy_metric_errors_are_upstreams(properties: dict[str, Any], problem: str) -> None:
    assert metric_problems({"metrics": properties}) == [problem]


def test_upstreams_expr_testdata_loads_and_only_expressions_are_refused() -> None:
    """The config loads (upstream's Validate checks no expression); a
    metrics pipeline can use the expr match type without expressions (no
    matcher, as upstream), and refuses expressions, which Sluice does not
    evaluate."""
    found = processors("config_expr.yaml")
    for raw in found.values():
        assert problems_of(raw) == []
    assert metric_problems(found.pop("filter/empty")) == []
    for processor, raw in found.items():
        where = "exclude" if processor == "filter/exclude" else "include"
        assert [line.split(": ", 1)[0] for line in metric_problems(raw)] == [f"metrics::{where}"]
