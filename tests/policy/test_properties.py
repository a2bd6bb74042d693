"""Property-based checks on generated policy sets and records:

- the result does not depend on the order of policies in the file;
- evaluating again (fresh state) gives identical output;
- the OTLP JSON and OTLP protobuf views give identical results, with record
  attributes as messages and as raw bytes.

Generated sets avoid unkeyed percentage sampling (random by design).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sluice.evaluate import stats_document
from sluice.policy import PolicyRuntime, PolicySnapshot, Signal, load_document
from sluice.telemetry import otlp_codec
from sluice.telemetry.otlp_json import json_view
from sluice.telemetry.otlp_proto import proto_view
from tests.telemetry.otlp_convert import to_json, to_proto

WORDS = ["err", "ok", "GET", "get", "db", "a.b", "x", "É"]
KEYS = ["svc", "env", "code"]

word = st.sampled_from(WORDS)
text = st.lists(word, min_size=0, max_size=4).map(" ".join)
selector = st.one_of(
    st.just({"log_field": "body"}),
    st.just({"log_field": "severity_text"}),
    st.sampled_from(KEYS).map(lambda k: {"log_attribute": k}),
    st.sampled_from(KEYS).map(lambda k: {"resource_attribute": k}),
)
condition = st.one_of(
    word.map(lambda w: {"exact": w}),
    word.map(lambda w: {"contains": w}),
    word.map(lambda w: {"starts_with": w}),
    st.sampled_from(["^e", "o$", "[A-Z]+", r"\bdb\b", "(?i)get|x"]).map(lambda r: {"regex": r}),
    st.booleans().map(lambda b: {"exists": b}),
)
matcher = st.builds(
    lambda sel, cond, neg, ci: {**sel, **cond, "negate": neg, "case_insensitive": ci},
    selector,
    condition,
    st.booleans(),
    st.booleans(),
)
keep = st.sampled_from(["all", "none", "2/s", "1/m", "50%", "0%", "100%"])
transform = st.fixed_dictionaries(
    {},
    optional={
        "add": st.lists(
            st.builds(
                lambda k, v, u: {"log_attribute": k, "value": v, "upsert": u},
                st.sampled_from(KEYS),
                word,
                st.booleans(),
            ),
            max_size=2,
        ),
        "remove": st.lists(st.sampled_from(KEYS).map(lambda k: {"log_attribute": k}), max_size=1),
        "redact": st.lists(
            st.just({"log_field": "body", "regex": "[aeiou]", "replacement": "*"}), max_size=1
        ),
        "rename": st.lists(
            st.builds(
                lambda a, b: {"from_log_attribute": a, "to": b, "upsert": True},
                st.sampled_from(KEYS),
                st.sampled_from(KEYS),
            ),
            max_size=1,
        ),
    },
)


@st.composite
def policy_sets(draw: st.DrawFn) -> list[dict[str, Any]]:
    count = draw(st.integers(1, 6))
    ids = draw(
        st.lists(
            st.text("abcxyz0", min_size=1, max_size=4), min_size=count, max_size=count, unique=True
        )
    )
    out = []
    for pid in ids:
        log: dict[str, Any] = {
            "match": draw(st.lists(matcher, min_size=1, max_size=3)),
            "keep": draw(keep),
            "transform": draw(transform),
        }
        if log["keep"] == "50%":
            log["sample_key"] = {"log_attribute": "svc"}
        out.append({"id": pid, "name": pid, "log": log})
    return out


def attribute(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


attrs = st.dictionaries(st.sampled_from(KEYS), st.one_of(word, st.integers(0, 3)), max_size=3)
record = st.builds(
    lambda body, sev, a: {
        "body": {"stringValue": body},
        "severityText": sev,
        "attributes": [attribute(k, v) for k, v in a.items()],
    },
    text,
    st.sampled_from(["", "INFO", "DEBUG", "err"]),
    attrs,
)
resource = st.builds(
    lambda a, recs: {
        "resource": {"attributes": [attribute(k, v) for k, v in a.items()]},
        "scopeLogs": [{"scope": {"name": "s"}, "logRecords": recs}],
    },
    attrs,
    st.lists(record, min_size=1, max_size=5),
)
documents = st.lists(resource, min_size=1, max_size=3).map(lambda r: {"resourceLogs": r})


def evaluate(
    policies: list[dict[str, Any]], doc: dict[str, Any], form: str = "json"
) -> tuple[Any, Any]:
    """Output and stats of `policies` on `doc` read as OTLP JSON, as protobuf
    messages, or as protobuf with raw record attributes (what Edge decodes)."""
    runtime = PolicyRuntime(clock=lambda: 0.0)
    snapshot = PolicySnapshot.compile(load_document({"policies": policies}).policies, runtime)
    if form == "proto":
        message = to_proto(doc, Signal.LOG)
        snapshot.evaluate(Signal.LOG, proto_view(Signal.LOG), message)
        out = to_json(message)
    elif form == "raw":
        wire = to_proto(doc, Signal.LOG).SerializeToString()
        lean, view = otlp_codec.decode(Signal.LOG, otlp_codec.PROTOBUF, wire)
        snapshot.evaluate(Signal.LOG, view, lean)
        out = to_json(lean)
    else:
        out = copy.deepcopy(doc)
        snapshot.evaluate(Signal.LOG, json_view(Signal.LOG), out)
    return out, stats_document(runtime.stats)


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(policy_sets(), documents, st.randoms())
def test_output_does_not_depend_on_policy_order(
    policies: list[dict[str, Any]], doc: dict[str, Any], rnd: Any
) -> None:
    shuffled = list(policies)
    rnd.shuffle(shuffled)
    assert evaluate(policies, doc) == evaluate(shuffled, doc)


@SETTINGS
@given(policy_sets(), documents)
def test_repeated_runs_give_identical_output(
    policies: list[dict[str, Any]], doc: dict[str, Any]
) -> None:
    assert evaluate(policies, doc) == evaluate(policies, doc)


def _canonical(doc: Any) -> str:
    from tests.conformance.normalize import normalize

    return json.dumps(normalize(doc), sort_keys=True)


@SETTINGS
@given(policy_sets(), documents)
def test_json_and_protobuf_views_agree(policies: list[dict[str, Any]], doc: dict[str, Any]) -> None:
    json_out, json_stats = evaluate(policies, doc)
    for form in ("proto", "raw"):
        out, stats = evaluate(policies, doc, form)
        assert stats == json_stats, form
        assert _canonical(out) == _canonical(json_out), form
