"""OTLP JSON <-> protobuf export requests: what the OTLP specification and
upstream's decoder accept, read into the same messages the protobuf path
gives, and written back as OTLP JSON."""

from __future__ import annotations

import base64
import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from sluice.policy import Signal
from sluice.telemetry.otlp_pbjson import from_json, to_json
from sluice.telemetry.otlp_raw import LeanLogsRequest
from tests.telemetry.otlp_convert import to_proto

TRACE_ID = "5b8efff798038103d269b633813fc60c"
SPAN_ID = "eee19b7ec3c1b174"


def traces() -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    resource = request.resource_spans.add(schema_url="https://opentelemetry.io/schemas/1.21.0")
    resource.resource.attributes.add(key="service.name").value.string_value = "checkout"
    scope = resource.scope_spans.add()
    scope.scope.name, scope.scope.version = "lib", "1.0"
    span = scope.spans.add(name="GET /pay", kind=2, trace_state="k=v", flags=1)
    span.trace_id, span.span_id = bytes.fromhex(TRACE_ID), bytes.fromhex(SPAN_ID)
    span.parent_span_id = bytes(range(8))
    span.start_time_unix_nano, span.end_time_unix_nano = 1544712660000000000, 1544712661000000000
    attributes = span.attributes
    attributes.add(key="int").value.int_value = -(2**63)
    attributes.add(key="double").value.double_value = 0.5
    attributes.add(key="bool").value.bool_value = True
    attributes.add(key="bytes").value.bytes_value = b"\x00\xff\xfe"
    attributes.add(key="empty").value.string_value = ""
    nested = attributes.add(key="nested").value.kvlist_value.values.add(key="list")
    nested.value.array_value.values.add().string_value = "a"
    nested.value.array_value.values.add().int_value = 7
    event = span.events.add(name="exception", time_unix_nano=1544712660500000000)
    event.attributes.add(key="exception.type").value.string_value = "ValueError"
    link = span.links.add(trace_state="x=1")
    link.trace_id, link.span_id = bytes(16), bytes(8)
    span.status.code, span.status.message = 2, "boom"
    return request


def logs() -> ExportLogsServiceRequest:
    request = ExportLogsServiceRequest()
    scope = request.resource_logs.add().scope_logs.add()
    for i in range(3):
        record = scope.log_records.add(
            time_unix_nano=1544712660000000000 + i,
            severity_number=9 + i,
            severity_text="INFO",
            event_name="login" if i else "",
        )
        record.body.string_value = f"user {i} logged in"
        record.attributes.add(key="i").value.int_value = i
        record.trace_id, record.span_id = bytes.fromhex(TRACE_ID), bytes.fromhex(SPAN_ID)
    return request


def metrics() -> ExportMetricsServiceRequest:
    request = ExportMetricsServiceRequest()
    scope = request.resource_metrics.add().scope_metrics.add()
    gauge = scope.metrics.add(name="temperature", unit="Cel").gauge.data_points.add(
        as_double=math.inf, time_unix_nano=1
    )
    gauge.attributes.add(key="room").value.string_value = "kitchen"
    total = scope.metrics.add(name="requests").sum
    total.aggregation_temporality, total.is_monotonic = 2, True
    point = total.data_points.add(as_int=2**63 - 1, start_time_unix_nano=1, time_unix_nano=2)
    exemplar = point.exemplars.add(as_int=5, time_unix_nano=2)
    exemplar.trace_id, exemplar.span_id = bytes.fromhex(TRACE_ID), bytes.fromhex(SPAN_ID)
    histogram = scope.metrics.add(name="latency").histogram
    histogram.aggregation_temporality = 1
    histogram.data_points.add(
        count=3, sum=1.5, bucket_counts=[1, 2], explicit_bounds=[0.1], min=0.1, max=1.0
    )
    exponential = scope.metrics.add(name="size").exponential_histogram.data_points.add(
        scale=-2, zero_count=1, count=4
    )
    exponential.positive.offset, exponential.positive.bucket_counts[:] = -3, [1, 2]
    summary = scope.metrics.add(name="duration").summary.data_points.add(count=2, sum=3.0)
    summary.quantile_values.add(quantile=0.99, value=math.nan)
    return request


