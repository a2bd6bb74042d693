"""YAML read the way the OpenTelemetry Collector reads it (Go's yaml.v3).

PyYAML follows YAML 1.1, where ``on``, ``no`` and ``yes`` are booleans,
``1:30`` is the number 90 and ``2024-01-01`` a date. The collector's parser
follows YAML 1.2's core schema: only ``true``/``false`` (three spellings
each) are booleans, nulls are ``~``/``null``/empty, integers may be written
in hex (``0x1F``), octal (``0o17``, and ``0755`` as YAML 1.1 wrote it) or
binary (``0b101``) with ``_`` between digits, and everything else that is
not a number is text. A config that works upstream must mean the same here:
``country: NO`` stays the text ``NO``.

A key written twice in one mapping is an error (the collector refuses such a
file), not a silent last-one-wins.
"""

from __future__ import annotations

import io
import math
import re
from typing import Any

import yaml

from sluice.collector.confmap.decode import go_value
from sluice.goencoding import std_base64

_PLAIN = "tag:sluice.dev,2026:plain"
_MERGE = "tag:yaml.org,2002:merge"
_STR = "tag:yaml.org,2002:str"

_WORDS: dict[str, Any] = {
    **dict.fromkeys(("true", "True", "TRUE"), True),
    **dict.fromkeys(("false", "False", "FALSE"), False),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), None),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), math.nan),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), math.inf),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), -math.inf),
}
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_DIGITS = {
    "0x": ("0123456789abcdefABCDEF", 16),
    "0X": ("0123456789abcdefABCDEF", 16),
    "0o": ("01234567", 8),
    "0O": ("01234567", 8),
    "0b": ("01", 2),
    "0B": ("01", 2),
}
_INT64 = 1 << 63
_UINT64 = 1 << 64


def _go_int(text: str) -> int | None:
    """Go's ``strconv.ParseInt(text, 0, 64)``, then ``ParseUint`` (no sign)
    for values past int64, or None."""
    signed = text[:1] in "+-"
    sign, body = (-1 if text[:1] == "-" else 1), text[1:] if signed else text
    allowed, base = _DIGITS.get(body[:2], ("", 0))
    if base:
        body = body[2:]
    elif len(body) > 1 and body[0] == "0":
        allowed, base, body = "01234567", 8, body[1:]
    else:
        allowed, base = "0123456789", 10
    if not body or any(c not in allowed for c in body):
        return None
    value = sign * int(body, base)
    if -_INT64 <= value < _INT64 or (not signed and value < _UINT64):
        return value
    return None


def plain_scalar(text: str) -> Any:
    """The value of an unquoted scalar, as yaml.v3 resolves it for an
    untyped target (timestamps stay text there, as upstream)."""
    if text in _WORDS:
        return _WORDS[text]
    first = text[0]
    if first == ".":
        return float(text) if _FLOAT.fullmatch(text) else text
    if first not in "+-0123456789":
        return text
    digits = text.replace("_", "")
    number = _go_int(digits)
    if number is not None:
        return number
    if _FLOAT.fullmatch(digits):
        value = float(digits)
        return value if math.isfinite(value) else text  # Go refuses an overflow
    return text


_ALIAS_RATIO_LOW = 400_000
_ALIAS_RATIO_HIGH = 4_000_000


def _allowed_alias_ratio(decoded: int) -> float:
    """yaml.v3's ceiling on the share of a document's decoded nodes that come
    through aliases: 99% up to 400,000 nodes, falling to 10% at 4 million."""
    if decoded <= _ALIAS_RATIO_LOW:
        return 0.99
    if decoded >= _ALIAS_RATIO_HIGH:
        return 0.10
    share = (decoded - _ALIAS_RATIO_LOW) / (_ALIAS_RATIO_HIGH - _ALIAS_RATIO_LOW)
    return 0.99 - 0.89 * share


