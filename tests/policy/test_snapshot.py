"""Evaluation semantics beyond the public conformance cases (POLICY.md section 0)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sluice.policy import PolicyRuntime, PolicySnapshot, Signal, load_document
from sluice.policy.model import Selector, Source
from sluice.policy.view import FieldReader, Scan
from sluice.telemetry.otlp_json import json_view
from tests.policy.views import ForwardingView


def attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    if isinstance(value, dict):
        return {
            "key": key,
            "value": {"kvlistValue": {"values": [attr(k, v) for k, v in value.items()]}},
        }
    return {"key": key, "value": {"stringValue": value}}


def logs(*records: dict[str, Any], resource: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "resourceLogs": [
            {
                "resource": {"attributes": [attr(k, v) for k, v in (resource or {}).items()]},
                "scopeLogs": [{"scope": {"name": "s"}, "logRecords": list(records)}],
            }
        ]
    }


def rec(body: str | None = None, severity: str = "", **attrs: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "severityText": severity,
        "attributes": [attr(k, v) for k, v in attrs.items()],
    }
    if body is not None:
        out["body"] = {"stringValue": body}
    return out


def compile_log(*policies: dict[str, Any], runtime: PolicyRuntime | None = None) -> PolicySnapshot:
    docs = [{"id": p.pop("id", f"p{i}"), "name": "n", "log": p} for i, p in enumerate(policies)]
    report = load_document({"policies": docs})
    return PolicySnapshot.compile(report.policies, runtime=runtime)


def bodies(doc: dict[str, Any]) -> list[str | None]:
    return [
        r.get("body", {}).get("stringValue")
        for rl in doc["resourceLogs"]
        for sl in rl["scopeLogs"]
        for r in sl["logRecords"]
    ]


def run(snapshot: PolicySnapshot, doc: dict[str, Any]) -> list[str | None]:
    snapshot.evaluate(Signal.LOG, json_view(Signal.LOG), doc)
    return bodies(doc)


def test_exact_is_full_equality() -> None:
    snap = compile_log({"match": [{"log_field": "body", "exact": "boom"}], "keep": "none"})
    assert run(snap, logs(rec("boom"), rec("kaboom"), rec("boom!"))) == ["kaboom", "boom!"]


def test_negated_pattern_on_absent_field_matches() -> None:
    snap = compile_log(
        {"match": [{"log_attribute": "env", "exact": "prod", "negate": True}], "keep": "none"}
    )
    assert run(snap, logs(rec("a", env="prod"), rec("b", env="dev"), rec("c"))) == ["a"]


def test_exists_and_negated_exists() -> None:
    keep_if_present = compile_log(
        {"match": [{"log_attribute": "x", "exists": False, "negate": True}], "keep": "none"}
    )
    assert run(keep_if_present, logs(rec("a", x=""), rec("b"), rec("c", x=0))) == ["b"]
    drop_if_absent = compile_log(
        {"match": [{"log_attribute": "x", "exists": False}], "keep": "none"}
    )
    assert run(drop_if_absent, logs(rec("a", x=1), rec("b"))) == ["a"]


def test_non_string_values_are_invisible_to_patterns_but_typed_matchers_see_them() -> None:
    pattern = compile_log({"match": [{"log_attribute": "code", "exact": "200"}], "keep": "none"})
    assert run(pattern, logs(rec("int", code=200), rec("str", code="200"))) == ["int"]
    typed = compile_log({"match": [{"log_attribute": "code", "gte": 500}], "keep": "none"})
    assert run(
        typed,
        logs(
            rec("a", code=200),
            rec("b", code=503),
            rec("c", code=500.5),
            rec("d", code="503"),
            rec("e"),
        ),
    ) == ["a", "d", "e"]
    equal = compile_log({"match": [{"log_attribute": "code", "equals": 5}], "keep": "none"})
    assert run(equal, logs(rec("a", code=5.0), rec("b", code=True), rec("c", code=6))) == ["b", "c"]
    negated = compile_log(
        {"match": [{"log_attribute": "ok", "equals": True, "negate": True}], "keep": "none"}
    )
    assert run(negated, logs(rec("a", ok=True), rec("b", ok=False), rec("c"))) == ["a"]


def test_case_insensitive_folds_unicode() -> None:
    snap = compile_log(
        {
            "match": [{"log_field": "body", "contains": "ÉCHEC", "case_insensitive": True}],
            "keep": "none",
        }
    )
    assert run(snap, logs(rec("un échec total"), rec("echec"))) == ["echec"]


def test_regex_dollar_is_end_of_text_as_in_re2() -> None:
    snap = compile_log({"match": [{"log_field": "body", "regex": "done$"}], "keep": "none"})
    assert run(snap, logs(rec("done\n"), rec("all done"))) == ["done\n"]


def test_regex_empty_match_through_not_word_is_found_inside_a_character_as_in_re2() -> None:
    # RE2 searches bytes: between the two bytes of "é" both sides are non-word, so \B holds
    # there, and nowhere else in "1é1" or "1.1" (every other position is a word boundary).
    snap = compile_log({"match": [{"log_field": "body", "regex": "x|\\B"}], "keep": "none"})
    assert run(snap, logs(rec("1é1"), rec("1.1"))) == ["1.1"]


def test_nested_attribute_paths_match_and_transform_at_the_leaf() -> None:
    snap = compile_log(
        {
            "match": [{"log_attribute": ["http", "method"], "exact": "GET"}],
            "keep": "all",
            "transform": {
                "add": [{"log_attribute": ["meta", "seen"], "value": "1"}],
                "redact": [{"log_attribute": ["http", "method"], "replacement": "X"}],
            },
        }
    )
    doc = logs(rec("a", http={"method": "GET"}), rec("b", **{"http.method": "GET"}))
    run(snap, doc)
    first, second = doc["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    http = first["attributes"][0]["value"]["kvlistValue"]["values"]
    assert http == [attr("method", "X")]
    assert first["attributes"][1] == attr("meta", {"seen": "1"})
    assert len(second["attributes"]) == 1  # a dotted key is one flat segment: no match


def test_percentage_outranks_rate_limit_and_the_loser_limiter_is_untouched() -> None:
    runtime = PolicyRuntime(clock=lambda: 0.0)
    snap = compile_log(
        {"id": "b-rate", "match": [{"log_field": "body", "contains": "x"}], "keep": "1/s"},
        {
            "id": "a-pct",
            "match": [
                {"log_field": "body", "contains": "x"},
                {"log_attribute": "k", "exists": True},
            ],
            "keep": "40%",
            "sample_key": {"log_attribute": "k"},
        },
        runtime=runtime,
    )
    doc = logs(rec("x1", k="a"), rec("x2", k="b"), rec("x3"), rec("x4"))
    kept = run(snap, doc)
    totals = runtime.stats.totals()
    # 40% scores 600 > rate limit 500, so the sampler decided x1 and x2 and the
    # limiter saw only x3 (kept, its first token) and x4 (limited)
    assert totals["a-pct"].hits + totals["a-pct"].misses == 2
    assert "x3" in kept and "x4" not in kept


def test_equal_scores_go_to_the_lowest_id() -> None:
    runtime = PolicyRuntime(clock=lambda: 0.0)
    snap = compile_log(
        {"id": "b-wide", "match": [{"log_field": "body", "exists": True}], "keep": "5/s"},
        {"id": "a-tight", "match": [{"log_field": "body", "exists": True}], "keep": "1/s"},
        runtime=runtime,
    )
    assert run(snap, logs(rec("1"), rec("2"), rec("3"))) == ["1"]
    totals = runtime.stats.totals()
    assert (totals["a-tight"].hits, totals["b-wide"].hits, totals["b-wide"].misses) == (3, 1, 2)


def test_rate_limit_window_restarts_after_expiry() -> None:
    now = [0.0]
    runtime = PolicyRuntime(clock=lambda: now[0])
    snap = compile_log(
        {"match": [{"log_field": "body", "exists": True}], "keep": "2/s"}, runtime=runtime
    )
    assert run(snap, logs(rec("1"), rec("2"), rec("3"))) == ["1", "2"]
    now[0] = 999.0
    assert run(snap, logs(rec("4"))) == []
    now[0] = 1000.0
    assert run(snap, logs(rec("5"), rec("6"), rec("7"))) == ["5", "6"]


def test_limiter_state_survives_a_recompile_of_the_same_policy() -> None:
    runtime = PolicyRuntime(clock=lambda: 0.0)
    policy = {"id": "r", "match": [{"log_field": "body", "exists": True}], "keep": "1/m"}
    assert run(compile_log(dict(policy), runtime=runtime), logs(rec("1"))) == ["1"]
    assert run(compile_log(dict(policy), runtime=runtime), logs(rec("2"))) == []


def test_resource_transform_is_seen_by_later_records_of_that_resource() -> None:
    snap = compile_log(
        {
            "id": "a-tag",
            "match": [{"log_field": "body", "exact": "first"}],
            "keep": "all",
            "transform": {"add": [{"resource_attribute": "tagged", "value": "yes"}]},
        },
        {
            "id": "b-drop",
            "match": [{"resource_attribute": "tagged", "exact": "yes"}],
            "keep": "none",
        },
    )
    assert run(snap, logs(rec("first"), rec("second"))) == ["first"]


def test_resource_hits_that_a_transform_removed_are_gone_for_later_records() -> None:
    """The records of a scope are read in one go, each record's hits after its
    resource's: once a record's transform rewrote the resource, the later
    records are decided on what the resource holds now."""
    snap = compile_log(
        {
            "id": "a-untier",
            "match": [{"log_field": "body", "exact": "first"}],
            "keep": "all",
            "transform": {"remove": [{"resource_attribute": "tier"}]},
        },
        {
            "id": "b-gold",
            "match": [
                {"resource_attribute": "tier", "exact": "gold"},
                {"log_field": "body", "starts_with": "s"},
            ],
            "keep": "none",
        },
    )
    doc = logs(rec("second"), rec("first"), rec("second"), rec("s"), resource={"tier": "gold"})
    assert run(snap, doc) == ["first", "second", "s"]


def test_outcome_counts_and_modified_flag() -> None:
    snap = compile_log({"match": [{"log_field": "body", "contains": "drop"}], "keep": "none"})
    untouched = logs(rec("keep me"))
    outcome = snap.evaluate(Signal.LOG, json_view(Signal.LOG), untouched)
    assert (outcome.records, outcome.no_match, outcome.modified) == (1, 1, False)
    doc = logs(rec("drop me"), rec("keep"))
    outcome = snap.evaluate(Signal.LOG, json_view(Signal.LOG), doc)
    assert (outcome.dropped, outcome.no_match, outcome.modified) == (1, 1, True)
    gone = logs(rec("drop"))
    snap.evaluate(Signal.LOG, json_view(Signal.LOG), gone)
    assert gone == {"resourceLogs": []}


def test_each_record_counts_under_one_result_and_a_transform_wins() -> None:
    """A record kept by a sample or a rate limit and changed by a transform is
    ``transformed`` (COLLECTOR.md section 4); one only sampled is ``sampled``."""
    snap = compile_log(
        {
            "match": [{"log_field": "body", "contains": "card"}],
            "keep": "100%",
            "transform": {"redact": [{"log_field": "body", "regex": "[0-9]+"}]},
        },
        {"match": [{"log_field": "body", "contains": "rated"}], "keep": "10/s"},
        {
            "match": [{"log_field": "body", "contains": "edit"}],
            "transform": {"remove": [{"log_attribute": "a"}]},
        },
    )
    doc = logs(rec("card 4111"), rec("rated"), rec("edit me", a="x"), rec("other"))
    outcome = snap.evaluate(Signal.LOG, json_view(Signal.LOG), doc)
    counts = (outcome.transformed, outcome.sampled, outcome.kept, outcome.no_match)
    assert counts == (2, 1, 0, 1)
    assert bodies(doc)[0] == "card [REDACTED]"


def test_a_transform_that_changes_nothing_leaves_the_record_kept() -> None:
    """``transformed`` counts kept records a transform changed (COLLECTOR.md
    section 4): removing or redacting what is not there, adding what is
    there without upsert, a rename its target blocks, change nothing."""
    snap = compile_log(
        {
            "match": [{"log_field": "body", "contains": "x"}],
            "keep": "all",
            "transform": {
                "remove": [{"log_attribute": "secret"}],
                "redact": [
                    {"log_field": "body", "regex": "[0-9]+"},
                    {"log_attribute": "token"},
                ],
                "rename": [{"from_log_attribute": "old", "to": "new"}],
                "add": [{"log_attribute": "env", "value": "prod"}],
            },
        }
    )
    unchanged = logs(rec("x one", env="dev"), rec("x two", old="a", new="b", env="prod"))
    outcome = snap.evaluate(Signal.LOG, json_view(Signal.LOG), unchanged)
    assert (outcome.kept, outcome.transformed, outcome.modified) == (2, 0, False)
    changed = logs(rec("x 1", env="dev"), rec("x", secret="s"), rec("x", old="a"), rec("x"))
    outcome = snap.evaluate(Signal.LOG, json_view(Signal.LOG), changed)
    assert (outcome.kept, outcome.transformed, outcome.modified) == (0, 4, True)


def test_many_policies_sharing_a_condition_each_decide_correctly() -> None:
    policies = [
        {
            "id": f"p{i:04d}",
            "match": [
                {"log_field": "severity_text", "exact": "DEBUG"},
                {"log_attribute": "svc", "exact": f"s{i}"},
            ],
            "keep": "none",
        }
        for i in range(2000)
    ]
    snap = compile_log(*policies)
    doc = logs(
        rec("a", "DEBUG", svc="s1999"),
        rec("b", "INFO", svc="s5"),
        rec("c", "DEBUG", svc="s2000"),
        rec("d", "DEBUG", svc="s7"),
    )
    assert run(snap, doc) == ["b", "c"]
    assert snap.runtime.stats.totals()["p1999"].hits == 1


def test_invalid_policy_is_inert_and_others_work() -> None:
    snap = compile_log(
        {"id": "bad", "match": [{"log_field": "body", "regex": "("}], "keep": "none"},
        {"id": "good", "match": [{"log_field": "body", "exact": "x"}], "keep": "none"},
    )
    assert run(snap, logs(rec("x"), rec("("))) == ["("]
    assert list(snap.errors) == ["bad"]


def test_unkeyed_percentage_samples_randomly() -> None:
    snap = compile_log({"match": [{"log_field": "body", "exists": True}], "keep": "50%"})
    kept = len(run(snap, logs(*[rec(str(i)) for i in range(2000)])))
    assert 850 < kept < 1150


def test_malformed_records_pass_through_untouched() -> None:
    snap = compile_log(
        {
            "match": [
                {"log_field": "body", "contains": "x"},
                {"log_attribute": "k", "exists": True},
            ],
            "keep": "none",
        }
    )
    weird = [
        {"body": "x not an AnyValue", "attributes": [attr("k", "v")]},
        {"body": {"stringValue": "x"}, "attributes": "not a list"},
        {"body": {"stringValue": "x"}, "attributes": [{"no": "key"}]},
        {"body": {"stringValue": ["x"]}, "attributes": [attr("k", "v")]},
        ["not", "a", "record"],
        {"body": {"stringValue": "x"}, "attributes": [attr("k", "v")]},
    ]
    doc = logs(*weird)
    outcome = snap.evaluate(Signal.LOG, json_view(Signal.LOG), doc)
    remaining = doc["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    assert remaining == weird[:5]
    assert outcome.dropped == 1
    # Values of the wrong shape read as absent or text-less; only a record that
    # is not an object cannot be read at all.
    assert (outcome.no_match, outcome.malformed) == (4, 1)


def test_malformed_containers_read_what_they_can_and_their_records_are_filtered() -> None:
    snap = compile_log(
        {"match": [{"log_field": "severity_text", "exact": "DEBUG"}], "keep": "none"},
        {"match": [{"resource_attribute": "service.name", "exact": "noisy"}], "keep": "none"},
        {"match": [{"log_field": "scope_schema_url", "exists": True}], "keep": "none"},
    )
    resources: list[Any] = [
        {"attributes": "zz"},
        5,
        {"attributes": [{"value": {}}, 7, {"key": ["x"]}, attr("service.name", "x")]},
        {"attributes": [attr("service.name", "noisy")]},
        {},
        {},
    ]
    schema_urls: list[Any] = ["", "", "", "", 5, "https://s"]
    doc = {
        "resourceLogs": [
            {
                "resource": resource,
                "scopeLogs": [
                    {"schemaUrl": url, "logRecords": [rec("info"), rec("debug", "DEBUG")]}
                ],
            }
            for resource, url in zip(resources, schema_urls, strict=True)
        ]
    }
    outcome = snap.evaluate(Signal.LOG, json_view(Signal.LOG), doc)
    assert (outcome.records, outcome.malformed) == (12, 0)
    # What cannot be read is absent: the other values still decide, and the
    # malformed values go upstream as they came.
    assert [(r["resource"], bodies({"resourceLogs": [r]})) for r in doc["resourceLogs"]] == [
        (resources[0], ["info"]),
        (resources[1], ["info"]),
        (resources[2], ["info"]),
        (resources[4], ["info"]),
    ]
    assert doc["resourceLogs"][3]["scopeLogs"][0]["schemaUrl"] == 5


class _UnreadableResources(ForwardingView):
    """The OTLP JSON log view, except that it cannot read resources marked
    broken at all (as a view with a bug would)."""

    def reader(self, fields: Sequence[tuple[Scan, Selector]]) -> FieldReader:
        read = self.json.reader(fields)
        if fields[0][1].source is not Source.RESOURCE_ATTRIBUTE:
            return read

        def broken(container: Any) -> tuple[int, ...]:
            if container["resource"].get("broken"):
                raise KeyError("broken")
            return read(container)

        return broken


def test_lone_surrogates_are_scanned_like_any_text() -> None:
    snap = compile_log(
        # RE2 one by one (Hyperscan cannot take these), and Hyperscan
        {
            "match": [{"log_field": "body", "regex": "ärger", "case_insensitive": True}],
            "keep": "none",
        },
        {"match": [{"log_field": "body", "regex": r"\pN"}], "keep": "none"},
        {"match": [{"log_field": "body", "contains": "drop"}], "keep": "none"},
    )
    assert snap.fallback_patterns() == 2
    doc = logs(rec("ÄRGER \ud800"), rec("\udfff 1"), rec("drop \udbff"), rec("keep \ud800"))
    outcome = snap.evaluate(Signal.LOG, json_view(Signal.LOG), doc)
    assert bodies(doc) == ["keep \ud800"]
    assert outcome.malformed == 0


def test_non_string_body_exists_for_body_matchers_without_text() -> None:
    kvlist = {"kvlistValue": {"values": [attr("msg", "error")]}}
    records = [
        {**rec(severity="a"), "body": kvlist},
        {**rec(severity="b"), "body": {"intValue": "5"}},
        rec("error text", severity="c"),
        rec(severity="d"),
    ]
    exists = compile_log({"match": [{"log_field": "body", "exists": True}], "keep": "none"})
    doc = logs(*records)
    exists.evaluate(Signal.LOG, json_view(Signal.LOG), doc)
    assert [r["severityText"] for r in doc["resourceLogs"][0]["scopeLogs"][0]["logRecords"]] == [
        "d"
    ]
    not_error = compile_log(
        {"match": [{"log_field": "body", "contains": "error", "negate": True}], "keep": "none"}
    )
    doc = logs(*records)
    outcome = not_error.evaluate(Signal.LOG, json_view(Signal.LOG), doc)
    assert [r["severityText"] for r in doc["resourceLogs"][0]["scopeLogs"][0]["logRecords"]] == [
        "c"
    ]
    assert outcome.malformed == 0
