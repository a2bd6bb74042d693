"""Where config comes from: ``--config`` values merged in order, then ``--set``.

A ``--config`` value is a file path (or ``file:PATH``), ``env:NAME`` (YAML held
in a variable), an ``http://`` or ``https://`` URL (fetched once at start) or
``yaml:TEXT`` (a YAML snippet whose keys may nest with ``::``, as
``yaml:processors::batch::timeout: 2s``). Later sources merge over
earlier ones: maps merge key by key, anything else (lists included) is
replaced. ``--set key.path=value`` is the snippet ``yaml:key::path: value``
applied after every ``--config``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from sluice import confexpand
from sluice.collector.confmap import goyaml
from sluice.collector.confmap.decode import go_type

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):(.*)$", re.S)
_DRIVE_LETTER = re.compile(r"^[A-z]:")
"""Upstream's test for a Windows path (``C:...``), which is a file whatever
follows; its ``[A-z]`` takes ``[\\]^_`` and the backquote too."""


class SourceError(ValueError):
    """A source that cannot be read or is not YAML; the message names it."""


def _yaml(text: str, where: str) -> Any:
    try:
        return goyaml.load(text)
    except yaml.YAMLError as bad:
        mark = getattr(bad, "problem_mark", None)
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(bad, "problem", None) or str(bad)
        raise SourceError(f"{where}: not valid YAML{at}: {problem}") from None


def nest(value: Any) -> Any:
    """Split ``a::b`` keys into nested maps (confmap's key delimiter)."""
    if not isinstance(value, Mapping):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        parts = str(key).split("::")
        nested = nest(item)
        for part in reversed(parts[1:]):
            nested = {part: nested}
        out = merge(out, {parts[0]: nested})
    return out


def merge(base: Any, over: Any) -> Any:
    if isinstance(base, Mapping) and isinstance(over, Mapping):
        merged = dict(base)
        for key, value in over.items():
            merged[key] = merge(base[key], value) if key in base else value
        return merged
    return over


_SCHEMES = ("file", "env", "yaml", "http", "https")


def locate(uri: str) -> tuple[str, str]:
    """The scheme and the rest of one ``--config`` value (a path is a
    ``file``); raises SourceError for a URI no provider takes."""
    match = _SCHEME.match(uri)
    if match is None and ":" in uri and not _DRIVE_LETTER.match(uri):
        raise SourceError(f'invalid uri: "{uri}"')
    scheme, rest = (match.group(1), match.group(2)) if match else ("file", uri)
    if scheme not in _SCHEMES:
        raise SourceError(
            f'unsupported scheme on URI "{uri}" (use a path, env:NAME, yaml:..., http(s)://...)'
        )
    return scheme, rest


def read(uri: str) -> Any:
    """The map one ``--config`` value holds (raises SourceError)."""
    scheme, rest = locate(uri)
    if scheme == "file":
        try:
            text = confexpand.read_file(rest)
        except confexpand.Unresolved as problem:
            raise SourceError(str(problem)) from None
        where = str(Path(rest))
    elif scheme == "env":
        # As ${env:...}: the default only when the variable is unset.
        name = rest.partition(":-")[0]
        where = f"--config env:{name}"
        try:
            text = confexpand.lookup(uri)
        except confexpand.Unresolved as problem:
            raise SourceError(f"{where}: {problem}") from None
    elif scheme == "yaml":
        text, where = rest, f"--config {uri}"
    else:
        where = f"--config {uri}"
        try:
            text = confexpand.fetch(uri)
        except confexpand.Unresolved as problem:
            raise SourceError(f"{where}: {problem}") from None
    value = _yaml(text, where)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise SourceError(
            f"{where}: retrieved value (type={go_type(value)}) cannot be used as a Conf"
        )
    return nest(value)


def set_snippet(assignment: str) -> str:
    """``key.path=value`` as the ``yaml:`` snippet upstream makes of it."""
    key, sep, value = assignment.partition("=")
    if not sep:
        raise SourceError(f'invalid argument "{assignment}" for "--set" flag: missing equal sign')
    return f"yaml:{key.strip().replace('.', '::')}: {value.strip()}"


def _leaves(value: Any, path: str, origin: str, origins: dict[str, str]) -> None:
    origins[path] = origin
    if isinstance(value, Mapping):
        for key, item in value.items():
            _leaves(item, f"{path}::{key}" if path else str(key), origin, origins)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _leaves(item, f"{path}[{i}]", origin, origins)


def _origin_name(uri: str) -> str:
    """How a problem names the source that set a key: a file by its whole
    path (cutting it would cut the file's name); inline YAML and other URIs
    cut to 80 characters."""
    scheme, rest = locate(uri)
    if scheme == "file":
        return rest
    return uri if len(uri) < 80 else uri[:77] + "..."


class Loaded:
    """The merged config and, for each key path, the source that set it last."""

    def __init__(self, configs: list[str], sets: list[str]):
        self.raw: dict[str, Any] = {}
        self.origins: dict[str, str] = {}
        uris = [*configs, *(set_snippet(s) for s in sets)]
        for uri in uris:  # as upstream's resolver: every URI is checked before any is read
            locate(uri)
        for uri in uris:
            value = read(uri)
            self.raw = merge(self.raw, value)
            _leaves(value, "", _origin_name(uri), self.origins)

    def origin(self, path: str) -> str | None:
        """The source of the longest known prefix of `path`."""
        while path:
            found = self.origins.get(path)
            if found is not None:
                return found
            cut = max(path.rfind("::"), path.rfind("["))
            path = path[:cut] if cut > 0 else ""
        return None