def _check_aliasing(root: yaml.Node) -> None:
    """Refuse a document whose aliases expand it too far ("billion laughs"),
    as yaml.v3 does while decoding: the nodes are counted in document order
    with every alias expanded (a node met again is an alias), and after 1,000
    of them, more than 100 coming through aliases and over the allowed share
    is "document contains excessive aliasing". PyYAML builds an alias once,
    but walking the result would take as long as the expansion."""
    seen: set[int] = set()
    decoded = aliased = 0
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, through_alias = stack.pop()
        if id(node) in seen and not through_alias:
            decoded += 1  # the alias itself
            through_alias = True
        seen.add(id(node))
        decoded += 1
        aliased += through_alias
        if aliased > 100 and decoded > 1000 and aliased / decoded > _allowed_alias_ratio(decoded):
            raise yaml.composer.ComposerError(
                None, None, "document contains excessive aliasing", node.start_mark
            )
        if isinstance(node, yaml.MappingNode):
            children = [child for pair in node.value for child in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        else:
            continue
        stack.extend((child, through_alias) for child in reversed(children))


class Loader(yaml.SafeLoader):
    """PyYAML's safe loader with yaml.v3's scalar resolution and unique keys."""

    yaml_implicit_resolvers = {}  # noqa: RUF012 (PyYAML's class-level table; replaced, not shared)

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        event: yaml.NodeEvent = self.peek_event()  # type: ignore[no-untyped-call]
        if isinstance(event, yaml.AliasEvent):
            named = self.anchors.get(event.anchor)
            if named is not None and named.end_mark is None:  # still being composed
                where: Any = event.start_mark  # PyYAML's or libyaml's Mark
                raise yaml.composer.ComposerError(
                    None, None, f"anchor '{event.anchor}' value contains itself", where
                )
        elif event.anchor is not None:
            # A later node may take an anchor's name (PyYAML refuses it);
            # aliases after it stand for the new node, as in yaml.v3.
            self.anchors.pop(event.anchor, None)
        return super().compose_node(parent, index)

    def construct_document(self, node: yaml.Node) -> Any:
        _check_aliasing(node)
        return super().construct_document(node)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[tuple[type, str], yaml.Node] = {}
        for key_node, _ in node.value:
            if key_node.tag == _MERGE or not isinstance(key_node, yaml.ScalarNode):
                continue
            earlier = seen.setdefault((type(key_node), key_node.value), key_node)
            if earlier is not key_node:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f'mapping key "{key_node.value}" already defined at line '
                    f"{earlier.start_mark.line + 1}",
                    key_node.start_mark,
                )
        self.flatten_mapping(node)  # merged keys too
        for at, (key_node, value_node) in enumerate(node.value):
            key = self.construct_object(key_node) if isinstance(key_node, yaml.ScalarNode) else ""
            if not isinstance(key, str):
                # koanf makes each key of a map[interface{}]interface{} its
                # %v text, so 1 and true stay two keys ("1", "true").
                text = yaml.ScalarNode(_STR, go_value(key), key_node.start_mark, key_node.end_mark)
                node.value[at] = (text, value_node)
        return super().construct_mapping(node, deep)


def _go_kind(value: Any) -> str:
    """yaml.v3's short tag for a scalar it resolved."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    return {int: "int", float: "float"}.get(type(value), "str")


def _tagged(_: Loader, node: yaml.ScalarNode) -> Any:
    """``!!int``, ``!!float`` or ``!!bool``: the text resolved as untagged,
    which must be of that kind (an integer may be a float), as yaml.v3."""
    want = node.tag.rsplit(":", 1)[1]
    value = plain_scalar(node.value)
    kind = _go_kind(value)
    if want == "float" and kind == "int":
        return float(value)
    if kind != want:
        raise yaml.constructor.ConstructorError(
            None, None, f"cannot decode !!{kind} `{node.value}` as a !!{want}", node.start_mark
        )
    return value


Loader.add_constructor("tag:yaml.org,2002:int", _tagged)
Loader.add_constructor("tag:yaml.org,2002:float", _tagged)
Loader.add_constructor("tag:yaml.org,2002:bool", _tagged)


def _timestamp(_: Loader, node: yaml.ScalarNode) -> str:
    """yaml.v3 gives an untyped target a timestamp's text."""
    if not yaml.SafeLoader.timestamp_regexp.match(node.value):
        raise yaml.constructor.ConstructorError(
            None, None, f"cannot decode !!str `{node.value}` as a !!timestamp", node.start_mark
        )
    return str(node.value)


def _binary(_: Loader, node: yaml.ScalarNode) -> str:
    """The decoded bytes as text (Go's ``string(data)``), read as yaml.v3
    reads them, with ``base64.StdEncoding``."""
    try:
        data = std_base64(node.value)
    except ValueError:
        raise yaml.constructor.ConstructorError(
            None, None, "!!binary value contains invalid base64 data", node.start_mark
        ) from None
    return data.decode(errors="replace")


def _untagged(loader: Loader, node: yaml.Node) -> Any:
    """A tag yaml.v3 does not know: a scalar is its text, a sequence or
    mapping is read as if it had no tag."""
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return str(node.value)


Loader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp)
Loader.add_constructor("tag:yaml.org,2002:binary", _binary)
Loader.add_constructor("tag:yaml.org,2002:set", _untagged)
Loader.add_constructor("tag:yaml.org,2002:omap", _untagged)
Loader.add_constructor("tag:yaml.org,2002:pairs", _untagged)
Loader.add_constructor(None, _untagged)
Loader.add_implicit_resolver(_MERGE, re.compile(r"^<<$"), ["<"])
Loader.add_implicit_resolver(_PLAIN, re.compile(r"", re.S), None)
Loader.add_constructor(_PLAIN, lambda _, node: plain_scalar(node.value))
Loader.add_constructor(_MERGE, lambda _, node: node.value)


