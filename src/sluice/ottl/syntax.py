"""OTTL conditions as plain data: the lark parse tree turned into a small
AST the compiler walks once.

Values keep what the grammar recognised even when Sluice does not run it
(:class:`Unsupported`), so that the compiler can name the construct.
"""

from __future__ import annotations

import contextlib
import math
import re
from dataclasses import dataclass
from typing import Any

from lark import Token, Transformer, v_args
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedInput, VisitError

from sluice.gostrconv import quoted
from sluice.ottl.errors import OttlConfigError
from sluice.ottl.grammar import parser

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1


@dataclass(frozen=True)
class Field:
    """One path segment and the keys that index it (``attributes["k"][0]``)."""

    name: str
    keys: tuple[str | int, ...] = ()

    def __str__(self) -> str:
        """As written, keys quoted and escaped: two different paths never
        read alike (the text keys the values a condition scans)."""
        return self.name + "".join(
            f'["{_escaped(k)}"]' if isinstance(k, str) else f"[{k}]" for k in self.keys
        )


def _escaped(key: str) -> str:
    return key.replace("\\", "\\\\").replace('"', '\\"')


@dataclass(frozen=True)
class Path:
    fields: tuple[Field, ...]

    def __str__(self) -> str:
        return ".".join(map(str, self.fields))

    def original_text(self) -> str:
        """The path as upstream's parser writes it back in its messages
        (``buildOriginalText``): keys between brackets as their values, a
        string key unquoted (``attributes[a]``)."""
        return ".".join(
            field.name + "".join(f"[{key}]" for key in field.keys) for field in self.fields
        )


@dataclass(frozen=True)
class Literal:
    """A string, int, float, bool, byte slice or ``nil``."""

    value: str | int | float | bool | bytes | None


@dataclass(frozen=True)
class EnumSymbol:
    name: str


@dataclass(frozen=True)
class Argument:
    name: str | None
    value: Value


@dataclass(frozen=True)
class Call:
    """A converter (``IsMatch(...)``) or, when `editor`, an editor (``set(...)``)."""

    name: str
    args: tuple[Argument, ...]
    keys: tuple[str | int, ...] = ()
    editor: bool = False


@dataclass(frozen=True)
class Unsupported:
    """A value form outside the subset: math expressions, lists, maps."""

    what: str


Value = Path | Literal | EnumSymbol | Call | Unsupported


@dataclass(frozen=True)
class Or:
    left: Boolean
    right: Boolean


@dataclass(frozen=True)
class And:
    left: Boolean
    right: Boolean


@dataclass(frozen=True)
class Not:
    operand: Boolean


@dataclass(frozen=True)
class Compare:
    left: Value
    op: str
    right: Value


@dataclass(frozen=True)
class Constant:
    value: bool


@dataclass(frozen=True)
class Predicate:
    """A converter used as a boolean (``IsMatch(body, "x")``)."""

    call: Call


Boolean = Or | And | Not | Compare | Constant | Predicate


def parse_condition(text: str) -> Boolean:
    """The AST of one condition; raises :class:`OttlConfigError` with
    upstream's "condition has invalid syntax" for text that does not parse."""
    _lex_as_upstream(text)
    try:
        tree = parser().parse(text)
    except UnexpectedCharacters as bad:
        raise _invalid_input(text, bad.pos_in_stream or 0) from None
    except UnexpectedInput as bad:
        raise OttlConfigError(
            f"condition has invalid syntax: {_unexpected_token(text, bad)}"
        ) from None
    except LarkError as bad:
        raise OttlConfigError(f"condition has invalid syntax: {bad}") from None
    try:
        result: Boolean = _ToAst().transform(tree)
    except VisitError as bad:
        if isinstance(bad.orig_exc, OttlConfigError):
            raise bad.orig_exc from None
        raise
    return result


_UPSTREAM_TOKEN = re.compile(
    r"0x[a-fA-F0-9]+"
    r"|[-+]?[0-9]*\.[0-9]+(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?[0-9]+"
    r'|(?P<string>"(?:\\.|[^\\"])*")'
    r"|\b(?:not|or|and)\b"
    r"|==|!=|>=|<=|>|<"
    r"|[-+/*]"
    r"|\b(?:true|false)\b"
    r"|[=(){}:,.\[\]]"
    r"|[A-Z][A-Z0-9_]*"
    r"|[a-z][a-z0-9_]*"
    r"|[\t\n\f\r ]+",
    re.ASCII,
)
"""Upstream's lexer rules (``grammar.go`` buildLexer), in its order: at each
position the first rule that matches makes the token."""


