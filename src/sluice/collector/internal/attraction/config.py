"""One attribute action as configured (upstream's ``attraction.ActionKeyValue``)
and the checks upstream's ``NewAttrProc`` makes, with its wording.

Upstream makes these checks when a pipeline creates the processor, not in
its config's ``Validate``: so do the processors' ``signal_problems``, which
the service runs for the processors its pipelines use (``validate`` and
``--dry-run`` report them too).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from sluice.collector.component import Problem
from sluice.collector.confmap.decode import GoType
from sluice.collector.internal.attraction.values import CONVERTED_TYPES, unsupported
from sluice.gostrconv import quoted
from sluice.policy.regex_dialect import capture_names, go_syntax_error

ACTIONS = ("insert", "update", "upsert", "delete", "hash", "extract", "convert")


@dataclass(frozen=True)
class ActionConfig:
    """An entry of ``actions`` (``attributes`` for the resource processor)."""

    key: str = ""
    action: Annotated[str, GoType("attraction.Action")] = ""
    value: Any = None
    """Any YAML value: string, int, double, bool, list or map (as pdata's ``FromRaw``)."""
    default_value: Any = None
    """For insert/update/upsert: the value to use when the value source gives none."""
    from_attribute: str = ""
    from_context: str = ""
    pattern: str = ""
    converted_type: str = ""

    @property
    def kind(self) -> str:
        """The action, lowercased (upstream accepts either case)."""
        return self.action.lower()

    def value_sources(self) -> int:
        """How many of ``value``, ``from_attribute``, ``from_context`` are set."""
        return (self.value is not None) + bool(self.from_attribute) + bool(self.from_context)


def action_problems(actions: Sequence[ActionConfig], key: str) -> Iterator[Problem]:
    """The first problem of the first action that has one, under ``<key>[i]``
    (upstream's ``NewAttrProc`` stops at the first error)."""
    for index, action in enumerate(actions):
        message = action_problem(action, index)
        if message is not None:
            yield f"{key}[{index}]", message
            return


def _pattern_problem(action: ActionConfig, index: int) -> str | None:
    bad = go_syntax_error(action.pattern)
    if bad is not None:
        return (
            f'error creating AttrProc. Field "pattern" has invalid pattern: '
            f'"{action.pattern}" to be set at the {index}-th actions ({bad})'
        )
    return None


def _value_problem(action: ActionConfig) -> str | None:
    for raw, name in ((action.value, "value"), (action.default_value, "default_value")):
        problem = unsupported(raw)
        if problem is not None:
            return f"{name}: {problem}"
    return None


def _converted_type_unused(action: ActionConfig, index: int) -> str | None:
    if action.converted_type:
        return (
            f'error creating AttrProc. Action "{action.kind}" does not use the '
            f'"converted_type" field. This must not be specified for {index}-th action'
        )
    return None


def action_problem(action: ActionConfig, index: int) -> str | None:
    """Upstream's first complaint about one action, or None."""
    kind = action.kind
    if kind in ("delete", "hash"):
        if not action.key and not action.pattern:
            return (
                "error creating AttrProc due to missing required field (at least one of "
                f'"key" and "pattern" have to be used) at the {index}-th actions'
            )
    elif not action.key:
        return (
            f'error creating AttrProc due to missing required field "key" at the {index}-th actions'
        )
    sources = action.value_sources()
    if kind in ("insert", "update", "upsert"):
        if sources == 0 and action.default_value is None:
            # v0.115's wording: default_value (a later contrib key, accepted
            # here so that newer configs load) is not named.
            return (
                'error creating AttrProc. Either field "value", "from_attribute" or '
                f'"from_context" setting must be specified for {index}-th action'
            )
        if sources > 1:
            return f"error creating AttrProc due to multiple value sources being set at the {index}-th actions"
        if action.pattern:
            return (
                f'error creating AttrProc. Action "{kind}" does not use the "pattern" field. '
                f"This must not be specified for {index}-th action"
            )
        return _converted_type_unused(action, index) or _value_problem(action)
    if kind in ("delete", "hash"):
        if action.value is not None or action.from_attribute:
            return (
                f'error creating AttrProc. Action "{kind}" does not use "value" or '
                f'"from_attribute" field. These must not be specified for {index}-th action'
            )
        if action.pattern:
            problem = _pattern_problem(action, index)
            if problem is not None:
                return problem
        return _converted_type_unused(action, index)
    if kind == "extract":
        return _extract_problem(action, index, sources)
    if kind == "convert":
        if sources or action.pattern:
            return (
                f'error creating AttrProc. Action "{kind}" does not use value sources or '
                f'"pattern" field. These must not be specified for {index}-th action'
            )
        if not action.converted_type:
            return (
                'error creating AttrProc due to missing required field "converted_type" '
                f'for action "{kind}" at the {index}-th action'
            )
        if action.converted_type not in CONVERTED_TYPES:
            return (
                f'error creating AttrProc due to invalid value "{action.converted_type}" in '
                f'field "converted_type" for action "{kind}" at the {index}-th action'
            )
        return None
    return f"error creating AttrProc due to unsupported action {quoted(kind)} at the {index}-th actions"


def _extract_problem(action: ActionConfig, index: int, sources: int) -> str | None:
    if sources:
        return (
            f'error creating AttrProc. Action "{action.kind}" does not use a value source '
            f"field. These must not be specified for {index}-th action"
        )
    if not action.pattern:
        return (
            'error creating AttrProc due to missing required field "pattern" for action '
            f'"{action.kind}" at the {index}-th action'
        )
    problem = _converted_type_unused(action, index) or _pattern_problem(action, index)
    if problem is not None:
        return problem
    names = group_names(action.pattern)
    if not names:
        return (
            'error creating AttrProc. Field "pattern" contains no named matcher groups '
            f"at the {index}-th actions"
        )
    if "" in names:
        return (
            'error creating AttrProc. Field "pattern" contains at least one unnamed '
            f"matcher group at the {index}-th actions"
        )
    return None


def group_names(pattern: str) -> list[str]:
    """The name of each capturing group of a valid pattern, in order ("" if
    unnamed); as Go, a name may be given to several groups."""
    return capture_names(pattern)