def load(text: str) -> Any:
    """The first document in `text`, None when it has none (raises
    yaml.YAMLError). As yaml.v3's ``Unmarshal``, what follows the first
    document is not read."""
    loader = Loader(text)
    try:
        return loader.get_data() if loader.check_data() else None  # type: ignore[no-untyped-call]
    finally:
        loader.dispose()


_OLD_BOOLS = frozenset(
    (
        "y",
        "Y",
        "yes",
        "Yes",
        "YES",
        "on",
        "On",
        "ON",
        "n",
        "N",
        "no",
        "No",
        "NO",
        "off",
        "Off",
        "OFF",
    )
)
"""YAML 1.1 booleans, which yaml.v3 quotes so that older readers see text."""
_BASE60_FLOAT = re.compile(r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?")
_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt ].*)?")
_ESCAPES = {
    "\0": "0",
    "\a": "a",
    "\b": "b",
    "\t": "t",
    "\n": "n",
    "\v": "v",
    "\f": "f",
    "\r": "r",
    "\x1b": "e",
    '"': '"',
    "\\": "\\",
    "\x85": "N",
    "\u2028": "L",
    "\u2029": "P",
}
_ANALYZER = yaml.emitter.Emitter(io.StringIO(), allow_unicode=True)
"""Used only for its scalar analysis (libyaml's, which yaml.v3 shares)."""


def dump(value: Any) -> str:
    """`value` (maps, lists and scalars) as yaml.v3's ``Marshal`` writes it:
    block style, 4-space indentation with a sequence item's content after
    its ``- ``, no line wrapping, and a string quoted only where a plain one
    would read back as something else (``"true"``, ``"1.0"``)."""
    lines: list[str] = []
    _node(value, 0, lines, "")
    return "\n".join(lines) + "\n"


def _align(indent: int) -> int:
    """The indentation of a node nested in a block node at `indent` (yaml.v3
    aligns everything but a sequence item's content to multiples of 4)."""
    return 4 * ((indent + 4) // 4)


def _node(value: Any, indent: int, lines: list[str], lead: str) -> None:
    """Append `value` at `indent`; `lead` is the text its first line starts
    with (``key:`` or ``- `` already written at the indentation)."""
    if isinstance(value, dict) and value:
        first = True
        for key, item in value.items():
            head = (lead if first else " " * indent) + _scalar(str(key), 0, key=True) + ":"
            first = False
            _value(item, indent, lines, head)
    elif isinstance(value, list) and value:
        for position, item in enumerate(value):
            head = (lead if position == 0 else " " * indent) + "- "
            if isinstance(item, dict | list) and item:
                _node(item, indent + 2, lines, head)
            else:
                lines.append(head + _scalar(item, indent + 2))
    else:
        lines.append(lead + _scalar(value, _align(indent)))


def _value(item: Any, indent: int, lines: list[str], head: str) -> None:
    """A mapping value after its ``key:``."""
    if isinstance(item, dict | list) and item:
        lines.append(head)
        nested = _align(indent)
        _node(item, nested, lines, " " * nested)
    else:
        lines.append(head + " " + _scalar(item, _align(indent)))


def _scalar(value: Any, block_indent: int, key: bool = False) -> str:
    """A scalar; a text of several lines is a literal block whose lines
    are indented by `block_indent`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    text = str(value)
    if "\n" in text and not key:
        return _literal(text, block_indent)
    reads_back = not (
        text in _OLD_BOOLS or _BASE60_FLOAT.fullmatch(text) or _TIMESTAMP.fullmatch(text)
    ) and isinstance(plain_scalar(text), str)
    if not text or not reads_back or "\n" in text:
        return _double_quoted(text)
    analysis = _ANALYZER.analyze_scalar(text)
    if analysis.allow_block_plain and not analysis.empty:
        return text
    if analysis.allow_single_quoted:
        return "'" + text.replace("'", "''") + "'"
    return _double_quoted(text)


def _double_quoted(text: str) -> str:
    out = []
    for char in text:
        code = ord(char)
        if char in _ESCAPES:
            out.append("\\" + _ESCAPES[char])
        elif char == "\ufeff" or not (
            0x20 <= code <= 0x7E
            or 0xA0 <= code <= 0xD7FF
            or 0xE000 <= code <= 0xFFFD
            or 0x10000 <= code <= 0x10FFFF
        ):
            out.append(
                f"\\x{code:02X}"
                if code <= 0xFF
                else f"\\u{code:04X}"
                if code <= 0xFFFF
                else f"\\U{code:08X}"
            )
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _literal(text: str, indent: int) -> str:
    chomp = "-" if not text.endswith("\n") else "+" if text.endswith("\n\n") else ""
    hint = "4" if text[:1] in (" ", "\n") else ""
    body = text[:-1] if text.endswith("\n") else text
    pad = " " * indent
    return f"|{hint}{chomp}\n" + "\n".join(pad + line if line else "" for line in body.split("\n"))
