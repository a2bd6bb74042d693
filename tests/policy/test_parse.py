"""Loading policies: both dialects, every spelling, per-policy errors."""

from __future__ import annotations

from typing import Any

import pytest

from sluice.policy import PolicyDocumentError, load_document
from sluice.policy.model import KeepKind, MatchOp, Policy, SamplingMode, Selector, Signal, Source
from sluice.policy.parse import json_repr


def one(policy: dict[str, Any]) -> Policy:
    report = load_document({"policies": [{"id": "p", "name": "p", **policy}]})
    assert len(report.policies) == 1
    return report.policies[0]


def errors(policy: dict[str, Any]) -> list[str]:
    return list(one(policy).errors)


def test_authoring_and_proto_json_spellings_give_the_same_matcher() -> None:
    authoring = one(
        {
            "log": {
                "match": [{"log_field": "body", "starts_with": "GET", "case_insensitive": True}],
                "keep": "none",
            }
        }
    )
    proto = one(
        {
            "enabled": True,
            "log": {
                "match": [
                    {"logField": "LOG_FIELD_BODY", "startsWith": "GET", "caseInsensitive": True}
                ],
                "keep": "none",
            },
        }
    )
    numbered = one(
        {
            "log": {
                "match": [{"logField": 1, "startsWith": "GET", "caseInsensitive": True}],
                "keep": "none",
            }
        }
    )
    assert authoring.matchers == proto.matchers == numbered.matchers
    assert authoring.matchers[0].op is MatchOp.STARTS_WITH


@pytest.mark.parametrize(
    "alias, field", [("message", "body"), ("status", "severity_text"), ("level", "severity_text")]
)
def test_datadog_field_aliases(alias: str, field: str) -> None:
    policy = one({"log": {"match": [{"log_field": alias, "exact": "x"}], "keep": "none"}})
    assert policy.matchers[0].selector == Selector(Source.FIELD, field)


@pytest.mark.parametrize(
    "path, expected",
    [
        ("http.method", ("http.method",)),
        (["a", "b"], ("a", "b")),
        ({"path": ["a", "b"]}, ("a", "b")),
    ],
)
def test_attribute_path_forms(path: Any, expected: tuple[str, ...]) -> None:
    policy = one({"log": {"match": [{"log_attribute": path, "exists": True}], "keep": "none"}})
    assert policy.matchers[0].selector.path == expected


@pytest.mark.parametrize("path", ["", [], {}, {"path": []}, {"path": None}])
def test_an_empty_attribute_path_is_named_so(path: Any) -> None:
    # POLICY.md 1.5: the exact text is checked in sync mode. In proto-JSON a
    # null repeated field is the empty list, so {"path": null} is {"path": []}.
    match = [{"log_attribute": path, "exists": True}]
    assert errors({"log": {"match": match, "keep": "none"}}) == [
        "log: match[0]: attribute has empty path"
    ]


def test_keep_forms() -> None:
    def keep(value: Any) -> Any:
        return one({"log": {"match": [{"log_field": "body", "exists": True}], "keep": value}}).keep

    assert keep("all").kind is KeepKind.ALL
    assert keep(" none ").kind is KeepKind.NONE
    assert keep("").kind is KeepKind.ALL
    assert keep("12.5%").percent == 12.5
    assert keep("100%").kind is KeepKind.ALL
    assert keep("0%").kind is KeepKind.NONE
    rate = keep("3/5m")
    assert (rate.kind, rate.limit, rate.window_ms) == (KeepKind.RATE, 3, 300_000)
    assert keep("7/s").window_ms == 1000
    assert keep(True).kind is KeepKind.ALL
    assert keep({"percentage": 49.6}).percent == 50.0


