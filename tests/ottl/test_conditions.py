"""Conditions over the standard items of each context (tests/ottl/items.py),
with the results upstream's rules give: comparison typing (compare.go and
the LANGUAGE.md table: int vs double, strings, bools, nil, byte slices,
maps and slices equal only as the same value), indexing errors of its
contexts, its converters, and the precedence of ``not``, ``and`` and ``or``
with left-to-right short-circuits (an error after a decided ``or`` never
happens)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from sluice.collector import pdata
from sluice.ottl import OttlConfigError
from sluice.ottl.contexts.log import LogItem
from tests.ottl.items import (
    BODY,
    CONTEXTS,
    NAN,
    NO_BODY,
    SPAN_ID,
    add_attributes,
    datapoint_item,
    evaluate,
    log_item,
    log_request,
    metric_item,
    span_event_item,
    span_item,
)

ERROR = "error"
L = log_item
T, F = True, False


def _body(value: Any) -> Callable[[], Any]:
    return lambda: log_item(value)


def _child_span(parent: bytes) -> Callable[[], Any]:
    def item() -> Any:
        span = span_item()
        span.span.parent_span_id = parent
        return span

    return item


ROWS: list[tuple[str, str, Callable[[], Any], bool | str]] = [
    # -- log: fields, prefixes, enums ------------------------------------------
    ("log", f'body == "{BODY}"', L, T),
    ("log", f'body.string == "{BODY}"', L, T),
    ("log", 'IsMatch(body, "password=\\\\w+")', L, T),
    ("log", 'IsMatch(body, "^POST")', L, F),
    ("log", 'IsMatch(body, "(?i)get /API")', L, T),
    ("log", "severity_number == SEVERITY_NUMBER_INFO", L, T),
    ("log", "severity_number < SEVERITY_NUMBER_WARN", L, T),
    ("log", "severity_number >= SEVERITY_NUMBER_INFO2", L, F),
    ("log", "severity_number == 9", L, T),
    ("log", "severity_number == 9.0", L, T),
    ("log", "severity_number > 8.5", L, T),
    ("log", 'severity_number == "9"', L, F),
    ("log", 'severity_number != "9"', L, T),
    ("log", 'severity_number < "9"', L, F),
    ("log", 'severity_text == "INFO"', L, T),
    ("log", 'severity_text < "WARN"', L, T),
    ("log", 'severity_text > "info"', L, F),
    ("log", "flags == 1", L, T),
    ("log", "dropped_attributes_count == 2", L, T),
    ("log", "time_unix_nano == 1700000000000000000", L, T),
    ("log", 'trace_id.string == "0102030405060708090a0b0c0d0e0f10"', L, T),
    ("log", 'span_id.string == "0102030405060708"', L, T),
    # -- log attributes: types -------------------------------------------------
    ("log", 'attributes["http.method"] == "GET"', L, T),
    ("log", 'attributes["http.status_code"] == 200', L, T),
    ("log", 'attributes["http.status_code"] == "200"', L, F),
    ("log", 'attributes["http.status_code"] >= 200.0', L, T),
    ("log", 'attributes["duration"] > 12', L, T),
    ("log", 'attributes["duration"] == 12.5', L, T),
    ("log", 'attributes["sampled"] == true', L, T),
    ("log", 'attributes["sampled"] == 1', L, F),
    ("log", 'attributes["sampled"] > false', L, T),
    ("log", 'attributes["sampled"] < true', L, F),
    ("log", 'attributes["missing"] == nil', L, T),
    ("log", 'attributes["missing"] != nil', L, F),
    ("log", 'attributes["missing"] <= nil', L, T),
    ("log", 'attributes["missing"] < nil', L, F),
    ("log", 'attributes["missing"] == ""', L, F),
    ("log", 'attributes["missing"] != 0', L, T),
    ("log", 'attributes["http.method"] != nil', L, T),
    ("log", 'attributes["empty"] == nil', L, T),
    ("log", 'attributes["empty_bytes"] == nil', L, T),
    ("log", 'attributes["payload"] == 0x0102', L, T),
    ("log", 'attributes["payload"] < 0x0103', L, T),
    ("log", 'attributes["payload"] == "0102"', L, F),
    ("log", 'attributes["payload"] > nil', L, F),
    ("log", 'attributes["dup"] == "one"', L, T),
    ("log", 'attributes["unicode"] == "héllo"', L, T),
    ("log", 'attributes["http.method"] == attributes["http.method"]', L, T),
    ("log", 'attributes["nested"] == attributes["nested"]', L, T),
    ("log", 'attributes["nested"] == attributes["html"]', L, F),
    ("log", 'attributes["nested"] < attributes["nested"]', L, F),
    ("log", 'attributes["list"] == attributes["list"]', L, T),
    # maps and slices are equal only as one value read twice (v0.115 compares them with
    # Go's ==, which is true only for the same pcommon storage), never for equal contents
    ("log", 'body["a"] == body["b"]', _body({"a": {"x": 1}, "b": {"x": 1}}), F),
    ("log", 'body["a"] != body["b"]', _body({"a": {"x": 1}, "b": {"x": 1}}), T),
    ("log", 'body["a"] == body["a"]', _body({"a": {"x": 1}, "b": {"x": 1}}), T),
    ("log", 'body["a"] != body["a"]', _body({"a": {"x": 1}, "b": {"x": 1}}), F),
    ("log", 'body["a"] == body["b"]', _body({"a": [1, "x"], "b": [1, "x"]}), F),
    ("log", 'body["a"] == body["a"]', _body({"a": [1, "x"], "b": [1, "x"]}), T),
    ("log", "body == body", _body({"a": 1}), T),
    ("log", 'body["a"] == body["b"]', _body({"a": {}, "b": {}}), F),
    # -- log attributes: indexing ----------------------------------------------
    ("log", 'attributes["nested"]["a"]["b"] == "deep"', L, T),
    ("log", 'attributes["nested"]["a"]["missing"] == nil', L, T),
    ("log", 'attributes["nested"]["n"] == 1', L, T),
    ("log", 'attributes["list"][1] == 2', L, T),
    ("log", 'attributes["list"][2] == 3.5', L, T),
    ("log", 'attributes["http.method"]["x"] == nil', L, ERROR),
    ("log", 'attributes["list"][5] == nil', L, ERROR),
    ("log", 'attributes["list"]["a"] == nil', L, ERROR),
    ("log", 'attributes["nested"][0] == nil', L, ERROR),
    ("log", "attributes[0] == nil", L, ERROR),
    ("log", 'attributes["missing"]["x"] == nil', L, T),
    # -- log converters --------------------------------------------------------
    ("log", "Len(attributes) == 13", L, T),
    ("log", f"Len(body) == {len(BODY)}", L, T),
    ("log", 'Len(attributes["list"]) == 3', L, T),
    ("log", 'Len(attributes["nested"]) == 2', L, T),
    ("log", 'Len(attributes["unicode"]) == 6', L, T),
    ("log", 'Len(attributes["payload"]) == 2', L, T),
    ("log", 'Len(attributes["missing"]) == 0', L, ERROR),
    ("log", 'Len(attributes["http.status_code"]) > 0', L, ERROR),
    ("log", "IsString(body)", L, T),
    ("log", 'IsString(attributes["http.status_code"])', L, F),
    ("log", 'IsInt(attributes["http.status_code"])', L, T),
    ("log", 'IsInt(attributes["duration"])', L, F),
    ("log", 'IsInt(attributes["sampled"])', L, F),
    ("log", 'IsDouble(attributes["duration"])', L, T),
    ("log", 'IsBool(attributes["sampled"])', L, T),
    ("log", 'IsBool(attributes["missing"])', L, F),
    ("log", 'IsMap(attributes["nested"])', L, T),
    ("log", "IsMap(attributes)", L, T),
    ("log", "IsMap(body)", L, F),
    ("log", 'IsString(attributes["http.method"]["x"])', L, ERROR),
    ("log", "IsString(target=body) == true", L, T),
    ("log", 'IsMatch(pattern="users", target=body)', L, T),
    ("log", 'IsMatch(attributes["http.status_code"], "^2\\\\d\\\\d$")', L, T),
    ("log", 'IsMatch(attributes["duration"], "^12\\\\.5$")', L, T),
    ("log", 'IsMatch(attributes["sampled"], "^true$")', L, T),
    ("log", 'IsMatch(attributes["missing"], ".*")', L, F),
    ("log", 'IsMatch(attributes["payload"], "^0102$")', L, T),
    (
        "log",
        'IsMatch(attributes["nested"], "^\\\\{\\"a\\":\\\\{\\"b\\":\\"deep\\"\\\\},\\"n\\":1\\\\}$")',
        L,
        T,
    ),
    ("log", 'IsMatch(attributes["list"], "^\\\\[\\"x\\",2,3.5\\\\]$")', L, T),
    ("log", 'IsMatch(attributes["html"], "u003ca\\\\\\\\u0026b\\\\\\\\u003e")', L, T),
    ("log", 'IsMatch(attributes["http.method"]["x"], "x")', L, ERROR),
    ("log", "Len(body)", L, ERROR),
    ("log", 'IsMatch("abc", "b")', L, T),
    # -- log: resource and scope -----------------------------------------------
    ("log", 'resource.attributes["service.name"] == "checkout"', L, T),
    ("log", 'resource.attributes["count"] > 2', L, T),
    ("log", "resource.dropped_attributes_count == 0", L, T),
    ("log", 'resource.schema_url == "https://schema/0"', L, T),
    ("log", 'instrumentation_scope.name == "app.logger"', L, T),
    ("log", 'instrumentation_scope.version == "1.2.0"', L, T),
    ("log", 'instrumentation_scope.attributes["lib"] == "otel"', L, T),
    ("log", 'IsMatch(resource.attributes["host.name"], "^web-\\\\d+$")', L, T),
    # -- precedence and short-circuits -----------------------------------------
    ("log", "true or false and false", L, T),
    ("log", "(true or false) and false", L, F),
    ("log", "not true or true", L, T),
    ("log", "not (true or true)", L, F),
    ("log", 'not severity_text == "INFO"', L, F),
    ("log", 'not severity_text == "DEBUG" and body != nil', L, T),
    ("log", "false or not false and true", L, T),
    (
        "log",
        'severity_text == "DEBUG" or IsMatch(body, "users") and attributes["sampled"] == true',
        L,
        T,
    ),
    (
        "log",
        'severity_text == "INFO" and (IsMatch(body, "nope") or attributes["duration"] < 0)',
        L,
        F,
    ),
    ("log", 'true or attributes["http.method"]["x"] == nil', L, T),
    ("log", 'attributes["http.method"]["x"] == nil or true', L, ERROR),
    ("log", 'false and Len(attributes["missing"]) > 0', L, F),
    ("log", 'Len(attributes) > 0 and Len(attributes["missing"]) > 0', L, ERROR),
    ("log", 'not Len(attributes["missing"]) > 0', L, ERROR),
    # -- literals --------------------------------------------------------------
    ("log", "1 == 1.0", L, T),
    ("log", '"a" < "b"', L, T),
    ("log", "nil == nil", L, T),
    ("log", "nil != nil", L, F),
    ("log", "nil >= nil", L, T),
    ("log", "0x01 < 0x02", L, T),
    ("log", "true > false", L, T),
    ("log", '"1" == 1', L, F),
    ("log", "-1 < 0", L, T),
    ("log", "1.5 >= 1", L, T),
    ("log", "-.5 < 0", L, T),
    ("log", "9007199254740993 == 9007199254740992.0", L, T),
    ("log", 'Len("héllo") == 6', L, T),
    ("log", '"\\u00e9" == "é"', L, T),
    # -- other bodies ----------------------------------------------------------
    ("log", 'body["user"] == "alice"', _body({"user": "alice", "n": 3}), T),
    ("log", "IsMap(body)", _body({"user": "alice", "n": 3}), T),
    (
        "log",
        'IsMatch(body, "^\\\\{\\"n\\":3,\\"user\\":\\"alice\\"\\\\}$")',
        _body({"user": "alice", "n": 3}),
        T,
    ),
    (
        "log",
        'body.string == "{\\"n\\":3,\\"user\\":\\"alice\\"}"',
        _body({"user": "alice", "n": 3}),
        T,
    ),
    ("log", 'body["x"] == nil', _body(42), ERROR),
    ("log", "body == 42", _body(42), T),
    ("log", 'IsMatch(body, "^42$")', _body(42), T),
    ("log", 'body.string == "42"', _body(42), T),
    ("log", "body == nil", _body(NO_BODY), T),
    ("log", 'IsMatch(body, ".*")', _body(NO_BODY), F),
    ("log", 'body.string == ""', _body(NO_BODY), T),
    ("log", 'IsMatch(body, "x")', _body(NAN), ERROR),
    ("log", "body == body", _body(NAN), F),
    ("log", 'IsMatch(body, "^1e\\\\+21$")', _body(1e21), T),
    ("log", 'IsMatch(body, "^1e-07$")', _body(1e-7), F),
    ("log", 'IsMatch(body, "^1e-7$")', _body(1e-7), T),
    ("log", 'IsMatch(body, "^100000$")', _body(100000.0), T),
    ("log", 'body[1] == "b"', _body(["a", "b"]), T),
    ("log", 'body["k"] == nil', _body(["a", "b"]), ERROR),
    ("log", 'body.string == "AQI="', _body(b"\x01\x02"), T),
    ("log", 'IsMatch(body, "^0102$")', _body(b"\x01\x02"), T),
    # -- span ------------------------------------------------------------------
    ("span", 'name == "GET /users"', span_item, T),
    ("span", "kind == SPAN_KIND_SERVER", span_item, T),
    ("span", "kind == 2", span_item, T),
    ("span", 'kind.string == "Server"', span_item, T),
    ("span", 'kind.deprecated_string == "SPAN_KIND_SERVER"', span_item, T),
    ("span", "status.code == STATUS_CODE_ERROR", span_item, T),
    ("span", "status.code != STATUS_CODE_OK", span_item, T),
    ("span", 'status.message == "boom"', span_item, T),
    ("span", 'attributes["http.route"] == "/users"', span_item, T),
    ("span", "Len(events) == 1", span_item, T),
    ("span", "Len(links) == 1", span_item, T),
    ("span", 'parent_span_id.string == "0000000000000000"', span_item, T),
    ("span", 'trace_state == "a=1,b=2"', span_item, T),
    ("span", 'trace_state["a"] == "1"', span_item, T),
    ("span", 'trace_state["b"] == "2"', span_item, T),
    ("span", 'trace_state["c"] == ""', span_item, T),
    ("span", 'trace_state["c"] == nil', span_item, F),
    ("span", "trace_state[0] == nil", span_item, ERROR),
    ("spanevent", 'span.trace_state["a"] == "1"', span_event_item, T),
    ("span", "start_time_unix_nano < end_time_unix_nano", span_item, T),
    ("span", "dropped_events_count == 0", span_item, T),
    ("span", 'resource.attributes["host.name"] == "localhost"', span_item, F),
    ("span", 'IsMatch(name, "^GET")', span_item, T),
    ("span", 'attributes["retries"] > 2 and kind == SPAN_KIND_SERVER', span_item, T),
    ("span", 'instrumentation_scope.name == "tracer"', span_item, T),
    # IsRootSpan (the filter processor's span functions have it): no parent, or an all-zero one
    ("span", "IsRootSpan()", span_item, T),
    ("span", "IsRootSpan() == true", span_item, T),
    ("span", "IsRootSpan()", _child_span(bytes(8)), T),
    ("span", "IsRootSpan()", _child_span(SPAN_ID), F),
    ("span", "not IsRootSpan() and kind == SPAN_KIND_SERVER", _child_span(SPAN_ID), T),
    # a function without parameters ignores its arguments, as upstream's parser does
    ("span", "IsRootSpan(1, nme)", span_item, T),
    # -- span event ------------------------------------------------------------
    ("spanevent", 'name == "grpc.call"', span_event_item, T),
    ("spanevent", 'attributes["grpc"] == true', span_event_item, T),
    ("spanevent", 'IsMatch(name, ".*grpc.*")', span_event_item, T),
    ("spanevent", 'span.name == "GET /users"', span_event_item, T),
    ("spanevent", "span.kind == SPAN_KIND_SERVER", span_event_item, T),
    ("spanevent", 'attributes["code"] == 14', span_event_item, T),
    ("spanevent", "time_unix_nano == 5", span_event_item, T),
    ("spanevent", 'span.attributes["http.route"] == "/users"', span_event_item, T),
    # -- metric ----------------------------------------------------------------
    ("metric", 'name == "http.requests"', metric_item, T),
    ("metric", "type == METRIC_DATA_TYPE_SUM", metric_item, T),
    ("metric", "type == METRIC_DATA_TYPE_HISTOGRAM", metric_item, F),
    ("metric", "aggregation_temporality == AGGREGATION_TEMPORALITY_CUMULATIVE", metric_item, T),
    ("metric", "is_monotonic == true", metric_item, T),
    ("metric", 'unit == "1"', metric_item, T),
    ("metric", 'description == "reqs"', metric_item, T),
    ("metric", "Len(data_points) == 2", metric_item, T),
    ("metric", 'HasAttrKeyOnDatapoint("method")', metric_item, T),
    ("metric", 'HasAttrKeyOnDatapoint("code")', metric_item, T),
    ("metric", 'HasAttrKeyOnDatapoint("nope")', metric_item, F),
    ("metric", 'HasAttrOnDatapoint("method", "GET")', metric_item, T),
    ("metric", 'HasAttrOnDatapoint("method", "POST")', metric_item, F),
    ("metric", 'HasAttrOnDatapoint("code", "500")', metric_item, F),
    ("metric", "type == METRIC_DATA_TYPE_GAUGE", lambda: metric_item(1), T),
    ("metric", "aggregation_temporality == nil", lambda: metric_item(1), T),
    ("metric", "is_monotonic == nil", lambda: metric_item(1), T),
    ("metric", "type == METRIC_DATA_TYPE_NONE", lambda: metric_item(2), T),
    ("metric", 'HasAttrKeyOnDatapoint("x")', lambda: metric_item(2), ERROR),
    ("metric", "Len(data_points) == 0", lambda: metric_item(2), ERROR),
    (
        "metric",
        "aggregation_temporality == AGGREGATION_TEMPORALITY_DELTA",
        lambda: metric_item(3),
        T,
    ),
    # -- data point ------------------------------------------------------------
    ("datapoint", 'attributes["method"] == "GET"', datapoint_item, T),
    ("datapoint", "value_int == 4", datapoint_item, T),
    ("datapoint", "value_double == 0.0", datapoint_item, T),
    ("datapoint", 'metric.name == "http.requests"', datapoint_item, T),
    ("datapoint", "metric.type == METRIC_DATA_TYPE_SUM", datapoint_item, T),
    ("datapoint", "count == nil", datapoint_item, T),
    ("datapoint", "flags == FLAG_NONE", datapoint_item, T),
    ("datapoint", 'attributes["code"] == 500', lambda: datapoint_item(0, 1), T),
    ("datapoint", "value_double == 0.5", lambda: datapoint_item(1), T),
    ("datapoint", "value_int == 0", lambda: datapoint_item(1), T),
    ("datapoint", "count == 10", lambda: datapoint_item(3), T),
    ("datapoint", "sum == 2.5", lambda: datapoint_item(3), T),
    ("datapoint", "value_int == nil", lambda: datapoint_item(3), T),
    ("datapoint", "Len(bucket_counts) == 3", lambda: datapoint_item(3), T),
    ("datapoint", "Len(explicit_bounds) == 2", lambda: datapoint_item(3), T),
    ("datapoint", "Len(exemplars) == 0", lambda: datapoint_item(3), T),
    ("datapoint", 'resource.attributes["service.name"] == "checkout"', datapoint_item, T),
]


def test_the_table_is_large_enough() -> None:
    assert len(ROWS) >= 100
    assert {context for context, *_ in ROWS} == set(CONTEXTS)


@pytest.mark.parametrize(("context", "condition", "item", "expected"), ROWS)
def test_condition(
    context: str, condition: str, item: Callable[[], Any], expected: bool | str
) -> None:
    assert evaluate(CONTEXTS[context], condition, item()) == expected


CONFIG_ERRORS = [
    ("log", "Foo(body)", 'undefined function "Foo"'),
    ("log", "UnknownFunc(body)", 'undefined function "UnknownFunc"'),
    ("log", "IsList(body)", 'function "IsList" is not supported by Sluice'),
    ("log", 'ParseJSON(body)["a"] == 1', 'function "ParseJSON" is not supported'),
    ("log", 'set(attributes["a"], 1)', "condition has invalid syntax"),
    ("log", "foo(body) == 1", "converter names must start with an uppercase letter but got 'foo'"),
    ("log", "1 < set(body)", "converter names must start with an uppercase letter but got 'set'"),
    ("log", "bodyx == 1", 'segment "bodyx" from path "bodyx" is not a valid path'),
    ("log", "body.x == 1", 'segment "x" from path "body.x" is not a valid path'),
    # event_name came to the log context after v0.115 (upstream #40311)
    ("log", 'event_name == "x"', 'segment "event_name" from path "event_name" is not a valid'),
    ("log", 'span.name == "x"', 'segment "span" from path "span.name" is not a valid path'),
    # the filter processor's parsers take no context names (upstream v0.115 creates them
    # without EnablePathContextNames): a context's own name, or "scope", is an unknown segment
    ("log", 'log.body == "x"', 'segment "log" from path "log.body" is not a valid path'),
    ("log", 'scope.name == "x"', 'segment "scope" from path "scope.name" is not a valid path'),
    ("span", 'span.name == "x"', 'segment "span" from path "span.name" is not a valid path'),
    ("span", "Len(span.links) == 1", 'segment "span" from path "span.links" is not'),
    ("spanevent", "spanevent.name == 1", 'segment "spanevent" from path "spanevent.name" is'),
    ("spanevent", "scope.name == 1", 'segment "scope" from path "scope.name" is'),
    ("metric", 'metric.name == "x"', 'segment "metric" from path "metric.name" is not a'),
    ("datapoint", "datapoint.flags == 0", 'segment "datapoint" from path "datapoint.flags"'),
    ("datapoint", 'scope.name == "x"', 'segment "scope" from path "scope.name" is not a'),
    (
        "log",
        'IsMatch(body, "(")',
        "the pattern supplied to IsMatch is not a valid regexp pattern: "
        "error parsing regexp: missing closing ): `(`",
    ),
    ("log", 'IsMatch(body, "\\d+")', "invalid quoted string"),
    ("log", "time_unix_nano + 1 > 0", "math expressions are not supported"),
    ("log", 'attributes["a"] == ["x"]', "lists are not supported"),
    ("log", 'attributes["a"] == {"x": 1}', "maps are not supported"),
    ("log", "time > 0", 'path "time" is not supported by Sluice'),
    ("log", "trace_id == 0x01", "compare trace_id.string"),
    ("log", "severity_number == SPAN_KIND_SERVER", "enum symbol, SPAN_KIND_SERVER, not found"),
    ("log", 'HasAttrOnDatapoint("a", "b")', 'undefined function "HasAttrOnDatapoint"'),
    ("log", "IsMatch(body)", "incorrect number of arguments. Expected: 2 Received: 1"),
    ("log", "IsMatch(body, body)", "must be a string"),
    ("log", 'IsMatch(target=body, "x")', "unnamed argument used after named argument"),
    ("log", 'IsMatch(body, regex="x")', "no such parameter: regex"),
    ("log", 'attributes["a"] ==', "condition has invalid syntax"),
    ("log", 'attributes[test] == "pass"', "condition has invalid syntax"),
    ("log", 'attributes["a"]', "condition has invalid syntax"),
    ("log", "not not true", "condition has invalid syntax"),
    ("log", 'cache["a"] == nil', "the filter processor has no cache"),
    ("log", "attributes.x == 1", 'the path section "x" was not used by the context'),
    ("log", 'severity_text["a"] == 1', 'the keys indexing "severity_text" were not used'),
    # keys on a segment that takes none, checked segment by segment as upstream's isComplete
    ("log", 'body["a"].string == "x"', 'the keys indexing "body" were not used'),
    ("log", 'body.string["a"] == "x"', 'the keys indexing "string" were not used'),
    ("log", 'trace_id["a"].string == "x"', 'the keys indexing "trace_id" were not used'),
    ("log", 'severity_text["a"].x == 1', 'the keys indexing "severity_text" were not used'),
    ("span", 'kind["a"].string == "x"', 'the keys indexing "kind" were not used'),
    ("span", 'status["a"].code == 1', 'the keys indexing "status" were not used'),
    ("span", 'span_id[0].string == "x"', 'the keys indexing "span_id" were not used'),
    ("log", "Len(attributes)[0] == 1", "indexing the result of Len is not supported"),
    ("span", "events == nil", "outside Len()"),
    ("span", "status == nil", "compare status.code"),
    ("spanevent", "kind == 1", 'segment "kind" from path "kind"'),
    ("metric", 'attributes["a"] == "b"', 'segment "attributes" from path "attributes[a]" is'),
    # upstream's path text (buildOriginalText): keys unquoted, the whole Go-quoted
    ("log", 'atributes["a"][0] == 1', 'segment "atributes" from path "atributes[a][0]" is'),
    ("log", 'atributes["x\\"y"] == 1', 'segment "atributes" from path "atributes[x\\"y]" is'),
    # an unknown resource or scope segment is named before its keys or later sections
    (
        "log",
        'resource.atributes["k"] == 1',
        'segment "atributes" from path "resource.atributes[k]"',
    ),
    ("span", "resource.nme.x == 1", 'segment "nme" from path "resource.nme.x" is'),
    ("log", 'instrumentation_scope.nme["k"] == 1', 'segment "nme" from path'),
    ("datapoint", "instrumentation_scope.nme.x == 1", 'segment "nme" from path'),
    ("datapoint", 'HasAttrKeyOnDatapoint("a")', 'undefined function "HasAttrKeyOnDatapoint"'),
    ("spanevent", "IsRootSpan()", 'undefined function "IsRootSpan"'),
    ("log", "IsRootSpan()", 'undefined function "IsRootSpan"'),
    ("datapoint", "positive.offset == 1", "exponential histogram buckets"),
]


@pytest.mark.parametrize(("context", "condition", "problem"), CONFIG_ERRORS)
def test_config_errors_name_the_condition_and_the_construct(
    context: str, condition: str, problem: str
) -> None:
    with pytest.raises(OttlConfigError) as raised:
        evaluate(CONTEXTS[context], condition, None)
    message = str(raised.value)
    quoted = condition.replace("\\", "\\\\").replace('"', '\\"')
    assert message.startswith(f'unable to parse OTTL condition "{quoted}": ')
    assert problem in message


PATH_ERROR = (
    'segment "bodyx" from path "bodyx" is not a valid path nor a valid OTTL keyword for the log '
    "context - review https://github.com/open-telemetry/opentelemetry-collector-contrib/tree/main"
    "/pkg/ottl/contexts/ottllog to see all valid paths"
)


@pytest.mark.parametrize(
    ("context", "condition", "problem"),
    [
        (
            "log",
            "IsMatch(body)",
            'error while parsing arguments for call to "IsMatch": incorrect number of '
            "arguments. Expected: 2 Received: 1",
        ),
        (
            "log",
            'IsMatch(body, "x", "y")',
            'error while parsing arguments for call to "IsMatch": incorrect number of '
            "arguments. Expected: 2 Received: 3",
        ),
        (
            "log",
            'IsMatch(target=body, "x", "y")',
            'error while parsing arguments for call to "IsMatch": unnamed argument used after '
            "named argument",
        ),
        (
            "log",
            'IsMatch(body, regex="x")',
            'error while parsing arguments for call to "IsMatch": no such parameter: regex',
        ),
        (
            "log",
            "IsMatch(body, 1)",
            'error while parsing arguments for call to "IsMatch": invalid argument at '
            "position 1: must be a string",
        ),
        (
            "log",
            "IsMatch(pattern=1, target=body)",
            'error while parsing arguments for call to "IsMatch": invalid argument at '
            "position 0: must be a string",
        ),
        (
            "log",
            'IsMatch(bodyx, "x")',
            'error while parsing arguments for call to "IsMatch": invalid argument at '
            f"position 0: {PATH_ERROR}",
        ),
        (
            "log",
            'not IsMatch(body, "x") and IsMatch(bodyx, "x")',
            'error while parsing arguments for call to "IsMatch": invalid argument at '
            f"position 0: {PATH_ERROR}",
        ),
        (
            "log",
            "IsString(Foo(body))",
            'error while parsing arguments for call to "IsString": invalid argument at '
            'position 0: undefined function "Foo"',
        ),
        (
            "log",
            "IsString(SEVERITY_NUMBER_FOO)",
            'error while parsing arguments for call to "IsString": invalid argument at '
            "position 0: enum symbol, SEVERITY_NUMBER_FOO, not found",
        ),
        (
            "log",
            'Len(IsMatch(bodyx, "x")) > 0',
            'error while parsing arguments for call to "Len": invalid argument at position 0: '
            'error while parsing arguments for call to "IsMatch": invalid argument at '
            f"position 0: {PATH_ERROR}",
        ),
        (
            "metric",
            'HasAttrOnDatapoint(name, "x")',
            'error while parsing arguments for call to "HasAttrOnDatapoint": invalid argument '
            "at position 0: must be a string",
        ),
        (
            "log",
            'IsMatch(body, "(")',
            "couldn't create function: the pattern supplied to IsMatch is not a valid regexp "
            "pattern: error parsing regexp: missing closing ): `(`",
        ),
    ],
)
def test_argument_errors_are_wrapped_as_upstreams_function_calls(
    context: str, condition: str, problem: str
) -> None:
    """Upstream's newFunctionCall wraps what is wrong with a call's arguments
    in 'error while parsing arguments for call to "Name": ', and buildArgs
    what is wrong with one of them in 'invalid argument at position N: ' (N
    its place in the call, named or not); unnamed-after-named is checked
    before the count. A function that cannot be created (a bad pattern) is
    'couldn't create function: ' alone."""
    with pytest.raises(OttlConfigError) as raised:
        evaluate(CONTEXTS[context], condition, None)
    quoted = condition.replace("\\", "\\\\").replace('"', '\\"')
    assert str(raised.value) == f'unable to parse OTTL condition "{quoted}": {problem}'


