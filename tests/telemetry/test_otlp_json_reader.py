"""The OTLP JSON record reader in C (``_jsonread``) against the same reader in
Python: for any record, of any shape, both find the same hits, or the C one
leaves the record to the Python one (which then raises, or reads it)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sluice.policy import PolicyRuntime, PolicySnapshot, Signal, load_document, native
from sluice.policy.model import MatchOp
from sluice.policy.patterns import FieldScanner, PatternSpec
from sluice.policy.view import PRESENT, FieldReader
from sluice.telemetry.otlp_json import json_view
from sluice.telemetry.reading import dictionary_of, matcher_of

_jsonread = native.extension("sluice.telemetry._jsonread")

TRACE = "0af7651916cd43dd8448eb211c80319c"

LOG_POLICIES: list[dict[str, Any]] = [
    {"match": [{"log_field": "body", "regex": "drop-[0-9]+"}], "keep": "none"},
    {"match": [{"log_field": "body", "exists": False}], "keep": "none"},
    {"match": [{"log_field": "severity_text", "exact": "DEBUG"}], "keep": "none"},
    {"match": [{"log_field": "event_name", "starts_with": "noise"}], "keep": "none"},
    {"match": [{"log_field": "trace_id", "exact": TRACE}], "keep": "none"},
    {"match": [{"log_attribute": "svc", "exact": "checkout"}], "keep": "none"},
    {"match": [{"log_attribute": "n", "exists": True}], "keep": "none"},
    # Two selectors under "http": the key's entry is a nested one.
    {"match": [{"log_attribute": "http", "exists": True}], "keep": "all"},
    {"match": [{"log_attribute": ["http", "route"], "starts_with": "/api"}], "keep": "none"},
    {"match": [{"resource_attribute": "svc", "exact": "checkout"}], "keep": "none"},
]
TRACE_POLICIES: list[dict[str, Any]] = [
    {"match": [{"trace_field": "name", "contains": "GET"}], "keep": {"percentage": 0}},
    {"match": [{"span_attribute": "svc", "exact": "checkout"}], "keep": {"percentage": 0}},
    {"match": [{"event_name": "exception"}], "keep": {"percentage": 0}},
    {"match": [{"event_attribute": "kind", "exact": "fatal"}], "keep": {"percentage": 0}},
    {"match": [{"link_trace_id": TRACE}], "keep": {"percentage": 0}},
]
METRIC_POLICIES: list[dict[str, Any]] = [
    {"match": [{"metric_field": "name", "starts_with": "http."}], "keep": False},
    {"match": [{"datapoint_attribute": "svc", "exact": "checkout"}], "keep": False},
]
KEY = {Signal.LOG: "log", Signal.TRACE: "trace", Signal.METRIC: "metric"}


def record_reader(signal: Signal, policies: list[dict[str, Any]]) -> FieldReader:
    docs = [{"id": f"p{i}", "name": "n", KEY[signal]: p} for i, p in enumerate(policies)]
    snapshot = PolicySnapshot.compile(
        load_document({"policies": docs}).policies, PolicyRuntime(clock=lambda: 0.0)
    )
    reader = snapshot._tables[signal].readers(json_view(signal))[2]
    assert reader is not None
    return reader


LOG_READER = record_reader(Signal.LOG, LOG_POLICIES)
TRACE_READER = record_reader(Signal.TRACE, TRACE_POLICIES)
METRIC_READER = record_reader(Signal.METRIC, METRIC_POLICIES)


def read_like_python(
    reader: FieldReader, records: list[Any], prefix: tuple[int, ...] = ()
) -> list[tuple[int, ...] | None]:
    """What the C reader gives each record after `prefix`, checked against
    the Python reader."""
    found = reader.read_batch(records, prefix)  # type: ignore[attr-defined]
    assert len(found) == len(records)
    for record, hits in zip(records, found, strict=True):
        try:
            expected = reader(record)
        except Exception:
            assert hits is None, record  # the engine reads it again and counts it
            continue
        assert hits == prefix + expected, record
    return found  # type: ignore[no-any-return]


class Name(str):
    """A str subclass: equal to a member name, but only a lookup says so."""


# -- records of any shape -------------------------------------------------------------

WORDS = st.sampled_from(["", "checkout", "drop-42", "drop-", "/api/v1", "GET /x", "é", "DEBUG"])
SCALARS = st.one_of(WORDS, st.integers(-3, 3), st.none(), st.booleans())


def any_values(kvs: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.builds(lambda s: {"stringValue": s}, WORDS),
        st.builds(lambda s: {"stringValue": s}, SCALARS),
        st.builds(lambda s: {"boolValue": True, "stringValue": s}, WORDS),
        st.builds(lambda s: {1: "x", "stringValue": s}, WORDS),
        st.builds(lambda s: {Name("stringValue"): s}, WORDS),
        st.just({}),
        st.builds(lambda n: {"intValue": n}, st.integers(0, 99)),
        st.builds(lambda inner: {"kvlistValue": {"values": inner}}, kvs),
        SCALARS,
    )


def key_values() -> st.SearchStrategy[Any]:
    names = st.one_of(st.sampled_from(["svc", "http", "route", "n", "other", "kind"]), SCALARS)

    def entries(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        entry = st.one_of(
            st.fixed_dictionaries({"key": names, "value": any_values(inner)}),
            st.fixed_dictionaries({"value": any_values(inner), "key": names}),
            # more members than the C reader walks: it looks them up
            st.fixed_dictionaries(
                {"key": names, "a": SCALARS, "b": SCALARS, "c": SCALARS, "value": any_values(inner)}
            ),
            # members only a lookup finds: a key that is no str, a str subclass
            st.builds(lambda k, v: {0: "svc", "key": k, "value": v}, names, any_values(inner)),
            st.builds(lambda k, v: {Name("key"): k, "value": v}, names, any_values(inner)),
            st.fixed_dictionaries({"key": names}),
            st.fixed_dictionaries({"value": any_values(inner)}),
            SCALARS,
        )
        return st.lists(entry, max_size=6)

    return st.recursive(st.lists(st.nothing()), entries, max_leaves=12)


ATTRIBUTES = st.one_of(key_values(), SCALARS)
BODIES = st.one_of(any_values(key_values()), st.just({"stringValue": ""}))


def optional(members: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({}, optional=members)


LOG_RECORDS = st.one_of(
    optional(
        {
            "body": BODIES,
            "severityText": WORDS | SCALARS,
            "eventName": st.sampled_from(["noise.tick", "login", ""]) | SCALARS,
            "traceId": st.sampled_from([TRACE, "zz", TRACE.upper(), ""]) | SCALARS,
            "attributes": ATTRIBUTES,
        }
    ),
    SCALARS,
    st.lists(SCALARS, max_size=2),
)
SPANS = optional(
    {
        "name": WORDS | SCALARS,
        "attributes": ATTRIBUTES,
        "events": st.lists(
            optional({"name": st.sampled_from(["exception", "log"]), "attributes": ATTRIBUTES})
            | SCALARS,
            max_size=3,
        )
        | SCALARS,
        "links": st.lists(optional({"traceId": st.sampled_from([TRACE, "00"])}), max_size=2),
    }
)
METRICS = optional(
    {
        "name": st.sampled_from(["http.requests", "cpu"]) | SCALARS,
        "gauge": optional({"dataPoints": st.lists(optional({"attributes": ATTRIBUTES}))}),
        "sum": SCALARS,
    }
)


def test_this_build_reads_json_records_in_c() -> None:
    assert _jsonread is not None, "the _jsonread extension did not load"
    assert hasattr(LOG_READER, "read_batch"), "the JSON record reader has no batch reading"


@settings(max_examples=400, deadline=None)
@given(st.lists(LOG_RECORDS, max_size=8))
def test_any_log_record_is_read_like_the_python_reader(records: list[Any]) -> None:
    read_like_python(LOG_READER, records)


@settings(max_examples=200, deadline=None)
@given(st.lists(SPANS | SCALARS, max_size=6))
def test_any_span_is_read_like_the_python_reader(records: list[Any]) -> None:
    read_like_python(TRACE_READER, records)


@settings(max_examples=200, deadline=None)
@given(st.lists(METRICS | SCALARS, max_size=6))
def test_any_metric_is_read_like_the_python_reader(records: list[Any]) -> None:
    read_like_python(METRIC_READER, records)


# -- bodies scanned ahead with the field's matcher -----------------------------------

BODY_ONLY_POLICIES: list[dict[str, Any]] = [
    {"match": [{"log_field": "body", "regex": "drop-[0-9]+"}], "keep": "none"},
    {"match": [{"log_field": "body", "starts_with": "GET"}], "keep": "none"},
    {"match": [{"log_field": "body", "contains": "é"}], "keep": "none"},
    {"match": [{"log_field": "body", "exact": "checkout"}], "keep": "all"},
    {"match": [{"log_field": "body", "regex": "^x*$"}], "keep": "none"},
    {"match": [{"log_attribute": "svc", "exact": "checkout"}], "keep": "none"},
]
"""Body conditions that the field's databases answer alone (no exists
condition): the C reader scans a batch's bodies with the field's matcher
first, on the strs' characters."""
BODY_READER = record_reader(Signal.LOG, BODY_ONLY_POLICIES)
BODY_TEXTS = WORDS | st.text(max_size=12) | st.just("drop-3 \ud800") | st.just("x" * 300)
PLAIN_BODIES = st.builds(lambda text: {"body": {"stringValue": text}}, BODY_TEXTS)


