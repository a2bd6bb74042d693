"""One string condition of a policy (:class:`PatternSpec`) and its two forms:
the RE2 pattern that defines it and the Hyperscan expression that matches it
in a multi-pattern database."""

from __future__ import annotations

from dataclasses import dataclass

import hyperscan

from sluice.policy import hyperscan_syntax
from sluice.policy.model import Matcher, MatchOp

BASE_FLAGS = hyperscan.HS_FLAG_UTF8 | hyperscan.HS_FLAG_SINGLEMATCH | hyperscan.HS_FLAG_ALLOWEMPTY
"""Hyperscan flags of every expression (plus HS_FLAG_CASELESS for caseless ones)."""

_LITERAL_ANCHORS = {
    MatchOp.EXACT: (True, True),
    MatchOp.STARTS_WITH: (True, False),
    MatchOp.ENDS_WITH: (False, True),
    MatchOp.CONTAINS: (False, False),
}


@dataclass(frozen=True, slots=True)
class PatternSpec:
    """One string condition: `op` is EXACT, REGEX, STARTS_WITH, ENDS_WITH or CONTAINS."""

    op: MatchOp
    text: str
    case_insensitive: bool = False

    @classmethod
    def of(cls, matcher: Matcher) -> PatternSpec | None:
        """The condition a matcher tests with the pattern scan (a string
        ``equals`` is an ``exact``); None for other matchers."""
        if not matcher.is_pattern:
            return None
        op = MatchOp.EXACT if matcher.op is MatchOp.EQUALS else matcher.op
        assert isinstance(matcher.value, str)
        return cls(op, matcher.value, matcher.case_insensitive)

    @property
    def flags(self) -> int:
        """Hyperscan compile flags for :meth:`hyperscan_expression`."""
        return BASE_FLAGS | (hyperscan.HS_FLAG_CASELESS if self.case_insensitive else 0)

    def re2_pattern(self) -> str:
        if self.op is MatchOp.REGEX:
            return self.text
        start, end = _LITERAL_ANCHORS[self.op]
        return ("^" if start else "") + _re2_escape(self.text) + (r"\z" if end else "")

    def hyperscan_expression(self) -> bytes | None:
        """The Hyperscan form, or None when only RE2 can match it faithfully."""
        if self.case_insensitive and hyperscan_syntax.needs_re2_for_caseless(self.text):
            return None
        if self.op is MatchOp.REGEX:
            return hyperscan_syntax.to_hyperscan(self.text, self.case_insensitive)
        start, end = _LITERAL_ANCHORS[self.op]
        return hyperscan_syntax.literal_to_hyperscan(self.text, start, end)


def _re2_escape(text: str) -> str:
    return "".join(c if c.isalnum() or c == "_" or ord(c) > 127 else "\\" + c for c in text)
