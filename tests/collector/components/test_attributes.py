"""The ``attributes`` processor, in process: its config (testdata, upstream's
wording), every action over spans, log records and data points, and
``include`` / ``exclude`` with upstream's semantics per signal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from sluice.collector import client, pdata
from sluice.collector.components.processors.attributes import FACTORY
from sluice.collector.components.processors.attributes.config import AttributesConfig
from sluice.collector.confmap.decode import Problems, decode
from sluice.collector.internal.attraction import ActionConfig
from sluice.collector.internal.filtermatch import (
    MatchProperties,
    Selection,
    SeverityNumberMatch,
)
from sluice.policy import Signal
from tests.collector.components.attribute_data import (
    ACTION_CASES,
    SIGNALS,
    Item,
    Resource,
    Scope,
    decoded,
    item_attributes,
    one_item,
    processed,
    request,
)
from tests.collector.helpers import run_cli
from tests.collector.testdata_configs import load_config

TESTDATA = Path(__file__).parent / "testdata" / "attributes"


def load(name: str) -> tuple[AttributesConfig, list[str]]:
    return load_config(AttributesConfig, TESTDATA / name)


def created(name: str, signal: Signal = Signal.TRACE) -> list[str]:
    """The problems of a config file once it loads and a pipeline of `signal`
    creates the processor (where upstream checks the actions)."""
    config, problems = load(name)
    return problems or [
        f"{key}: {message}" for key, message in FACTORY.signal_problems(config, signal)
    ]


def run(config: AttributesConfig, signal: Signal, data: Any) -> Any:
    return processed(FACTORY, config, signal, data)


def actions(*entries: dict[str, Any]) -> AttributesConfig:
    return decoded(AttributesConfig, {"actions": list(entries)})


# -- config --------------------------------------------------------------------


def test_factory_is_upstreams() -> None:
    assert FACTORY.component_type == "attributes"
    assert FACTORY.stability == {"logs": "beta", "metrics": "beta", "traces": "beta"}
    assert FACTORY.module.endswith("/processor/attributesprocessor")
    assert FACTORY.default_config() == AttributesConfig()


def test_every_action_and_value_type_decodes() -> None:
    config, problems = load("config_actions.yaml")
    assert problems == []
    assert [a.kind for a in config.actions] == [
        "insert",
        "insert",
        "update",
        *["upsert"] * 4,
        "insert",
        "insert",
        "delete",
        "delete",
        "hash",
        "extract",
        "convert",
    ]
    assert [a.value for a in config.actions[:6]] == [
        "text",
        123,
        1.5,
        True,
        ["a", 1],
        {"k": "v", "n": 2},
    ]
    assert config.actions[7] == ActionConfig(
        key="origin", action="insert", from_context="metadata.origin", default_value="unknown"
    )


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("config_missing_actions.yaml", 'missing required field "actions"'),
        (
            "config_missing_key.yaml",
            'actions[0]: error creating AttrProc due to missing required field "key" at the '
            "0-th actions",
        ),
        (
            "config_missing_key_and_pattern.yaml",
            "actions[0]: error creating AttrProc due to missing required field (at least one "
            'of "key" and "pattern" have to be used) at the 0-th actions',
        ),
        (
            "config_missing_value.yaml",
            'actions[0]: error creating AttrProc. Either field "value", "from_attribute" or '
            '"from_context" setting must be specified for 0-th action',
        ),
        (
            "config_two_value_sources.yaml",
            "actions[0]: error creating AttrProc due to multiple value sources being set at "
            "the 0-th actions",
        ),
        (
            "config_pattern_on_insert.yaml",
            'actions[0]: error creating AttrProc. Action "insert" does not use the "pattern" '
            "field. This must not be specified for 0-th action",
        ),
        (
            "config_value_on_delete.yaml",
            'actions[0]: error creating AttrProc. Action "delete" does not use "value" or '
            '"from_attribute" field. These must not be specified for 0-th action',
        ),
        (
            "config_bad_pattern.yaml",
            'actions[0]: error creating AttrProc. Field "pattern" has invalid pattern: '
            '"(unclosed" to be set at the 0-th actions (missing ): (unclosed)',
        ),
        (
            "config_extract_without_pattern.yaml",
            'actions[0]: error creating AttrProc due to missing required field "pattern" for '
            'action "extract" at the 0-th action',
        ),
        (
            "config_extract_unnamed_group.yaml",
            'actions[0]: error creating AttrProc. Field "pattern" contains at least one '
            "unnamed matcher group at the 0-th actions",
        ),
        (
            "config_upstream_regex_insert.yaml",
            'actions[0]: error creating AttrProc. Field "pattern" contains at least one '
            "unnamed matcher group at the 0-th actions",
        ),
        (
            "config_extract_no_groups.yaml",
            'actions[0]: error creating AttrProc. Field "pattern" contains no named matcher '
            "groups at the 0-th actions",
        ),
        (
            "config_convert_without_type.yaml",
            'actions[0]: error creating AttrProc due to missing required field "converted_type" '
            'for action "convert" at the 0-th action',
        ),
        (
            "config_convert_bad_type.yaml",
            'actions[0]: error creating AttrProc due to invalid value "bool" in field '
            '"converted_type" for action "convert" at the 0-th action',
        ),
        (
            "config_converted_type_on_upsert.yaml",
            'actions[0]: error creating AttrProc. Action "upsert" does not use the '
            '"converted_type" field. This must not be specified for 0-th action',
        ),
        (
            "config_unsupported_action.yaml",
            'actions[0]: error creating AttrProc due to unsupported action "rename" at the '
            "0-th actions",
        ),
        ("config_unknown_key.yaml", "actions[0]: 'actions[0]' has invalid keys: regex"),
    ],
)
def test_invalid_configs_have_upstreams_wording(name: str, problem: str) -> None:
    assert created(name)[0] == problem


def test_an_unsupported_action_is_quoted_as_go_quotes_it() -> None:
    """Upstream names it with ``%q``, after lowercasing it."""
    config = AttributesConfig(actions=[ActionConfig(key="a", action='Re"Name\\x')])
    assert list(FACTORY.signal_problems(config, Signal.TRACE)) == [
        (
            "actions[0]",
            'error creating AttrProc due to unsupported action "re\\"name\\\\x" at the '
            "0-th actions",
        )
    ]


def test_actions_are_checked_when_a_pipeline_creates_the_processor() -> None:
    """Upstream's Validate wants only a non-empty ``actions``; its NewAttrProc
    checks them when a pipeline creates the processor, for every signal."""
    config, problems = load("config_upstream_regex_insert.yaml")
    assert problems == []
    for signal in SIGNALS:
        assert list(FACTORY.signal_problems(config, signal)) == [
            (
                "actions[0]",
                'error creating AttrProc. Field "pattern" contains at least one unnamed '
                "matcher group at the 0-th actions",
            )
        ]


def test_an_action_problem_is_reported_before_include_problems() -> None:
    """Upstream creates the AttrProc before the include/exclude matcher and
    stops at its error."""
    config = decoded(
        AttributesConfig,
        {
            "actions": [{"action": "insert", "value": 1}],
            "include": {"match_type": "strict", "log_bodies": ["x"]},
        },
    )
    assert list(FACTORY.signal_problems(config, Signal.TRACE)) == [
        (
            "actions[0]",
            'error creating AttrProc due to missing required field "key" at the 0-th actions',
        )
    ]


@pytest.mark.parametrize(
    ("action", "pattern", "reason"),
    [
        ("extract", "(?P<名>.*)", "invalid named capture group: (?P<名>"),
        ("delete", "^a\\C", "invalid escape sequence: \\C"),
        ("hash", "[(](?<ä>x)", "invalid named capture group: (?<ä>"),
    ],
)
def test_patterns_go_refuses_are_invalid(action: str, pattern: str, reason: str) -> None:
    """Go's regexp takes only ASCII letters, digits and ``_`` in a group name,
    and no ``\\C``; RE2 takes both."""
    config = AttributesConfig(actions=[ActionConfig(key="a", action=action, pattern=pattern)])
    assert list(config.validate()) == []
    assert list(FACTORY.signal_problems(config, Signal.LOG)) == [
        (
            "actions[0]",
            f'error creating AttrProc. Field "pattern" has invalid pattern: "{pattern}" '
            f"to be set at the 0-th actions ({reason})",
        )
    ]


def test_unknown_keys_are_named_at_every_level() -> None:
    assert load("config_unknown_key.yaml")[1] == [
        "actions[0]: 'actions[0]' has invalid keys: regex",
        "include: 'include' has invalid keys: service",
    ]


# -- include / exclude properties per signal ------------------------------------

VALID_FOR = {
    "config_include_logs.yaml": {Signal.LOG, Signal.METRIC},
    "config_include_spans.yaml": {Signal.TRACE, Signal.METRIC},
    "config_include_metrics.yaml": {Signal.METRIC},
    "config_include_common.yaml": set(SIGNALS),
    "config_include_no_match_type.yaml": set(SIGNALS),
}
"""As upstream v0.115: metrics check nothing (what they do not use selects
nothing, with a warning at start); later versions refuse more, and every
config they accept loads here."""
WRONG_FOR_LOGS = "services, span_names, and span_kinds are not valid for log records"
MISSING_FOR_LOGS = (
    'at least one of "attributes", "libraries", "span_kinds", "resources", '
    '"log_bodies", "log_severity_texts" or "log_severity_number" field must be specified'
)
MISSING_FOR_SPANS = (
    'at least one of "attributes", "libraries",  or "resources" field must be specified'
)


@pytest.mark.parametrize("name", sorted(VALID_FOR))
def test_match_properties_are_valid_only_for_their_signals(name: str) -> None:
    config, problems = load(name)
    assert problems == []
    for signal in SIGNALS:
        found = list(FACTORY.signal_problems(config, signal))
        if signal in VALID_FOR[name]:
            assert found == []
        elif signal is Signal.TRACE:
            assert len(found) == 1
            assert found[0][1].endswith("should not be specified for trace spans") or (
                found[0][1] == MISSING_FOR_SPANS
            )
        else:
            assert found in ([("include", WRONG_FOR_LOGS)], [("include", MISSING_FOR_LOGS)])


def test_a_shared_processor_with_span_properties_loads_for_metrics() -> None:
    """Upstream issue 36077's config: one attributes processor with
    ``services`` in a traces and a metrics pipeline. v0.115 loads it; on
    metrics the include selects everything, and the processor says so."""
    config = AttributesConfig(
        actions=[ActionConfig(key="service.name", value="bar", action="insert")],
        include=MatchProperties(match_type="strict", services=["foo"], metric_names=[]),
    )
    assert list(FACTORY.signal_problems(config, Signal.TRACE)) == []
    assert list(FACTORY.signal_problems(config, Signal.METRIC)) == []
    selection = Selection(config.include, None, Signal.METRIC)
    assert selection.unused == ["services (metrics are selected by metric_names only)"]


def test_match_properties_errors_with_upstreams_wording() -> None:
    def problems(name: str, signal: Signal) -> list[Any]:
        config, decoded = load(name)
        assert decoded == []
        return list(FACTORY.signal_problems(config, signal))

    assert problems("config_include_empty.yaml", Signal.TRACE) == [
        (
            "include",
            'at least one of "attributes", "libraries",  or "resources" field must be specified',
        )
    ]
    assert problems("config_include_empty.yaml", Signal.METRIC) == []
    assert problems("config_include_spans.yaml", Signal.LOG) == [("include", WRONG_FOR_LOGS)]
    assert problems("config_include_metrics.yaml", Signal.LOG) == [("include", MISSING_FOR_LOGS)]
    assert problems("config_include_metrics.yaml", Signal.TRACE) == [("include", MISSING_FOR_SPANS)]
    assert problems("config_include_logs.yaml", Signal.TRACE) == [
        ("include", "log_bodies should not be specified for trace spans")
    ]
    bad = "error parsing regexp: missing closing ): `(oops`"
    assert problems("config_include_bad_regexp.yaml", Signal.TRACE) == [
        ("exclude", f"error creating span name filters: {bad}")
    ]
    config = AttributesConfig(
        actions=[ActionConfig(key="a", action="delete")],
        exclude=MatchProperties(match_type="regexp", log_bodies=["(oops"]),
    )
    assert list(FACTORY.signal_problems(config, Signal.LOG)) == [
        ("exclude", f"error creating log record body filters: {bad}")
    ]
    config = AttributesConfig(
        actions=[ActionConfig(key="a", action="delete")],
        exclude=MatchProperties(match_type="regexp", metric_names=["(oops"]),
    )
    assert list(FACTORY.signal_problems(config, Signal.METRIC)) == [("exclude", bad)]
    assert problems("config_include_regexp_int_value.yaml", Signal.LOG) == [
        (
            "include",
            'error creating attribute filters: match_type=regexp for "code" only supports Str, '
            "but found Int",
        )
    ]
    for signal in (Signal.LOG, Signal.TRACE):
        assert problems("config_include_value_without_match_type.yaml", signal) == [
            (
                "include",
                "error creating resource filters: unrecognized match_type: '', valid types are: "
                "[regexp strict]",
            )
        ]
    # Upstream builds a metric matcher from metric_names only: resources are
    # never compiled for metrics, so their match_type is never checked.
    assert problems("config_include_value_without_match_type.yaml", Signal.METRIC) == []
    assert problems("config_include_strict_span_kind.yaml", Signal.TRACE) == [
        (
            "include",
            "span_kinds string must match one of the standard span kinds when "
            "match_type=strict: [     SPAN_KIND_CLIENT SPAN_KIND_CONSUMER SPAN_KIND_INTERNAL "
            "SPAN_KIND_PRODUCER SPAN_KIND_SERVER]",
        )
    ]


@pytest.mark.parametrize(
    ("signal", "properties", "problem"),
    [
        (Signal.TRACE, {"span_names": ["x"]}, "error creating span name filters: "),
        (
            Signal.TRACE,
            {"attributes": [{"key": "k", "value": "v"}]},
            "error creating attribute filters: ",
        ),
        (Signal.LOG, {"log_bodies": ["x"]}, "error creating log record body filters: "),
        (Signal.METRIC, {"metric_names": ["x"]}, ""),
    ],
)
def test_a_negative_regexp_cache_size_is_refused(
    signal: Signal, properties: dict[str, Any], problem: str
) -> None:
    """The cache is golang-lru's, which refuses a size below 1 (0 is
    upstream's unbounded); only a regexp set has a cache."""
    cache = {"cacheenabled": True, "cachemaxnumentries": -1}
    for match_type, refused in (("regexp", True), ("strict", False)):
        raw = {"match_type": match_type, "regexp": cache, **properties}
        config = decoded(
            AttributesConfig, {"actions": [{"key": "a", "action": "delete"}], "exclude": raw}
        )
        found = list(FACTORY.signal_problems(config, signal))
        assert found == ([("exclude", f"{problem}must provide a positive size")] if refused else [])


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        ("a[b", "missing closing ]: `[b`"),
        ("a)", "unexpected ): `a)`"),
        ("*a", "missing argument to repetition operator: `*`"),
        ("a**", "invalid nested repetition operator: `**`"),
        ("a{1001}", "invalid repeat count: `{1001}`"),
        ("(?=a)", "invalid or unsupported Perl syntax: `(?=`"),
        ("\\8", "invalid escape sequence: `\\8`"),
        ("[z-a]", "invalid character class range: `z-a`"),
        ("a\\", "trailing backslash at end of expression: ``"),
        ("(?P<a.b>x)", "invalid named capture: `(?P<a.b>`"),
        ("`(", 'missing closing ): "`("'),
        # RE2 takes these, Go's regexp does not.
        ("(?P<é>x)", "invalid named capture: `(?P<é>`"),
        ("a(?<ключ>x)", "invalid named capture: `(?<ключ>`"),
        ("a\\C", "invalid escape sequence: `\\C`"),
    ],
)
def test_bad_patterns_are_reported_in_go_regexps_words(pattern: str, problem: str) -> None:
    """Go's regexp error (code and offending text, as %#q quotes it), not RE2's."""
    config = AttributesConfig(
        actions=[ActionConfig(key="a", action="delete")],
        include=MatchProperties(match_type="regexp", span_names=[pattern]),
    )
    assert list(FACTORY.signal_problems(config, Signal.TRACE)) == [
        ("include", f"error creating span name filters: error parsing regexp: {problem}")
    ]