@pytest.mark.parametrize(
    "bad",
    # Digits are ASCII only (POLICY.md 1.7): not fullwidth or Arabic-Indic ones.
    [
        "bogus",
        "0/s",
        "1/0s",
        "101%",
        "-1%",
        "nan%",
        "1.5/s",
        "2 /s",
        "\uff15/s",
        "1/\u0665s",
        "\uff15\uff10%",
    ],
)
def test_invalid_log_keep_message(bad: str) -> None:
    assert errors({"log": {"match": [{"log_field": "body", "exists": True}], "keep": bad}}) == [
        f"log: keep: invalid value {json_repr(bad)}"
    ]


def test_sample_rate_dialect() -> None:
    policy = one({"log": {"match": [{"log_field": "body", "exists": True}], "sample_rate": 0.1}})
    assert policy.keep.kind is KeepKind.PERCENT
    assert policy.keep.percent == pytest.approx(10.0)
    assert errors(
        {
            "log": {
                "match": [{"log_field": "body", "exists": True}],
                "sample_rate": 0.1,
                "keep": "all",
            }
        }
    ) == ["log: keep and sample_rate are mutually exclusive"]
    assert errors(
        {"log": {"match": [{"log_field": "body", "exists": True}], "sample_rate": 2}}
    ) == ["log: sample_rate: 2 out of range [0, 1]"]


def test_all_errors_of_a_policy_are_collected_in_order() -> None:
    found = errors(
        {
            "log": {
                "match": [
                    {"log_field": "body", "regex": "([bad"},
                    {"log_field": "body"},
                    {"exact": "x"},
                    {"log_attribute": {"path": []}, "exact": "x"},
                    {"log_field": "LOG_FIELD_UNSPECIFIED", "exact": "x"},
                    {"log_field": "body", "exact": "a", "contains": "b"},
                    {"log_field": "body", "exact": ""},
                ],
                "keep": "sometimes",
                "transform": {
                    "redact": [{"log_attribute": "cvv", "regex": "(?=x)"}],
                    "rename": [{"from_log_attribute": "a", "to": ""}],
                },
            }
        }
    )
    assert found[0].startswith('log: match[0]: invalid regex "([bad"')
    assert found[1:6] == [
        "log: match[1]: matcher has no match condition",
        "log: match[2]: matcher has no field specified",
        "log: match[3]: attribute has empty path",
        "log: match[4]: field is unspecified",
        "log: match[5]: matcher has more than one match condition",
    ]
    assert found[6] == "log: match[6]: empty pattern"
    assert found[7] == 'log: keep: invalid value "sometimes"'
    assert found[8].startswith('log: transform: redact[0]: invalid regex "(?=x)"')
    assert found[9] == "log: transform: rename[0]: rename target is empty"


def test_empty_match_list_and_missing_keeps() -> None:
    assert errors({"log": {"match": [], "keep": "none"}}) == ["log: no matchers specified"]
    assert errors({"metric": {"match": [{"metric_field": "name", "exact": "x"}]}}) == [
        "metric: keep: missing"
    ]
    assert errors({"trace": {"match": [{"trace_field": "name", "exact": "x"}]}}) == [
        "trace: keep: missing"
    ]
    assert errors(
        {"trace": {"match": [{"trace_field": "name", "exact": "x"}], "keep": {"percentage": 150}}}
    ) == ["trace: keep: percentage 150 out of range [0, 100]"]


@pytest.mark.parametrize(
    "percentage",
    [1e39, -1e39, "1e39", 10**400, -(10**400)],
    ids=["1e39", "-1e39", "text", "int", "-int"],
)
def test_trace_percentage_past_float32_range_is_out_of_range(percentage: object) -> None:
    # POLICY.md section 0: a percentage outside 0..100 is this error, also one
    # float32 (the proto type) cannot hold.
    found = errors(
        {
            "trace": {
                "match": [{"trace_field": "name", "exact": "x"}],
                "keep": {"percentage": percentage},
            }
        }
    )
    assert found == [f"trace: keep: percentage {percentage} out of range [0, 100]"]


