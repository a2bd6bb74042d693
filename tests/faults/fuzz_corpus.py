"""Seed bodies and the policy set of the decoder fuzzing (``fuzzing.py``).

The seeds hold every field and attribute level the policies read, with values
of every type, so that mutants reach every reader; the policies use every
selector, every condition type, every transform and every sampling mode, and
match the seeds often enough that decisions, sample keys and transforms run.
"""

from __future__ import annotations

import json
from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from sluice.policy import Signal
from sluice.telemetry.wire.agent_payload_pb2 import MetricPayload
from tests.edge.agent_replay import series_payload, sketch_payload


def _log(pid: str, match: list[dict[str, Any]], keep: Any = "all", **rest: Any) -> dict[str, Any]:
    return {"id": pid, "name": pid, "log": {"match": match, "keep": keep, **rest}}


def _metric(pid: str, match: list[dict[str, Any]], keep: bool) -> dict[str, Any]:
    return {"id": pid, "name": pid, "metric": {"match": match, "keep": keep}}


def _trace(pid: str, match: list[dict[str, Any]], **keep: Any) -> dict[str, Any]:
    return {"id": pid, "name": pid, "trace": {"match": match, "keep": keep}}


CARD = r"\b(\d{4})-\d{4}-\d{4}-(\d{4})\b"
POLICIES: dict[str, Any] = {
    "policies": [
        _log("l-drop-debug", [{"log_field": "severity_text", "exact": "DEBUG"}], "none"),
        _log(
            "l-redact-card",
            [{"log_field": "body", "regex": CARD}],
            transform={
                "redact": [
                    {"log_field": "body", "regex": CARD, "replacement": "$1-****-${x}-$2"},
                    {"log_attribute": "user.email"},
                ],
                "remove": [{"log_attribute": "secret"}, {"log_field": "span_id"}],
            },
        ),
        _log(
            "l-rename-add",
            [{"log_attribute": "usr", "exists": True}],
            transform={
                "rename": [{"from_log_attribute": "usr", "to": "user.id", "upsert": True}],
                "add": [
                    {"log_attribute": "team", "value": "payments"},
                    {"log_attribute": ["k8s", "team"], "value": "p", "upsert": True},
                    {"resource_attribute": "edge", "value": "1"},
                    {"scope_attribute": "seen", "value": "y", "upsert": True},
                ],
            },
        ),
        _log(
            "l-sample-trace",
            [{"log_field": "severity_text", "exact": "INFO"}],
            "75%",
            sample_key={"log_field": "trace_id"},
        ),
        _log(
            "l-sample-user",
            [{"log_attribute": "user.id", "starts_with": "u-"}],
            "80%",
            sample_key={"log_attribute": "user.id"},
        ),
        _log(
            "l-sample-typed",
            [{"log_attribute": "http.status_code", "gte": 300}],
            "80%",
            sample_key={"log_attribute": "http.status_code"},
        ),
        _log("l-random", [{"log_field": "body", "contains": "noise"}], "90%"),
        _log("l-rate", [{"log_field": "body", "starts_with": "GET"}], "5/s"),
        _log("l-5xx", [{"log_attribute": "http.status_code", "gt": 499.5}], "none"),
        _log("l-flag", [{"log_attribute": "flag", "equals": True}], "none"),
        _log("l-ratio", [{"log_attribute": "ratio", "lt": {"double_value": 0.2}}], "none"),
        _log("l-bytes", [{"log_attribute": "raw", "equals": {"bytes_value": "AAE="}}], "none"),
        _log("l-hex", [{"log_field": "trace_id", "equals": {"hex_value": "02" * 16}}], "none"),
        _log("l-body-int", [{"log_field": "body", "lte": 5}], "none"),
        _log("l-payload", [{"log_attribute": "debug.payload", "exists": True}], "none"),
        _log(
            "l-noisy",
            [
                {"resource_attribute": "service.name", "exact": "noisy"},
                {"scope_attribute": "lib", "exists": False},
            ],
            "none",
        ),
        _log(
            "l-pod",
            [{"resource_attribute": {"path": ["k8s", "pod"]}, "contains": "batch"}],
        ),
        _log("l-scope", [{"log_field": "scope_schema_url", "ends_with": "/1.0"}]),
        _log("l-resource-url", [{"log_field": "resource_schema_url", "exists": True}]),
        _log("l-event", [{"log_field": "event_name", "exact": "login"}], "none"),
        _log("l-span", [{"log_field": "span_id", "regex": "^0{15}1$"}], "none"),
        _log("l-caseless", [{"log_field": "body", "regex": "ärger", "case_insensitive": True}]),
        _log("l-digits", [{"log_field": "body", "regex": r"\pN{3}\s"}]),
        _log(
            "l-not-keep",
            [
                {"log_field": "body", "contains": "keep", "negate": True},
                {"log_attribute": "env", "exact": "staging"},
            ],
            "none",
        ),
        _metric("m-drop", [{"metric_field": "name", "starts_with": "drop."}], False),
        _metric(
            "m-hist", [{"metric_type": "histogram"}, {"metric_field": "unit", "exact": "ms"}], True
        ),
        _metric(
            "m-delta",
            [{"aggregation_temporality": "delta"}, {"metric_field": "name", "contains": "x"}],
            False,
        ),
        _metric("m-5xx", [{"datapoint_attribute": "code", "gte": 500}], False),
        _metric("m-double", [{"datapoint_attribute": "ratio", "equals": 0.5}], False),
        _metric("m-res", [{"resource_attribute": "service.name", "exact": "noisy"}], True),
        _metric("m-scope", [{"metric_field": "scope_name", "exact": "drop"}], True),
        _metric("m-version", [{"metric_field": "scope_version", "regex": "^0\\."}], True),
        _metric("m-desc", [{"metric_field": "description", "contains": "internal"}], True),
        _metric("m-lib", [{"scope_attribute": "lib", "exists": True}], True),
        _metric("m-url", [{"metric_field": "resource_schema_url", "exists": True}], True),
        _trace("t-drop", [{"trace_field": "name", "exact": "drop-span"}], percentage=0),
        _trace(
            "t-errors",
            [{"span_kind": "SPAN_KIND_SERVER"}, {"span_status": "SPAN_STATUS_CODE_ERROR"}],
            percentage=100,
        ),
        _trace("t-half", [{"trace_field": "name", "starts_with": "GET"}], percentage=50),
        _trace(
            "t-proportional",
            [{"trace_field": "trace_state", "contains": "ot="}],
            percentage=75,
            mode="proportional",
            sampling_precision=3,
        ),
        _trace(
            "t-equalizing",
            [{"span_attribute": "http.route", "exists": True}],
            percentage=90,
            mode="equalizing",
            fail_closed=False,
        ),
        _trace("t-seed", [{"trace_field": "span_id", "exists": True}], percentage=95, hash_seed=7),
        _trace("t-exception", [{"event_name": "exception"}], percentage=0),
        _trace("t-retries", [{"event_attribute": "retries", "gte": 3}], percentage=0),
        _trace("t-code", [{"event_attribute": "code", "equals": 500}], percentage=0),
        _trace("t-event-text", [{"event_attribute": "msg", "contains": "boom"}], percentage=0),
        _trace("t-link", [{"link_trace_id": "02" * 16}], percentage=0),
        _trace("t-parent", [{"trace_field": "parent_span_id", "exists": False}], percentage=90),
        _trace("t-duration", [{"span_attribute": "duration", "gt": 1.5}], percentage=80),
        _trace("t-scope", [{"trace_field": "scope_version", "exists": True}], percentage=100),
        _trace("t-res", [{"resource_attribute": "service.name", "exact": "noisy"}], percentage=100),
    ]
}


