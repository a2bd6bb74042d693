"""Log transforms: remove, redact, rename, add, applied through a record view.

Redact templates follow Go's ``regexp.Expand`` (``$1``, ``${name}``, ``$$``),
and replacement follows Go's ``ReplaceAll`` (an empty match right after the
previous match is not replaced), so results agree with the other engines.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Final

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
    """A compiled redact regex with its replacement template, in which group
    names are resolved to group numbers (and references to groups the regex
    lacks, which expand to nothing, are left out); the template is also UTF-8
    encoded for ASCII text, which is matched as bytes (None when the template
    has a lone surrogate, which only a str can hold)."""

    regex: Any
    template: tuple[str | int, ...]
    encoded: tuple[bytes | int, ...] | None

    @classmethod
    def compile(cls, pattern: str, replacement: str) -> Redactor:
        regex = regex_dialect.compile_re2(pattern)
        template: list[str | int] = []
        for part in parse_template(replacement):
            if isinstance(part, tuple):
                if part[0] in regex.groupindex:
                    template.append(regex.groupindex[part[0]])
            elif isinstance(part, str) or part <= regex.groups:
                template.append(part)
        try:
            encoded = tuple(part.encode() if isinstance(part, str) else part for part in template)
        except UnicodeEncodeError:
            encoded = None
        return cls(regex, tuple(template), encoded)

    @staticmethod
    def _expand(text: Any, match: Any, template: tuple[Any, ...]) -> list[Any]:
        """The template's pieces for one match: literals, and each group's
        text cut from `text` (str or bytes) by the group's span."""
        out: list[Any] = []
        for part in template:
            if isinstance(part, int):
                start, end = match.span(part)
                if end > start >= 0:
                    out.append(text[start:end])
            elif part:
                out.append(part)
        return out

    def _searches(self, text: str) -> Iterator[Any]:
        """The matches of a ReplaceAll walk over `text`, one search per match:
        after an empty match the next search starts one character later.
        (RE2's own `finditer` steps over str in bytes, which can land inside a
        character when a pattern such as ``\\B`` matches there.)"""
        pos = 0
        while pos <= len(text):
            match = self.regex.search(text, pos)
            if match is None:
                return
            yield match
            end = match.end()
            pos = end if end > pos else pos + 1

    def _pieces(
        self, text: Any, matches: Iterable[Any], template: tuple[Any, ...]
    ) -> list[Any] | None:
        """`text` cut around its non-overlapping `matches`, each replaced by the
        expanded template; None when nothing matched. An empty match right
        after the previous match is not replaced."""
        out: list[Any] = []
        last_end = 0
        matched = False
        for match in matches:
            start, end = match.span()
            matched = True
            out.append(text[last_end:start])
            if end > last_end or start == 0:
                out.extend(self._expand(text, match, template))
            last_end = end
        if not matched:
            return None
        out.append(text[last_end:])
        return out

    def replace(self, text: str) -> str | None:
        """All non-overlapping matches replaced; None when nothing matched."""
        if self.encoded is not None and text.isascii():
            # Byte and character offsets agree, and RE2's wrapper walks bytes in
            # one pass without converting offsets between the two.
            data = text.encode()
            encoded = self._pieces(data, self.regex.finditer(data), self.encoded)
            return None if encoded is None else b"".join(encoded).decode()
        try:
            pieces = self._pieces(text, self._searches(text), self.template)
        except UnicodeEncodeError:
            # A lone surrogate, which RE2 (UTF-8) cannot take: match a copy in
            # which each is U+FFFD, one character for one, so that the spans
            # cut the text itself and the surrogates pass through unchanged.
            pieces = self._pieces(text, self._searches(text.translate(_SURROGATES)), self.template)
        return None if pieces is None else "".join(pieces)


_SURROGATES: Final = dict.fromkeys(range(0xD800, 0xE000), "\ufffd")

MISS: Final = 0
"""What :meth:`CompiledTransform.apply` returns when the step found nothing to act on."""
HIT: Final = 1
"""A hit that left the record as it was."""
CHANGED: Final = 2
"""A hit that changed the record."""


@dataclass(frozen=True, slots=True)
class CompiledTransform:
    """One transform step ready to run; `redactor` is set for regex redacts."""

    step: Transform
    redactor: Redactor | None
    counter_slot: int
    """Index of this stage's hit counter in a policy's counter list."""
    touches_container: bool
    """True when it writes a resource or scope value (shared by later records)."""

    @classmethod
    def compile(cls, step: Transform) -> CompiledTransform:
        redactor = None
        if step.op is TransformOp.REDACT and step.regex is not None:
            redactor = Redactor.compile(step.regex, step.value)
        slot = 2 + 2 * _STAGES.index(step.op)
        return cls(step, redactor, slot, step.target.level < Level.RECORD)

    def apply(self, view: RecordView, ctx: Ctx) -> int:
        """Run the step on one record: :data:`MISS`, :data:`HIT` (a hit for
        the sync counters that changed nothing: an add without upsert of a
        present key, a rename its target blocks) or :data:`CHANGED`."""
        step = self.step
        op = step.op
        if op is TransformOp.REMOVE:
            return CHANGED if view.remove(ctx, step.target) else MISS
        if op is TransformOp.RENAME:
            assert step.source is not None
            if not view.rename(ctx, step.source, step.target.path[-1], step.upsert):
                return MISS
            # The source stays where a target blocked it (or it is the target).
            return HIT if view.get(ctx, step.source) is not None else CHANGED
        current = view.get(ctx, step.target)
        if isinstance(current, bytes) and step.target.name in ID_FIELDS:
            current = current.hex()
        if op is TransformOp.ADD:
            if current is None or (step.upsert and current != step.value):
                view.set_string(ctx, step.target, step.value)
                return CHANGED
            return HIT
        if self.redactor is None:
            if current is None:
                return MISS
            if current == step.value:
                return HIT
            view.set_string(ctx, step.target, step.value)
            return CHANGED
        if not isinstance(current, str) or not current:
            return MISS
        replaced = self.redactor.replace(current)
        if replaced is None:
            return MISS
        if replaced == current:
            return HIT
        view.set_string(ctx, step.target, replaced)
        return CHANGED