# -- actions -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entries", "given", "expected"),
    [case[1:] for case in ACTION_CASES],
    ids=[case[0] for case in ACTION_CASES],
)
@pytest.mark.parametrize("signal", SIGNALS, ids=["logs", "metrics", "traces"])
def test_actions_edit_item_attributes_as_upstream(
    signal: Signal,
    entries: list[dict[str, Any]],
    given: list[tuple[str, Any]],
    expected: list[tuple[str, str]],
) -> None:
    data = run(actions(*entries), signal, one_item(signal, given))
    assert item_attributes(signal, data) == [expected]
    # The resource, which held the same attributes, is not the processor's.
    assert len(getattr(data, pdata.RESOURCES[signal])[0].resource.attributes) == len(given)


FROM_CLIENT = (
    {"key": "tenant", "from_context": "metadata.X-Tenant", "action": "insert"},
    {"key": "zones", "from_context": "metadata.zone", "action": "insert"},
    {"key": "legacy", "from_context": "x-tenant", "action": "insert"},
    {"key": "user", "from_context": "auth.username", "action": "upsert"},
    {"key": "groups", "from_context": "auth.groups", "action": "insert"},
    {"key": "peer", "from_context": "client.address", "action": "insert"},
    {"key": "region", "from_context": "metadata.region", "action": "insert", "default_value": "eu"},
    {"key": "absent", "from_context": "auth.nothing", "action": "insert"},
    {"key": "kept", "from_context": "metadata.x-tenant", "action": "update"},
)