def _lex_as_upstream(text: str) -> None:
    """Upstream's parser lexes the whole text before it parses it, unquoting
    strings as it goes: a string with an escape Go's ``strconv.UnquoteChar``
    does not take, or text no rule matches, is its error whatever syntax
    error comes earlier in the text."""
    position = 0
    while position < len(text):
        token = _UPSTREAM_TOKEN.match(text, position)
        if token is None:
            raise _invalid_input(text, position)
        string = token.group("string")
        if string is not None:
            try:
                unquote(string)
            except OttlConfigError:
                line, column = _line_column(text, position)
                raise OttlConfigError(
                    f"condition has invalid syntax: {line}:{column}: invalid quoted string "
                    f"{quoted(string)}: invalid syntax"
                ) from None
        position = token.end()


def _line_column(text: str, position: int) -> tuple[int, int]:
    """Where `position` is, as participle counts: lines and characters from 1."""
    return text.count("\n", 0, position) + 1, position - text.rfind("\n", 0, position)


def _invalid_input(text: str, position: int) -> OttlConfigError:
    """Participle's error for text no lexer rule matches: up to 16
    characters of it."""
    rest = text[position:]
    sample = rest if len(rest) <= 16 else rest[:16] + "..."
    line, column = _line_column(text, position)
    return OttlConfigError(
        f"condition has invalid syntax: {line}:{column}: invalid input text {quoted(sample)}"
    )


def _unexpected_token(text: str, bad: UnexpectedInput) -> str:
    """Where and what the parser did not expect, as upstream's parser
    (participle) words it: ``1:9: unexpected token "x"``, ``"<EOF>"`` at the
    end of the text, and what was expected when it was a comparison
    operator (the usual mistake: a path or an editor alone) or a key."""
    token = getattr(bad, "token", None)
    if token is None or token.type == "$END":
        line = text.count("\n") + 1
        column = len(text) - text.rfind("\n")
        found = "<EOF>"
    else:
        line, column = bad.line, bad.column
        found = str(token)
        if token.type == "STRING":
            with contextlib.suppress(OttlConfigError):  # else named as written
                found = unquote(found)
    expected = ""
    interactive = getattr(bad, "interactive_parser", None)
    accepted = interactive.accepts() if interactive is not None else set()
    if "COMPARE" in accepted:
        expected = " (expected <opcomparison> Value)"
    elif accepted == {"STRING", "INT"}:
        expected = ' (expected (<string> | <int>) "]")'
    return f"{line}:{column}: unexpected token {quoted(found)}{expected}"


_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    '"': '"',
}
_HEX_WIDTH = {"x": 2, "u": 4, "U": 8}


def unquote(token: str) -> str:
    """A double-quoted OTTL string's value, with the escapes Go's
    ``strconv.UnquoteChar`` takes (as upstream's parser); any other escape,
    such as ``\\d`` written with one backslash, is invalid syntax."""
    body = token[1:-1]
    out: list[str] = []
    i = 0
    while i < len(body):
        char = body[i]
        if char != "\\":
            out.append(char)
            i += 1
            continue
        code = body[i + 1] if i + 1 < len(body) else ""
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
            i += 2
        elif code in _HEX_WIDTH:
            width = _HEX_WIDTH[code]
            digits = body[i + 2 : i + 2 + width]
            value = _hex(digits, width)
            if value is None or 0xD800 <= value <= 0xDFFF or value > 0x10FFFF:
                raise _bad_string(token)
            out.append(chr(value))
            i += 2 + width
        elif "0" <= code <= "7":
            digits = body[i + 1 : i + 4]
            if len(digits) != 3 or any(not "0" <= d <= "7" for d in digits) or int(digits, 8) > 255:
                raise _bad_string(token)
            out.append(chr(int(digits, 8)))
            i += 4
        else:
            raise _bad_string(token)
    return "".join(out)