@pytest.mark.parametrize(
    ("keep", "problem"),
    [
        ({"sampling_precision": "x"}, 'invalid sampling_precision "x"'),
        ({"samplingPrecision": True}, "invalid sampling_precision true"),
        ({"hash_seed": 1.5}, "invalid hash_seed 1.5"),
        ({"hashSeed": "9" * 20}, f"hash_seed {'9' * 20} out of int64 range"),
    ],
)
def test_trace_keep_number_problems_name_their_key(keep: dict[str, object], problem: str) -> None:
    # POLICY.md 1.9: 'trace: keep: <reason>'; the reason names the key at fault.
    found = errors(
        {
            "trace": {
                "match": [{"trace_field": "name", "exact": "x"}],
                "keep": {"percentage": 50, **keep},
            }
        }
    )
    assert found == [f"trace: keep: {problem}"]


def test_trace_keep_fields() -> None:
    keep = one(
        {
            "trace": {
                "match": [{"span_kind": "SPAN_KIND_SERVER", "exists": True}],
                "keep": {
                    "percentage": 10.1,
                    "mode": "SAMPLING_MODE_EQUALIZING",
                    "samplingPrecision": 20,
                    "hashSeed": "7",
                    "failClosed": False,
                },
            }
        }
    ).keep
    assert keep.kind is KeepKind.TRACE_SAMPLE
    assert keep.percent == pytest.approx(10.1, rel=1e-6) and keep.percent != 10.1  # float32
    assert (keep.mode, keep.precision, keep.hash_seed, keep.fail_closed) == (
        SamplingMode.EQUALIZING,
        14,
        7,
        False,
    )


def test_value_carrying_selectors_ignore_exists() -> None:
    policy = one(
        {
            "trace": {
                "match": [
                    {"spanStatus": 0, "exists": True},
                    {"span_kind": 2},
                    {"event_name": "boom"},
                ],
                "keep": {"percentage": 0},
            }
        }
    )
    assert [(m.selector.name, m.value) for m in policy.matchers] == [
        ("span_status", "unset"),
        ("span_kind", "server"),
        ("span_event_name", "boom"),
    ]
    metric = one({"metric": {"match": [{"metric_type": "METRIC_TYPE_HISTOGRAM"}], "keep": False}})
    assert metric.matchers[0].value == "histogram"
    assert metric.signal is Signal.METRIC


def test_typed_literals() -> None:
    def value(literal: Any, op: str = "equals") -> Any:
        p = one({"log": {"match": [{"log_attribute": "a", op: literal}], "keep": "none"}})
        assert p.valid, p.errors
        return p.matchers[0].value

    assert value(True) is True
    assert value(5) == 5 and isinstance(value(5), int)
    assert isinstance(value(5.0), float)
    assert value({"int_value": "-9007199254740993"}) == -9007199254740993
    assert value({"hexValue": "DEADbeef"}) == b"\xde\xad\xbe\xef"
    assert value({"bytes_value": "AAE="}) == b"\x00\x01"
    assert value(3, "gte") == 3
    bad = errors(
        {
            "log": {
                "match": [
                    {"log_attribute": "a", "equals": {"hex_value": "abc"}},
                    {"log_attribute": "a", "gt": "5"},
                    {"log_attribute": "a", "equals": {}},
                ],
                "keep": "none",
            }
        }
    )
    assert bad[0] == 'log: match[0]: invalid hex_value "abc"'
    assert bad[1].startswith("log: match[1]: gt requires a number")
    assert bad[2] == "log: match[2]: equals value oneof is unset"


@pytest.mark.parametrize("text", ["de  ad", " dead ", "de\t\nad", "0x00", "+0"])
def test_hex_value_is_hex_digits_only(text: str) -> None:
    # POLICY.md 1.6: even length, hex digits (either case); anything else is
    # an error (bytes.fromhex would skip the whitespace).
    match = [{"log_attribute": "a", "equals": {"hex_value": text}}]
    assert errors({"log": {"match": match, "keep": "none"}}) == [
        f"log: match[0]: invalid hex_value {json_repr(text)}"
    ]