@pytest.mark.parametrize(
    ("condition", "named"),
    [
        ("Foo(body)", '"Foo(body)"'),
        ('attributes[test] == "pass"', '"attributes[test] == \\"pass\\""'),
        ('IsMatch(body, "\\\\d+") or Foo()', '"IsMatch(body, \\"\\\\\\\\d+\\") or Foo()"'),
        ("Foo(\n\tbody)", '"Foo(\\n\\tbody)"'),
        ("Foo(\x00) or \u00a0Foo(\u00e9)", '"Foo(\\x00) or \\u00a0Foo(\u00e9)"'),
    ],
)
def test_config_errors_name_the_condition_as_go_quotes_it(condition: str, named: str) -> None:
    """Upstream's ParseConditions names a condition with Go's ``%q``: its
    quotes and backslashes escaped, characters that are not printable as
    escapes (so a filter's error shows ``"a == \\"b\\""``)."""
    with pytest.raises(OttlConfigError) as raised:
        evaluate(CONTEXTS["log"], condition, None)
    assert str(raised.value).startswith(f"unable to parse OTTL condition {named}: ")


@pytest.mark.parametrize(
    ("condition", "problem"),
    [
        (
            "invalid condition",
            '1:9: unexpected token "condition" (expected <opcomparison> Value)',
        ),
        (
            'set(attributes["x"], "y")',
            '1:26: unexpected token "<EOF>" (expected <opcomparison> Value)',
        ),
        ('attributes["a"]', '1:16: unexpected token "<EOF>" (expected <opcomparison> Value)'),
        ("body ==", '1:8: unexpected token "<EOF>"'),
        ("body\n  == ", '2:6: unexpected token "<EOF>"'),
        (
            'attributes[test] == "pass"',
            '1:12: unexpected token "test" (expected (<string> | <int>) "]")',
        ),
        ('body == "x" "y"', '1:13: unexpected token "y"'),
        ("1 < 2 < 3", '1:7: unexpected token "<"'),
        ('$foo == 1 and body == "x"', '1:1: invalid input text "$foo == 1 and bo..."'),
        ('body == "x', '1:9: invalid input text "\\"x"'),
        # The whole text is lexed before it is parsed: a string with an escape
        # Go does not take, or text no token matches, is reported first, at
        # its line and column, the string as Go's %q writes it.
        ('IsMatch(body, "\\d+")', '1:15: invalid quoted string "\\"\\\\d+\\"": invalid syntax'),
        ('body == == "\\q"', '1:12: invalid quoted string "\\"\\\\q\\"": invalid syntax'),
        ('body ==\n  "a\\\'"', '2:3: invalid quoted string "\\"a\\\\\'\\"": invalid syntax'),
        ("body == == $x", '1:12: invalid input text "$x"'),
    ],
)
def test_syntax_errors_are_worded_as_upstreams_parser_words_them(
    condition: str, problem: str
) -> None:
    """Participle's wording: the token not expected (quoted, ``<EOF>`` at the
    end of the text), where it is, what was expected when a comparison
    operator was; for text no token matches, up to 16 characters of it."""
    with pytest.raises(OttlConfigError) as raised:
        evaluate(CONTEXTS["log"], condition, None)
    assert str(raised.value).endswith(f": condition has invalid syntax: {problem}")