def _bad_string(token: str) -> OttlConfigError:
    return OttlConfigError(
        f"condition has invalid syntax: invalid quoted string {quoted(token)}: invalid syntax"
    )


def _hex(digits: str, width: int) -> int | None:
    if len(digits) != width or any(d not in "0123456789abcdefABCDEF" for d in digits):
        return None
    return int(digits, 16)


def _int(text: str) -> int:
    """An Int token as upstream's parser reads it (Go's ``ParseInt`` with base
    0): a leading ``0`` makes the digits octal."""
    digits = text.lstrip("+-")
    try:
        value = int(text, 8) if len(digits) > 1 and digits[0] == "0" else int(text)
    except ValueError:
        raise OttlConfigError(
            f'condition has invalid syntax: strconv.ParseInt: parsing "{text}": invalid syntax'
        ) from None
    if not INT64_MIN <= value <= INT64_MAX:
        raise OttlConfigError(
            f'condition has invalid syntax: strconv.ParseInt: parsing "{text}": value out of range'
        )
    return value


@v_args(inline=True)
class _ToAst(Transformer[Token, Any]):
    """Lark tree -> AST, bottom up."""

    def or_(self, left: Boolean, right: Boolean) -> Boolean:
        return Or(left, right)

    def and_(self, left: Boolean, right: Boolean) -> Boolean:
        return And(left, right)

    def bool_value(self, negation: Token | None, atom: Any) -> Boolean:
        boolean = _as_boolean(atom)
        return Not(boolean) if negation is not None else boolean

    def comparison(self, left: Value, op: Token, right: Value) -> Boolean:
        return Compare(left, str(op), right)

    def true(self, _token: Token) -> Literal:
        return Literal(True)

    def false(self, _token: Token) -> Literal:
        return Literal(False)

    def nil(self, _token: Token) -> Literal:
        return Literal(None)

    def string(self, token: Token) -> Literal:
        return Literal(unquote(str(token)))

    def bytes_(self, token: Token) -> Literal:
        digits = str(token)[2:]
        if len(digits) % 2:
            raise OttlConfigError(
                "condition has invalid syntax: encoding/hex: odd length hex string"
            )
        return Literal(bytes.fromhex(digits))

    def int_(self, token: Token) -> Literal:
        return Literal(_int(str(token)))

    def float_(self, token: Token) -> Literal:
        value = float(str(token))
        if math.isinf(value):  # Go's ParseFloat: out of range
            raise OttlConfigError(
                f'condition has invalid syntax: strconv.ParseFloat: parsing "{token}": '
                "value out of range"
            )
        return Literal(value)

    def enum(self, token: Token) -> EnumSymbol:
        return EnumSymbol(str(token))

    def math(self, *_parts: Any) -> Unsupported:
        return Unsupported("math expressions")

    def list_(self, *_items: Any) -> Unsupported:
        return Unsupported("lists")

    def map_(self, *_items: Any) -> Unsupported:
        return Unsupported("maps")

    def map_item(self, *_parts: Any) -> None:
        return None

    def key(self, token: Token) -> str | int:
        return unquote(str(token)) if token.type == "STRING" else _int(str(token))

    def field(self, name: Token, *keys: str | int) -> Field:
        return Field(str(name), tuple(keys))

    def path(self, *fields: Field) -> Path:
        return Path(tuple(fields))

    def argument(self, name: Token | None, value: Value) -> Argument:
        return Argument(None if name is None else str(name), value)

    def converter(self, name: Token, *rest: Any) -> Call:
        return _call(str(name), rest, editor=False)

    def editor(self, name: Token, *rest: Any) -> Call:
        return _call(str(name), rest, editor=True)


def _call(name: str, rest: tuple[Any, ...], editor: bool) -> Call:
    args = tuple(a for a in rest if isinstance(a, Argument))
    keys = tuple(k for k in rest if isinstance(k, str | int) and not isinstance(k, bool))
    return Call(name, args, keys, editor)


def _as_boolean(atom: Any) -> Boolean:
    if isinstance(atom, Literal):  # true / false
        assert isinstance(atom.value, bool)
        return Constant(atom.value)
    if isinstance(atom, Call):
        return Predicate(atom)
    result: Boolean = atom
    return result
