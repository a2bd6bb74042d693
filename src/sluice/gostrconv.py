"""What Sluice needs of Go's ``strconv``: quoting text (``strconv.Quote`` and
``%#q``, and the ``time`` package's own quoting) for error messages that must
read as upstream's Go components write them, and reading a boolean
(``strconv.ParseBool``), an integer (``strconv.Atoi``) or a double
(``strconv.ParseFloat``)."""

from __future__ import annotations

import math
import re

_BOOLS = {
    **dict.fromkeys(("1", "t", "T", "TRUE", "true", "True"), True),
    **dict.fromkeys(("0", "f", "F", "FALSE", "false", "False"), False),
}


def parse_bool(text: str) -> bool | None:
    """Go's ``strconv.ParseBool``; None where Go returns an error."""
    return _BOOLS.get(text)


_INT64 = 1 << 63


def atoi(text: str) -> int:
    """Go's ``strconv.Atoi`` (a 64-bit int): decimal digits after an
    optional sign; raises ValueError with Go's words. It reads as
    ``strconv.ParseInt(text, 10, 64)`` does (no underscores or base
    prefixes, which only base 0 takes), only its errors name Atoi."""
    digits = text[1:] if text[:1] in "+-" else text
    if not digits or not all("0" <= c <= "9" for c in digits):
        raise ValueError(f"strconv.Atoi: parsing {quoted(text)}: invalid syntax")
    value = int(text)
    if not -_INT64 <= value < _INT64:
        raise ValueError(f"strconv.Atoi: parsing {quoted(text)}: value out of range")
    return value


_DIGITS = r"[0-9](?:_?[0-9])*"
_HEX_DIGITS = r"[0-9a-fA-F](?:_?[0-9a-fA-F])*"
_GO_DECIMAL = re.compile(
    rf"[+-]?(?:{_DIGITS}(?:\.(?:{_DIGITS})?)?|\.{_DIGITS})(?:[eE][+-]?{_DIGITS})?"
)
_GO_HEX = re.compile(
    rf"[+-]?0[xX](?:(?:_?[0-9a-fA-F])+(?:\.(?:{_HEX_DIGITS})?)?|\.{_HEX_DIGITS})[pP][+-]?{_DIGITS}"
)
_GO_SPECIAL = re.compile(r"[+-]?inf(?:inity)?|nan", re.IGNORECASE)


def parse_float(text: str) -> float | None:
    """`text` as Go's ``strconv.ParseFloat(text, 64)`` reads it, None where
    it fails: a decimal or a hex mantissa with a binary exponent, with
    underscores between digits (after ``0x`` too), or Inf, Infinity (either
    signed) or NaN in any case; no space, no other digits than ASCII ones,
    and nothing past the largest double (``ErrRange``). Python's ``float``
    reads the decimal and special forms alike once they are checked."""
    if _GO_SPECIAL.fullmatch(text):
        return float(text)
    if _GO_DECIMAL.fullmatch(text):
        number = float(text)
        return None if math.isinf(number) else number
    if _GO_HEX.fullmatch(text):
        try:
            return float.fromhex(text.replace("_", ""))
        except OverflowError:
            return None
    return None


_SHORT_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    '"': '\\"',
    "\\": "\\\\",
}


def quoted(text: str) -> str:
    """`text` as Go's ``%q`` writes it (``strconv.Quote``): double-quoted,
    ``"`` and ``\\`` escaped, characters that are not printable written as
    escapes."""
    out = ['"']
    for char in text:
        escape = _SHORT_ESCAPES.get(char)
        if escape is not None:
            out.append(escape)
        elif char.isprintable():
            out.append(char)
        elif ord(char) < 0x80:
            out.append(f"\\x{ord(char):02x}")
        elif ord(char) < 0x10000:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    out.append('"')
    return "".join(out)


def time_quoted(text: str) -> str:
    """How Go's ``time`` package quotes text in its errors (``time.ParseDuration``):
    unlike :func:`quoted`, every non-ASCII or control character is written as
    its UTF-8 bytes in ``\\xNN`` escapes."""
    out: list[str] = []
    for char in text:
        if char < " " or char >= "\x80":
            out.extend(f"\\x{byte:02x}" for byte in char.encode("utf-8", "surrogatepass"))
        else:
            out.append("\\" + char if char in '"\\' else char)
    return '"' + "".join(out) + '"'


def backquoted(text: str) -> str:
    """`text` as Go's ``%#q`` writes it: between backquotes when Go can
    (``strconv.CanBackquote``), else as :func:`quoted`."""
    if all(_backquotable(char) for char in text):
        return f"`{text}`"
    return quoted(text)


def _backquotable(char: str) -> bool:
    """``strconv.CanBackquote`` for one character."""
    if char > "\x7f":
        return char != "\ufeff"
    return char == "\t" or (" " <= char < "\x7f" and char != "`")