@settings(max_examples=300, deadline=None)
@given(st.lists(LOG_RECORDS | PLAIN_BODIES, max_size=8), st.lists(st.integers(0, 9), max_size=2))
def test_any_log_record_is_read_like_the_python_reader_with_bodies_scanned_ahead(
    records: list[Any], prefix: list[int]
) -> None:
    read_like_python(BODY_READER, records, tuple(prefix))


def body_only_scanner(exists: int | None = None, memoize: bool = False) -> FieldScanner:
    specs = [
        (0, PatternSpec(MatchOp.REGEX, "drop-[0-9]+", False)),
        (1, PatternSpec(MatchOp.CONTAINS, "é", False)),
        (2, PatternSpec(MatchOp.REGEX, "^x*$", False)),  # matches an empty body
    ]
    return FieldScanner(specs, exists, None, memoize=memoize)


def test_ascii_bodies_are_scanned_ahead_with_the_field_s_matcher() -> None:
    assert _jsonread is not None
    scanner = body_only_scanner()
    scanned: list[Any] = []

    def scan(value: Any) -> tuple[int, ...]:
        scanned.append(value)
        return scanner.compute(value)

    reader = _jsonread.Reader(
        (scan, None), (), (), (), None, {}, lambda *a: (), PRESENT, scanner.matcher
    )
    texts = ["drop-1", "é drop-2", "drop-3 \ud800", "none", "drop-4 " * 50]
    records: list[Any] = [{"body": {"stringValue": text}} for text in texts]
    records += [{"body": {"stringValue": ""}}, {"body": {"intValue": 3}}, {"body": {}}, {}, "x"]
    found = reader.read(records, (9,))
    assert found == [(9, *scanner.compute(text)) for text in texts] + [(9,)] * 4 + [None]
    assert found[:3] == [(9, 0), (9, 1, 0), (9, 0)]
    # Only a body that is not an ASCII str is handed to the scan.
    assert scanned == ["é drop-2", "drop-3 \ud800", PRESENT]


