"""Log transforms: remove, redact, rename, add, applied through a record view.

Redact templates follow Go's ``regexp.Expand`` (``$1``, ``${name}``, ``$$``),
and replacement follows Go's ``ReplaceAll`` (an empty match right after the
previous match is not replaced), so results agree with the other engines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from sluice.policy import regex_dialect
from sluice.policy.model import ID_FIELDS, Level, Transform, TransformOp
from sluice.policy.view import Ctx, RecordView

_STAGES = (TransformOp.REMOVE, TransformOp.REDACT, TransformOp.RENAME, TransformOp.ADD)
_NAME = re.compile(r"[A-Za-z0-9_]+")

TemplatePart = str | int
"""A literal piece of a replacement template, or a group reference (number or name)."""


def parse_template(template: str) -> tuple[TemplatePart | tuple[str], ...]:
    """Split a template into literals, group numbers and ``(name,)`` group names."""
    parts: list[TemplatePart | tuple[str]] = []
    literal: list[str] = []
    i, n = 0, len(template)
    while i < n:
        ch = template[i]
        if ch != "$" or i + 1 >= n:
            literal.append(ch)
            i += 1
            continue
        nxt = template[i + 1]
        if nxt == "$":
            literal.append("$")
            i += 2
            continue
        if nxt == "{":
            close = template.find("}", i + 2)
            name = template[i + 2 : close] if close > 0 else ""
            if close < 0 or not _NAME.fullmatch(name):
                literal.append("$")
                i += 1
                continue
            end = close + 1
        else:
            match = _NAME.match(template, i + 1)
            if match is None:
                literal.append("$")
                i += 1
                continue
            name, end = match.group(), match.end()
        if literal:
            parts.append("".join(literal))
            literal = []
        parts.append(int(name) if name.isdigit() else (name,))
        i = end
    if literal:
        parts.append("".join(literal))
    return tuple(parts)


@dataclass(frozen=True, slots=True)
class Redactor:
    """A compiled redact regex with its parsed replacement template."""

    regex: Any
    template: tuple[TemplatePart | tuple[str], ...]

    @classmethod
    def compile(cls, pattern: str, replacement: str) -> Redactor:
        return cls(regex_dialect.compile_re2(pattern), parse_template(replacement))

    def _expand(self, match: Any) -> str:
        out: list[str] = []
        groups = self.regex.groups
        for part in self.template:
            if isinstance(part, str):
                out.append(part)
                continue
            if isinstance(part, int):
                if part > groups:
                    continue
                value = match.group(part)
            else:
                if part[0] not in self.regex.groupindex:
                    continue
                value = match.group(part[0])
            if value:
                out.append(value)
        return "".join(out)

    def replace(self, text: str) -> str | None:
        """All non-overlapping matches replaced; None when nothing matched."""
        out: list[str] = []
        last_end = 0
        pos = 0
        matched = False
        while pos <= len(text):
            match = self.regex.search(text, pos)
            if match is None:
                break
            start, end = match.span()
            matched = True
            out.append(text[last_end:start])
            if end > last_end or start == 0:
                out.append(self._expand(match))
            last_end = end
            pos = end if end > pos else pos + 1
        if not matched:
            return None
        out.append(text[last_end:])
        return "".join(out)


@dataclass(frozen=True, slots=True)
class CompiledTransform:
    """One transform step ready to run; `redactor` is set for regex redacts."""

    step: Transform
    redactor: Redactor | None

    @classmethod
    def compile(cls, step: Transform) -> CompiledTransform:
        redactor = None
        if step.op is TransformOp.REDACT and step.regex is not None:
            redactor = Redactor.compile(step.regex, step.value)
        return cls(step, redactor)

    @property
    def counter_slot(self) -> int:
        """Index of this stage's hit counter in a policy's counter list."""
        return 2 + 2 * _STAGES.index(self.step.op)

    @property
    def touches_container(self) -> bool:
        """True when it writes a resource or scope value (shared by later records)."""
        return self.step.target.level < Level.RECORD

    def apply(self, view: RecordView, ctx: Ctx) -> bool:
        """Run the step on one record; True on a hit (see the sync counters)."""
        step = self.step
        op = step.op
        if op is TransformOp.REMOVE:
            return view.remove(ctx, step.target)
        if op is TransformOp.RENAME:
            assert step.source is not None
            return view.rename(ctx, step.source, step.target.path[-1], step.upsert)
        current = view.get(ctx, step.target)
        if isinstance(current, bytes) and step.target.name in ID_FIELDS:
            current = current.hex()
        if op is TransformOp.ADD:
            if step.upsert or current is None:
                view.set_string(ctx, step.target, step.value)
            return True
        if self.redactor is None:
            if current is None:
                return False
            view.set_string(ctx, step.target, step.value)
            return True
        if not isinstance(current, str) or not current:
            return False
        replaced = self.redactor.replace(current)
        if replaced is None:
            return False
        view.set_string(ctx, step.target, replaced)
        return True