@pytest.mark.parametrize("signal", SIGNALS, ids=["logs", "metrics", "traces"])
def test_from_context_reads_the_client_of_each_request(signal: Signal) -> None:
    sent = client.Info(
        "192.0.2.7",
        client.metadata_of([("x-tenant", "acme"), ("Zone", "a"), ("zone", "b")]),
        {"username": "alice", "groups": ("ops", "dev")},
    )
    with client.serving(sent):
        data = run(actions(*FROM_CLIENT), signal, one_item(signal, [("user", "x")]))
    assert item_attributes(signal, data) == [
        [
            ("user", "Str(alice)"),
            ("tenant", "Str(acme)"),
            ("zones", "Str(a;b)"),  # every value, joined
            ("legacy", "Str(acme)"),  # a key without prefix is a metadata name
            ("groups", "Str(ops;dev)"),
            ("peer", "Str(192.0.2.7)"),
            ("region", "Str(eu)"),
        ]
    ]
    # Another request, another client: nothing carried over from the first.
    # Its address is unknown (as after a batch processor): upstream inserts "".
    data = run(actions(*FROM_CLIENT), signal, one_item(signal, [("kept", "x")]))
    assert item_attributes(signal, data) == [
        [("kept", "Str(x)"), ("peer", "Str()"), ("region", "Str(eu)")]
    ]