def test_only_an_unmemoized_scan_of_a_field_its_databases_answer_alone_has_a_matcher() -> None:
    alone = body_only_scanner()
    assert alone.matcher is not None and matcher_of(alone.compute) is alone.matcher
    assert body_only_scanner(exists=5).matcher is None
    assert matcher_of(body_only_scanner(exists=5).compute) is None
    assert matcher_of(body_only_scanner(memoize=True).hits) is None
    assert matcher_of(len) is None  # type: ignore[arg-type]
    assert _jsonread is not None
    with pytest.raises(TypeError, match="without a body scanner"):
        _jsonread.Reader(None, (), (), (), None, {}, len, None, alone.matcher)
    with pytest.raises(TypeError, match="a body matcher is"):
        _jsonread.Reader((alone.compute, None), (), (), (), None, {}, len, None, object())


def hits_of(reader: FieldReader, record: dict[str, Any]) -> tuple[int, ...]:
    (found,) = read_like_python(reader, [record])
    assert found is not None
    return found


def test_what_a_log_record_hits() -> None:
    plain = {"body": {"stringValue": "hello"}, "severityText": "INFO"}
    (present,) = hits_of(LOG_READER, plain)  # the body's exists condition
    dropped = {"body": {"stringValue": "drop-7"}, "severityText": "DEBUG", "traceId": TRACE}
    assert len(hits_of(LOG_READER, dropped)) == 4 and present in hits_of(LOG_READER, dropped)
    first_counts = {
        "body": {"stringValue": "x"},
        "attributes": [
            {"key": "svc", "value": {"stringValue": "other"}},
            {"key": "svc", "value": {"stringValue": "checkout"}},
        ],
    }
    assert hits_of(LOG_READER, first_counts) == (present,)
    nested = {
        "body": {"stringValue": "x"},
        "attributes": [
            {
                "key": "http",
                "value": {
                    "kvlistValue": {"values": [{"key": "route", "value": {"stringValue": "/api"}}]}
                },
            }
        ],
    }
    assert len(hits_of(LOG_READER, nested)) == 3  # and http exists, http.route starts_with