def test_a_bad_boolean_is_named_and_shown_as_json() -> None:
    """The error names the key (a matcher holds several booleans) and spells
    the value as in the file ("yes", not 'yes')."""
    match = [{"log_field": "body", "exact": "x", "negate": "yes"}]
    assert errors({"log": {"match": match, "keep": "none"}}) == [
        'log: match[0]: negate: expected true or false, got "yes"'
    ]
    match = [
        {"log_field": "body", "exact": "x", "case_insensitive": 1},
        {"log_field": "body", "exists": "true"},
        {"log_field": "body", "equals": {"bool_value": 0}},
    ]
    assert errors({"log": {"match": match, "keep": "none"}}) == [
        "log: match[0]: case_insensitive: expected true or false, got 1",
        'log: match[1]: exists: expected true or false, got "true"',
        "log: match[2]: bool_value: expected true or false, got 0",
    ]
    add = [{"log_attribute": "a", "value": "v", "upsert": "no"}]
    log = {"match": [{"log_field": "body", "exact": "x"}], "transform": {"add": add}}
    assert errors({"log": log}) == [
        'log: transform: add[0]: upsert: expected true or false, got "no"'
    ]
    keep = {"percentage": 50, "fail_closed": "false"}
    assert errors({"trace": {"match": [{"trace_field": "name", "exact": "x"}], "keep": keep}}) == [
        'trace: keep: fail_closed: expected true or false, got "false"'
    ]


TARGETS = {
    "log": {"match": [{"log_field": "body", "exact": "x"}], "keep": "none"},
    "metric": {"match": [{"metric_field": "name", "exact": "x"}], "keep": False},
    "trace": {"match": [{"trace_field": "name", "exact": "x"}], "keep": {"percentage": 0}},
}


@pytest.mark.parametrize("signal", list(TARGETS))
@pytest.mark.parametrize(
    "raw, shown",
    [
        ("false", '"false"'),
        (0, "0"),
        ("no", '"no"'),
        (None, "null"),
        ([], "[]"),
        ("true", '"true"'),
    ],
)
def test_enabled_that_is_not_a_boolean_is_an_error(signal: str, raw: Any, shown: str) -> None:
    """POLICY.md 1.2: `enabled` is a bool, and only a missing one means true.
    It used to read every non-boolean as true: `"enabled": "false"` dropped
    data. Now the policy is reported (it counts as enabled) and stays inert."""
    policy = one({"enabled": raw, signal: TARGETS[signal]})
    assert policy.enabled and not policy.valid
    assert policy.errors == (f"enabled: expected true or false, got {shown}",)


def test_enabled_error_comes_with_the_policys_other_errors() -> None:
    assert errors({"enabled": "no", "log": {"match": [], "keep": "bogus"}}) == [
        'enabled: expected true or false, got "no"',
        "log: no matchers specified",
        'log: keep: invalid value "bogus"',
    ]


def test_enabled_missing_true_and_false() -> None:
    assert one({"log": TARGETS["log"]}).enabled
    assert one({"enabled": True, "log": TARGETS["log"]}).enabled
    assert not one({"enabled": False, "log": TARGETS["log"]}).enabled


def test_disabled_and_targetless_policies() -> None:
    report = load_document(
        {
            "policies": [
                {"id": "off", "name": "x", "enabled": False, "log": {"match": [], "keep": "bogus"}},
                {"id": "none", "name": "x"},
                {"name": "no id"},
                "junk",
            ]
        }
    )
    assert [p.id for p in report.policies] == ["off", "none"]
    assert report.policies[0].errors == ()  # disabled: never compiled, never reported
    assert len(report.warnings) == 3


