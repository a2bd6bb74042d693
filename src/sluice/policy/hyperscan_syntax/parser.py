"""A recursive-descent parser for RE2 patterns (ones RE2 has accepted) into
the tree of :mod:`.tree`; what it cannot translate faithfully raises
:class:`.tree.Untranslatable`."""

from __future__ import annotations

from dataclasses import replace

from sluice.policy.hyperscan_syntax.classes import (
    PERL_CLASSES,
    POSIX_CLASSES,
    Ranges,
    class_atom,
    literal,
    merge,
    perl_class_atom,
    set_ranges,
)
from sluice.policy.hyperscan_syntax.tree import (
    Alt,
    Assert,
    Atom,
    Concat,
    Flags,
    Node,
    Repeat,
    Untranslatable,
)

_ESCAPE_ASSERTIONS = {"A": "start", "z": "end", "b": "word", "B": "not_word"}

_C_ESCAPES = {"a": 0x07, "f": 0x0C, "n": 0x0A, "r": 0x0D, "t": 0x09, "v": 0x0B}

_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")

_OCTAL_DIGITS = frozenset("01234567")

_MAX_CODE_POINT = 0x10FFFF


class Parser:
    """Recursive-descent parser for patterns RE2 has already accepted.

    Anything it does not fully understand raises :class:`Untranslatable`.
    """

    def __init__(self, pattern: str, caseless: bool = False) -> None:
        self.pattern = pattern
        self.caseless = caseless
        """The pattern is compiled with ``HS_FLAG_CASELESS``: folding applies where
        no inline flag says otherwise."""
        self.pos = 0

    def parse(self) -> Node:
        """Parse the whole pattern."""
        node = self._alternation(Flags(fold=None, multiline=False, dotall=False))
        if self.pos != len(self.pattern):
            raise Untranslatable("unbalanced )")
        return node

    def _peek(self, offset: int = 0) -> str:
        index = self.pos + offset
        return self.pattern[index] if index < len(self.pattern) else ""

    def _alternation(self, flags: Flags) -> Node:
        """Parse up to an unmatched ``)`` or the end; ``(?flags)`` changes `flags` from there."""
        branches: list[Node] = []
        items: list[Node] = []
        repeatable = False
        while self.pos < len(self.pattern):
            char = self.pattern[self.pos]
            if char == ")":
                break
            if char == "|":
                branches.append(Concat(tuple(items)))
                items = []
                repeatable = False
                self.pos += 1
                continue
            repeat = self._quantifier()
            if repeat is not None:
                if not repeatable or not items:
                    raise Untranslatable("quantifier without operand")
                items[-1] = Repeat(items[-1], repeat[0], repeat[1])
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
                items.append(Atom("(?s:.)" if flags.dotall else "[^\\x0a]"))
            elif char == "^":
                items.append(Assert("line_start" if flags.multiline else "start"))
            elif char == "$":
                items.append(Assert("line_end" if flags.multiline else "end"))
            else:
                items.append(literal(ord(char), flags.fold))
        branches.append(Concat(tuple(items)))
        return branches[0] if len(branches) == 1 else Alt(tuple(branches))

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

    def _group(self, flags: Flags) -> tuple[Node | None, Flags]:
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
                    raise Untranslatable("bad group name")
                self.pos = close + 1
            else:
                self.pos += 1
                inner, scoped = self._flag_group(flags)
                if not scoped:
                    return None, inner
        node = self._alternation(inner)
        if self._peek() != ")":
            raise Untranslatable("missing )")
        self.pos += 1
        return node, flags

    def _flag_group(self, flags: Flags) -> tuple[Flags, bool]:
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
                raise Untranslatable(f"unsupported flag {char!r}")

    def _escape(self, flags: Flags) -> list[Node]:
        """Parse a backslash escape outside a class (``\\Q...\\E`` may give several nodes)."""
        letter = self._peek(1)
        if letter in _ESCAPE_ASSERTIONS:
            self.pos += 2
            return [Assert(_ESCAPE_ASSERTIONS[letter])]
        if letter.lower() in PERL_CLASSES:
            self.pos += 2
            return [perl_class_atom(letter, flags.fold, self._folding(flags))]
        if letter == "Q":
            self.pos += 2
            end = self.pattern.find("\\E", self.pos)
            if end < 0:
                end = len(self.pattern)
            text = self.pattern[self.pos : end]
            self.pos = min(end + 2, len(self.pattern))
            return [literal(ord(char), flags.fold) for char in text]
        return [literal(self._escaped_char(), flags.fold)]

    def _escaped_char(self) -> int:
        """Parse an escape denoting one character (octal, hex, C escape, punctuation)."""
        letter = self._peek(1)
        self.pos += 2
        if letter in _OCTAL_DIGITS:
            if letter != "0" and self._peek() not in _OCTAL_DIGITS:
                raise Untranslatable("backreference")
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
                    raise Untranslatable("bad hex escape")
                self.pos = close + 1
            else:
                digits = self.pattern[self.pos : self.pos + 2]
                if len(digits) != 2 or not set(digits) <= _HEX_DIGITS:
                    raise Untranslatable("bad hex escape")
                self.pos += 2
            value = int(digits, 16)
            if value > _MAX_CODE_POINT:
                raise Untranslatable("code point out of range")
            return value
        if letter in _C_ESCAPES:
            return _C_ESCAPES[letter]
        if letter and letter.isascii() and not letter.isalnum():
            return ord(letter)
        # \p, \P, \C and anything else RE2 might accept that is not handled here.
        raise Untranslatable(f"unsupported escape \\{letter}")

    def _class_char(self) -> int:
        """One character inside a class: an escape or a literal character."""
        if self._peek() == "\\":
            return self._escaped_char()
        char = self._peek()
        if not char:
            raise Untranslatable("missing ]")
        self.pos += 1
        return ord(char)

    def _char_class(self, flags: Flags) -> Atom:
        """Parse a bracket class (the ``[`` is consumed) following RE2's rules."""
        pattern = self.pattern
        negated = self._peek() == "^"
        if negated:
            self.pos += 1
        positive: Ranges = []
        negative: list[frozenset[int]] = []
        first = True
        while self._peek() != "]" or first:
            first = False
            if not self._peek():
                raise Untranslatable("missing ]")
            if pattern.startswith("[:", self.pos):
                # Like RE2, look for ":]" anywhere further on; without one "[" is a literal.
                close = pattern.find(":]", self.pos + 2)
                if close >= 0:
                    name = pattern[self.pos + 2 : close]
                    invert = name.startswith("^")
                    members = POSIX_CLASSES.get(name[1:] if invert else name)
                    if members is None:
                        raise Untranslatable(f"unknown POSIX class {name!r}")
                    if invert:
                        negative.append(members)
                    else:
                        positive.extend(set_ranges(members))
                    self.pos = close + 2
                    continue
            if self._peek() == "\\":
                letter = self._peek(1)
                if letter.lower() in PERL_CLASSES:
                    members = PERL_CLASSES[letter.lower()]
                    if letter.islower():
                        positive.extend(set_ranges(members))
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
                raise Untranslatable("bad range")
            positive.append((low, high))
        self.pos += 1  # "]"
        return class_atom(merge(positive), negative, negated, flags.fold, self._folding(flags))

    def _folding(self, flags: Flags) -> bool:
        """Whether case folding applies under `flags`."""
        return self.caseless if flags.fold is None else flags.fold
