"""RE2-dialect patterns translated into Hyperscan syntax.

Policy patterns are written in the RE2 dialect (Go/RE2 syntax) and RE2 is authoritative: a
pattern RE2 rejects is invalid.  For speed the engine compiles valid patterns into Hyperscan
(Vectorscan) block-mode databases with ``HS_FLAG_UTF8 | HS_FLAG_SINGLEMATCH |
HS_FLAG_ALLOWEMPTY`` (plus ``HS_FLAG_CASELESS`` for case-insensitive policies) and only asks
"does the pattern match anywhere in the value".  Hyperscan's syntax is PCRE-like and differs
from RE2 in ways that change that answer, so :func:`to_hyperscan` parses the RE2 pattern and
re-emits it in a normalised Hyperscan form, or returns ``None`` when it does not know a faithful
translation (the engine then matches the pattern with RE2 itself).

Differences handled by the translation (all verified against the real libraries):

* ``$`` outside multi-line mode is end of text in RE2, but Hyperscan also matches it before a
  final ``\\n``; it becomes ``\\z``.  ``$`` in multi-line mode becomes ``(?m:$)``.
* ``^`` in multi-line mode: Hyperscan does not match it after a newline that ends the text, and
  rejects it anywhere but the start of the pattern.  At the start of the pattern it becomes
  ``(?:\\A|\\n)`` (equivalent for an unanchored yes/no search); elsewhere it is untranslatable.
* ``\\s``/``\\S``: RE2's ``\\s`` is ``[\\t\\n\\f\\r ]`` (no ``\\v``).  ``\\v`` is the single
  character U+000B in RE2 but a class of vertical space in Hyperscan.
* Perl classes and POSIX classes are expanded into explicit ASCII ranges.  Under case folding
  RE2 folds them like any other class (``(?i)\\w`` matches U+017F LATIN SMALL LETTER LONG S and
  U+212A KELVIN SIGN) while Hyperscan does not fold its built-in classes; it does fold
  explicit ASCII ranges exactly like RE2 (checked over every code point).
* Inline flags are resolved here: ``m`` and ``s`` are applied while translating, ``i`` is
  re-emitted as a ``(?i:...)``/``(?-i:...)`` group around each affected atom.  A pattern that
  never sets ``i`` leaves case folding to ``HS_FLAG_CASELESS``.
* Capturing and named groups become ``(?:...)``; names do not matter (RE2 accepts duplicate
  and non-ASCII names, Hyperscan does not).  Lazy quantifiers become greedy ones, which does
  not change whether a match exists.  Repeats of empty-width items (``^*``, ``\\b{2}``) are
  simplified, because Hyperscan rejects them; ``x{0}`` becomes the empty pattern.
* ``\\Q...\\E`` spans, octal and hex escapes and escaped punctuation become ``\\xHH`` /
  ``\\x{H}`` escapes; ``{`` that is not a repetition (``x{,2}``, ``x{02}``) becomes a literal.

Untranslatable (``None``): patterns RE2 rejects, Unicode classes (``\\pN``, ``\\p{Greek}``,
``\\PN``), ``\\C``, the ``U`` flag, multi-line ``^`` not at the start of the pattern, non-ASCII
characters under an inline ``(?i)``, surrogate code points, a few negated classes whose
case-folded meaning cannot be expressed as one Hyperscan class, negated classes holding ``s``
or ``k`` where case folding applies (Hyperscan lets U+017F through some of them), and
patterns with an empty match through ``\\B`` (``\\B``, ``a|\\B``, ``x*\\B``): RE2 also
finds that match between the bytes of a multi-byte character, Hyperscan in UTF-8 mode does
not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from sluice.policy.regex_dialect import re2_error

__all__ = ["literal_to_hyperscan", "needs_re2_for_caseless", "to_hyperscan"]


def literal_to_hyperscan(text: str, anchor_start: bool, anchor_end: bool) -> bytes:
    """Return a Hyperscan pattern matching `text` literally.

    ASCII letters and digits are kept, every other ASCII character is written as a ``\\xHH``
    escape (so no metacharacter survives), and non-ASCII characters pass through as UTF-8.
    `anchor_start` / `anchor_end` add ``\\A`` / ``\\z``.  Lone surrogates are encoded as-is
    (``surrogatepass``); Hyperscan rejects such a pattern as invalid UTF-8.
    """
    parts: list[str] = ["\\A"] if anchor_start else []
    for char in text:
        if char.isascii() and not char.isalnum():
            parts.append(f"\\x{ord(char):02x}")
        else:
            parts.append(char)
    if anchor_end:
        parts.append("\\z")
    return "".join(parts).encode("utf-8", "surrogatepass")


# Escapes that can denote a non-ASCII code point: \x{...}, \xHH and octal \NNN.
_CODE_POINT_ESCAPE = re.compile(r"\\(?:x\{([0-9A-Fa-f]+)\}|x([0-9A-Fa-f]{2})|([0-7]{1,3}))")


def needs_re2_for_caseless(pattern_or_literal: str) -> bool:
    """Return True when caseless matching of this text cannot be left to Hyperscan.

    That is the case when the text contains non-ASCII characters, or an escape (``\\x{...}``,
    ``\\xHH``, octal) that can denote one: the engine leaves case folding of non-ASCII text to
    RE2.  The check is textual and conservative, so it works for patterns and literals alike.
    """
    if not pattern_or_literal.isascii():
        return True
    for match in _CODE_POINT_ESCAPE.finditer(pattern_or_literal):
        hex_long, hex_short, octal = match.groups()
        if octal is not None:
            value = int(octal, 8)
        else:
            value = int(hex_long if hex_long is not None else hex_short, 16)
        if value >= 0x80:
            return True
    return False


def to_hyperscan(pattern: str, caseless: bool = False) -> bytes | None:
    """Translate an RE2 pattern into Hyperscan syntax with the same search semantics.

    The result, compiled with ``HS_FLAG_UTF8 | HS_FLAG_SINGLEMATCH | HS_FLAG_ALLOWEMPTY``
    (and ``HS_FLAG_CASELESS`` when the RE2 pattern is compiled with ``(?i)`` and
    :func:`needs_re2_for_caseless` is False), matches somewhere in a string exactly when RE2's
    unanchored search does.  Returns ``None`` when RE2 rejects the pattern or no faithful
    translation is known; the caller then matches with RE2.  The result is not compiled here,
    so Hyperscan may still reject it (for example ``a\\zb``). `caseless` says the result is
    compiled with ``HS_FLAG_CASELESS``; negated classes then name the non-ASCII characters
    that RE2's case folding takes out of them (see :func:`_render_class`).
    """
    if re2_error(pattern) is not None:
        return None
    try:
        tree = _Parser(pattern, caseless).parse()
        if _empty_through_not_word(tree) and not _can_be_empty(tree, asserting=False):
            raise _Untranslatable("\\B reachable by an empty match")
        return _render(tree, at_start=True).encode("ascii")
    except _Untranslatable:
        return None


# --------------------------------------------------------------------------------------------
# Parsing RE2 syntax into a small tree.


class _Untranslatable(Exception):
    """Raised when no faithful Hyperscan translation is known."""


@dataclass(frozen=True)
class _Flags:
    """Inline flags in force.  ``fold`` is None while the pattern has not set ``i`` itself."""

    fold: bool | None
    multiline: bool
    dotall: bool


@dataclass(frozen=True)
class _Atom:
    """Something matching exactly one character, already rendered; it takes a quantifier."""

    text: str


@dataclass(frozen=True)
class _Assert:
    """An empty-width assertion: start, end, line_start, line_end, word or not_word."""

    kind: str


@dataclass(frozen=True)
class _Concat:
    """A sequence; the empty sequence matches the empty string."""

    items: tuple[_Node, ...]


@dataclass(frozen=True)
class _Alt:
    """An alternation of at least two branches."""

    branches: tuple[_Node, ...]


@dataclass(frozen=True)
class _Repeat:
    """`item` repeated `low` to `high` times (``high`` None means unbounded)."""

    item: _Node
    low: int
    high: int | None


_Node = _Atom | _Assert | _Concat | _Alt | _Repeat

_Ranges = list[tuple[int, int]]

_DIGIT = frozenset(range(0x30, 0x3A))
_UPPER = frozenset(range(0x41, 0x5B))
_LOWER = frozenset(range(0x61, 0x7B))
_ALPHA = _UPPER | _LOWER
_WORD = _DIGIT | _ALPHA | {0x5F}
_SPACE = frozenset({0x09, 0x0A, 0x0C, 0x0D, 0x20})  # RE2's \s: no \v

_PERL_CLASSES: dict[str, frozenset[int]] = {"d": _DIGIT, "s": _SPACE, "w": _WORD}

_POSIX_CLASSES: dict[str, frozenset[int]] = {
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

_ESCAPE_ASSERTIONS = {"A": "start", "z": "end", "b": "word", "B": "not_word"}
_C_ESCAPES = {"a": 0x07, "f": 0x0C, "n": 0x0A, "r": 0x0D, "t": 0x09, "v": 0x0B}
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
_OCTAL_DIGITS = frozenset("01234567")
_MAX_CODE_POINT = 0x10FFFF


class _Parser:
    """Recursive-descent parser for patterns RE2 has already accepted.

    Anything it does not fully understand raises :class:`_Untranslatable`.
    """

    def __init__(self, pattern: str, caseless: bool = False) -> None:
        self.pattern = pattern
        self.caseless = caseless
        """The pattern is compiled with ``HS_FLAG_CASELESS``: folding applies where
        no inline flag says otherwise."""
        self.pos = 0

    def parse(self) -> _Node:
        """Parse the whole pattern."""
        node = self._alternation(_Flags(fold=None, multiline=False, dotall=False))
        if self.pos != len(self.pattern):
            raise _Untranslatable("unbalanced )")
        return node

    def _peek(self, offset: int = 0) -> str:
        index = self.pos + offset
        return self.pattern[index] if index < len(self.pattern) else ""

    def _alternation(self, flags: _Flags) -> _Node:
        """Parse up to an unmatched ``)`` or the end; ``(?flags)`` changes `flags` from there."""
        branches: list[_Node] = []
        items: list[_Node] = []
        repeatable = False
        while self.pos < len(self.pattern):
            char = self.pattern[self.pos]
            if char == ")":
                break
            if char == "|":
                branches.append(_Concat(tuple(items)))
                items = []
                repeatable = False
                self.pos += 1
                continue
            repeat = self._quantifier()
            if repeat is not None:
                if not repeatable or not items:
                    raise _Untranslatable("quantifier without operand")
                items[-1] = _Repeat(items[-1], repeat[0], repeat[1])
                continue
            if char == "(":
                node, new_flags = self._group(flags)
                if node is None:
                    flags = new_flags
                    repeatable = False
                else:
                    items.append(node)
                    repeatable = True
                continue
            if char == "\\":
                nodes = self._escape(flags)
                if nodes:
                    items.extend(nodes)
                    repeatable = True
                continue
            self.pos += 1
            repeatable = True
            if char == "[":
                items.append(self._char_class(flags))
            elif char == ".":
                items.append(_Atom("(?s:.)" if flags.dotall else "[^\\x0a]"))
            elif char == "^":
                items.append(_Assert("line_start" if flags.multiline else "start"))
            elif char == "$":
                items.append(_Assert("line_end" if flags.multiline else "end"))
            else:
                items.append(_literal(ord(char), flags.fold))
        branches.append(_Concat(tuple(items)))
        return branches[0] if len(branches) == 1 else _Alt(tuple(branches))

    def _quantifier(self) -> tuple[int, int | None] | None:
        """Consume a quantifier at the current position (lazy suffix dropped), if any."""
        char = self._peek()
        bounds: tuple[int, int | None]
        if char == "*":
            bounds = (0, None)
            self.pos += 1
        elif char == "+":
            bounds = (1, None)
            self.pos += 1
        elif char == "?":
            bounds = (0, 1)
            self.pos += 1
        elif char == "{":
            counted = self._counted_repeat()
            if counted is None:
                return None
            bounds = counted
        else:
            return None
        if self._peek() == "?":  # lazy: same language, so same yes/no answer
            self.pos += 1
        return bounds

    def _integer(self, index: int) -> tuple[int, int] | None:
        """RE2's repeat-count rule: digits, no leading zero, at most nine digits."""
        end = index
        while end < len(self.pattern) and self.pattern[end] in "0123456789":
            end += 1
        digits = self.pattern[index:end]
        if not digits or (len(digits) > 1 and digits[0] == "0") or len(digits) > 9:
            return None
        return int(digits), end

    def _counted_repeat(self) -> tuple[int, int | None] | None:
        """Parse ``{n}``, ``{n,}`` or ``{n,m}``; None (nothing consumed) if it is a literal."""
        first = self._integer(self.pos + 1)
        if first is None:
            return None
        low, index = first
        high: int | None = low
        if self.pattern[index : index + 1] == ",":
            index += 1
            if self.pattern[index : index + 1] == "}":
                high = None
            else:
                second = self._integer(index)
                if second is None:
                    return None
                high, index = second
        if self.pattern[index : index + 1] != "}":
            return None
        self.pos = index + 1
        return low, high

    def _group(self, flags: _Flags) -> tuple[_Node | None, _Flags]:
        """Parse a parenthesised construct; a bare ``(?flags)`` returns no node, new flags."""
        pattern = self.pattern
        self.pos += 1  # "("
        inner = flags
        if self._peek() == "?":
            if pattern.startswith("?P<", self.pos) or (
                pattern.startswith("?<", self.pos) and self._peek(2) not in ("=", "!")
            ):
                close = pattern.find(">", self.pos)
                if close < 0:
                    raise _Untranslatable("bad group name")
                self.pos = close + 1
            else:
                self.pos += 1
                inner, scoped = self._flag_group(flags)
                if not scoped:
                    return None, inner
        node = self._alternation(inner)
        if self._peek() != ")":
            raise _Untranslatable("missing )")
        self.pos += 1
        return node, flags

    def _flag_group(self, flags: _Flags) -> tuple[_Flags, bool]:
        """Parse ``flags)`` or ``flags:`` after ``(?``; returns new flags and whether scoped."""
        negate = False
        while True:
            char = self._peek()
            self.pos += 1
            if char in (")", ":"):
                return flags, char == ":"
            if char == "-" and not negate:
                negate = True
            elif char == "i":
                flags = replace(flags, fold=not negate)
            elif char == "m":
                flags = replace(flags, multiline=not negate)
            elif char == "s":
                flags = replace(flags, dotall=not negate)
            else:  # U (ungreedy) and anything unknown
                raise _Untranslatable(f"unsupported flag {char!r}")

    def _escape(self, flags: _Flags) -> list[_Node]:
        """Parse a backslash escape outside a class (``\\Q...\\E`` may give several nodes)."""
        letter = self._peek(1)
        if letter in _ESCAPE_ASSERTIONS:
            self.pos += 2
            return [_Assert(_ESCAPE_ASSERTIONS[letter])]
        if letter.lower() in _PERL_CLASSES:
            self.pos += 2
            return [_perl_class_atom(letter, flags.fold, self._folding(flags))]
        if letter == "Q":
            self.pos += 2
            end = self.pattern.find("\\E", self.pos)
            if end < 0:
                end = len(self.pattern)
            text = self.pattern[self.pos : end]
            self.pos = min(end + 2, len(self.pattern))
            return [_literal(ord(char), flags.fold) for char in text]
        return [_literal(self._escaped_char(), flags.fold)]

    def _escaped_char(self) -> int:
        """Parse an escape denoting one character (octal, hex, C escape, punctuation)."""
        letter = self._peek(1)
        self.pos += 2
        if letter in _OCTAL_DIGITS:
            if letter != "0" and self._peek() not in _OCTAL_DIGITS:
                raise _Untranslatable("backreference")
            value = int(letter)
            for _ in range(2):
                if self._peek() not in _OCTAL_DIGITS:
                    break
                value = value * 8 + int(self._peek())
                self.pos += 1
            return value
        if letter == "x":
            if self._peek() == "{":
                close = self.pattern.find("}", self.pos)
                digits = self.pattern[self.pos + 1 : close] if close > 0 else ""
                if not digits or not set(digits) <= _HEX_DIGITS:
                    raise _Untranslatable("bad hex escape")
                self.pos = close + 1
            else:
                digits = self.pattern[self.pos : self.pos + 2]
                if len(digits) != 2 or not set(digits) <= _HEX_DIGITS:
                    raise _Untranslatable("bad hex escape")
                self.pos += 2
            value = int(digits, 16)
            if value > _MAX_CODE_POINT:
                raise _Untranslatable("code point out of range")
            return value
        if letter in _C_ESCAPES:
            return _C_ESCAPES[letter]
        if letter and letter.isascii() and not letter.isalnum():
            return ord(letter)
        # \p, \P, \C and anything else RE2 might accept that is not handled here.
        raise _Untranslatable(f"unsupported escape \\{letter}")

    def _class_char(self) -> int:
        """One character inside a class: an escape or a literal character."""
        if self._peek() == "\\":
            return self._escaped_char()
        char = self._peek()
        if not char:
            raise _Untranslatable("missing ]")
        self.pos += 1
        return ord(char)

    def _char_class(self, flags: _Flags) -> _Atom:
        """Parse a bracket class (the ``[`` is consumed) following RE2's rules."""
        pattern = self.pattern
        negated = self._peek() == "^"
        if negated:
            self.pos += 1
        positive: _Ranges = []
        negative: list[frozenset[int]] = []
        first = True
        while self._peek() != "]" or first:
            first = False
            if not self._peek():
                raise _Untranslatable("missing ]")
            if pattern.startswith("[:", self.pos):
                # Like RE2, look for ":]" anywhere further on; without one "[" is a literal.
                close = pattern.find(":]", self.pos + 2)
                if close >= 0:
                    name = pattern[self.pos + 2 : close]
                    invert = name.startswith("^")
                    members = _POSIX_CLASSES.get(name[1:] if invert else name)
                    if members is None:
                        raise _Untranslatable(f"unknown POSIX class {name!r}")
                    if invert:
                        negative.append(members)
                    else:
                        positive.extend(_set_ranges(members))
                    self.pos = close + 2
                    continue
            if self._peek() == "\\":
                letter = self._peek(1)
                if letter.lower() in _PERL_CLASSES:
                    members = _PERL_CLASSES[letter.lower()]
                    if letter.islower():
                        positive.extend(_set_ranges(members))
                    else:
                        negative.append(members)
                    self.pos += 2
                    continue
            low = self._class_char()
            high = low
            if self._peek() == "-" and self._peek(1) not in ("]", ""):
                self.pos += 1
                high = self._class_char()
            if high < low:
                raise _Untranslatable("bad range")
            positive.append((low, high))
        self.pos += 1  # "]"
        return _class_atom(_merge(positive), negative, negated, flags.fold, self._folding(flags))

    def _folding(self, flags: _Flags) -> bool:
        """Whether case folding applies under `flags`."""
        return self.caseless if flags.fold is None else flags.fold


