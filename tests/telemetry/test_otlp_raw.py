"""Log records whose attributes stay raw KeyValue bytes (``sluice.telemetry.otlp_raw``).

SDKs write a KeyValue as key field then value field; the fast path reads that
layout and everything else goes to the protobuf runtime. These tests feed
layouts no SDK writes but protobuf allows, and check that the raw view decides
exactly what the message view decides on the same wire bytes.
"""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from sluice.policy import PolicyRuntime, PolicySnapshot, Signal, load_document
from sluice.telemetry import otlp_codec
from sluice.telemetry.otlp_proto import proto_view
from sluice.telemetry.otlp_raw import LeanLogRecord, LeanLogsRequest, split_kv, varint
from tests.telemetry.otlp_convert import to_json


def field(number: int, payload: bytes) -> bytes:
    """A length-delimited field."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def string(text: str) -> bytes:
    """An AnyValue holding a string."""
    return field(1, text.encode())


def integer(value: int) -> bytes:
    """An AnyValue holding an int."""
    return b"\x18" + varint(value)


def kv(key: str, value: bytes | None) -> bytes:
    """A KeyValue in the layout SDKs write."""
    return field(1, key.encode()) + (b"" if value is None else field(2, value))


LONG = "v" * 300
HUGE = "h" * 20_000


@pytest.mark.parametrize(
    "raw, expected",
    [
        (kv("svc", string("web")), (b"svc", string("web"))),
        (kv("svc", None), (b"svc", b"")),
        (kv("svc", string(LONG)), (b"svc", string(LONG))),  # two-byte length
        (kv("svc", string(HUGE)), None),  # three-byte length: not the fast path
        (field(2, string("web")) + field(1, b"svc"), None),  # value first
        (field(1, b"old") + field(1, b"svc") + field(2, string("web")), None),  # key twice
        (kv("svc", string("web")) + field(2, string("api")), None),  # value twice
        (b"", None),
    ],
)
def test_split_kv_reads_only_the_sdk_layout(raw: bytes, expected: Any) -> None:
    assert split_kv(raw) == expected


def lean_request(*records: tuple[str, list[bytes]]) -> Any:
    """A lean request with one record per (body, raw attributes)."""
    request = LeanLogsRequest()
    scope = request.resource_logs.add().scope_logs.add()
    for body, attributes in records:
        record = LeanLogRecord()
        record.body.string_value = body
        record.attributes.extend(attributes)
        scope.log_records.append(record.SerializeToString())
    return request


def run_raw(policies: list[dict[str, Any]], wire: bytes, rounds: int = 1) -> tuple[Any, Any]:
    """Output (as OTLP JSON) and outcome of the raw view; later rounds reuse
    the reader, so remembered attributes are exercised."""
    snapshot = compile_policies(policies)
    for _ in range(rounds):
        batch, view = otlp_codec.decode(Signal.LOG, otlp_codec.PROTOBUF, wire)
        outcome = snapshot.evaluate(Signal.LOG, view, batch)
    return to_json(batch), outcome


def run_messages(policies: list[dict[str, Any]], wire: bytes) -> tuple[Any, Any]:
    message = ExportLogsServiceRequest.FromString(wire)
    outcome = compile_policies(policies).evaluate(Signal.LOG, proto_view(Signal.LOG), message)
    return to_json(message), outcome


def compile_policies(policies: list[dict[str, Any]]) -> PolicySnapshot:
    docs = [{"id": f"p{i}", "name": "n", "log": p} for i, p in enumerate(policies)]
    return PolicySnapshot.compile(
        load_document({"policies": docs}).policies, PolicyRuntime(clock=lambda: 0.0)
    )


UNUSUAL = [
    ("value before key", [field(2, string("drop-me")) + field(1, b"svc")]),
    ("key written twice", [field(1, b"other") + field(1, b"svc") + field(2, string("drop-me"))]),
    ("oneof: int then string", [kv("svc", integer(7) + field(1, b"drop-me"))]),
    ("oneof: string then int", [kv("svc", string("drop-me") + integer(7))]),
    ("long value", [kv("svc", string("drop-me" + LONG))]),
    ("huge value", [kv("svc", string("drop-me" + HUGE))]),
    ("first entry counts", [kv("svc", string("keep")), kv("svc", string("drop-me"))]),
    ("first entry drops", [kv("svc", string("drop-me")), kv("svc", string("keep"))]),
    ("int value", [kv("svc", integer(42))]),
    ("no value", [kv("svc", None)]),
    ("nested", [kv("http", field(6, field(1, kv("method", string("drop-me")))))]),
]
POLICIES: list[dict[str, Any]] = [
    {"match": [{"log_attribute": "svc", "starts_with": "drop-me"}], "keep": "none"},
    {"match": [{"log_attribute": ["http", "method"], "exact": "drop-me"}], "keep": "none"},
    {"match": [{"log_attribute": "svc", "equals": 42}], "keep": "none"},
    {
        "match": [{"log_attribute": "svc", "exists": True}],
        "keep": "all",
        "transform": {"add": [{"log_attribute": ["tags", "seen"], "value": "yes"}]},
    },
]


@pytest.mark.parametrize("rounds", [1, 2])
def test_raw_view_decides_like_the_message_view_on_every_layout(rounds: int) -> None:
    wire = lean_request(*((name, attributes) for name, attributes in UNUSUAL)).SerializeToString()
    raw_out, raw_outcome = run_raw(POLICIES, wire, rounds)
    message_out, message_outcome = run_messages(POLICIES, wire)
    assert raw_out == message_out
    assert raw_outcome == message_outcome
    kept = [
        r["body"]["stringValue"] for r in raw_out["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    ]
    assert kept == ["oneof: string then int", "first entry counts", "no value"]


def test_transforms_edit_raw_attributes_like_messages() -> None:
    attributes = [kv("svc", string("web")), kv("old", string("1")), kv("gone", string("x"))]
    wire = lean_request(("r", attributes)).SerializeToString()
    policies: list[dict[str, Any]] = [
        {
            "match": [{"log_attribute": "svc", "exact": "web"}],
            "keep": "all",
            "transform": {
                "remove": [{"log_attribute": "gone"}],
                "rename": [{"from_log_attribute": "old", "to": "new"}],
                "add": [{"log_attribute": ["http", "method"], "value": "GET"}],
                "redact": [{"log_attribute": "svc", "regex": "w", "replacement": "W"}],
            },
        }
    ]
    raw_out, _ = run_raw(policies, wire)
    assert raw_out == run_messages(policies, wire)[0]
    record = raw_out["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]
    assert {a["key"] for a in record["attributes"]} == {"svc", "new", "http"}
    assert {"key": "svc", "value": {"stringValue": "Web"}} in record["attributes"]


def test_sample_key_read_from_an_unusual_layout() -> None:
    attributes = [field(2, string("user-7")) + field(1, b"user")]
    wire = lean_request(*((f"r{i}", attributes) for i in range(20))).SerializeToString()
    policies: list[dict[str, Any]] = [
        {
            "match": [{"log_field": "body", "starts_with": "r"}],
            "keep": "50%",
            "sample_key": {"log_attribute": "user"},
        }
    ]
    raw_out, raw_outcome = run_raw(policies, wire)
    assert (raw_out, raw_outcome) == run_messages(policies, wire)
    assert raw_outcome.dropped in (0, 20)  # one key: all records share one decision


def test_attribute_bytes_that_are_no_keyvalue_keep_only_their_record() -> None:
    broken = b"\x0a\x50svc"  # the key claims 80 bytes, 3 follow
    wire = lean_request(
        ("broken", [broken]), ("fine", [kv("svc", string("drop-me"))])
    ).SerializeToString()
    with pytest.raises(DecodeError):  # the message runtime refuses the whole request
        ExportLogsServiceRequest.FromString(wire)
    batch, view = otlp_codec.decode(Signal.LOG, otlp_codec.PROTOBUF, wire)
    outcome = compile_policies(POLICIES[:1]).evaluate(Signal.LOG, view, batch)
    assert (outcome.records, outcome.malformed, outcome.dropped) == (2, 1, 1)
    (kept,) = batch.resource_logs[0].scope_logs[0].log_records
    record = LeanLogRecord.FromString(kept)
    assert record.body.string_value == "broken"
    assert list(record.attributes) == [broken]  # forwarded as it came


def test_attribute_value_that_is_not_utf8_keeps_its_record() -> None:
    wire = lean_request(
        ("bad", [kv("svc", b"\x0a\x02\xff\xfe")]), ("fine", [kv("svc", string("drop-me"))])
    ).SerializeToString()
    batch, view = otlp_codec.decode(Signal.LOG, otlp_codec.PROTOBUF, wire)
    outcome = compile_policies(POLICIES[:1]).evaluate(Signal.LOG, view, batch)
    assert (outcome.malformed, outcome.dropped) == (1, 1)


def test_lean_request_round_trips_the_wire_bytes() -> None:
    wire = lean_request(*((name, attributes) for name, attributes in UNUSUAL)).SerializeToString()
    assert LeanLogsRequest.FromString(wire).SerializeToString() == wire
    full = ExportLogsServiceRequest.FromString(wire)
    assert len(full.resource_logs[0].scope_logs[0].log_records) == len(UNUSUAL)