@pytest.mark.parametrize(
    ("trace_state", "value"),
    [
        ("", ""),
        ("k=v", "v"),
        ("a=1,k=v", "v"),
        ("a=1, \tk=v \t,,", "v"),  # blanks before a key and after a value, empty members
        ("k=v w", "v w"),
        ("t0@sys=x,k=v", "v"),
        ("k=v,k=w", None),  # a repeated key
        ("K=v", None),  # keys are lowercase
        ("a=1,K=2,k=v", None),  # an invalid member invalidates the whole state
        ("k=v,a", None),
        ("k=v,a=", None),
        ("k=v,a=b=c", None),
        ("k=v,a=x,", "v"),
        ("k=v,1a=x", None),
        ("k=v,a@B=x", None),
        ("k=v,a=x\u00e9", None),
        (",".join(f"m{i}=1" for i in range(31)) + ",k=v", "v"),
        (",".join(f"m{i}=1" for i in range(32)) + ",k=v", None),  # 33 members
        ("k=" + "v" * 256, "v" * 256),
        ("k=" + "v" * 257, None),
    ],
)
def test_trace_state_keys_read_the_w3c_members(trace_state: str, value: str | None) -> None:
    """``trace_state["k"]`` as upstream reads it (OpenTelemetry Go's
    ``ParseTraceState`` then ``Get``): "" for a missing member, nil when the
    trace state is not valid."""
    item = span_item()
    item.span.trace_state = trace_state
    assert evaluate(CONTEXTS["span"], 'trace_state["k"] == nil', item) is (value is None)
    if value is not None:
        assert evaluate(CONTEXTS["span"], f'trace_state["k"] == "{value}"', item) is True


