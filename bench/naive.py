"""The naive baseline: stdlib ``re``, every policy checked for every record.

:func:`naive_evaluate` drops records from a decoded OTLP JSON batch the way the engine
would, walking the policies one by one in id order. The benchmark verifies the engine
against it and times it as the baseline the engine's speedup is measured from.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from bench import JsonObj

_PRESENT = object()
"""A value that exists without a string view (non-string attribute, empty string)."""


class NaiveCtx(NamedTuple):
    record: JsonObj
    attributes: dict[str, Any]
    resource: dict[str, Any]


Check = Callable[[NaiveCtx], bool]


def _first_entries(kvs: Any) -> dict[str, Any]:
    """key -> AnyValue of the first entry of each key."""
    out: dict[str, Any] = {}
    for kv in kvs or ():
        out.setdefault(kv["key"], kv.get("value"))
    return out


def _scan_value(value: Any) -> Any:
    if value is None:
        return None
    text = value.get("stringValue") if isinstance(value, dict) else None
    return text if text and isinstance(text, str) else _PRESENT


def _naive_body(ctx: NaiveCtx) -> Any:
    value = ctx.record.get("body")
    if not value or not isinstance(value, dict):
        return None
    if "stringValue" in value:
        text = value["stringValue"]
        return text if text and isinstance(text, str) else None
    return _PRESENT


def _naive_getter(matcher: JsonObj) -> Callable[[NaiveCtx], Any]:
    if "log_field" in matcher:
        name = matcher["log_field"]
        if name == "body":
            return _naive_body
        key = {"severity_text": "severityText", "event_name": "eventName"}[name]
        return lambda ctx: ctx.record.get(key) or None
    if "log_attribute" in matcher:
        key = matcher["log_attribute"]
        return lambda ctx: _scan_value(ctx.attributes.get(key))
    key = matcher["resource_attribute"]
    return lambda ctx: _scan_value(ctx.resource.get(key))


def _naive_predicate(op: str, text: str, caseless: bool) -> Callable[[str], object]:
    if op == "regex":
        return re.compile(text, re.IGNORECASE if caseless else 0).search
    if caseless:
        escaped = re.escape(text)
        if op == "exact":
            return re.compile(escaped, re.IGNORECASE).fullmatch
        if op == "starts_with":
            return re.compile(escaped, re.IGNORECASE).match
        if op == "ends_with":
            return re.compile(escaped + r"\Z", re.IGNORECASE).search
        return re.compile(escaped, re.IGNORECASE).search
    if op == "exact":
        return text.__eq__
    if op == "starts_with":
        return lambda value: value.startswith(text)
    if op == "ends_with":
        return lambda value: value.endswith(text)
    return lambda value: text in value


def naive_check(matcher: JsonObj) -> Check:
    """One matcher as a function of a record."""
    get = _naive_getter(matcher)
    negate = bool(matcher.get("negate", False))
    if "exists" in matcher:
        want = bool(matcher["exists"])
        return lambda ctx: ((get(ctx) is not None) == want) != negate
    op = next(k for k in ("exact", "regex", "starts_with", "ends_with", "contains") if k in matcher)
    predicate = _naive_predicate(op, matcher[op], bool(matcher.get("case_insensitive", False)))

    def check(ctx: NaiveCtx) -> bool:
        value = get(ctx)
        hit = isinstance(value, str) and bool(predicate(value))
        return hit != negate

    return check


class NaiveLimiter:
    """Fixed-window rate limit, like the engine's."""

    def __init__(self, limit: int, window_s: float):
        self.limit, self.window_s = limit, window_s
        self.start: float | None = None
        self.count = 0

    def allow(self) -> bool:
        now = time.monotonic()
        if self.start is None or now - self.start >= self.window_s:
            self.start, self.count = now, 0
        self.count += 1
        return self.count <= self.limit


@dataclass
class NaivePolicy:
    id: str
    checks: tuple[Check, ...]
    score: int
    limiter: NaiveLimiter | None
    hits: int = 0
    misses: int = 0


def naive_policies(document: JsonObj) -> list[NaivePolicy]:
    """The document's policies, sorted by id, with their checks compiled once."""
    out = []
    for obj in sorted(document["policies"], key=lambda p: p["id"]):
        keep = obj["log"]["keep"]
        limiter = None
        if keep == "none":
            score = 1000
        elif keep == "all":
            score = 0
        else:
            limit, unit = keep.split("/")
            score, limiter = 500, NaiveLimiter(int(limit), 1.0 if unit == "s" else 60.0)
        checks = tuple(naive_check(m) for m in obj["log"]["match"])
        out.append(NaivePolicy(obj["id"], checks, score, limiter))
    return out


def naive_evaluate(policies: Sequence[NaivePolicy], batch: JsonObj) -> int:
    """Drop records from `batch` in place like the engine would; returns the record count."""
    total = 0
    for rl in batch["resourceLogs"]:
        resource_attrs = _first_entries((rl.get("resource") or {}).get("attributes"))
        for sl in rl["scopeLogs"]:
            records = sl["logRecords"]
            kept = []
            for record in records:
                ctx = NaiveCtx(record, _first_entries(record.get("attributes")), resource_attrs)
                matched = [p for p in policies if all(check(ctx) for check in p.checks)]
                if not matched:
                    kept.append(record)
                    continue
                winner = matched[0]
                for policy in matched[1:]:
                    if policy.score > winner.score:
                        winner = policy
                if winner.score == 0 or (winner.limiter is not None and winner.limiter.allow()):
                    kept.append(record)
                    for policy in matched:
                        policy.hits += 1
                else:
                    winner.hits += 1
                    for policy in matched:
                        if policy is not winner:
                            policy.misses += 1
            total += len(records)
            sl["logRecords"] = kept
        rl["scopeLogs"] = [sl for sl in rl["scopeLogs"] if sl["logRecords"]]
    batch["resourceLogs"] = [rl for rl in batch["resourceLogs"] if rl["scopeLogs"]]
    return total