def _attributes(holder: Any, values: dict[str, Any]) -> None:
    for key, value in values.items():
        any_value = holder.add(key=key).value
        if isinstance(value, bool):
            any_value.bool_value = value
        elif isinstance(value, int):
            any_value.int_value = value
        elif isinstance(value, float):
            any_value.double_value = value
        elif isinstance(value, bytes):
            any_value.bytes_value = value
        elif isinstance(value, dict):
            _attributes(any_value.kvlist_value.values, value)
        elif isinstance(value, list):
            for item in value:
                any_value.array_value.values.add().string_value = item
        else:
            any_value.string_value = value


_RESOURCES = [
    {"service.name": "checkout", "k8s": {"pod": "batch-7", "ns": "prod"}},
    {"service.name": "noisy", "host.name": "h1"},
]
_BODIES = [
    "GET /healthz 200",
    "paid with 4111-1111-1111-1111 by ann@corp.com",
    "noise noise 123 ",
    "ÄRGER im Büro 2024 ",
    "keep this one",
]


def _logs() -> list[Any]:
    requests = []
    for variant in range(3):
        request = ExportLogsServiceRequest()
        for r, attributes in enumerate(_RESOURCES):
            resource = request.resource_logs.add(schema_url="https://r/1.0" if r else "")
            _attributes(resource.resource.attributes, attributes)
            scope = resource.scope_logs.add(schema_url="https://s/1.0")
            scope.scope.name = "lib"
            _attributes(scope.scope.attributes, {"lib": "x"} if r else {})
            for n, body in enumerate(_BODIES):
                record = scope.log_records.add(
                    time_unix_nano=1_700_000_000_000_000_000 + n,
                    severity_text=["DEBUG", "INFO", "ERROR", "INFO", "WARN"][(n + variant) % 5],
                    trace_id=bytes([n + 1] * 16),
                    span_id=bytes([0] * 7 + [n]),
                    event_name="login" if n == 1 else "",
                )
                if n == 4 and variant == 1:
                    record.body.int_value = 5
                elif n == 3 and variant == 2:
                    _attributes(record.body.kvlist_value.values, {"msg": body})
                else:
                    record.body.string_value = body
                _attributes(
                    record.attributes,
                    {
                        "user.email": "ann@corp.com",
                        "usr": f"u-{n}",
                        "user.id": f"u-{n + variant}",
                        "http.status_code": [200, 503, 404, 302, 201][n],
                        "flag": n == 1,
                        "ratio": 0.125 if n == 1 else 0.5,
                        "raw": b"\x00\x01" if n == 1 else b"\x02",
                        "secret": "s3cr3t",
                        "env": "staging" if n == 1 else "prod",
                        "k8s": {"team": "a"},
                        "tags": ["a", "b"],
                    },
                )
        requests.append(request)
    return requests


