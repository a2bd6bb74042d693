"""What can go wrong with an OTTL condition: at start (it does not parse,
or uses something outside the supported subset) or on a record (a path
that cannot be indexed, a function given a value it cannot take)."""

from __future__ import annotations


class OttlConfigError(ValueError):
    """A condition that cannot run. The message names the construct; the
    caller names the condition."""


class OttlRuntimeError(Exception):
    """A condition failed on one record, as upstream's conditions return an
    error: the processor's ``error_mode`` decides what happens next."""


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


def go_quoted(text: str) -> str:
    """`text` as Go's ``%q`` writes it (``strconv.Quote``), as upstream names
    a condition in its errors: double-quoted, ``"`` and ``\\`` escaped, and
    characters that are not printable written as escapes."""
    out = ['"']
    for char in text:
        escape = _SHORT_ESCAPES.get(char)
        if escape is not None:
            out.append(escape)
        elif char.isprintable():
            out.append(char)
        elif ord(char) < 0x20 or char == "\x7f":
            out.append(f"\\x{ord(char):02x}")
        elif ord(char) < 0x10000:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    out.append('"')
    return "".join(out)