@pytest.mark.parametrize(
    ("peer", "shown"),
    [("::ffff:192.0.2.7", "192.0.2.7"), ("2001:db8::7", "2001:db8::7"), ("192.0.2.7", "192.0.2.7")],
)
def test_client_address_is_written_as_go_writes_an_ip(peer: str, shown: str) -> None:
    """An IPv4 client of a dual-stack listener (HTTP on ``[::]``) arrives as
    an IPv4-mapped IPv6 address, which Go's ``net.IP.String`` writes as the
    IPv4 address."""
    with client.serving(client.Info(peer)):
        data = run(
            actions({"key": "peer", "from_context": "client.address", "action": "insert"}),
            Signal.TRACE,
            one_item(Signal.TRACE, []),
        )
    assert item_attributes(Signal.TRACE, data) == [[("peer", f"Str({shown})")]]


def test_log_records_no_action_changed_keep_their_bytes() -> None:
    data = one_item(Signal.LOG, [("a", 1)])
    records = data.resource_logs[0].scope_logs[0].log_records
    # severity_text (field 3) before severity_number (field 2): protobuf
    # would write them the other way round.
    unusual = b"\x1a\x04INFO\x10\x09"
    records.append(unusual)
    run(actions({"key": "a", "value": 2, "action": "update"}), Signal.LOG, data)
    assert records[1] == unusual
    assert item_attributes(Signal.LOG, data) == [[("a", "Int(2)")], []]