def _raw_item(raw: bytes) -> Any:
    item = log_item()
    item.reset(raw)
    return item


BODY_TWICE = bytes([0x2A, 0x03, 0x0A, 0x01]) + b"a" + bytes([0x2A, 0x03, 0x0A, 0x01]) + b"b"
BAD_UTF8_BODY = bytes([0x2A, 0x04, 0x0A, 0x02, 0xFF, 0xFE])
LONG_ATTRIBUTE = (
    bytes([0x32, 0x86, 0x01, 0x0A, 0x01])
    + b"k"
    + bytes([0x12, 0x80, 0x01, 0x0A, 0x7E])
    + b"v" * 126
)


@pytest.mark.parametrize(
    ("condition", "raw", "expected"),
    [
        ('body == "b"', BODY_TWICE, T),  # outside the locator's layout: parsed (merged)
        ('IsMatch(body, "^b$")', BODY_TWICE, T),
        ('body == "x"', BAD_UTF8_BODY, ERROR),
        ('IsMatch(body, "x")', BAD_UTF8_BODY, ERROR),
        ("severity_number == 0", BAD_UTF8_BODY, ERROR),  # the protobuf runtime refuses it
        ('body == ""', bytes([0x2A, 0x02, 0x0A, 0x00]), T),
        ("body == nil", bytes([0x2A, 0x00]), T),
        ('attributes["k"] == "' + "v" * 126 + '"', LONG_ATTRIBUTE, T),
        ("Len(attributes) == 1", LONG_ATTRIBUTE, T),
        ('body == "x"', b"\xff\xff", ERROR),
    ],
)
def test_lean_records_read_like_messages(condition: str, raw: bytes, expected: bool | str) -> None:
    assert evaluate(CONTEXTS["log"], condition, _raw_item(raw)) == expected


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ("severity_number == 011", T),  # octal 9, as Go's ParseInt with base 0
        ("severity_number == 9", T),
        ("severity_number == 0", F),
        ("severity_number == 010", F),
        ("severity_number == 00", F),
    ],
)
def test_int_literals_with_a_leading_zero_are_octal(condition: str, expected: bool) -> None:
    assert evaluate(CONTEXTS["log"], condition, L()) == expected