@settings(max_examples=100, deadline=None)
@given(st.lists(LOG_RECORDS, max_size=4), st.lists(st.integers(0, 99), max_size=3))
def test_hits_are_read_after_the_prefix(records: list[Any], prefix: list[int]) -> None:
    read_like_python(LOG_READER, records, tuple(prefix))


def fresh(text: str) -> str:
    """`text` as a str of its own, not the interned one a literal gives."""
    return "".join(list(text))


def test_member_names_in_strs_of_each_batch_are_read_alike() -> None:
    """A decoder makes one str per member name and batch; the reader tells them
    by address once it has met one, and by their characters when a new batch
    brings new ones (or names it is not: "kex", "keys", "valuf")."""
    for _ in range(3):
        key, value, text = fresh("key"), fresh("value"), fresh("stringValue")
        records = [
            {
                "body": {text: "drop-1"},
                "attributes": [
                    {fresh("kex"): "svc", fresh("valuf"): {text: "checkout"}},
                    {fresh("keys"): "svc", value: {text: "checkout"}},
                    {key: "n", value: {fresh("stringValues"): "x"}},
                ],
            }
            for _ in range(3)
        ]
        found = read_like_python(LOG_READER, records)
        assert found[0] is not None and len(found[0]) == 3  # body: exists, regex; n exists


def test_a_record_that_is_not_an_object_is_left_to_the_python_reader() -> None:
    records: list[Any] = ["text", None, [1], {"body": {"stringValue": "drop-1"}}]
    found = read_like_python(LOG_READER, records)
    assert found[:3] == [None, None, None] and found[3]


def test_more_read_keys_than_the_c_reader_tracks_are_left_to_the_python_reader() -> None:
    assert _jsonread is not None
    count = _jsonread.MAX_KEYS + 1
    policies = [
        {"match": [{"log_attribute": f"k{i}", "exact": "v"}], "keep": "none"} for i in range(count)
    ]
    reader = record_reader(Signal.LOG, policies)
    many = {"attributes": [{"key": f"k{i}", "value": {"stringValue": "v"}} for i in range(count)]}
    fewer = {"attributes": many["attributes"][:-1]}
    assert reader.read_batch([many, fewer]) == [None, reader(fewer)]  # type: ignore[attr-defined]
    assert len(reader(many)) == count


def test_a_scan_that_raises_leaves_only_its_record() -> None:
    def scan(value: Any) -> tuple[int, ...]:
        if value == "boom":
            raise ValueError("scan failed")
        return (1,) if value == "hit" else ()

    assert _jsonread is not None
    reader = _jsonread.Reader(
        None, (("severityText", scan, None),), (), (), None, {}, lambda *a: (), object()
    )
    records = [{"severityText": "hit"}, {"severityText": "boom"}, {"severityText": "no"}]
    assert reader.read(records) == [(1,), None, ()]


def test_a_remembered_answer_is_looked_up_and_a_miss_is_scanned() -> None:
    class Remembered(dict[Any, tuple[int, ...]]):
        def __missing__(self, value: Any) -> tuple[int, ...]:
            calls.append(value)
            return (9,)

    calls: list[Any] = []
    memo = Remembered({"known": (4,)})
    assert dictionary_of(memo.__getitem__) is memo
    assert dictionary_of(memo.get) is None  # type: ignore[arg-type]
    assert dictionary_of(len) is None  # type: ignore[arg-type]

    class Overridden(dict[Any, Any]):
        def __getitem__(self, key: Any) -> Any:
            return (0,)

    assert dictionary_of(Overridden().__getitem__) is None
    assert _jsonread is not None
    reader = _jsonread.Reader(
        None, (("severityText", memo.__getitem__, memo),), (), (), None, {}, lambda *a: (), object()
    )
    assert reader.read([{"severityText": "known"}, {"severityText": "new"}]) == [(4,), (9,)]
    assert calls == ["new"]