def test_unreadable_log_records_pass_on_unchanged(caplog: pytest.LogCaptureFixture) -> None:
    data = one_item(Signal.LOG, [("a", 1)])
    data.resource_logs[0].scope_logs[0].log_records.append(b"\xff\xff")
    run(actions({"key": "b", "value": 2, "action": "insert"}), Signal.LOG, data)
    records = data.resource_logs[0].scope_logs[0].log_records
    assert records[1] == b"\xff\xff"
    assert len(records) == 2
    assert "1 log records are not valid protobuf" in caplog.text


def test_log_records_without_the_keys_actions_need_are_not_parsed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    data = request(
        Signal.LOG,
        [Resource([Scope([Item([("secret", "s"), ("a", 1)]), Item([("a", 1)], body="secret")])])],
    )
    records = data.resource_logs[0].scope_logs[0].log_records
    records.append(b"\xff\xff")  # not a record, and no key in it
    run(actions({"key": "secret", "action": "delete"}), Signal.LOG, data)
    assert records[2] == b"\xff\xff"
    assert "not valid protobuf" not in caplog.text  # never parsed
    assert item_attributes(Signal.LOG, _first_two(data)) == [
        [("a", "Int(1)")],
        [("a", "Int(1)")],
    ]


def _first_two(data: Any) -> Any:
    copy = type(data)()
    copy.CopyFrom(data)
    del copy.resource_logs[0].scope_logs[0].log_records[2:]
    return copy


# -- include / exclude -----------------------------------------------------------


def selected(config: dict[str, Any], signal: Signal, data: Any) -> list[str]:
    """The ids of the items the processor marked."""
    raw = {"actions": [{"key": "marked", "value": True, "action": "insert"}], **config}
    config = decoded(AttributesConfig, raw)
    assert list(FACTORY.signal_problems(config, signal)) == []
    run(config, signal, data)
    return [
        dict(attrs)["id"][4:-1]
        for attrs in item_attributes(signal, data)
        if ("marked", "Bool(true)") in attrs
    ]


def spans(*resources: Resource) -> Any:
    return request(Signal.TRACE, resources)


SERVICES = [
    Resource([Scope([Item([("id", "a")])])], [("service.name", "svcA")]),
    Resource([Scope([Item([("id", "b")])])], [("service.name", "authz")]),
    Resource([Scope([Item([("id", "c")])])], []),
]


@pytest.mark.parametrize(
    ("config", "ids"),
    [
        ({"include": {"match_type": "strict", "services": ["svcA", "svcB"]}}, ["a"]),
        ({"include": {"match_type": "regexp", "services": ["auth"]}}, ["b"]),  # a search
        ({"include": {"match_type": "strict", "services": ["<nil-service-name>"]}}, ["c"]),
        ({"exclude": {"match_type": "regexp", "services": ["^svc"]}}, ["b", "c"]),
    ],
)
def test_services_are_the_resources_service_name(config: dict[str, Any], ids: list[str]) -> None:
    assert selected(config, Signal.TRACE, spans(*SERVICES)) == ids


def test_span_properties_and_attributes() -> None:
    items = [
        Item([("id", "a"), ("env", "dev"), ("test_request", 1)], name="login", kind=2),
        Item([("id", "b"), ("env", "dev")], name="login", kind=3),
        Item([("id", "c"), ("env", 1), ("test_request", 1)], name="logout", kind=2),
        Item([("id", "d"), ("redact", False)], name="query", kind=1),
        Item([("id", "e"), ("redact", "false"), ("code", 200)], name="query", kind=1),
    ]
    data = lambda: spans(Resource([Scope(items)]))  # noqa: E731
    # Every attribute entry must match (strict: equal type and value).
    multi = {
        "match_type": "strict",
        "attributes": [{"key": "env", "value": "dev"}, {"key": "test_request"}],
    }
    assert selected({"exclude": multi}, Signal.TRACE, data()) == ["b", "c", "d", "e"]
    assert selected(
        {"include": {"match_type": "regexp", "span_names": ["^log"]}}, Signal.TRACE, data()
    ) == [
        "a",
        "b",
        "c",
    ]
    kinds = {"match_type": "strict", "span_kinds": ["SPAN_KIND_SERVER"]}
    assert selected({"include": kinds}, Signal.TRACE, data()) == ["a", "c"]
    include_exclude = {
        "include": {"match_type": "strict", "span_names": ["query"]},
        "exclude": {"match_type": "strict", "attributes": [{"key": "redact", "value": False}]},
    }
    assert selected(include_exclude, Signal.TRACE, data()) == ["e"]
    # regexp attribute values match the value's text, whatever its type.
    code = {"match_type": "regexp", "attributes": [{"key": "code", "value": "^2"}]}
    assert selected({"include": code}, Signal.TRACE, data()) == ["e"]
    # Within a list, one item is enough; across properties, all must match.
    both = {
        "match_type": "strict",
        "span_names": ["login", "query"],
        "span_kinds": ["SPAN_KIND_INTERNAL"],
    }
    assert selected({"include": both}, Signal.TRACE, data()) == ["d", "e"]


