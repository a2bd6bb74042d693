"""``${...}`` expansion in config values, after all sources are merged.

- ``${env:NAME}`` and ``${NAME}`` read the environment; ``${env:NAME:-default}``
  falls back to `default` when NAME is unset or empty.
- A value that is exactly one ``${...}`` takes the YAML type of what it expands
  to (``${env:PORT}`` with PORT=4318 is the integer 4318); inside a longer
  string the expansion is text.
- ``$$`` is a literal ``$`` (so ``$${env:X}`` is the text ``${env:X}``).
- Unlike upstream, a variable that is unset and has no default is an error
  naming the key, not an empty value: a missing token or endpoint should stop
  the collector at start, not fail every export later.
Keys are never expanded.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

import yaml

from sluice.collector.confmap.decode import Problems, join

_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
_REF = re.compile(r"\$\$|\$\{([^{}$]*)\}")


class _Unresolved(Exception):
    pass


def _lookup(reference: str) -> str:
    scheme, sep, rest = reference.partition(":")
    if not sep:
        scheme, rest = "env", reference
    if scheme != "env":
        raise _Unresolved(f'scheme "{scheme}" is not supported for uri "{reference}"')
    name, has_default, default = rest.partition(":-")
    if not _NAME.match(name):
        raise _Unresolved(
            f'environment variable "{name}" has invalid name: must match regex '
            r"^[a-zA-Z_][a-zA-Z0-9_]*$"
        )
    value = os.environ.get(name)
    if value:
        return value
    if has_default:
        return default
    if value is None:
        raise _Unresolved(
            f"environment variable {name} is not set (give a default with ${{env:{name}:-default}})"
        )
    return value


def _typed(text: str) -> Any:
    """An expanded whole value, typed as YAML (text that is not YAML stays text)."""
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    return text if value is None and text.strip() else value


def expand_string(value: str, path: str, problems: Problems) -> Any:
    whole = _REF.fullmatch(value)
    if whole and whole.group(0) != "$$":
        try:
            return _typed(_lookup(whole.group(1)))
        except _Unresolved as problem:
            problems.add(path, str(problem))
            return value

    def replace(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        try:
            return _lookup(match.group(1))
        except _Unresolved as problem:
            problems.add(path, str(problem))
            return ""

    return _REF.sub(replace, value)


def expand(value: Any, path: str, problems: Problems) -> Any:
    """`value` with every string expanded (maps and lists walked)."""
    if isinstance(value, str):
        return expand_string(value, path, problems) if "$" in value else value
    if isinstance(value, Mapping):
        return {k: expand(v, join(path, str(k)), problems) for k, v in value.items()}
    if isinstance(value, list):
        return [expand(v, f"{path}[{i}]", problems) for i, v in enumerate(value)]
    return value
