"""The small tree an RE2 pattern is parsed into, and what can be asked of it
before it is rendered (can it match empty, does it only assert)."""

from __future__ import annotations

from dataclasses import dataclass


class Untranslatable(Exception):
    """Raised when no faithful Hyperscan translation is known."""


@dataclass(frozen=True)
class Flags:
    """Inline flags in force.  ``fold`` is None while the pattern has not set ``i`` itself."""

    fold: bool | None
    multiline: bool
    dotall: bool


@dataclass(frozen=True)
class Atom:
    """Something matching exactly one character, already rendered; it takes a quantifier."""

    text: str


@dataclass(frozen=True)
class Assert:
    """An empty-width assertion: start, end, line_start, line_end, word or not_word."""

    kind: str


@dataclass(frozen=True)
class Concat:
    """A sequence; the empty sequence matches the empty string."""

    items: tuple[Node, ...]


@dataclass(frozen=True)
class Alt:
    """An alternation of at least two branches."""

    branches: tuple[Node, ...]


@dataclass(frozen=True)
class Repeat:
    """`item` repeated `low` to `high` times (``high`` None means unbounded)."""

    item: Node
    low: int
    high: int | None


Node = Atom | Assert | Concat | Alt | Repeat


def is_empty(node: Node) -> bool:
    """True if `node` matches only the empty string and asserts nothing."""
    if isinstance(node, Concat):
        return all(is_empty(item) for item in node.items)
    if isinstance(node, Alt):
        return all(is_empty(branch) for branch in node.branches)
    if isinstance(node, Repeat):
        return node.high == 0 or is_empty(node.item)
    return False


def can_be_empty(node: Node, asserting: bool = True) -> bool:
    """True if `node` matches the empty string somewhere (where its assertions hold); with
    `asserting` False, only by a path that asserts nothing (so everywhere)."""
    if isinstance(node, Atom):
        return False
    if isinstance(node, Assert):
        return asserting
    if isinstance(node, Concat):
        return all(can_be_empty(item, asserting) for item in node.items)
    if isinstance(node, Alt):
        return any(can_be_empty(branch, asserting) for branch in node.branches)
    return node.low == 0 or node.high == 0 or can_be_empty(node.item, asserting)


def empty_through_not_word(node: Node) -> bool:
    """True if `node` has an empty match that passes a ``\\B``.

    RE2 searches byte by byte, so an empty match may fall between the bytes of one UTF-8
    character, where ``\\B`` holds (both bytes are non-word); Hyperscan in UTF-8 mode only
    tries character boundaries (``a|\\B`` matches ``1.1é1`` in RE2, not in Hyperscan).
    Only an empty match can start inside a character: every consuming item needs a whole one.
    """
    if isinstance(node, Atom):
        return False
    if isinstance(node, Assert):
        return node.kind == "not_word"
    if isinstance(node, Concat):
        return all(can_be_empty(item) for item in node.items) and any(
            empty_through_not_word(item) for item in node.items
        )
    if isinstance(node, Alt):
        return any(empty_through_not_word(branch) for branch in node.branches)
    return node.high != 0 and empty_through_not_word(node.item)


def is_zero_width(node: Node) -> bool:
    """True if `node` never consumes a character (only assertions and empty parts)."""
    if isinstance(node, Assert):
        return True
    if isinstance(node, Concat):
        return all(is_zero_width(item) for item in node.items)
    if isinstance(node, Alt):
        return all(is_zero_width(branch) for branch in node.branches)
    if isinstance(node, Repeat):
        return node.high == 0 or is_zero_width(node.item)
    return False