def test_records_with_the_same_answers_share_one_hits_tuple() -> None:
    severity = {"WARN": (1,), "INFO": (2, 3)}
    events = {"login": (4,), "tick": (5,)}
    fresh = lambda value: tuple([6])  # noqa: E731 (a new tuple each call: not kept)
    assert _jsonread is not None
    reader = _jsonread.Reader(
        None,
        (
            ("severityText", severity.__getitem__, severity),
            ("eventName", events.__getitem__, events),
            ("name", fresh, None),
        ),
        (),
        (),
        None,
        {},
        lambda *a: (),
        object(),
    )
    records = [
        {"severityText": "WARN", "eventName": "login"},
        {"severityText": "WARN", "eventName": "login"},
        {"severityText": "INFO", "eventName": "login"},
        {"severityText": "WARN", "eventName": "tick"},
        {"severityText": "WARN", "eventName": "login", "name": "x"},
        {"severityText": "WARN", "eventName": "login", "name": "x"},
    ]
    prefix = (0,)
    found = reader.read(records, prefix)
    assert found == [(0, 1, 4), (0, 1, 4), (0, 2, 3, 4), (0, 1, 5), (0, 1, 4, 6), (0, 1, 4, 6)]
    # The cache is direct-mapped by the parts' addresses: only the join met
    # last in its slot is certain to be met again (others may share a slot).
    assert found[0] is found[1]
    assert found[4] is not found[5]  # a part only the record held
    first = reader.read(records[2:3], prefix)
    assert reader.read(records[2:3], prefix)[0] is first[0]  # from one read to the next
    assert reader.read(records[:1], (1,))[0] == (1, 1, 4)  # another prefix: joined anew


def test_the_reader_refuses_scanners_of_the_wrong_shape() -> None:
    assert _jsonread is not None
    with pytest.raises(TypeError, match="a scanner is"):
        _jsonread.Reader(None, (("severityText", len),), (), (), None, {}, len, None)
    with pytest.raises(TypeError, match="a scanner is"):
        _jsonread.Reader(None, (), (), (), None, {"svc": (len, [])}, len, None)
    with pytest.raises(TypeError, match="an index key a str"):
        _jsonread.Reader(None, (), (), (), None, {1: (len, None)}, len, None)
    with pytest.raises(RuntimeError, match="not initialized"):
        _jsonread.Reader.__new__(_jsonread.Reader).read([])


def test_an_attribute_answer_is_scanned_once_per_key_and_value() -> None:
    calls: list[tuple[str, Any]] = []

    def scanner(key: str, hit: str) -> Any:
        def scan(value: Any) -> tuple[int, ...]:
            calls.append((key, value))
            return (1,) if value == hit else ()

        return scan

    assert _jsonread is not None
    index = {"a": (scanner("a", "x"), None), "b": (scanner("b", "y"), None)}
    reader = _jsonread.Reader(None, (), (), (), "attributes", index, lambda *a: (), object())

    def record(**attributes: str) -> dict[str, Any]:
        kvs = [{"key": k, "value": {"stringValue": v}} for k, v in attributes.items()]
        return {"attributes": kvs}

    records = [record(a="x", b="x"), record(a="x", b="y"), record(b="x", a="y"), record(a="x")]
    assert reader.read(records) == [(1,), (1, 1), (), (1,)]
    # Each (key, value) is scanned once; the same text under another key is not the same answer.
    assert sorted(calls) == [("a", "x"), ("a", "y"), ("b", "x"), ("b", "y")]


def test_remembered_attribute_answers_are_those_of_a_fresh_read() -> None:
    # Keys and values of every str width (one, two and four bytes a character)
    # whose stored bytes coincide across widths: "\x00\x01" and "\u0100" are the
    # bytes 00 01 at widths 1 and 2. 6,000 distinct values, read three times in
    # batches of 500, take the remembered answers through growth and restarts.
    policies = [
        {"match": [{"log_attribute": "user", "regex": "^u-1"}], "keep": "none"},
        {"match": [{"log_attribute": "user", "exact": "\x00\x01"}], "keep": "none"},
        {"match": [{"log_attribute": "user", "exact": "\u0100"}], "keep": "all"},
        {"match": [{"log_attribute": "ключ", "regex": "^з"}], "keep": "none"},
        {"match": [{"log_attribute": "😀", "exists": True}], "keep": "none"},
    ]
    reader = record_reader(Signal.LOG, policies)
    values = ["\x00\x01", "\u0100", "з-1", "😀", "u-1é"]
    records = [
        {
            "attributes": [
                {"key": "user", "value": {"stringValue": f"u-{i}" if i % 7 else values[i % 5]}},
                {"key": "ключ", "value": {"stringValue": values[i % 5]}},
                {"key": "😀", "value": {"stringValue": values[(i + 1) % 5]}},
                {"key": "user", "value": {"stringValue": "u-1"}},  # not the first entry
            ]
        }
        for i in range(6000)
    ]
    expected = [reader(record) for record in records]
    assert len({hits for hits in expected}) > 3  # the answers are not all alike
    for _ in range(3):
        for start in range(0, len(records), 500):
            found = reader.read_batch(records[start : start + 500])  # type: ignore[attr-defined]
            assert found == expected[start : start + 500], start