def test_libraries_and_resources() -> None:
    data = lambda: spans(  # noqa: E731
        Resource(
            [
                Scope([Item([("id", "a")])], name="mongo", version="3.8.0"),
                Scope([Item([("id", "b")])], name="mongo"),
                Scope([Item([("id", "c")])], name="redis", version="3.8.0"),
            ],
            [("host.type", "n1-standard-1")],
        ),
        Resource(
            [Scope([Item([("id", "d")])], name="mongo", version="3.8.0")], [("host.type", "n2")]
        ),
    )
    library = {"match_type": "strict", "libraries": [{"name": "mongo", "version": "3.8.0"}]}
    assert selected({"exclude": library}, Signal.TRACE, data()) == ["b", "c"]
    any_version = {"match_type": "strict", "libraries": [{"name": "mongo"}]}
    assert selected({"include": any_version}, Signal.TRACE, data()) == ["a", "b", "d"]
    no_version = {"match_type": "strict", "libraries": [{"name": "mongo", "version": ""}]}
    assert selected({"include": no_version}, Signal.TRACE, data()) == ["b"]
    resources = {
        "match_type": "strict",
        "resources": [{"key": "host.type", "value": "n1-standard-1"}],
    }
    assert selected({"exclude": resources}, Signal.TRACE, data()) == ["d"]


def test_log_properties() -> None:
    items = [
        Item([("id", "a")], body="AUTH ok", severity_text="debug", severity_number=5),
        Item([("id", "b")], body="auth ok", severity_text="INFO", severity_number=9),
        Item([("id", "c")], body=42, severity_text="debugging"),
        Item([("id", "d"), ("env", "prod")], body={"msg": "AUTH"}, severity_number=17),
    ]
    data = lambda: request(Signal.LOG, [Resource([Scope(items)], [("k8s", "x")])])  # noqa: E731
    bodies = {"match_type": "regexp", "log_bodies": ["AUTH"]}
    assert selected({"include": bodies}, Signal.LOG, data()) == ["a", "d"]  # d: its body's JSON
    assert selected(
        {"include": {"match_type": "strict", "log_bodies": ["42"]}}, Signal.LOG, data()
    ) == ["c"]
    texts = {"match_type": "regexp", "log_severity_texts": ["^debug"]}
    assert selected({"include": texts}, Signal.LOG, data()) == ["a", "c"]
    severity = {"log_severity_number": {"min": 9}}
    assert selected({"include": severity}, Signal.LOG, data()) == ["b", "d"]
    undefined = {"log_severity_number": {"min": 13, "match_undefined": True}}
    assert selected({"include": undefined}, Signal.LOG, data()) == ["c", "d"]
    attributes = {"attributes": [{"key": "env"}]}
    assert selected({"exclude": attributes}, Signal.LOG, data()) == ["a", "b", "c"]
    resources = {"match_type": "strict", "resources": [{"key": "k8s", "value": "y"}]}
    assert selected({"include": resources}, Signal.LOG, data()) == []


def test_action_and_match_type_are_named_by_their_go_types() -> None:
    """mapstructure names a field's own type: upstream's ``action`` is an
    ``attraction.Action``, ``match_type`` a ``filterset.MatchType``."""
    problems = Problems()
    decode(
        AttributesConfig,
        {"actions": [{"key": "k", "action": 1}], "include": {"match_type": 2}},
        "",
        problems,
    )
    assert problems.lines == [
        "actions[0]::action: 'actions[0].action' expected type 'attraction.Action', "
        "got unconvertible type 'int', value: '1'",
        "include::match_type: 'include.match_type' expected type 'filterset.MatchType', "
        "got unconvertible type 'int', value: '2'",
    ]


def test_log_severity_number_min_is_a_plog_severity_number() -> None:
    """Upstream's ``min`` is a ``plog.SeverityNumber`` (an int32 without a
    text form): a severity name is mapstructure's error naming that type,
    and a number past int32 wraps as Go's conversion does."""

    def severity(raw: dict[str, Any]) -> tuple[list[str], Any]:
        problems = Problems()
        config = decode(
            AttributesConfig,
            {
                "actions": [{"key": "k", "action": "delete"}],
                "include": {"log_severity_number": raw},
            },
            "",
            problems,
        )
        return problems.lines, config.include.log_severity_number

    assert severity({"min": "INFO"})[0] == [
        "include::log_severity_number::min: 'include.log_severity_number.min' expected type "
        "'plog.SeverityNumber', got unconvertible type 'string', value: 'INFO'"
    ]
    assert severity({"min": (1 << 32) + 9}) == ([], SeverityNumberMatch(min=9))