# --------------------------------------------------------------------------------------------
# Building atoms.


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


def _check_code_points(ranges: _Ranges, fold: bool | None) -> None:
    """Reject surrogates, and non-ASCII text whose case folding would be left to Hyperscan."""
    for low, high in ranges:
        if 0xD800 <= low <= 0xDFFF or 0xD800 <= high <= 0xDFFF:
            raise _Untranslatable("surrogate code point")
        if fold is True and high >= 0x80:
            raise _Untranslatable("non-ASCII text under (?i)")


def _literal(code_point: int, fold: bool | None) -> _Atom:
    """An atom matching one literal character."""
    _check_code_points([(code_point, code_point)], fold)
    text = _cp_text(code_point)
    if code_point >= 0x80 or chr(code_point).isalpha():
        text = _with_fold(text, fold)
    return _Atom(text)


def _perl_class_atom(letter: str, fold: bool | None, folding: bool) -> _Atom:
    """``\\d``, ``\\s``, ``\\w`` and their negations as explicit ASCII classes."""
    members = _PERL_CLASSES[letter.lower()]
    if letter.islower():
        return _class_atom(_set_ranges(members), [], False, fold, folding)
    return _class_atom([], [members], False, fold, folding)


def _set_ranges(members: frozenset[int] | set[int]) -> _Ranges:
    """The sorted, merged ranges covering a set of code points."""
    return _merge([(member, member) for member in members])