SAMPLES = [(Signal.TRACE, traces()), (Signal.LOG, logs()), (Signal.METRIC, metrics())]


@pytest.mark.parametrize(("signal", "message"), SAMPLES, ids=["traces", "logs", "metrics"])
def test_round_trip(signal: Signal, message: Any) -> None:
    """What is written reads back as the same records and is written again
    as the same text (pdata writes empty messages as ``{}``, which read back
    as present: the protobuf then differs by those empty fields only)."""
    body = to_json(signal, message)
    read = from_json(signal, body)
    assert to_json(signal, read) == body
    assert from_json(signal, to_json(signal, read)).SerializeToString() == (
        read.SerializeToString()
    )


@pytest.mark.parametrize(("signal", "message"), SAMPLES, ids=["traces", "logs", "metrics"])
def test_reads_what_the_protobuf_json_mapping_reads(signal: Signal, message: Any) -> None:
    """The reference: json_format with hex ids turned into base64."""
    document = json.loads(to_json(signal, message))
    expected = to_proto(document, signal)
    assert from_json(signal, json.dumps(document).encode()).SerializeToString() == (
        expected.SerializeToString()
    )


def test_logs_are_read_as_lean_logs() -> None:
    lean = from_json(Signal.LOG, to_json(Signal.LOG, logs()))
    assert isinstance(lean, LeanLogsRequest)
    assert len(lean.resource_logs[0].scope_logs[0].log_records) == 3
    assert to_json(Signal.LOG, lean) == to_json(Signal.LOG, logs())


def test_writes_otlp_json() -> None:
    document = json.loads(to_json(Signal.TRACE, traces()))
    span = document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert (span["traceId"], span["spanId"], span["parentSpanId"]) == (
        TRACE_ID,
        SPAN_ID,
        "0001020304050607",
    )
    assert span["kind"] == 2 and span["status"] == {"code": 2, "message": "boom"}
    assert span["startTimeUnixNano"] == "1544712660000000000"
    values = {a["key"]: a["value"] for a in span["attributes"]}
    assert values["int"] == {"intValue": str(-(2**63))}
    assert values["bytes"] == {"bytesValue": base64.b64encode(b"\x00\xff\xfe").decode()}
    assert values["empty"] == {"stringValue": ""}
    # An id of zeros is an empty one to pdata, written "" (ptrace json_test.go).
    assert (span["links"][0]["traceId"], span["links"][0]["spanId"]) == ("", "")
    metric = json.loads(to_json(Signal.METRIC, metrics()))["resourceMetrics"][0]["scopeMetrics"][0]
    assert metric["metrics"][0]["gauge"]["dataPoints"][0]["asDouble"] == "Infinity"
    quantile = metric["metrics"][4]["summary"]["dataPoints"][0]["quantileValues"][0]
    assert quantile == {"quantile": 0.99, "value": "NaN"}


def span_of(document: dict[str, Any]) -> Any:
    body = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [document]}]}]}).encode()
    return from_json(Signal.TRACE, body).resource_spans[0].scope_spans[0].spans[0]


