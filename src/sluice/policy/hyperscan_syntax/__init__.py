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

from sluice.policy.hyperscan_syntax.parser import Parser
from sluice.policy.hyperscan_syntax.render import render
from sluice.policy.hyperscan_syntax.tree import Untranslatable, can_be_empty, empty_through_not_word
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
    that RE2's case folding takes out of them (see :func:`render_class`).
    """
    if re2_error(pattern) is not None:
        return None
    try:
        tree = Parser(pattern, caseless).parse()
        if empty_through_not_word(tree) and not can_be_empty(tree, asserting=False):
            raise Untranslatable("\\B reachable by an empty match")
        return render(tree, at_start=True).encode("ascii")
    except Untranslatable:
        return None
