"""A log policy's transforms: remove, redact, rename and add steps."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sluice.policy import regex_dialect
from sluice.policy.model import Selector, Signal, Transform, TransformOp
from sluice.policy.parse.dialect import Invalid, json_repr, member, optional_boolean
from sluice.policy.parse.selectors import parse_selector

DEFAULT_REDACT_REPLACEMENT = "[REDACTED]"


def parse_transforms(raw: Any, errors: list[str]) -> tuple[Transform, ...]:
    """A log policy's ``transform`` object as its steps, in the order they run
    (by operation, then as listed); each bad step's problem goes to `errors`."""
    if raw is None:
        return ()
    if not isinstance(raw, Mapping):
        errors.append("log: transform: must be an object")
        return ()
    steps: list[Transform] = []
    for op in TransformOp:
        items = member(raw, op.value)
        if items is None:
            continue
        if not isinstance(items, list):
            errors.append(f"log: transform: {op.value}: must be a list")
            continue
        for j, item in enumerate(items):
            try:
                steps.append(_parse_transform(op, item))
            except Invalid as problem:
                errors.append(f"log: transform: {op.value}[{j}]: {problem}")
    return tuple(steps)


def _parse_transform(op: TransformOp, item: Any) -> Transform:
    if not isinstance(item, Mapping):
        raise Invalid("must be an object")
    if op is TransformOp.RENAME:
        source, _ = parse_selector(item, Signal.LOG, prefix="from_")
        to = item.get("to")
        if to is None or to == "":
            raise Invalid("rename target is empty")
        if not isinstance(to, str):
            raise Invalid(f"rename target must be a string, got {json_repr(to)}")
        upsert = optional_boolean(member(item, "upsert"), False, "upsert")
        target = Selector(source.source, source.name, (*source.path[:-1], to))
        return Transform(op, target, upsert=upsert, source=source)
    target, _ = parse_selector(item, Signal.LOG)
    if op is TransformOp.REMOVE:
        return Transform(op, target)
    value = item.get("replacement" if op is TransformOp.REDACT else "value")
    if op is TransformOp.REDACT:
        value = DEFAULT_REDACT_REPLACEMENT if value is None else value
        regex = member(item, "regex")
        if regex is not None:
            if not isinstance(regex, str):
                raise Invalid(f"invalid regex {json_repr(regex)}")
            if regex == "":
                raise Invalid("empty pattern")
            problem = regex_dialect.re2_error(regex)
            if problem is not None:
                raise Invalid(f"invalid regex {json_repr(regex)}: {problem}")
        if not isinstance(value, str):
            raise Invalid(f"replacement must be a string, got {json_repr(value)}")
        return Transform(op, target, value=value, regex=regex)
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise Invalid(f"value must be a string, got {json_repr(value)}")
    return Transform(
        op, target, value=value, upsert=optional_boolean(member(item, "upsert"), False, "upsert")
    )