def _metrics() -> list[Any]:
    requests = []
    for variant in range(2):
        request = ExportMetricsServiceRequest()
        for r, attributes in enumerate(_RESOURCES):
            resource = request.resource_metrics.add(schema_url="https://r/1.0" if r else "")
            _attributes(resource.resource.attributes, attributes)
            scope = resource.scope_metrics.add()
            scope.scope.name = "drop" if variant and r else "lib"
            scope.scope.version = "0.1" if r else "1.0"
            _attributes(scope.scope.attributes, {"lib": "x"} if r else {})
            kinds = ["gauge", "sum", "histogram", "exponential_histogram", "summary"]
            for n, kind in enumerate(kinds):
                metric = scope.metrics.add(
                    name=["drop.me", "x.requests", "latency", "sizes", "quantiles"][n],
                    unit="ms" if n == 2 else "1",
                    description="internal" if n == 4 else "",
                )
                data = getattr(metric, kind)
                if kind in ("sum", "histogram", "exponential_histogram"):
                    data.aggregation_temporality = 1 + (n + variant) % 2
                for p in range(2):
                    point = data.data_points.add(time_unix_nano=1_700_000_000_000_000_000 + p)
                    code = 503 if n == 1 and p == 0 else 200
                    _attributes(point.attributes, {"code": code, "ratio": 0.5 if n == 0 else 1.0})
                    if kind in ("gauge", "sum"):
                        point.as_double = 1.5
        requests.append(request)
    return requests