def test_reads_every_spelling_upstream_accepts() -> None:
    span = span_of(
        {
            "trace_id": TRACE_ID.upper(),
            "spanId": SPAN_ID,
            "name": "x",
            "kind": "SPAN_KIND_CLIENT",
            "start_time_unix_nano": 12,
            "endTimeUnixNano": "13",
            "status": {"code": "STATUS_CODE_ERROR"},
            "droppedAttributesCount": 2,
            "attributes": [
                {"key": "b64", "value": {"bytesValue": "AP/+\r\n"}},
                {"key": "d", "value": {"doubleValue": "-Infinity"}},
                {"key": "n", "value": None},
            ],
            "unknownField": {"anything": [1, 2]},
            "parentSpanId": "",
        }
    )
    assert (span.trace_id.hex(), span.span_id.hex(), span.kind) == (TRACE_ID, SPAN_ID, 3)
    assert (span.start_time_unix_nano, span.end_time_unix_nano) == (12, 13)
    assert span.status.code == 2 and span.dropped_attributes_count == 2
    assert span.attributes[0].value.bytes_value == b"\x00\xff\xfe"
    assert span.attributes[1].value.double_value == -math.inf
    assert not span.attributes[2].HasField("value") and span.parent_span_id == b""


def test_text_that_is_not_utf8_reads_as_replacement_characters() -> None:
    body = b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"a\\ud800b\xffc"}]}]}]}'
    span = from_json(Signal.TRACE, body).resource_spans[0].scope_spans[0].spans[0]
    assert span.name == "a\ufffdb\ufffdc"


@pytest.mark.parametrize(
    "body",
    [b"null", b" \r\n\tnull", b"{}garbage", b'{"resourceSpans":[]} {"x":', b"null\xff", b"{}\n{}"],
)
def test_the_request_is_the_first_value_and_may_be_null(body: bytes) -> None:
    # As pdata's jsoniter reader: ReadObjectCB takes null as an empty object
    # and stops after the first complete value, never looking further.
    assert from_json(Signal.TRACE, body) == ExportTraceServiceRequest()


def test_the_rest_of_the_body_is_never_read() -> None:
    body = b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"a"}]}]}]}]]\xff'
    assert from_json(Signal.TRACE, body).resource_spans[0].scope_spans[0].spans[0].name == "a"


