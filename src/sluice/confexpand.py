"""``${...}`` references in configuration values, one implementation for the
collector's YAML, Edge's JSON, policy provider entries and the command line.

- ``${env:NAME}`` and ``${NAME}`` read the environment; ``${env:NAME:-default}``
  (or the shell's ``${NAME:-default}``) falls back to `default` when NAME is
  unset or empty.
- ``$$`` is a literal ``$`` (so ``$${env:X}`` is the text ``${env:X}``).
- Unlike the OpenTelemetry Collector, a variable that is unset and has no
  default is an error naming it, not an empty value: a missing token or
  endpoint should stop the program at start, not fail every request later.

Keys are never expanded. How a value that is exactly one reference is typed
is the caller's choice (the collector reads it as YAML; Edge keeps text and
converts where a field wants a number).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from typing import Any

_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
REFERENCE = re.compile(r"\$\$|\$\{([^{}$]*)\}")
"""``$$`` or one ``${...}`` reference (group 1: what is inside the braces)."""

Report = Callable[[str, str], None]
"""Receives ``(key path, problem)`` for every reference that cannot be resolved."""


class Unresolved(ValueError):
    """A reference that names no usable value; the message says which and why."""


def lookup(reference: str) -> str:
    """The value of what is inside ``${...}``; raises :class:`Unresolved`."""
    scheme, sep, rest = reference.partition(":")
    if not sep or (rest.startswith("-") and _NAME.match(scheme)):
        scheme, rest = "env", reference  # ${NAME} and the shell's ${NAME:-default}
    if scheme != "env":
        raise Unresolved(f'scheme "{scheme}" is not supported for uri "{reference}"')
    name, has_default, default = rest.partition(":-")
    if not _NAME.match(name):
        raise Unresolved(
            f'environment variable "{name}" has invalid name: must match regex '
            r"^[a-zA-Z_][a-zA-Z0-9_]*$"
        )
    value = os.environ.get(name)
    if value:
        return value
    if has_default:
        return default
    if value is None:
        raise Unresolved(
            f"environment variable {name} is not set (give a default with ${{env:{name}:-default}})"
        )
    return value


def expand_text(value: str) -> str:
    """`value` with every reference replaced; raises :class:`Unresolved` for
    the first one that cannot be."""

    def replace(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        return lookup(match.group(1))

    return REFERENCE.sub(replace, value) if "$" in value else value


def expand_string(
    value: str, path: str, report: Report, whole: Callable[[str], Any] | None = None
) -> Any:
    """One string value. When it is exactly one reference and `whole` is
    given, the result is ``whole(text)`` (the caller's typing); otherwise text.
    Every unresolved reference is reported (and expands to nothing)."""
    if "$" not in value:
        return value
    single = REFERENCE.fullmatch(value)
    if whole is not None and single and single.group(0) != "$$":
        try:
            return whole(lookup(single.group(1)))
        except Unresolved as problem:
            report(path, str(problem))
            return value

    def replace(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        try:
            return lookup(match.group(1))
        except Unresolved as problem:
            report(path, str(problem))
            return ""

    return REFERENCE.sub(replace, value)


def expand_tree(
    value: Any,
    path: str,
    report: Report,
    join: Callable[[str, str], str],
    whole: Callable[[str], Any] | None = None,
) -> Any:
    """`value` with every string in it expanded (maps and lists walked; keys
    kept). `join(path, key)` spells a key path in the caller's notation; list
    items are ``path[i]``."""
    if isinstance(value, str):
        return expand_string(value, path, report, whole)
    if isinstance(value, Mapping):
        return {
            k: expand_tree(v, join(path, str(k)), report, join, whole) for k, v in value.items()
        }
    if isinstance(value, list):
        return [expand_tree(v, f"{path}[{i}]", report, join, whole) for i, v in enumerate(value)]
    return value