def _traces() -> list[Any]:
    requests = []
    for variant in range(2):
        request = ExportTraceServiceRequest()
        for r, attributes in enumerate(_RESOURCES):
            resource = request.resource_spans.add()
            _attributes(resource.resource.attributes, attributes)
            scope = resource.scope_spans.add()
            scope.scope.name = "lib"
            scope.scope.version = "1.0" if r else ""
            for n in range(5):
                span = scope.spans.add(
                    name=["GET /a", "drop-span", "POST /b", "work", "GET /c"][n],
                    trace_id=bytes([n + 1 + variant] * 16),
                    span_id=bytes([n + 1] * 8),
                    parent_span_id=bytes([9] * 8) if n % 2 else b"",
                    trace_state="ot=rv:abcdef01234567" if n == 2 else "vendor=1",
                    kind=1 + n % 5,
                )
                span.status.code = n % 3
                _attributes(span.attributes, {"http.route": "/a", "duration": n * 0.8})
                for e in range(2):
                    event = span.events.add(name="exception" if n == 4 and e else "retry")
                    _attributes(
                        event.attributes,
                        {
                            "retries": 4 if n == 1 and e else 0,
                            "code": 500 if n == 1 else 200,
                            "msg": "boom" if n == 1 else "ok",
                        },
                    )
                span.links.add(trace_id=bytes([2] * 16) if n == 1 else bytes([3] * 16))
        requests.append(request)
    return requests


def otlp_requests() -> dict[Signal, list[Any]]:
    """Seed export requests, as protobuf messages, per signal."""
    return {Signal.LOG: _logs(), Signal.METRIC: _metrics(), Signal.TRACE: _traces()}


def datadog_logs() -> list[bytes]:
    """Seed Datadog log intake bodies."""
    records = [
        {
            "message": body,
            "status": ["debug", "info", "error", "info", "warn"][n],
            "service": ["checkout", "noisy"][n % 2],
            "hostname": "h1",
            "ddsource": "python",
            "ddtags": f"env:{'staging' if n == 1 else 'prod'},version:1.{n}",
            "usr": f"u-{n}",
            "user.email": "ann@corp.com",
            "http.status_code": [200, 503, 404, 302, 201][n],
            "flag": n == 1,
            "ratio": 0.125 if n == 1 else 0.5,
            "trace_id": "0" + str(n) * 31,
            "k8s": {"team": "a", "pod": "batch-1"},
        }
        for n, body in enumerate(_BODIES)
    ]
    return [json.dumps(records).encode(), json.dumps(records[:2]).encode()]


def datadog_series() -> list[bytes]:
    """Seed Datadog series bodies."""
    series = [
        {
            "metric": name,
            "type": kind,
            "points": [{"timestamp": 1_700_000_000, "value": 1.5}],
            "tags": ["env:prod", f"code:{code}"],
            "resources": [{"type": "host", "name": "h1"}],
            "unit": "ms",
        }
        for name, kind, code in (("drop.me", 3, 200), ("x.requests", 1, 503), ("latency", 3, 500))
    ]
    return [json.dumps({"series": series}).encode()]


def agent_series() -> list[bytes]:
    """Seed Agent protobuf series payloads (``/api/v2/series``)."""
    series = [
        {"metric": "drop.me", "tags": ["env:prod", "code:200"], "unit": "ms"},
        {"metric": "x.requests", "type": MetricPayload.COUNT, "tags": ["code:503", "bare"]},
        {"metric": "latency", "host": "noisy", "points": [(1_700_000_000, 0.5), (1, 2.0)]},
    ]
    return [
        series_payload(series).SerializeToString(),
        series_payload(series[1:]).SerializeToString(),
    ]


def agent_sketches() -> list[bytes]:
    """Seed Agent protobuf sketch payloads (``/api/beta/sketches``)."""
    sketches = [
        {"metric": "drop.latency", "tags": ["env:prod"]},
        {"metric": "x.size", "host": "noisy", "tags": ["code:503"]},
    ]
    return [sketch_payload(sketches).SerializeToString()]