def test_a_null_include_exclude_or_severity_number_is_not_set() -> None:
    """Upstream's ``include``, ``exclude``, ``log_severity_number`` and
    ``regexp`` are pointers that default to nil, and mapstructure leaves a
    field as it is for a null: written empty, they are not set (an empty
    map, ``{}``, sets them)."""
    for signal in SIGNALS:
        both = {"include": None, "exclude": None}
        assert selected(both, signal, one_item(signal, [("id", "a")])) == ["a"]
    config = decoded(
        AttributesConfig,
        {"actions": [{"key": "k", "action": "delete"}], "include": {}},
    )
    assert list(FACTORY.signal_problems(config, Signal.TRACE)) == [("include", MISSING_FOR_SPANS)]
    items = [Item([("id", "a")], body="x"), Item([("id", "b")], body="x", severity_number=9)]
    data = request(Signal.LOG, [Resource([Scope(items)])])
    include = {
        "match_type": "strict",
        "regexp": None,
        "log_bodies": ["x"],
        "log_severity_number": None,
    }
    assert selected({"include": include}, Signal.LOG, data) == ["a", "b"]


def test_metric_properties() -> None:
    data = lambda: request(  # noqa: E731
        Signal.METRIC,
        [
            Resource(
                [
                    Scope(
                        [Item([("id", "a")], name="http.requests"), Item([("id", "b")], name="cpu")]
                    )
                ],
                [("env", "prod")],
            ),
            Resource([Scope([Item([("id", "c")], name="http.errors")])], [("env", "dev")]),
        ],
    )
    names = {"match_type": "regexp", "metric_names": ["^http\\."]}
    assert selected({"include": names}, Signal.METRIC, data()) == ["a", "c"]
    # Upstream selects metrics by metric_names only; resources select nothing
    # (contrib skips its own resource tests for metrics for this reason).
    resources = {"match_type": "strict", "resources": [{"key": "env", "value": "prod"}]}
    assert selected({"include": resources}, Signal.METRIC, data()) == ["a", "b", "c"]
    assert selected({"exclude": resources}, Signal.METRIC, data()) == ["a", "b", "c"]
    both = {**names, "resources": [{"key": "env", "value": "prod"}]}
    assert selected({"include": both}, Signal.METRIC, data()) == ["a", "c"]
    assert selected({"exclude": both}, Signal.METRIC, data()) == ["b"]
    cached = {**names, "regexp": {"cacheenabled": True, "cachemaxnumentries": 1}}
    assert selected({"include": cached}, Signal.METRIC, data()) == ["a", "c"]


def test_resources_for_metrics_are_named_as_unused_at_start(
    caplog: pytest.LogCaptureFixture,
) -> None:
    raw = {
        "actions": [{"key": "marked", "value": True, "action": "insert"}],
        "include": {"match_type": "strict", "resources": [{"key": "env", "value": "prod"}]},
    }
    config = decoded(AttributesConfig, raw)
    run(config, Signal.METRIC, request(Signal.METRIC, [Resource([Scope([Item([])])])]))
    assert "include/exclude: resources (metrics are selected by" in caplog.text
    caplog.clear()
    run(config, Signal.LOG, request(Signal.LOG, [Resource([Scope([Item([])])])]))
    assert "include/exclude" not in caplog.text


@pytest.mark.parametrize(
    ("signal", "own"),
    [(Signal.TRACE, {"span_names": ["(oops"]}), (Signal.LOG, {"log_bodies": ["(oops"]})],
    ids=["traces", "logs"],
)
def test_of_several_bad_properties_upstreams_first_is_reported(
    signal: Signal, own: dict[str, Any]
) -> None:
    """Upstream builds libraries, attributes and resources before the
    signal's own properties, and stops at the first error."""
    include = {"match_type": "regexp", **own}
    config = decoded(
        AttributesConfig,
        {"actions": [{"key": "k", "action": "delete"}], "include": dict(include)},
    )
    assert [m for _, m in FACTORY.signal_problems(config, signal)] == [
        f"error creating {'span name' if signal is Signal.TRACE else 'log record body'} "
        "filters: error parsing regexp: missing closing ): `(oops`"
    ]
    include["resources"] = [{"key": "code", "value": 200}]
    config = decoded(
        AttributesConfig,
        {"actions": [{"key": "k", "action": "delete"}], "include": include},
    )
    assert [m for _, m in FACTORY.signal_problems(config, signal)] == [
        'error creating resource filters: match_type=regexp for "code" only supports Str, '
        "but found Int"
    ]


