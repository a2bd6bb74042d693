"""Single-character atoms: literals, Perl and POSIX classes and bracket
classes, rendered as explicit ASCII ranges with case folding resolved."""

from __future__ import annotations

from sluice.policy.hyperscan_syntax.tree import Atom, Untranslatable

Ranges = list[tuple[int, int]]

_DIGIT = frozenset(range(0x30, 0x3A))

_UPPER = frozenset(range(0x41, 0x5B))

_LOWER = frozenset(range(0x61, 0x7B))

_ALPHA = _UPPER | _LOWER

_WORD = _DIGIT | _ALPHA | {0x5F}

_SPACE = frozenset({0x09, 0x0A, 0x0C, 0x0D, 0x20})  # RE2's \s: no \v

PERL_CLASSES: dict[str, frozenset[int]] = {"d": _DIGIT, "s": _SPACE, "w": _WORD}

POSIX_CLASSES: dict[str, frozenset[int]] = {
    "alnum": _DIGIT | _ALPHA,
    "alpha": _ALPHA,
    "ascii": frozenset(range(0x80)),
    "blank": frozenset({0x09, 0x20}),
    "cntrl": frozenset(range(0x20)) | {0x7F},
    "digit": _DIGIT,
    "graph": frozenset(range(0x21, 0x7F)),
    "lower": _LOWER,
    "print": frozenset(range(0x20, 0x7F)),
    "punct": frozenset(range(0x21, 0x7F)) - _DIGIT - _ALPHA,
    "space": _SPACE | {0x0B},
    "upper": _UPPER,
    "word": _WORD,
    "xdigit": _DIGIT | frozenset(range(0x41, 0x47)) | frozenset(range(0x61, 0x67)),
}


def _cp_text(code_point: int) -> str:
    """Hyperscan text for one code point: alphanumerics as-is, everything else escaped."""
    if code_point < 0x80:
        char = chr(code_point)
        return char if char.isalnum() else f"\\x{code_point:02x}"
    return f"\\x{{{code_point:x}}}"


def _with_fold(text: str, fold: bool | None) -> str:
    """Scope an explicit inline ``i`` setting to `text`; None leaves it to HS_FLAG_CASELESS."""
    if fold is None:
        return text
    return f"(?i:{text})" if fold else f"(?-i:{text})"


def _check_code_points(ranges: Ranges, fold: bool | None) -> None:
    """Reject surrogates, and non-ASCII text whose case folding would be left to Hyperscan."""
    for low, high in ranges:
        if 0xD800 <= low <= 0xDFFF or 0xD800 <= high <= 0xDFFF:
            raise Untranslatable("surrogate code point")
        if fold is True and high >= 0x80:
            raise Untranslatable("non-ASCII text under (?i)")


def literal(code_point: int, fold: bool | None) -> Atom:
    """An atom matching one literal character."""
    _check_code_points([(code_point, code_point)], fold)
    text = _cp_text(code_point)
    if code_point >= 0x80 or chr(code_point).isalpha():
        text = _with_fold(text, fold)
    return Atom(text)


def perl_class_atom(letter: str, fold: bool | None, folding: bool) -> Atom:
    """``\\d``, ``\\s``, ``\\w`` and their negations as explicit ASCII classes."""
    members = PERL_CLASSES[letter.lower()]
    if letter.islower():
        return class_atom(set_ranges(members), [], False, fold, folding)
    return class_atom([], [members], False, fold, folding)


def set_ranges(members: frozenset[int] | set[int]) -> Ranges:
    """The sorted, merged ranges covering a set of code points."""
    return merge([(member, member) for member in members])


def merge(ranges: Ranges) -> Ranges:
    """Sort ranges and merge overlapping or adjacent ones."""
    merged: Ranges = []
    for low, high in sorted(ranges):
        if merged and low <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return merged


_FOLDING_LETTERS = frozenset(b"sSkK")
"""ASCII letters RE2's case folding joins to non-ASCII characters: ``s`` to U+017F LATIN
SMALL LETTER LONG S, ``k`` to U+212A KELVIN SIGN."""


def render_class(ranges: Ranges, negated: bool, folding: bool = False) -> str:
    """A Hyperscan bracket class with every member escaped.

    A negated class holding ``s`` or ``k`` under `folding` is untranslatable: RE2 leaves the
    letters' non-ASCII fold partners out of it (``(?i)[^s]`` does not match U+017F), and
    Hyperscan, which does too for such a class alone, lets U+017F through it in repeated
    alternations (``(?:[^s]+|aaa)+a`` matches ``\u017fa`` caselessly, also with U+017F named
    in the class)."""
    if negated and folding:
        members = {c for low, high in ranges if low < 0x80 for c in range(low, min(high, 0x7F) + 1)}
        if members & _FOLDING_LETTERS:
            raise Untranslatable("negated class holding s or k under case folding")
    body = "".join(
        _cp_text(low) if low == high else f"{_cp_text(low)}-{_cp_text(high)}"
        for low, high in ranges
    )
    return f"[{'^' if negated else ''}{body}]"


def _fold_closed(members: frozenset[int] | set[int]) -> bool:
    """True if every ASCII letter in `members` comes with its other case."""
    return all(
        member ^ 0x20 in members
        for member in members
        if chr(member).isascii() and chr(member).isalpha()
    )


def class_atom(
    positive: Ranges,
    negative: list[frozenset[int]],
    negated: bool,
    fold: bool | None,
    folding: bool = False,
) -> Atom:
    """Render a class: union of `positive` ranges and complements of the `negative` sets.

    RE2 folds each item of a class before taking complements (``(?i)\\W`` is the complement of
    the folded ``\\w``), and Hyperscan folds an explicit class the same way, so a class is
    emitted either as one explicit class, or, when it mixes complemented items with others, as
    an alternation of classes.  A negated class containing complemented items is the
    intersection of their bases minus the other items; it is computed here on ASCII sets,
    which is only equal to RE2's folded result when the sets are closed under ASCII case
    (``[^\\S\\n]`` is fine, ``[^\\Wa]`` is not), unless case folding is known to be off.
    """
    _check_code_points(positive, fold)
    if not negative:
        if not positive:
            raise Untranslatable("empty class")
        return Atom(_with_fold(render_class(positive, negated, folding), fold))
    if not negated:
        parts = [render_class(positive, False)] if positive else []
        parts.extend(render_class(set_ranges(members), True, folding) for members in negative)
        text = parts[0] if len(parts) == 1 else "(?:" + "|".join(parts) + ")"
        return Atom(_with_fold(text, fold))
    ascii_positive = {
        code_point
        for low, high in positive
        if low < 0x80
        for code_point in range(low, min(high, 0x7F) + 1)
    }
    if fold is not False:
        if any(high >= 0x80 for _, high in positive):
            raise Untranslatable("negated class mixing non-ASCII under possible folding")
        if not _fold_closed(ascii_positive) or (
            len(negative) > 1 and not all(_fold_closed(members) for members in negative)
        ):
            raise Untranslatable("negated class not expressible under case folding")
    remaining = set(negative[0]).intersection(*negative[1:]) - ascii_positive
    if not remaining:
        raise Untranslatable("class matches nothing")
    return Atom(_with_fold(render_class(set_ranges(remaining), False), fold))