def test_duplicate_ids_later_wins_with_warning() -> None:
    report = load_document(
        {
            "policies": [
                {
                    "id": "d",
                    "name": "first",
                    "log": {"match": [{"log_field": "body", "exists": True}], "keep": "none"},
                },
                {
                    "id": "d",
                    "name": "second",
                    "log": {"match": [{"log_field": "body", "exists": True}], "keep": "all"},
                },
            ]
        }
    )
    assert [p.name for p in report.policies] == ["second"]
    assert any("duplicate" in w for w in report.warnings)


@pytest.mark.parametrize("doc", [[], {}, {"policies": {}}, "x"])
def test_document_without_policies_array_is_a_document_error(doc: Any) -> None:
    with pytest.raises(PolicyDocumentError):
        load_document(doc)


@pytest.mark.parametrize("pattern", [r"a\z", r"(?<name>x)", r"x(?i)y", r"[[:alpha:]]+", r"\pN"])
def test_re2_only_syntax_is_valid(pattern: str) -> None:
    assert (
        errors({"log": {"match": [{"log_field": "body", "regex": pattern}], "keep": "none"}}) == []
    )


@pytest.mark.parametrize("pattern", [r"(?=x)", r"(a)\1", r"a++", r"\Z", r"(?<!x)y"])
def test_patterns_re2_rejects_are_errors(pattern: str) -> None:
    found = errors({"log": {"match": [{"log_field": "body", "regex": pattern}], "keep": "none"}})
    assert len(found) == 1 and found[0].startswith(
        f"log: match[0]: invalid regex {json_repr(pattern)}"
    )


@pytest.mark.parametrize("text", ["\uff15", "-\u0665", "1\uff10"])
def test_int_value_is_ascii_decimal(text: str) -> None:
    # POLICY.md 1.6: int_value is a number or a decimal string; Python's \d and
    # int() also read fullwidth and other Unicode digits.
    match = [{"log_attribute": "a", "equals": {"int_value": text}}]
    assert errors({"log": {"match": match, "keep": "none"}}) == [
        f"log: match[0]: invalid int_value {json_repr(text)}"
    ]


@pytest.mark.parametrize("text", ["\u00b2", "\uff12", "\u0662"])
def test_an_enum_number_is_ascii_digits(text: str) -> None:
    # An enum is a name or a number (POLICY.md 1.4); a superscript two made
    # int() raise and the whole file fail to load instead of this one policy
    # (section 0), and a fullwidth two was read as severity_text.
    assert errors({"log": {"match": [{"log_field": text, "exact": "x"}], "keep": "none"}}) == [
        f"log: match[0]: invalid log_field {json_repr(text)}"
    ]
    span_kind = [{"span_kind": text}]
    assert errors({"trace": {"match": span_kind, "keep": {"percentage": 0}}}) == [
        f"trace: match[0]: invalid span_kind {json_repr(text)}"
    ]


@pytest.mark.parametrize(
    "signal, key, text, keep",
    [
        ("log", "log_field", "BODY", "none"),
        ("log", "log_field", "Log_Field_Body", "none"),
        ("metric", "metric_type", "GAUGE", False),
        ("metric", "aggregation_temporality", "Delta", False),
        ("trace", "span_kind", "SERVER", {"percentage": 0}),
        ("trace", "span_status", "Error", {"percentage": 0}),
        ("trace", "trace_field", "span_kind_server", {"percentage": 0}),
    ],
)
def test_an_enum_name_in_another_case_is_invalid(
    signal: str, key: str, text: str, keep: Any
) -> None:
    # POLICY.md 1.4: the short lowercase name, the proto name or the number;
    # Go rejects any other value and Zig takes the two names as written, so a
    # miscased name is an error of the policy (section 0), not a match.
    matcher = {key: text} if key not in ("log_field", "trace_field") else {key: text, "exact": "x"}
    assert errors({signal: {"match": [matcher], "keep": keep}}) == [
        f"{signal}: match[0]: invalid {key} {json_repr(text)}"
    ]