@pytest.mark.parametrize(
    "body",
    [b"\xef\xbb\xbf{}", b"\xef\xbb\xbfnull", "{}".encode("utf-16"), "{}".encode("utf-16-le")],
)
def test_a_body_is_utf8_without_byte_order_mark(body: bytes) -> None:
    # jsoniter skips only space, tab, CR and LF before the value and reads bytes:
    # a BOM or a UTF-16 body is "expect { or n" (400 at the receiver).
    with pytest.raises(ValueError, match="not JSON"):
        from_json(Signal.TRACE, body)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"", "not JSON"),
        (b" ", "not JSON"),
        (b"nul", "not JSON"),
        (b"[]", "expected a JSON object"),
        # NaN and Infinity are not JSON values: jsoniter can neither read them
        # as a number nor skip them in an unknown field.
        (
            b'{"resourceSpans":[{"resource":{"attributes":[{"value":{"doubleValue":NaN}}]}}]}',
            "not JSON",
        ),
        (b'{"extra":-Infinity}', "not JSON"),
        (b'{"extra":[Infinity]}', "not JSON"),
        (b'{"resourceSpans": {}}', "resourceSpans: expected a JSON array"),
        (b'{"resourceSpans": [1]}', "expected a JSON object, got 1"),
        (b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"00"}]}]}]}', "invalid length"),
        (b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"spanId":"zzzzzzzzzzzzzzzz"}]}]}]}', "ID"),
        (b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"kind":"NOPE"}]}]}]}', "unknown enum"),
        (b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":5}]}]}]}', "expected a string"),
        (b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"startTimeUnixNano":"-1"}]}]}]}', "integer"),
        (b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"startTimeUnixNano":-1}]}]}]}', "range"),
        (b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"startTimeUnixNano":1.5}]}]}]}', "integer"),
        (b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"flags":true}]}]}]}', "integer"),
        # As pdata: integers are written as integers (jsoniter refuses 1.0 and
        # 1e3), strings as Go's strconv reads them.
        (b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"flags":1.0}]}]}]}', "integer"),
        (b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"flags":1e3}]}]}]}', "integer"),
        (b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"flags":"+1"}]}]}]}', "integer"),
        (b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"flags":" 1"}]}]}]}', "integer"),
        (b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"flags":"1_0"}]}]}]}', "integer"),
        (
            b'{"resourceSpans":[{"resource":{"attributes":[{"value":{"bytesValue":"*"}}]}}]}',
            "base64",
        ),
        # pdata reads bytes as Go's base64.StdEncoding: padded, not URL-safe
        # (upstream's TestReadAttributeValueInvalidBytesValue reads "--").
        (
            b'{"resourceSpans":[{"resource":{"attributes":[{"value":{"bytesValue":"--"}}]}}]}',
            "base64",
        ),
        (
            b'{"resourceSpans":[{"resource":{"attributes":[{"value":{"bytesValue":"AP_-"}}]}}]}',
            "base64",
        ),
        (
            b'{"resourceSpans":[{"resource":{"attributes":[{"value":{"bytesValue":"AA"}}]}}]}',
            "base64",
        ),
        # Padding only ends the last group of four (Go's CorruptInputError).
        (
            b'{"resourceSpans":[{"resource":{"attributes":[{"value":{"bytesValue":"AAAA="}}]}}]}',
            "base64",
        ),
        (
            b'{"resourceSpans":[{"resource":{"attributes":[{"value":{"bytesValue":"AAAA===="}}]}}]}',
            "base64",
        ),
    ],
)
def test_what_is_not_an_export_request(body: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        from_json(Signal.TRACE, body)


@pytest.mark.parametrize(
    ("span", "message"),
    [
        # pdata's ID UnmarshalJSON: the length in bytes first (half of it must
        # be the id's size), then Go's hex.Decode, which takes no space.
        ({"traceId": "01 02030405060708090a0b0c0d0e0f "}, "invalid byte: U\\+0020 ' '$"),
        ({"spanId": "0102030405060708\n"}, "invalid byte: U\\+000A$"),
        ({"spanId": "010203040506070g"}, "invalid byte: U\\+0067 'g'$"),
        ({"spanId": "010203040506070\u00e9"}, "invalid byte: U\\+00C3 '\u00c3'$"),
        ({"parentSpanId": "01020304050607080"}, "encoding/hex: odd length hex string$"),
        ({"traceId": "0102030405060708090a0b0c0d0e0f"}, "invalid length for ID$"),
    ],
)
def test_ids_are_hex_as_go_decodes_it(span: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        span_of(span)


def _in_trace(document: dict[str, Any], link: bool = False) -> bytes:
    span = {"links": [document]} if link else document
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}).encode()


def _in_log(document: dict[str, Any]) -> bytes:
    record = {"body": {}, **document}
    return json.dumps({"resourceLogs": [{"scopeLogs": [{"logRecords": [record]}]}]}).encode()


def _in_exemplar(document: dict[str, Any]) -> bytes:
    gauge = {"dataPoints": [{"exemplars": [document]}]}
    metrics = [{"name": "m", "gauge": gauge}]
    return json.dumps({"resourceMetrics": [{"scopeMetrics": [{"metrics": metrics}]}]}).encode()


@pytest.mark.parametrize(
    ("signal", "body", "message"),
    [
        # The operation and message pdata's readers report (upstream's
        # TestUnmarshalJsoniter*Invalid*IDField and *WrongTraceID cases).
        (Signal.TRACE, _in_trace({"trace_id": "--"}), "readSpan.traceId: parse trace_id:"),
        (Signal.TRACE, _in_trace({"span_id": "--"}), "readSpan.spanId: parse span_id:"),
        (
            Signal.TRACE,
            _in_trace({"parent_span_id": "--"}),
            "readSpan.parentSpanId: parse parent_span_id:",
        ),
        (Signal.TRACE, _in_trace({"trace_id": "--"}, link=True), "readSpanLink: parse trace_id:"),
        (Signal.TRACE, _in_trace({"spanId": "--"}, link=True), "readSpanLink: parse span_id:"),
        (Signal.LOG, _in_log({"traceId": "--"}), "readLog.traceId: parse trace_id:"),
        (Signal.LOG, _in_log({"spanId": "--"}), "readLog.spanId: parse span_id:"),
        (Signal.METRIC, _in_exemplar({"traceId": "--"}), "exemplar.traceId: parse trace_id:"),
        (Signal.METRIC, _in_exemplar({"span_id": "--"}), "exemplar.spanId: parse span_id:"),
    ],
)
def test_an_id_error_names_what_upstream_names(signal: Signal, body: bytes, message: str) -> None:
    with pytest.raises(ValueError) as raised:
        from_json(signal, body)
    assert str(raised.value) == message + "invalid length for ID"


