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

import math
import re
from typing import Any

import yaml

_PLAIN = "tag:sluice.dev,2026:plain"
_MERGE = "tag:yaml.org,2002:merge"

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


class Loader(yaml.SafeLoader):
    """PyYAML's safe loader with yaml.v3's scalar resolution and unique keys."""

    yaml_implicit_resolvers = {}  # noqa: RUF012 (PyYAML's class-level table; replaced, not shared)

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
        return super().construct_mapping(node, deep)


Loader.add_implicit_resolver(_MERGE, re.compile(r"^<<$"), ["<"])
Loader.add_implicit_resolver(_PLAIN, re.compile(r"", re.S), None)
Loader.add_constructor(_PLAIN, lambda _, node: plain_scalar(node.value))
Loader.add_constructor(_MERGE, lambda _, node: node.value)


def load(text: str) -> Any:
    """The document in `text` (raises yaml.YAMLError)."""
    return yaml.load(text, Loader=Loader)  # a SafeLoader subclass
