"""Rewrite a policy from either dialect into canonical proto-JSON.

Canonical means the proto3 JSON mapping of ``tero.policy.v1.Policy``:
lowerCamelCase keys, full enum names, attribute paths as ``{"path": [...]}``,
typed literals as ``TypedValue`` objects, log ``keep`` as its string form.
A policy server needs this to answer in protobuf or gRPC (and in the JSON
that other implementations expect).

The rewrite is structural, not a validation: conditions the engine would
reject (a bad regex, an unknown keep) are passed on unchanged so that clients
report them. Values that cannot be expressed in the proto at all (an unknown
enum name, a string where a number belongs) become the field's zero value,
which clients report as unspecified. A policy whose error the proto cannot
carry at all (an ``enabled`` or a metric ``keep`` that is no boolean: the
proto bool would read false) is served disabled (:func:`served_disabled_because`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sluice.policy.parse.dialect import (
    LOG_FIELD,
    METRIC_FIELD,
    METRIC_TYPE_ENUM,
    SAMPLING_MODE_ENUM,
    SPAN_KIND_ENUM,
    SPAN_STATUS_ENUM,
    TEMPORALITY_ENUM,
    TRACE_FIELD,
    TYPED_VALUE_KEYS,
    EnumNames,
    Invalid,
    camel,
    json_repr,
    member,
)

JsonObj = dict[str, Any]

_ATTRIBUTE_KEYS = (
    "log_attribute",
    "datapoint_attribute",
    "span_attribute",
    "resource_attribute",
    "scope_attribute",
    "event_attribute",
)
_ENUM_KEYS: dict[str, EnumNames] = {
    "log_field": LOG_FIELD,
    "metric_field": METRIC_FIELD,
    "trace_field": TRACE_FIELD,
    "metric_type": METRIC_TYPE_ENUM,
    "aggregation_temporality": TEMPORALITY_ENUM,
    "span_kind": SPAN_KIND_ENUM,
    "span_status": SPAN_STATUS_ENUM,
}
_PROTO_STATUS = {"unset": "SPAN_STATUS_CODE_UNSPECIFIED"}
_PATTERN_KEYS = ("exact", "regex", "starts_with", "ends_with", "contains")
_TYPED_KEYS = ("equals", "gt", "gte", "lt", "lte")
_VALUE_SELECTORS = ("event_name", "link_trace_id")


def _enum_name(enum: EnumNames, raw: Any, what: str) -> str | int:
    try:
        short = enum.parse(raw, what)
    except Invalid:
        return 0
    if enum is SPAN_STATUS_ENUM and short in _PROTO_STATUS:
        return _PROTO_STATUS[short]
    return enum.prefix + short.upper()


def _path(raw: Any) -> JsonObj:
    if isinstance(raw, Mapping):
        raw = raw.get("path", [])
    if isinstance(raw, str):
        return {"path": [raw] if raw else []}
    if isinstance(raw, list):
        return {"path": [str(segment) for segment in raw]}
    return {"path": []}


def _typed(raw: Any) -> JsonObj:
    if isinstance(raw, bool):
        return {"boolValue": raw}
    if isinstance(raw, int):
        return {"intValue": str(raw)}
    if isinstance(raw, float):
        return {"doubleValue": raw}
    if isinstance(raw, str):
        return {"stringValue": raw}
    if isinstance(raw, Mapping):
        out = {}
        for key in TYPED_VALUE_KEYS:
            value = member(raw, key)
            if value is not None:
                out[camel(key)] = str(value) if key == "int_value" else value
        return out
    return {}


def _selector(obj: Mapping[str, Any], out: JsonObj, prefix: str = "") -> None:
    for key, enum in _ENUM_KEYS.items():
        raw = member(obj, prefix + key)
        if raw is not None:
            out[camel(prefix + key)] = _enum_name(enum, raw, key)
    for key in _ATTRIBUTE_KEYS:
        raw = member(obj, prefix + key)
        if raw is not None:
            out[camel(prefix + key)] = _path(raw)
    if not prefix:
        for key in _VALUE_SELECTORS:
            raw = member(obj, key)
            if raw is not None:
                out[camel(key)] = raw if isinstance(raw, str) else str(raw)


def _matcher(obj: Any) -> JsonObj:
    if not isinstance(obj, Mapping):
        return {}
    out: JsonObj = {}
    _selector(obj, out)
    for key in _PATTERN_KEYS:
        raw = member(obj, key)
        if raw is not None:
            out[camel(key)] = raw if isinstance(raw, str) else str(raw)
    exists = member(obj, "exists")
    if isinstance(exists, bool):
        out["exists"] = exists
    for key in _TYPED_KEYS:
        raw = member(obj, key)
        if raw is not None:
            out[key] = _typed(raw)
    for key in ("negate", "case_insensitive"):
        raw = member(obj, key)
        if isinstance(raw, bool):
            out[camel(key)] = raw
    return out


def _log_keep(target: Mapping[str, Any]) -> str:
    keep = target.get("keep")
    rate = member(target, "sample_rate")
    if keep is None and isinstance(rate, int | float) and not isinstance(rate, bool):
        return f"{rate * 100:g}%"
    if keep is True or keep is None:
        return "all"
    if keep is False:
        return "none"
    if isinstance(keep, Mapping) and isinstance(keep.get("percentage"), int | float):
        return f"{keep['percentage']:.0f}%"
    return str(keep).strip()


def _transform(raw: Any) -> JsonObj:
    if not isinstance(raw, Mapping):
        return {}
    out: JsonObj = {}
    for stage in ("remove", "redact", "rename", "add"):
        items = raw.get(stage)
        if not isinstance(items, list):
            continue
        steps = []
        for item in items:
            if not isinstance(item, Mapping):
                continue
            step: JsonObj = {}
            _selector(item, step, prefix="from_" if stage == "rename" else "")
            for key in ("replacement", "regex", "to", "value"):
                if item.get(key) is not None:
                    step[key] = str(item[key])
            if stage == "redact" and "replacement" not in step:
                step["replacement"] = "[REDACTED]"
            if isinstance(item.get("upsert"), bool):
                step["upsert"] = item["upsert"]
            steps.append(step)
        out[stage] = steps
    return out


def _log(target: Mapping[str, Any]) -> JsonObj:
    out: JsonObj = {
        "match": [_matcher(m) for m in _list(target.get("match"))],
        "keep": _log_keep(target),
    }
    transform = _transform(target.get("transform"))
    if transform:
        out["transform"] = transform
    sample_key = member(target, "sample_key")
    if isinstance(sample_key, Mapping):
        key: JsonObj = {}
        _selector(sample_key, key)
        out["sampleKey"] = key
    return out


def _metric(target: Mapping[str, Any]) -> JsonObj:
    out: JsonObj = {"match": [_matcher(m) for m in _list(target.get("match"))]}
    keep = target.get("keep")
    if isinstance(keep, bool):
        out["keep"] = keep
    elif keep in ("all", "none"):
        out["keep"] = keep == "all"
    return out


def _trace(target: Mapping[str, Any]) -> JsonObj:
    out: JsonObj = {"match": [_matcher(m) for m in _list(target.get("match"))]}
    keep = target.get("keep")
    if isinstance(keep, Mapping):
        config: JsonObj = {}
        pct = member(keep, "percentage")
        if isinstance(pct, int | float) and not isinstance(pct, bool):
            config["percentage"] = pct
        mode = member(keep, "mode")
        if mode is not None:
            config["mode"] = _enum_name(SAMPLING_MODE_ENUM, mode, "mode")
        for key in ("sampling_precision", "hash_seed"):
            raw = member(keep, key)
            if isinstance(raw, int) and not isinstance(raw, bool):
                config[camel(key)] = raw
        fail_closed = member(keep, "fail_closed")
        if isinstance(fail_closed, bool):
            config["failClosed"] = fail_closed
        out["keep"] = config
    return out


def _list(raw: Any) -> list[Any]:
    return raw if isinstance(raw, list) else []


def _target(policy: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]] | None:
    """The policy's first target (``log``, ``metric`` or ``trace``) and its name."""
    for name in ("log", "metric", "trace"):
        target = policy.get(name)
        if isinstance(target, Mapping):
            return name, target
    return None