@pytest.mark.parametrize(
    ("condition", "problem"),
    [
        ("severity_number == 09", 'strconv.ParseInt: parsing "09": invalid syntax'),
        ("body == 1.8e308", 'strconv.ParseFloat: parsing "1.8e308": value out of range'),
    ],
)
def test_literals_go_cannot_parse_are_config_errors(condition: str, problem: str) -> None:
    with pytest.raises(OttlConfigError, match=problem):
        evaluate(CONTEXTS["log"], condition, None)


def test_paths_that_differ_in_a_quoted_key_scan_their_own_values() -> None:
    """``attributes["a\\"][\\"b"]`` is one key, ``attributes["a"]["b"]`` a
    key in a map: two patterns on them are two scans."""
    request = log_request()
    add_attributes(
        request.resource_logs[0].scope_logs[0].log_records[0].attributes,
        [('a"]["b', "X"), ("a", {"b": "Y"})],
    )
    item = LogItem()
    lean = pdata.lean_logs(request)
    item.rc = lean.resource_logs[0]
    item.sc = item.rc.scope_logs[0]
    item.reset(item.sc.log_records[0])
    both = 'IsMatch(attributes["a\\"][\\"b"], "^X$") and IsMatch(attributes["a"]["b"], "^Y$")'
    assert evaluate(CONTEXTS["log"], both, item) is True