def _merge(ranges: _Ranges) -> _Ranges:
    """Sort ranges and merge overlapping or adjacent ones."""
    merged: _Ranges = []
    for low, high in sorted(ranges):
        if merged and low <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return merged


_FOLDING_LETTERS = frozenset(b"sSkK")
"""ASCII letters RE2's case folding joins to non-ASCII characters: ``s`` to U+017F LATIN
SMALL LETTER LONG S, ``k`` to U+212A KELVIN SIGN."""


def _render_class(ranges: _Ranges, negated: bool, folding: bool = False) -> str:
    """A Hyperscan bracket class with every member escaped.

    A negated class holding ``s`` or ``k`` under `folding` is untranslatable: RE2 leaves the
    letters' non-ASCII fold partners out of it (``(?i)[^s]`` does not match U+017F), and
    Hyperscan, which does too for such a class alone, lets U+017F through it in repeated
    alternations (``(?:[^s]+|aaa)+a`` matches ``\u017fa`` caselessly, also with U+017F named
    in the class)."""
    if negated and folding:
        members = {c for low, high in ranges if low < 0x80 for c in range(low, min(high, 0x7F) + 1)}
        if members & _FOLDING_LETTERS:
            raise _Untranslatable("negated class holding s or k under case folding")
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


def _class_atom(
    positive: _Ranges,
    negative: list[frozenset[int]],
    negated: bool,
    fold: bool | None,
    folding: bool = False,
) -> _Atom:
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
            raise _Untranslatable("empty class")
        return _Atom(_with_fold(_render_class(positive, negated, folding), fold))
    if not negated:
        parts = [_render_class(positive, False)] if positive else []
        parts.extend(_render_class(_set_ranges(members), True, folding) for members in negative)
        text = parts[0] if len(parts) == 1 else "(?:" + "|".join(parts) + ")"
        return _Atom(_with_fold(text, fold))
    ascii_positive = {
        code_point
        for low, high in positive
        if low < 0x80
        for code_point in range(low, min(high, 0x7F) + 1)
    }
    if fold is not False:
        if any(high >= 0x80 for _, high in positive):
            raise _Untranslatable("negated class mixing non-ASCII under possible folding")
        if not _fold_closed(ascii_positive) or (
            len(negative) > 1 and not all(_fold_closed(members) for members in negative)
        ):
            raise _Untranslatable("negated class not expressible under case folding")
    remaining = set(negative[0]).intersection(*negative[1:]) - ascii_positive
    if not remaining:
        raise _Untranslatable("class matches nothing")
    return _Atom(_with_fold(_render_class(_set_ranges(remaining), False), fold))


