"""The tree rendered as Hyperscan pattern text."""

from __future__ import annotations

from sluice.policy.hyperscan_syntax.tree import (
    Alt,
    Assert,
    Atom,
    Concat,
    Node,
    Untranslatable,
    is_empty,
    is_zero_width,
)

_ASSERTIONS = {
    "start": "\\A",
    "end": "\\z",
    "line_end": "(?m:$)",
    "word": "\\b",
    "not_word": "\\B",
}


def _quantifier_text(low: int, high: int | None) -> str:
    """Hyperscan text for a greedy quantifier."""
    if high is None:
        return {0: "*", 1: "+"}.get(low, f"{{{low},}}")
    if (low, high) == (0, 1):
        return "?"
    return f"{{{low}}}" if low == high else f"{{{low},{high}}}"


def render(node: Node, at_start: bool) -> str:
    """Render `node`; `at_start` is True when nothing can precede it in a match."""
    if isinstance(node, Atom):
        return node.text
    if isinstance(node, Assert):
        if node.kind != "line_start":
            return _ASSERTIONS[node.kind]
        if not at_start:
            raise Untranslatable("multi-line ^ not at the start of the pattern")
        # Hyperscan's (?m)^ misses the position after a final newline; consuming the newline
        # instead is equivalent when the ^ begins the match.
        return "(?:\\A|\\x0a)"
    if isinstance(node, Concat):
        parts: list[str] = []
        for item in node.items:
            parts.append(render(item, at_start))
            if not is_empty(item):
                at_start = False
        return "".join(parts)
    if isinstance(node, Alt):
        return "(?:" + "|".join(render(branch, at_start) for branch in node.branches) + ")"
    if node.high == 0:
        return ""
    if is_zero_width(node.item):
        # Assertions are idempotent; Hyperscan rejects repeating them.
        return "" if node.low == 0 else render(node.item, at_start)
    inner = render(node.item, at_start and node.high == 1)
    if not isinstance(node.item, Atom):
        inner = f"(?:{inner})"
    return inner + _quantifier_text(node.low, node.high)