def test_of_bad_include_and_exclude_only_includes_problem_is_reported() -> None:
    """Upstream's skip expression builds ``include`` first and returns its
    error: a bad ``exclude`` is not reported with it."""
    bad = {"match_type": "strict", "log_bodies": ["x"]}
    config = decoded(
        AttributesConfig,
        {"actions": [{"key": "k", "action": "delete"}], "include": bad, "exclude": bad},
    )
    assert list(FACTORY.signal_problems(config, Signal.TRACE)) == [
        ("include", "log_bodies should not be specified for trace spans")
    ]
    config = decoded(
        AttributesConfig,
        {
            "actions": [{"key": "k", "action": "delete"}],
            "include": {"match_type": "strict", "log_bodies": ["x"]},
            "exclude": {"match_type": "regexp", "span_names": ["(oops"]},
        },
    )
    assert list(FACTORY.signal_problems(config, Signal.LOG)) == [
        ("exclude", "services, span_names, and span_kinds are not valid for log records")
    ]


def test_match_type_expr_has_no_matcher_for_metrics(caplog: pytest.LogCaptureFixture) -> None:
    """Upstream's filtermetric builds no matcher for expr without expressions
    (which the attributes processor cannot set): all pass include, none is
    excluded. Logs and traces refuse expr, as upstream's filterset does."""
    data = lambda: request(  # noqa: E731
        Signal.METRIC,
        [Resource([Scope([Item([("id", "a")], name="x"), Item([("id", "b")], name="y")])])],
    )
    expr = {"match_type": "expr", "metric_names": ["x"]}
    assert selected({"include": expr}, Signal.METRIC, data()) == ["a", "b"]
    assert selected({"exclude": expr}, Signal.METRIC, data()) == ["a", "b"]
    assert "include/exclude: match_type expr" in caplog.text
    config = decoded(
        AttributesConfig,
        {
            "actions": [{"key": "k", "action": "delete"}],
            "include": {"match_type": "expr", "span_names": ["x"]},
        },
    )
    assert list(FACTORY.signal_problems(config, Signal.TRACE)) == [
        (
            "include",
            "error creating span name filters: unrecognized match_type: 'expr', "
            "valid types are: [regexp strict]",
        )
    ]


# -- sluice-collector validate -------------------------------------------------------


def test_upstreams_examples_validate() -> None:
    result = run_cli("validate", "--config", str(TESTDATA / "upstream_examples.yaml"))
    assert (result.returncode, result.stdout) == (0, "config is valid\n"), result.stderr


def test_validate_names_the_property_a_pipelines_signal_does_not_have(tmp_path: Path) -> None:
    config = tmp_path / "collector.yaml"
    config.write_text(
        (TESTDATA / "upstream_examples.yaml")
        .read_text()
        .replace("        - attributes/log_body_regexp\n", "")
        .replace(
            "        - attributes/regexp2\n",
            "        - attributes/regexp2\n        - attributes/log_body_regexp\n",
            1,
        )
    )
    result = run_cli("validate", "--config", str(config))
    assert result.returncode == 1
    assert result.stderr.splitlines()[0] == (
        f"{config}: processors::attributes/log_body_regexp::include: log_bodies should not be "
        'specified for trace spans (creating it for pipeline "traces")'
    )


def _with_pipelines(tmp_path: Path, pipelines: dict[str, Any]) -> Path:
    """upstream_examples.yaml's components (every processor of upstream's
    testdata/config.yaml among them) under other pipelines."""
    raw = yaml.safe_load((TESTDATA / "upstream_examples.yaml").read_text())
    raw["service"] = {"pipelines": pipelines}
    config = tmp_path / "collector.yaml"
    config.write_text(yaml.safe_dump(raw))
    return config


def test_upstreams_testdata_config_validates(tmp_path: Path) -> None:
    """Upstream's testdata/config.yaml: every processor configured, one used;
    attributes/regex_insert's unnamed group is no problem while no pipeline
    creates it."""
    config = _with_pipelines(
        tmp_path,
        {
            "traces": {
                "receivers": ["otlp"],
                "processors": ["attributes/insert"],
                "exporters": ["debug"],
            }
        },
    )
    result = run_cli("validate", "--config", str(config))
    assert (result.returncode, result.stdout) == (0, "config is valid\n"), result.stderr


def test_a_pipeline_that_uses_bad_actions_does_not_start(tmp_path: Path) -> None:
    """Used by a pipeline, attributes/regex_insert fails as upstream's
    NewAttrProc fails when the pipeline creates it; validate reports it too."""
    config = _with_pipelines(
        tmp_path,
        {
            "traces": {
                "receivers": ["otlp"],
                "processors": ["attributes/insert", "attributes/regex_insert"],
                "exporters": ["debug"],
            }
        },
    )
    problem = (
        f"{config}: processors::attributes/regex_insert::actions[0]: error creating AttrProc. "
        'Field "pattern" contains at least one unnamed matcher group at the 0-th actions '
        '(creating it for pipeline "traces")'
    )
    for command in (["validate"], []):
        result = run_cli(*command, "--config", str(config))
        assert result.returncode == 1
        assert result.stderr.splitlines() == [
            problem,
            "sluice-collector: the config does not load (1 problem(s))",
        ]