def test_an_id_in_quotes_is_read_without_them() -> None:
    # pdata hands the string to the id's UnmarshalJSON, which drops the
    # quotes around it.
    span = span_of({"traceId": f'"{TRACE_ID}"', "spanId": '""'})
    assert (span.trace_id.hex(), span.span_id) == (TRACE_ID, b"")


def test_integers_as_pdata_reads_them() -> None:
    span = span_of({"droppedAttributesCount": "007", "attributes": [{"value": {"intValue": "+5"}}]})
    assert (span.dropped_attributes_count, span.attributes[0].value.int_value) == (7, 5)
    # scale and offset are read as numbers only (jsoniter's ReadInt32).
    point = {"scale": 1, "positive": {"offset": -2}}
    body = {"resourceMetrics": [{"scopeMetrics": [{"metrics": [{"exponentialHistogram": {}}]}]}]}
    metric = body["resourceMetrics"][0]["scopeMetrics"][0]["metrics"][0]
    metric["exponentialHistogram"]["dataPoints"] = [point]
    read = from_json(Signal.METRIC, json.dumps(body).encode())
    data_point = read.resource_metrics[0].scope_metrics[0].metrics[0].exponential_histogram
    assert (data_point.data_points[0].scale, data_point.data_points[0].positive.offset) == (1, -2)
    for key, value in (("scale", "1"), ("positive", {"offset": "-2"})):
        metric["exponentialHistogram"]["dataPoints"] = [{key: value}]
        with pytest.raises(ValueError, match="integer"):
            from_json(Signal.METRIC, json.dumps(body).encode())


def double_of(value: Any) -> float:
    attribute = span_of({"attributes": [{"value": {"doubleValue": value}}]}).attributes[0]
    return attribute.value.double_value


@pytest.mark.parametrize(
    ("text", "number"),
    [
        # Go's strconv.ParseFloat, as pdata reads a double given as a string
        # (cases from Go's atof_test.go): underscores between digits, hex
        # mantissas with a binary exponent, Inf and NaN in any case.
        ("1_23.50_0_0e+1_2", 1.235e14),
        ("0x1p-2", 0.25),
        ("-0x1_ep-1", -15.0),
        ("0x1fFe2.p0", 131042.0),
        ("0x.1p-2", 0.015625),
        (".5", 0.5),
        ("1e-400", 0.0),
        ("+INFINITY", math.inf),
        ("-Inf", -math.inf),
    ],
)
def test_doubles_in_strings_as_go_parses_them(text: str, number: float) -> None:
    assert double_of(text) == number
    assert math.isnan(double_of("NaN")) and math.isnan(double_of("nan"))


@pytest.mark.parametrize(
    "text",
    [
        # Syntax Go refuses (Python's float takes all but the hex one).
        " 1",
        "1\n",
        "\u0661",  # ARABIC-INDIC DIGIT ONE
        "+nan",
        "-NaN",
        "0x1e2",
        "1p2",
        "1__23.5",
        "0x12._345p+12",
        # Out of range: ParseFloat's ErrRange, which pdata reports.
        "1e400",
        "-1.797693134862315808e308",
        "0x1p1024",
    ],
)
def test_doubles_go_does_not_parse_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="doubleValue"):
        double_of(text)


