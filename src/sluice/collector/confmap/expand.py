"""``${...}`` expansion in the collector's config values, after all sources
are merged (the rules are :mod:`sluice.confexpand`'s, shared with Edge).

A value that is exactly one ``${...}`` becomes an
:class:`~sluice.confexpand.Expanded`: the YAML value of what it expands to
(``${env:PORT}`` with PORT=4318 is the integer 4318) together with that
text, which a field holding text reads instead (the decoder chooses). Inside
a longer string the expansion is text. Problems are reported with the
collector's key paths (``exporters::otlp::endpoint``).
"""

from __future__ import annotations

from typing import Any

import yaml

from sluice import confexpand
from sluice.collector.confmap import goyaml
from sluice.collector.confmap.decode import Problems, join


def _typed(text: str) -> Any:
    """What a whole-value expansion holds as YAML: text that parses to a
    string, or does not parse, stays exactly as written (as upstream)."""
    try:
        value = goyaml.load(text)
    except yaml.YAMLError:
        return text
    return text if isinstance(value, str) else value


def expand_string(value: str, path: str, problems: Problems) -> Any:
    return confexpand.expand_string(value, path, problems.add, _typed)


def expand(value: Any, path: str, problems: Problems) -> Any:
    """`value` with every string expanded (maps and lists walked)."""
    return confexpand.expand_tree(value, path, problems.add, join, _typed)