def served_disabled_because(policy: Mapping[str, Any]) -> str:
    """Why `policy` is served disabled, as its error reads in a policy file,
    or "" when it is not. A proto bool has no absent or wrong value: an
    ``enabled`` of null, "false" or 0 would be served as false (and clients
    would skip an error they cannot see), a metric ``keep`` missing or not a
    boolean as false, which drops every metric the policy matches."""
    enabled = policy.get("enabled", True)
    if not isinstance(enabled, bool):
        return f"enabled: expected true or false, got {json_repr(enabled)}"
    found = _target(policy)
    if found is not None and found[0] == "metric":
        target = found[1]
        if "keep" not in target:
            return "metric: keep: missing"
        if not isinstance(target["keep"], bool) and target["keep"] not in ("all", "none"):
            return f"metric: keep: invalid value {json_repr(target['keep'])}"
    return ""


def canonical_policy(policy: Mapping[str, Any]) -> JsonObj:
    """One policy of either dialect as canonical proto-JSON."""
    out: JsonObj = {}
    for key in ("id", "name", "description"):
        if isinstance(policy.get(key), str):
            out[key] = policy[key]
    out["enabled"] = policy.get("enabled", True) is True and not served_disabled_because(policy)
    for key in ("created_at_unix_nano", "modified_at_unix_nano"):
        raw = member(policy, key)
        if raw is not None:
            out[camel(key)] = str(raw)
    if isinstance(policy.get("labels"), list):
        out["labels"] = policy["labels"]
    found = _target(policy)
    if found is not None:
        name, target = found
        out[name] = {"log": _log, "metric": _metric, "trace": _trace}[name](target)
    return out
