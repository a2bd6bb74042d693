"""Read policy documents in both dialects into :class:`~sluice.policy.model.Policy` objects.

One tolerant parser serves the authoring JSON (snake_case keys, short enum
names, shorthands) and the proto-JSON ``SyncResponse`` (lowerCamelCase keys,
full enum names or numbers, int64 as strings). Every key is looked up in
snake_case first, then in camelCase. Each policy is parsed and validated on
its own: its errors are collected (not just the first) and make it inert,
while every other policy still loads.

This module reads documents and policies; what a policy is made of is read
by its own module: :mod:`.selectors`, :mod:`.matchers`, :mod:`.keep` and
:mod:`.transforms`, all through the key and value rules of :mod:`.dialect`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from sluice.policy.model import (
    KEEP_ALL,
    Keep,
    LoadReport,
    Matcher,
    Policy,
    Selector,
    Signal,
    Transform,
)
from sluice.policy.parse.dialect import Invalid, boolean, json_repr, member
from sluice.policy.parse.keep import (
    parse_log_keep,
    parse_metric_keep,
    parse_sample_rate,
    parse_trace_keep,
)
from sluice.policy.parse.matchers import parse_matcher
from sluice.policy.parse.selectors import parse_selector
from sluice.policy.parse.transforms import parse_transforms

if TYPE_CHECKING:
    from sluice.policy.cache import CompileCache

__all__ = ["PolicyDocumentError", "json_repr", "load_document", "parse_policy"]


class PolicyDocumentError(ValueError):
    """The document as a whole cannot be read (not JSON, no ``policies`` array)."""


def _parse_sample_key(raw: Any) -> Selector:
    if not isinstance(raw, Mapping):
        raise Invalid("must be an object")
    return parse_selector(raw, Signal.LOG)[0]


def _collect(errors: list[str], prefix: str, parse: Callable[[], Any]) -> Any:
    try:
        return parse()
    except Invalid as problem:
        errors.append(f"{prefix}: {problem}")
        return None


def parse_policy(obj: Mapping[str, Any]) -> Policy:
    """Parse and validate one policy object that has a usable ``id``."""
    pid = obj["id"]
    raw_name = obj.get("name")
    name = raw_name if isinstance(raw_name, str) else ""
    errors: list[str] = []
    enabled = obj.get("enabled", True)
    if not isinstance(enabled, bool):
        # Only a missing `enabled` means true (POLICY.md 1.2). Any other value,
        # null included, is an error: the policy counts as enabled so that it is
        # reported, and stays inert. Reading it as true dropped what its author
        # may have meant to switch off ("enabled": "false").
        _collect(errors, "enabled", partial(boolean, enabled))
        enabled = True
    signal = next((s for s in Signal if isinstance(obj.get(s.value), Mapping)), None)
    base = Policy(id=pid, name=name, enabled=enabled, signal=signal)
    if not enabled or signal is None:
        return base
    target: Mapping[str, Any] = obj[signal.value]
    sig = signal.value

    matchers: list[Matcher] = []
    match_list = target.get("match")
    if match_list is None or (isinstance(match_list, list) and not match_list):
        errors.append(f"{sig}: no matchers specified")
    elif not isinstance(match_list, list):
        errors.append(f"{sig}: match: must be a list")
    else:
        for i, item in enumerate(match_list):
            m = _collect(errors, f"{sig}: match[{i}]", partial(parse_matcher, item, signal))
            if m is not None:
                matchers.append(m)

    keep: Keep | None = KEEP_ALL
    sample_key: Selector | None = None
    transforms: tuple[Transform, ...] = ()
    if signal is Signal.LOG:
        keep_raw, rate_raw = target.get("keep"), member(target, "sample_rate")
        if keep_raw is not None and rate_raw is not None:
            errors.append("log: keep and sample_rate are mutually exclusive")
        elif rate_raw is not None:
            keep = _collect(errors, "log: sample_rate", lambda: parse_sample_rate(rate_raw))
        else:
            keep = _collect(errors, "log: keep", lambda: parse_log_keep(keep_raw))
        key_raw = member(target, "sample_key")
        if key_raw is not None:
            sample_key = _collect(errors, "log: sampleKey", lambda: _parse_sample_key(key_raw))
        transforms = parse_transforms(target.get("transform"), errors)
    elif signal is Signal.METRIC:
        if "keep" not in target:
            errors.append("metric: keep: missing")
        else:
            keep = _collect(errors, "metric: keep", lambda: parse_metric_keep(target["keep"]))
    else:
        if target.get("keep") is None:
            errors.append("trace: keep: missing")
        else:
            keep = _collect(errors, "trace: keep", lambda: parse_trace_keep(target["keep"]))

    return Policy(
        id=pid,
        name=name,
        enabled=True,
        signal=signal,
        matchers=tuple(matchers),
        keep=keep or KEEP_ALL,
        sample_key=sample_key,
        transforms=transforms,
        errors=tuple(errors),
    )


def load_document(doc: Any, cache: CompileCache | None = None) -> LoadReport:
    """Parse a decoded policy document (either dialect).

    Raises PolicyDocumentError when the document has no ``policies`` array;
    problems inside single policies are reported on those policies instead.
    Duplicate ids: the later policy wins and a warning is recorded. With a
    `cache`, a policy object parsed before (by content) is not parsed again.
    """
    if not isinstance(doc, Mapping) or not isinstance(doc.get("policies"), list):
        raise PolicyDocumentError('the document has no "policies" array')
    report = LoadReport()
    usable: list[Mapping[str, Any]] = []
    steps: list[str | int] = []
    """In document order: a warning, or the position of a policy in `usable`."""
    for index, obj in enumerate(doc["policies"]):
        if not isinstance(obj, Mapping):
            steps.append(f"policies[{index}]: not an object; ignored")
            continue
        pid = obj.get("id")
        if not isinstance(pid, str) or not pid:
            steps.append(f'policies[{index}]: missing or empty "id"; ignored')
            continue
        steps.append(len(usable))
        usable.append(obj)
    parsed: Sequence[Policy] = (
        cache.parse_all(usable) if cache is not None else [parse_policy(obj) for obj in usable]
    )
    by_id: dict[str, int] = {}
    for step in steps:
        if isinstance(step, str):
            report.warnings.append(step)
            continue
        policy = parsed[step]
        pid = policy.id
        if policy.signal is None and policy.enabled:
            report.warnings.append(f"policy {pid!r}: no log, metric or trace target; ignored")
        if pid in by_id:
            report.warnings.append(f"policy {pid!r}: duplicate id; the later definition wins")
            report.policies[by_id[pid]] = policy
        else:
            by_id[pid] = len(report.policies)
            report.policies.append(policy)
    return report