# --------------------------------------------------------------------------------------------
# Rendering the tree.


def _is_empty(node: _Node) -> bool:
    """True if `node` matches only the empty string and asserts nothing."""
    if isinstance(node, _Concat):
        return all(_is_empty(item) for item in node.items)
    if isinstance(node, _Alt):
        return all(_is_empty(branch) for branch in node.branches)
    if isinstance(node, _Repeat):
        return node.high == 0 or _is_empty(node.item)
    return False


def _can_be_empty(node: _Node, asserting: bool = True) -> bool:
    """True if `node` matches the empty string somewhere (where its assertions hold); with
    `asserting` False, only by a path that asserts nothing (so everywhere)."""
    if isinstance(node, _Atom):
        return False
    if isinstance(node, _Assert):
        return asserting
    if isinstance(node, _Concat):
        return all(_can_be_empty(item, asserting) for item in node.items)
    if isinstance(node, _Alt):
        return any(_can_be_empty(branch, asserting) for branch in node.branches)
    return node.low == 0 or node.high == 0 or _can_be_empty(node.item, asserting)


def _empty_through_not_word(node: _Node) -> bool:
    """True if `node` has an empty match that passes a ``\\B``.

    RE2 searches byte by byte, so an empty match may fall between the bytes of one UTF-8
    character, where ``\\B`` holds (both bytes are non-word); Hyperscan in UTF-8 mode only
    tries character boundaries (``a|\\B`` matches ``1.1é1`` in RE2, not in Hyperscan).
    Only an empty match can start inside a character: every consuming item needs a whole one.
    """
    if isinstance(node, _Atom):
        return False
    if isinstance(node, _Assert):
        return node.kind == "not_word"
    if isinstance(node, _Concat):
        return all(_can_be_empty(item) for item in node.items) and any(
            _empty_through_not_word(item) for item in node.items
        )
    if isinstance(node, _Alt):
        return any(_empty_through_not_word(branch) for branch in node.branches)
    return node.high != 0 and _empty_through_not_word(node.item)


