"""Every selector under every condition type, for the differential test of the
compiled build against its sources (``tests/compiled_source.py``).

For each signal, one policy per (selector, condition): string conditions,
``exists``, ``equals`` with each typed literal and ``gt``/``gte``/``lt``/``lte``
with int and double literals, several negated, on every field selector, on
attributes of every level (holding ints, doubles, bools, bytes, strings and a
nested kvlist) and on the enum selectors. Every policy keeps what it matches,
so each one's hit count shows what it matched. The documents are the fuzzing
seeds (``tests/faults/fuzz_corpus.py``) in OTLP JSON with typed attributes added
at every level and typed bodies, and Datadog logs and series (JSON, and the
Agent's protobuf) with the same values. Importing this module imports Sluice: import it only once the
source-first finder (if any) is installed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from sluice.policy import Signal
from sluice.policy.model import LOG_FIELDS, METRIC_FIELDS, TRACE_FIELDS
from tests.faults.fuzz_corpus import datadog_logs, datadog_series, otlp_requests
from tests.telemetry.otlp_convert import to_json

TYPED = {
    "t.int": {"intValue": "7"},
    "t.double": {"doubleValue": 1.5},
    "t.bool": {"boolValue": True},
    "t.bytes": {"bytesValue": "AAE="},
    "t.string": {"stringValue": "x"},
    "t.kvlist": {"kvlistValue": {"values": [{"key": "inner", "value": {"intValue": "7"}}]}},
}
"""The typed attributes added to every attribute list of the documents."""
KEYS: list[Any] = ["t.int", "t.double", "t.bool", "t.bytes", "t.string", ["t.kvlist", "inner"]]
BODIES = [*TYPED.values(), {"arrayValue": {"values": [{"stringValue": "x"}]}}, {}]

_STRING = [
    ("exact", {"exact": "x"}),
    ("regex", {"regex": "^x|e"}),
    ("starts_with", {"starts_with": "x"}),
    ("ends_with", {"ends_with": "x"}),
    ("contains", {"contains": "e"}),
    ("exact_ci", {"exact": "X", "case_insensitive": True}),
]
_TYPED = [
    ("exists", {"exists": True}),
    ("exists", {"exists": False}),
    ("equals", {"equals": 7}),
    ("equals", {"equals": {"int_value": "7"}}),
    ("equals", {"equals": 1.5}),
    ("equals", {"equals": True}),
    ("equals", {"equals": "x"}),
    ("equals", {"equals": {"string_value": "x"}}),
    ("equals", {"equals": {"bytes_value": "AAE="}}),
    ("equals", {"equals": {"hex_value": "0001"}}),
    ("equals", {"equals": {"hex_value": "01" * 16}}),
    *((op, {op: literal}) for op in ("gt", "gte", "lt", "lte") for literal in (7, 1.5)),
]
CONDITIONS = [
    *((op, condition, False) for op, condition in _STRING),
    ("contains", {"contains": "e"}, True),
    *((op, condition, negate) for op, condition in _TYPED for negate in (False, True)),
]
"""(operation, condition, negate): every condition type, the typed ones also negated."""
TYPED_OPS = frozenset({"exists", "equals", "gt", "gte", "lt", "lte"})

_FIELD_KEY = {Signal.LOG: "log_field", Signal.METRIC: "metric_field", Signal.TRACE: "trace_field"}
_FIELDS = {Signal.LOG: LOG_FIELDS, Signal.METRIC: METRIC_FIELDS, Signal.TRACE: TRACE_FIELDS}
ATTRIBUTE_SOURCES = {
    Signal.LOG: ("log_attribute", "resource_attribute", "scope_attribute"),
    Signal.METRIC: ("datapoint_attribute", "resource_attribute", "scope_attribute"),
    Signal.TRACE: ("span_attribute", "resource_attribute", "scope_attribute", "event_attribute"),
}
_OWN_VALUE = {
    Signal.METRIC: [
        *({"metric_type": kind} for kind in ("gauge", "sum", "histogram", "summary")),
        {"metric_type": "exponential_histogram"},
        {"aggregation_temporality": "delta"},
        {"aggregation_temporality": "cumulative"},
    ],
    Signal.TRACE: [
        *({"span_kind": kind} for kind in ("internal", "server", "client", "producer", "consumer")),
        *({"span_status": status} for status in ("unset", "ok", "error")),
        {"event_name": "exception"},
        {"link_trace_id": "02" * 16},
    ],
}
_SIGNAL_KEY = {Signal.LOG: "log", Signal.METRIC: "metric", Signal.TRACE: "trace"}
_KEEP: dict[Signal, Any] = {
    Signal.LOG: "all",
    Signal.METRIC: True,
    Signal.TRACE: {"percentage": 100},
}


def _selectors(signal: Signal) -> Iterator[tuple[str, dict[str, Any]]]:
    """(source label, selector) of every value selector of a signal."""
    for name in _FIELDS[signal]:
        yield f"field:{name}", {_FIELD_KEY[signal]: name}
    for source in ATTRIBUTE_SOURCES[signal]:
        for key in KEYS:
            yield source, {source: {"path": key} if isinstance(key, list) else key}


def policies(signal: Signal) -> dict[str, Any]:
    """The policy document: ids are ``s<n>|<source>|<operation>`` (and ``|not``)."""
    out = []
    for source, selector in _selectors(signal):
        for op, condition, negate in CONDITIONS:
            matcher = {**selector, **condition, **({"negate": True} if negate else {})}
            out.append((f"{source}|{op}" + ("|not" if negate else ""), matcher))
    for matcher in _OWN_VALUE.get(signal, []):
        out.append((f"{next(iter(matcher))}|own", matcher))
    return {
        "policies": [
            {
                "id": f"s{n:04d}|{label}",
                "name": label,
                _SIGNAL_KEY[signal]: {"match": [matcher], "keep": _KEEP[signal]},
            }
            for n, (label, matcher) in enumerate(out)
        ]
    }


def _typed_attributes(holder: dict[str, Any]) -> None:
    attributes = holder.setdefault("attributes", [])
    attributes.extend({"key": key, "value": value} for key, value in TYPED.items())


_CONTAINERS = {
    "resourceLogs": ("scopeLogs", "logRecords"),
    "resourceMetrics": ("scopeMetrics", "metrics"),
    "resourceSpans": ("scopeSpans", "spans"),
}


def _holders(document: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(kind, attribute holder) of every attribute list of an OTLP JSON request."""
    for top, (scopes_key, records_key) in _CONTAINERS.items():
        for resource in document.get(top, []):
            yield "resource", resource.setdefault("resource", {})
            for scope in resource.get(scopes_key, []):
                yield "scope", scope.setdefault("scope", {})
                for record in scope.get(records_key, []):
                    yield "record", record
                    for kind in ("gauge", "sum", "histogram", "exponentialHistogram", "summary"):
                        for point in record.get(kind, {}).get("dataPoints", []):
                            yield "point", point
                    for event in record.get("events", []):
                        yield "event", event


