"""Log records read from their wire bytes (``sluice.telemetry.otlp_lean``).

The reader takes the layout SDKs write and hands every other record to the
protobuf runtime. These tests feed records in layouts protobuf allows but no SDK
writes (fields out of order or twice, unknown fields, odd bodies), and broken
ones, and check that the lean view decides exactly what the message view decides
on the same wire bytes, that what it keeps goes out byte for byte, and that a
broken record is kept and counted instead of failing the request.
"""

from __future__ import annotations

import struct
from typing import Any

import pytest
from google.protobuf.message import DecodeError
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord

from sluice.policy import PolicyRuntime, PolicySnapshot, Signal, load_document, native
from sluice.policy.model import MatchOp
from sluice.policy.patterns import FieldScanner, PatternSpec
from sluice.telemetry import otlp_codec, otlp_lean
from sluice.telemetry.otlp_lean import LEAN_LOG_VIEW, RecordReader, locate
from sluice.telemetry.otlp_proto import proto_view, typed_any
from sluice.telemetry.otlp_raw import LeanLogsRequest, find_value, varint
from sluice.telemetry.reading import matcher_of
from tests.telemetry.otlp_convert import to_json

_lean = native.extension("sluice.telemetry._lean")


def length_field(number: int, payload: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def varint_field(number: int, value: int) -> bytes:
    return varint(number << 3) + varint(value & 0xFFFFFFFFFFFFFFFF)


def fixed64(number: int, value: int) -> bytes:
    return varint(number << 3 | 1) + struct.pack("<Q", value)


def fixed32(number: int, value: int) -> bytes:
    return varint(number << 3 | 5) + struct.pack("<I", value)


def text(value: str) -> bytes:
    """An AnyValue holding a string."""
    return length_field(1, value.encode())


def kv(key: str, value: bytes) -> bytes:
    return length_field(1, key.encode()) + length_field(2, value)


TRACE = bytes.fromhex("0af7651916cd43dd8448eb211c80319c")
SPAN = bytes.fromhex("b7ad6b7169203331")
TIME = fixed64(1, 1_763_726_400_000_000_000)
OBSERVED = fixed64(11, 1_763_726_400_000_000_001)
SEVERITY_NUMBER = varint_field(2, 9)
FLAGS = fixed32(8, 1)


def severity(value: str) -> bytes:
    return length_field(3, value.encode())


def body(any_value: bytes) -> bytes:
    return length_field(5, any_value)


def attribute(key: str, value: bytes) -> bytes:
    return length_field(6, kv(key, value))


def sdk_record(message: str, level: str = "INFO", *attributes: bytes) -> bytes:
    """A record in the field order SDKs write."""
    head = [TIME, SEVERITY_NUMBER, severity(level), body(text(message)), *attributes]
    return b"".join([*head, FLAGS, length_field(9, TRACE), length_field(10, SPAN), OBSERVED])


POLICIES: list[dict[str, Any]] = [
    {"match": [{"log_field": "body", "contains": "drop-me"}], "keep": "none"},
    {"match": [{"log_field": "severity_text", "exact": "DEBUG"}], "keep": "none"},
    {"match": [{"log_field": "event_name", "exact": "noise"}], "keep": "none"},
    {
        "match": [
            {"log_field": "trace_id", "exact": TRACE.hex()},
            {"log_field": "body", "exists": True},
            {"log_attribute": "svc", "exact": "traced"},
        ],
        "keep": "none",
    },
    {"match": [{"log_field": "span_id", "starts_with": "ff"}], "keep": "none"},
    {"match": [{"log_attribute": "svc", "exact": "drop-me"}], "keep": "none"},
    {"match": [{"log_attribute": "n", "equals": 42}], "keep": "none"},
    {"match": [{"log_field": "body", "exists": False}], "keep": "none"},
    {
        "match": [
            {"log_field": "severity_text", "exists": False},
            {"log_field": "body", "contains": "nosev"},
        ],
        "keep": "none",
    },
    {
        "match": [{"log_field": "body", "contains": "secret"}],
        "keep": "all",
        "transform": {
            "redact": [{"log_field": "body", "regex": "secret=\\w+", "replacement": "secret=***"}],
            "add": [{"log_attribute": "redacted", "value": "yes"}],
        },
    },
    {
        "match": [{"log_field": "body", "starts_with": "sample"}],
        "keep": "50%",
        "sample_key": {"log_attribute": "user"},
    },
]


def compile_policies(policies: list[dict[str, Any]]) -> PolicySnapshot:
    docs = [{"id": f"p{i}", "name": "n", "log": p} for i, p in enumerate(policies)]
    return PolicySnapshot.compile(
        load_document({"policies": docs}).policies, PolicyRuntime(clock=lambda: 0.0)
    )


def request(*records: bytes) -> bytes:
    lean = LeanLogsRequest()
    lean.resource_logs.add().scope_logs.add().log_records.extend(records)
    return bytes(lean.SerializeToString())


def run_lean(wire: bytes, policies: list[dict[str, Any]] = POLICIES) -> tuple[list[bytes], Any]:
    """The records the lean view lets through (their wire bytes) and its outcome."""
    batch, view = otlp_codec.decode(Signal.LOG, otlp_codec.PROTOBUF, wire)
    outcome = compile_policies(policies).evaluate(Signal.LOG, view, batch)
    out = LeanLogsRequest.FromString(otlp_codec.encode(otlp_codec.PROTOBUF, batch))
    kept = [r for rl in out.resource_logs for sl in rl.scope_logs for r in sl.log_records]
    return kept, outcome


def run_messages(wire: bytes, policies: list[dict[str, Any]] = POLICIES) -> tuple[Any, Any]:
    message = ExportLogsServiceRequest.FromString(wire)
    outcome = compile_policies(policies).evaluate(Signal.LOG, proto_view(Signal.LOG), message)
    return to_json(message), outcome


def as_json(records: list[bytes]) -> Any:
    return to_json(ExportLogsServiceRequest.FromString(request(*records))) if records else {}


def parses(record: bytes) -> bool:
    try:
        LogRecord.FromString(record)
    except DecodeError:
        return False
    return True


def check_like_messages(records: list[bytes], policies: list[dict[str, Any]] = POLICIES) -> None:
    """The lean view over `records` decides what the message view decides over
    the records the protobuf runtime can parse; it keeps the others, unchanged,
    and counts them malformed; every record it keeps unedited goes out as it came."""
    kept, outcome = run_lean(request(*records), policies)
    broken = [r for r in records if not parses(r)]
    readable = [r for r in records if parses(r)]
    expected_json, expected = run_messages(request(*readable), policies)
    assert outcome.malformed == len(broken)
    assert [r for r in kept if r in broken] == broken
    assert as_json([r for r in kept if r not in broken]) == expected_json
    assert (
        outcome.records,
        outcome.dropped,
        outcome.sampled,
        outcome.transformed,
        outcome.kept,
    ) == (
        expected.records + len(broken),
        expected.dropped,
        expected.sampled,
        expected.transformed,
        expected.kept,
    )
    # Everything but the edited records goes out byte for byte as it came in.
    assert len([r for r in kept if r not in records]) <= outcome.transformed
    if not outcome.modified:
        assert kept == records


KEEP = sdk_record("keep me", "INFO", attribute("svc", text("web")))
LAYOUTS: dict[str, bytes] = {
    "sdk order": sdk_record("drop-me please"),
    "reversed order": b"".join(
        reversed([TIME, severity("DEBUG"), body(text("fine")), length_field(9, TRACE)])
    ),
    "body twice, strings": body(text("drop-me")) + body(text("fine")),
    "body twice, string then int": body(text("drop-me")) + body(varint_field(3, 7)),
    "body twice, int then string": body(varint_field(3, 7)) + body(text("drop-me")),
    "body string written twice inside": body(text("fine") + text("drop-me")),
    "body string written twice inside, fine last": body(text("drop-me") + text("fine")),
    "empty severity": severity("") + body(text("nosev")),
    "no severity": body(text("nosev")),
    "severity twice": severity("DEBUG") + body(text("x")) + severity("INFO"),
    "severity twice, debug last": severity("INFO") + body(text("x")) + severity("DEBUG"),
    "event name": body(text("x")) + length_field(12, b"noise"),
    "event name twice": length_field(12, b"noise") + body(text("x")) + length_field(12, b"ok"),
    "int body": body(varint_field(3, 42)),
    "kvlist body": body(length_field(6, length_field(1, kv("k", text("drop-me"))))),
    "empty body": body(b""),
    "empty string body": body(text("")),
    "no body": severity("INFO"),
    "long body": body(text("drop-me " + "x" * 300)),
    "huge body": body(text("y" * 20_000 + " drop-me")),
    "non-ASCII body": body(text("prix: 12 € drop-me")),
    "secret": sdk_record("login secret=hunter2 done", "INFO", attribute("svc", text("web"))),
    "secret, odd layout": body(text("secret=abc")) + attribute("svc", text("x")) + TIME,
    "sample": sdk_record("sample this", "INFO", attribute("user", text("u-1"))),
    "sample, odd key layout": body(text("sample that"))
    + length_field(6, length_field(2, text("u-2")) + length_field(1, b"user")),
    "trace and attribute": sdk_record("x", "INFO", attribute("svc", text("traced"))),
    "trace twice": length_field(9, b"\x01" * 16)
    + length_field(9, TRACE)
    + body(text("x"))
    + attribute("svc", text("traced")),
    "zero trace id": length_field(9, bytes(16)) + body(text("x")),
    "span ff": body(text("x")) + length_field(10, b"\xff" * 8),
    "span twice": length_field(10, b"\xff" * 8) + body(text("x")) + length_field(10, SPAN),
    "attribute int 42": body(text("x")) + attribute("n", varint_field(3, 42)),
    "attribute first entry counts": body(text("x"))
    + attribute("svc", text("keep"))
    + attribute("svc", text("drop-me")),
    "unknown varint field": body(text("drop-me")) + varint_field(13, 1),
    "unknown length field": length_field(14, b"zz") + body(text("drop-me")),
    "unknown fixed fields": fixed32(15, 3) + fixed64(13, 4) + body(text("drop-me")),
    "two-byte tag": varint_field(100, 1) + body(text("drop-me")),
    "group": b"\x6b" + varint_field(1, 1) + b"\x6c" + body(text("drop-me")),
    "known field, other wire type": varint_field(3, 5) + body(text("drop-me")),
    "negative severity number": varint_field(2, -1) + body(text("drop-me")),
    "ten-byte varint": varint_field(7, -1) + body(text("x")),
    "field number zero": b"\x02\x01a" + body(text("x")),
    "truncated": sdk_record("drop-me")[:-3],
    "length past the end": body(text("x"))[:-1],
    "invalid UTF-8 body": body(length_field(1, b"\xff\xfe drop-me")),
    "invalid UTF-8 severity": severity("x").replace(b"x", b"\xff") + body(text("x")),
    "eleven-byte varint": b"\x10" + b"\xff" * 10 + b"\x01" + body(text("x")),
    "empty record": b"",
}


def test_the_reader_takes_the_sdk_layout_and_leaves_the_rest() -> None:
    assert locate(sdk_record("m", "INFO", attribute("a", text("b"))), True) is not None
    for name in (
        "body twice, strings",
        "severity twice",
        "two-byte tag",
        "group",
        "truncated",
        "known field, other wire type",
        "field number zero",
        "eleven-byte varint",
    ):
        assert locate(LAYOUTS[name], True) is None, name


def test_every_layout_is_decided_like_the_message_view() -> None:
    for name, record in LAYOUTS.items():
        try:
            check_like_messages([KEEP, record, KEEP])
        except AssertionError as failure:
            raise AssertionError(f"layout {name!r}: {failure}") from failure


def test_all_layouts_in_one_request() -> None:
    check_like_messages(list(LAYOUTS.values()))


def test_kept_records_go_out_byte_for_byte() -> None:
    odd = LAYOUTS["unknown length field"].replace(b"drop-me", b"keep-me")
    records = [KEEP, odd, LAYOUTS["sdk order"], LAYOUTS["group"].replace(b"drop-me", b"keep-me")]
    kept, outcome = run_lean(request(*records))
    assert kept == [KEEP, records[1], records[3]]
    assert (outcome.dropped, outcome.malformed) == (1, 0)


def test_a_broken_record_is_kept_and_counted() -> None:
    broken = LAYOUTS["truncated"]
    kept, outcome = run_lean(request(KEEP, broken, LAYOUTS["sdk order"]))
    assert kept == [KEEP, broken]
    assert (outcome.records, outcome.malformed, outcome.dropped) == (3, 1, 1)


def test_a_transform_rewrites_only_its_record() -> None:
    secret = LAYOUTS["secret"]
    kept, outcome = run_lean(request(KEEP, secret, KEEP))
    assert outcome.transformed == 1
    assert kept[0] == kept[2] == KEEP
    edited = LogRecord.FromString(kept[1])
    assert edited.body.string_value == "login secret=*** done"
    assert [(a.key, a.value.string_value) for a in edited.attributes] == [
        ("svc", "web"),
        ("redacted", "yes"),
    ]


def test_removes_and_renames_edit_like_the_message_view() -> None:
    policies: list[dict[str, Any]] = [
        {
            "match": [{"log_attribute": "svc", "exists": True}],
            "keep": "all",
            "transform": {
                "remove": [
                    {"log_field": "body"},
                    {"log_field": "trace_id"},
                    {"log_attribute": "gone"},
                ],
                "rename": [{"from_log_attribute": "old", "to": "new"}],
            },
        }
    ]
    svc = attribute("svc", text("web"))
    records = [
        svc + body(b"") + length_field(9, bytes(16)),  # present but empty: absent, left as it came
        svc + body(text("b")) + attribute("old", text("1")) + attribute("gone", text("x")),
        LAYOUTS["sample, odd key layout"] + svc,
        body(text("no svc")) + attribute("gone", text("stays")),
    ]
    check_like_messages(records, policies)


def test_bytes_no_reader_checked_are_caught_when_a_decision_reads_them() -> None:
    # The reader checks only the fields policies scan; a transform or a sample key
    # that parses the whole record finds the rest broken: that record is kept.
    policies: list[dict[str, Any]] = [
        {
            "match": [{"log_attribute": "svc", "exact": "web"}],
            "keep": "all",
            "transform": {
                "redact": [{"log_field": "body", "regex": "secret=\\w+", "replacement": "***"}]
            },
        },
        {
            "match": [{"log_attribute": "svc", "exact": "sampled"}],
            "keep": "50%",
            "sample_key": {"log_field": "trace_id"},
        },
    ]
    web = attribute("svc", text("web"))
    sampled = attribute("svc", text("sampled")) + length_field(9, TRACE)
    records = [
        web + body(text("secret=1")),
        web + body(text("secret=2")) + b"\x1a\x01\xff",  # severity text not UTF-8
        sampled + length_field(12, b"\xc3"),  # event name not UTF-8
        sampled,
        web + body(text("secret=3")),
    ]
    check_like_messages(records, policies)
    _, outcome = run_lean(request(*records), policies)
    assert (outcome.malformed, outcome.transformed) == (2, 2)


def test_a_broken_record_is_kept_when_only_a_transform_reads_it() -> None:
    policies: list[dict[str, Any]] = [
        {
            "match": [{"resource_attribute": "service.name", "exact": "web"}],
            "keep": "all",
            "transform": {"add": [{"log_attribute": "seen", "value": "yes"}]},
        }
    ]
    lean = LeanLogsRequest()
    resource = lean.resource_logs.add()
    resource.resource.attributes.add(key="service.name").value.string_value = "web"
    broken = LAYOUTS["truncated"]
    resource.scope_logs.add().log_records.extend([body(text("ok")), broken])
    kept, outcome = run_lean(bytes(lean.SerializeToString()), policies)
    assert (outcome.records, outcome.transformed, outcome.malformed) == (2, 1, 1)
    assert kept[1] == broken
    edited = LogRecord.FromString(kept[0])
    assert [(a.key, a.value.string_value) for a in edited.attributes] == [("seen", "yes")]


def test_a_scanner_reads_utf8_bytes_like_the_string() -> None:
    specs = [
        (0, PatternSpec(MatchOp.EXACT, "INFO", False)),
        (1, PatternSpec(MatchOp.CONTAINS, "€", False)),
        (2, PatternSpec(MatchOp.REGEX, "^pri[x]", True)),
    ]
    scanner = FieldScanner(specs, 3, None)
    for value in ("INFO", "prix: 12 €", "PRIX", "other", "€"):
        assert scanner.compute(value.encode()) == scanner.compute(value), value
    try:
        scanner.compute(b"\xff\xfe")
    except UnicodeDecodeError:
        pass
    else:
        raise AssertionError("invalid UTF-8 was scanned")


# -- property: any mix of well-formed, unusual and broken fields ----------------------

CHUNKS = [
    TIME,
    OBSERVED,
    SEVERITY_NUMBER,
    FLAGS,
    severity("INFO"),
    severity("DEBUG"),
    severity(""),
    body(text("fine")),
    body(text("nosev")),
    body(text("drop-me")),
    body(text("sample it")),
    body(text("secret=abc and secret=def")),
    body(text("")),
    body(b""),
    body(varint_field(3, 5)),
    body(length_field(1, b"\xc3\x28")),
    attribute("svc", text("drop-me")),
    attribute("svc", text("traced")),
    attribute("user", text("u-1")),
    attribute("user", text("u-2")),
    attribute("n", varint_field(3, 42)),
    length_field(6, length_field(2, text("drop-me")) + length_field(1, b"svc")),
    length_field(9, TRACE),
    length_field(9, bytes(16)),
    length_field(10, SPAN),
    length_field(10, b"\xff\x01"),
    length_field(12, b"noise"),
    length_field(12, b"event"),
    varint_field(13, 300),
    length_field(14, b"unknown"),
    varint_field(200, 1),
    varint_field(3, 1),
    b"\x6b\x08\x01\x6c",
    b"\x2a\x05\x0a\x03",  # body claims more than the record holds
]
RECORDS = st.lists(
    st.lists(st.sampled_from(CHUNKS), max_size=8).map(b"".join), min_size=1, max_size=5
)


@settings(max_examples=300, deadline=None)
@given(RECORDS)
def test_any_record_is_decided_like_the_message_view(records: list[bytes]) -> None:
    check_like_messages(records)


# -- the batch reader (C, sluice.telemetry._lean) --------------------------------------

ID_FREE_POLICIES = [
    p
    for p in POLICIES
    if not any(m.get("log_field") in ("trace_id", "span_id") for m in p["match"])
]
"""POLICIES less the id conditions: ids are scanned as hex, which only the
record-by-record reader does, so these are read a batch at a time."""


def record_reader(policies: list[dict[str, Any]]) -> RecordReader:
    table = compile_policies(policies)._tables[Signal.LOG]
    reader = table.readers(LEAN_LOG_VIEW)[2]
    assert isinstance(reader, RecordReader)
    return reader


def test_this_build_reads_batches_and_scans_in_c() -> None:
    assert native.ACTIVE, "the C scanner did not load (see the log of sluice.policy.native)"
    assert record_reader(ID_FREE_POLICIES).batch is not None
    assert record_reader(POLICIES).batch is None  # id conditions: one record at a time


def test_the_batch_reader_finds_what_the_record_reader_finds() -> None:
    reader = record_reader(ID_FREE_POLICIES)
    records = [KEEP, *LAYOUTS.values(), *CHUNKS]
    found = reader.read_batch(records)
    assert found is not None and len(found) == len(records)
    for record, hits in zip(records, found, strict=True):
        try:
            expected = reader(record)
        except Exception:
            assert hits is None, record  # the engine reads it again and counts it
            continue
        assert hits is None or hits == expected, record
    sdk = ["sdk order", "long body", "non-ASCII body", "secret", "sample", "attribute int 42"]
    sdk.append("attribute first entry counts")
    for name in sdk:
        assert reader.read_batch([LAYOUTS[name]]) == [reader(LAYOUTS[name])], name
    assert reader.read_batch([KEEP]) == [reader(KEEP)] != [()]


def test_the_batch_reader_puts_the_prefix_before_each_record_s_hits() -> None:
    reader = record_reader(ID_FREE_POLICIES)
    records = [KEEP, *LAYOUTS.values()]
    plain = reader.read_batch(records)
    for prefix in ((), (7,), (3, 900, 3)):
        found = reader.read_batch(records, prefix)
        assert found == [None if hits is None else prefix + hits for hits in plain or ()]
    assert found is not None and any(hits for hits in found)


def test_a_batch_reader_takes_any_number_of_attribute_keys() -> None:
    # Large policy sets read hundreds of attribute keys: the batch reader
    # finds each record's keys by hash, whatever their number.
    policies = [
        {"match": [{"log_attribute": f"key.{i}", "exact": f"v{i % 7}"}], "keep": "none"}
        for i in range(300)
    ]
    reader = record_reader(policies)
    assert reader.batch is not None
    records = [
        sdk_record(
            "m", "INFO", *(attribute(f"key.{i}", text(f"v{i % 7}")) for i in range(0, 300, 37))
        ),
        sdk_record("m", "INFO", attribute("key.5", text("other")), attribute("key.5", text("v5"))),
        sdk_record("m", "INFO", attribute("key.300", text("v6")), attribute("key.299", text("v5"))),
        sdk_record("m", "INFO", *(attribute(f"key.{i}", text("v0")) for i in range(250))),
        KEEP,
    ]
    found = reader.read_batch(records)
    assert found is not None
    assert found == [reader(record) for record in records]
    assert [len(hits or ()) for hits in found] == [9, 0, 1, 36, 0]


def test_remembered_attributes_answer_like_a_fresh_read() -> None:
    # The batch reader remembers each attribute's answer by its wire bytes, in
    # a table that grows and then starts over: 6,000 distinct values (read
    # three times, in batches of 500) go through every stage of it.
    policies = [
        {"match": [{"log_attribute": "user", "regex": "^u-1"}], "keep": "none"},
        {"match": [{"log_attribute": "user", "exists": True}], "keep": "all"},
        {"match": [{"log_attribute": "tenant", "exact": "t-7"}], "keep": "none"},
    ]
    reader = record_reader(policies)
    assert reader.batch is not None
    records = [
        sdk_record(
            "m",
            "INFO",
            attribute("user", text(f"u-{i}")),
            attribute("tenant", text(f"t-{i % 9}")),
            attribute("user", text("u-1")),  # not the first entry: no answer
        )
        for i in range(6000)
    ]
    expected = [reader(record) for record in records]
    assert sum(len(hits) for hits in expected) > 6000  # the answers are not all alike
    for _ in range(3):
        for start in range(0, len(records), 500):
            found = reader.read_batch(records[start : start + 500])
            assert found == expected[start : start + 500], start


def test_every_layout_is_decided_like_the_message_view_a_batch_at_a_time() -> None:
    for name, record in LAYOUTS.items():
        try:
            check_like_messages([KEEP, record], ID_FREE_POLICIES)
        except AssertionError as failed:
            raise AssertionError(f"layout {name!r}: {failed}") from None


@settings(max_examples=300, deadline=None)
@given(RECORDS)
def test_any_record_is_decided_like_the_message_view_a_batch_at_a_time(
    records: list[bytes],
) -> None:
    check_like_messages(records, ID_FREE_POLICIES)


# -- bodies scanned ahead, on their wire bytes ---------------------------------------

BODY_ONLY_POLICIES: list[dict[str, Any]] = [
    {"match": [{"log_field": "body", "contains": "drop-me"}], "keep": "none"},
    {"match": [{"log_field": "body", "starts_with": "sample"}], "keep": "none"},
    {"match": [{"log_field": "body", "exact": "fine"}], "keep": "all"},
    {"match": [{"log_field": "body", "regex": "secret=\\w+"}], "keep": "none"},
    {"match": [{"log_field": "body", "contains": "é"}], "keep": "none"},
    {"match": [{"log_field": "body", "regex": "^x*$"}], "keep": "none"},
    {"match": [{"log_attribute": "svc", "exact": "drop-me"}], "keep": "none"},
]
"""Body conditions that the field's databases answer alone (no exists
condition): the batch reader scans the bodies with the field's matcher, all
of a batch's first, on the record's bytes."""


def body_only_scanner() -> FieldScanner:
    specs = [
        (0, PatternSpec(MatchOp.CONTAINS, "drop-me", False)),
        (1, PatternSpec(MatchOp.REGEX, "^pri[x]", True)),
        (2, PatternSpec(MatchOp.CONTAINS, "é", False)),
        (3, PatternSpec(MatchOp.REGEX, "^x*$", False)),  # matches an empty body
    ]
    return FieldScanner(specs, None, None, memoize=False)


def test_bodies_a_database_answers_alone_are_scanned_ahead_in_c() -> None:
    assert _lean is not None
    reader = record_reader(BODY_ONLY_POLICIES)
    assert reader.batch is not None and matcher_of(reader.body) is not None  # type: ignore[arg-type]
    records = [KEEP, *LAYOUTS.values(), *CHUNKS]
    found = reader.read_batch(records)
    assert found is not None
    for record, hits in zip(records, found, strict=True):
        try:
            expected = reader(record)
        except Exception:
            assert hits is None, record
            continue
        assert hits is None or hits == expected, record
    for name in ("sdk order", "non-ASCII body", "long body", "secret", "sample"):
        assert reader.read_batch([LAYOUTS[name]]) == [reader(LAYOUTS[name])] != [()], name

    scanner = body_only_scanner()
    scanned: list[bytes] = []

    def scan(value: bytes) -> tuple[int, ...]:
        scanned.append(value)
        return scanner.compute(value)

    batch = _lean.Reader(otlp_lean._READABLE_TAGS, scan, None, None, (), None, scanner.matcher)
    bodies = [b"drop-me now", b"PRIX: 5 drop-me", "prix é".encode(), b"", b"nothing"]
    records = [sdk_record(body.decode()) for body in bodies]
    twice = sdk_record("drop-me") + body(text("other"))  # protobuf merges: read the usual way
    broken = sdk_record("x") + body(length_field(1, b"\xc3\x28"))
    not_utf8 = TIME + body(length_field(1, b"drop-me \xc3\x28"))
    found = batch.read([*records, twice, broken, not_utf8, b"\xff"], (7,))
    # An empty body is not scanned, as a record read the usual way.
    assert found == [(7, *scanner.compute(b)) if b else (7,) for b in bodies] + [None] * 4
    assert found[:4] == [(7, 0), (7, 1, 0), (7, 1, 2), (7,)] and scanner.compute(b"") == (3,)
    # Only a body that is not ASCII is handed to the scan (which validates it).
    assert scanned == ["prix é".encode(), b"drop-me \xc3\x28"]


def test_the_batch_reader_refuses_a_body_matcher_it_cannot_scan_with() -> None:
    assert _lean is not None
    scanner = body_only_scanner()
    tags = otlp_lean._READABLE_TAGS
    with pytest.raises(TypeError, match="without a body scan"):
        _lean.Reader(tags, None, None, None, (), None, scanner.matcher)
    with pytest.raises(TypeError, match="a body matcher is"):
        _lean.Reader(tags, scanner.compute, None, None, (), None, object())


@settings(max_examples=200, deadline=None)
@given(RECORDS)
def test_any_record_is_decided_like_the_message_view_with_bodies_scanned_ahead(
    records: list[bytes],
) -> None:
    check_like_messages(records, BODY_ONLY_POLICIES)


# -- one attribute's value, read in C (sample keys, typed checks) ---------------------

ANY_VALUES = [
    text("u-1"),
    text(""),
    text("é"),
    length_field(1, b"\xc3\x28"),  # not UTF-8
    varint_field(2, 1),
    varint_field(2, 0),
    varint_field(2, 300),  # a bool written as 300 is true
    varint_field(3, 42),
    varint_field(3, (1 << 64) - 5),  # -5
    fixed64(4, struct.unpack("<Q", struct.pack("<d", -2.5))[0]),
    length_field(7, b"\x00\xff"),
    length_field(5, length_field(1, text("a"))),  # array
    length_field(6, b""),  # kvlist
    b"",  # no member
    text("first") + varint_field(3, 7),  # the last member wins
    varint_field(3, 7) + text("last"),
    varint_field(3, 7) + length_field(9, b"unknown"),
    b"\x0a\x05ab",  # claims more than it holds
    varint_field(1, 3),  # a string member with a varint's wire type
]
ATTRIBUTE_CHUNKS = [
    *CHUNKS,
    *(attribute("user", value) for value in ANY_VALUES),
    attribute("user", text("x") * 200),  # a two-byte value length
    attribute("u" * 130, text("long key")),
    length_field(6, length_field(2, text("u-3")) + length_field(1, b"user")),  # value first
]
ATTRIBUTE_RECORDS = st.lists(st.sampled_from(ATTRIBUTE_CHUNKS), max_size=8).map(b"".join)


def lean_value(record: bytes, key: str) -> Any:
    """What the Python reading of a lean record finds: the first attribute
    `key`, typed (raises where that reading raises)."""
    at = locate(record, True)
    assert at is not None
    found = find_value(at.attributes, [key])
    return None if found is None else typed_any(found)


def check_attribute(record: bytes, key: str) -> bool:
    """Whether C answered; when it did, it answered as the Python reading."""
    found = _lean.attribute(record, key.encode(), otlp_lean._READABLE_TAGS)
    if found is NotImplemented:
        return False
    expected = lean_value(record, key)
    assert found == expected and type(found) is type(expected), (record, found, expected)
    if parses(record):  # and as the message view, for a record protobuf reads
        message = LogRecord.FromString(record)
        first = next((kv for kv in message.attributes if kv.key == key), None)
        assert found == (None if first is None else typed_any(first.value))
    return True


@settings(max_examples=500, deadline=None)
@given(ATTRIBUTE_RECORDS)
def test_an_attribute_read_in_c_is_what_the_message_view_reads(record: bytes) -> None:
    for key in ("user", "svc", "n", "u" * 130, "absent"):
        check_attribute(record, key)


def test_an_attribute_is_read_in_c_when_the_record_and_value_are_plain() -> None:
    answered = [
        value
        for value in ANY_VALUES
        if check_attribute(sdk_record("m", "INFO", attribute("user", value)), "user")
    ]
    assert answered == ANY_VALUES[:3] + ANY_VALUES[4:11] + ANY_VALUES[14:16]
    assert check_attribute(sdk_record("m", "INFO", attribute("other", text("x"))), "user")
    first = attribute("user", text("a")) + attribute("user", text("b"))
    assert _lean.attribute(KEEP + first, b"user", otlp_lean._READABLE_TAGS) == "a"