def _is_zero_width(node: _Node) -> bool:
    """True if `node` never consumes a character (only assertions and empty parts)."""
    if isinstance(node, _Assert):
        return True
    if isinstance(node, _Concat):
        return all(_is_zero_width(item) for item in node.items)
    if isinstance(node, _Alt):
        return all(_is_zero_width(branch) for branch in node.branches)
    if isinstance(node, _Repeat):
        return node.high == 0 or _is_zero_width(node.item)
    return False


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


def _render(node: _Node, at_start: bool) -> str:
    """Render `node`; `at_start` is True when nothing can precede it in a match."""
    if isinstance(node, _Atom):
        return node.text
    if isinstance(node, _Assert):
        if node.kind != "line_start":
            return _ASSERTIONS[node.kind]
        if not at_start:
            raise _Untranslatable("multi-line ^ not at the start of the pattern")
        # Hyperscan's (?m)^ misses the position after a final newline; consuming the newline
        # instead is equivalent when the ^ begins the match.
        return "(?:\\A|\\x0a)"
    if isinstance(node, _Concat):
        parts: list[str] = []
        for item in node.items:
            parts.append(_render(item, at_start))
            if not _is_empty(item):
                at_start = False
        return "".join(parts)
    if isinstance(node, _Alt):
        return "(?:" + "|".join(_render(branch, at_start) for branch in node.branches) + ")"
    if node.high == 0:
        return ""
    if _is_zero_width(node.item):
        # Assertions are idempotent; Hyperscan rejects repeating them.
        return "" if node.low == 0 else _render(node.item, at_start)
    inner = _render(node.item, at_start and node.high == 1)
    if not isinstance(node.item, _Atom):
        inner = f"(?:{inner})"
    return inner + _quantifier_text(node.low, node.high)