def documents(signal: Signal) -> list[dict[str, Any]]:
    """OTLP JSON requests with typed values at every attribute level (and, for
    logs, typed bodies)."""
    out = []
    for message in otlp_requests()[signal]:
        document = to_json(message)
        n = 0
        for kind, holder in _holders(document):
            if kind == "record" and signal is Signal.LOG:
                holder["body"] = BODIES[n % len(BODIES)]
                n += 1
            if kind != "record" or signal is not Signal.METRIC:
                _typed_attributes(holder)
        out.append(document)
    return out


DATADOG_TYPED = {
    "t.int": 7,
    "t.double": 1.5,
    "t.bool": True,
    "t.bytes": "AAE=",
    "t.string": "x",
    "t.kvlist": {"inner": 7},
}


def datadog_documents() -> list[bytes]:
    """Datadog log bodies with the typed values as record keys."""
    out = []
    for body in datadog_logs():
        records = json.loads(body)
        for n, record in enumerate(records):
            record.update(DATADOG_TYPED)
            if n % 2:
                record["message"] = list(DATADOG_TYPED.values())[n % len(DATADOG_TYPED)]
        out.append(json.dumps(records).encode())
    return out


def series_documents() -> list[bytes]:
    """Datadog series bodies with the typed values as tags."""
    out = []
    for body in datadog_series():
        document = json.loads(body)
        for series in document["series"]:
            series["tags"].extend(f"{key}:{value}" for key, value in DATADOG_TYPED.items())
        out.append(json.dumps(document).encode())
    return out


def agent_series_documents() -> list[bytes]:
    """The series documents as the Agent's protobuf ``MetricPayload``."""
    from tests.edge.agent_replay import series_payload

    out = []
    for body in series_documents():
        series = [
            {
                "metric": item["metric"],
                "type": item["type"],
                "tags": item["tags"],
                "unit": item.get("unit", ""),
                "host": item["resources"][0]["name"],
            }
            for item in json.loads(body)["series"]
        ]
        out.append(series_payload(series).SerializeToString())
    return out