@pytest.mark.parametrize("number", [b"1e400", b"-2e308", b"1" + b"0" * 400])
def test_double_numbers_out_of_range_are_refused(number: bytes) -> None:
    # jsoniter reads them with ParseFloat too, whose ErrRange pdata reports.
    body = b'{"resourceSpans":[{"resource":{"attributes":[{"value":{"doubleValue":%s}}]}}]}'
    with pytest.raises(ValueError, match="doubleValue"):
        from_json(Signal.TRACE, body % number)


@pytest.mark.parametrize(
    "span",
    [
        {"kind": None},
        {"startTimeUnixNano": None},
        {"attributes": [{"value": {"intValue": None}}]},
        {"attributes": [{"value": {"boolValue": None}}]},
        {"attributes": [{"value": {"doubleValue": None}}]},
    ],
)
def test_null_numbers_bools_and_enums_are_refused(span: dict[str, Any]) -> None:
    # pdata's readers of numbers, bools and enums refuse a null.
    with pytest.raises(ValueError, match="null"):
        span_of(span)


def test_null_is_read_as_pdata_reads_it() -> None:
    span = span_of(
        {
            "name": None,
            "traceId": None,
            "status": None,
            "events": None,
            "attributes": [
                {"key": "s", "value": {"stringValue": None}},
                {"key": "b", "value": {"bytesValue": None}},
                {"key": "a", "value": {"arrayValue": None}},
                {"key": "l", "value": {"kvlistValue": {"values": [None]}}},
                None,
            ],
        }
    )
    assert (span.name, span.trace_id, len(span.events)) == ("", b"", 0)
    values = [attribute.value for attribute in span.attributes]
    assert [value.WhichOneof("value") for value in values[:4]] == [
        "string_value",
        "bytes_value",
        "array_value",
        "kvlist_value",
    ]
    assert values[3].kvlist_value.values[0].key == ""
    assert span.attributes[4].key == "" and not span.attributes[4].HasField("value")
    body = b'{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"m","sum":null}]}]}]}'
    metric = from_json(Signal.METRIC, body).resource_metrics[0].scope_metrics[0].metrics[0]
    assert metric.WhichOneof("data") == "sum"


def nested_log_body(depth: int) -> bytes:
    """A log whose body nests `depth` key-value lists (four JSON levels each)."""
    opening = b'{"kvlistValue":{"values":[{"key":"k","value":' * depth
    value = opening + b'{"stringValue":"leaf"}' + b"}]}}" * depth
    return b'{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":' + value + b"}]}]}]}"


def test_nesting_is_bounded_by_what_protobuf_parses() -> None:
    # The request, resource, scope, record and body are depths 0 to 4; each
    # list adds a KeyValueList, a KeyValue and an AnyValue: 32 lists reach 100.
    deepest = from_json(Signal.LOG, nested_log_body(32))
    assert b"leaf" in deepest.resource_logs[0].scope_logs[0].log_records[0]
    assert b"leaf" in to_json(Signal.LOG, deepest)
    for depth in (33, 240, 400):
        with pytest.raises(ValueError, match="nested too deeply"):
            from_json(Signal.LOG, nested_log_body(depth))


_KEYS = st.sampled_from(
    [
        "resourceSpans",
        "scopeSpans",
        "spans",
        "name",
        "traceId",
        "kind",
        "attributes",
        "key",
        "value",
        "stringValue",
        "intValue",
        "kvlistValue",
        "values",
        "events",
        "status",
        "code",
    ]
)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_KEYS, _JSON, max_size=3))
def test_any_document_is_read_or_refused_with_value_error(document: dict[str, Any]) -> None:
    body = json.dumps(document).encode()
    try:
        message = from_json(Signal.TRACE, body)
    except ValueError:
        return
    written = to_json(Signal.TRACE, message)
    assert to_json(Signal.TRACE, from_json(Signal.TRACE, written)) == written
