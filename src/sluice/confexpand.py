"""``${...}`` references in configuration values, one implementation for the
collector's YAML, Edge's JSON, policy provider entries and the command line,
following the OpenTelemetry Collector's confmap.

- ``${env:NAME}`` and ``${NAME}`` read the environment; ``${env:NAME:-default}``
  (or the shell's ``${NAME:-default}``; ``${env:-NAME}`` is an invalid
  name, not a variable called ``env``) falls back to `default` when NAME is
  unset (a variable set to the empty string is the empty string, as upstream).
- ``${file:PATH}`` is the file's content (a mounted secret, a YAML snippet),
  ``${https://...}`` (or ``http``) the body of a GET answered 200, and
  ``${yaml:TEXT}`` the text itself.
- References nest and are expanded innermost first (``${env:A:-${env:B}}``),
  and text a reference expands to is expanded again (at most 1,000 rounds).
- ``$$`` is a literal ``$`` (so ``$${env:X}`` is the text ``${env:X}``): an odd
  run of ``$`` before ``${`` escapes it, and once expanding is over every
  ``$$`` left becomes ``$``.
- Unlike the OpenTelemetry Collector, a variable that is unset and has no
  default is an error naming it, not an empty value: a missing token or
  endpoint should stop the program at start, not fail every request later.

Keys are never expanded. How a value that is exactly one reference is typed
is the caller's choice (the collector reads it as YAML and keeps the text as
well, :class:`Expanded`; Edge keeps text and converts where a field wants a
number).
"""

from __future__ import annotations

import http.client
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sluice.gostrconv import quoted

_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+$")
"""Upstream's scheme names: a letter, then at least one letter, digit, ``+``, ``.`` or ``-``."""
ROUNDS = 1000
"""How many times a value is expanded again before it counts as a loop."""

Report = Callable[[str, str], None]
"""Receives ``(key path, problem)`` for every reference that cannot be resolved."""


class Unresolved(ValueError):
    """A reference that names no usable value; the message says which and why."""


@dataclass(frozen=True)
class Expanded:
    """A value that was exactly one reference: `value` as the caller typed it
    and `text`, what the reference stood for. A field that wants text reads
    `text` (``${env:KEY}`` with KEY=0755 is ``0755`` in a header, not 493)."""

    value: Any
    text: str


def lookup(reference: str) -> str:
    """The value of what is inside ``${...}``; raises :class:`Unresolved`."""
    scheme, sep, rest = reference.partition(":")
    if not sep or (rest.startswith("-") and _NAME.match(scheme) and scheme != "env"):
        scheme, rest = "env", reference  # ${NAME} and the shell's ${NAME:-default}
    elif not _SCHEME.match(scheme):
        raise Unresolved(f'invalid uri: "{reference}"')
    if "$" in rest:
        raise Unresolved(f"the uri \"{scheme}:{rest}\" contains unsupported characters ('$')")
    if scheme == "file":
        return read_file(rest)
    if scheme in ("http", "https"):
        return fetch(f"{scheme}:{rest}")
    if scheme == "yaml":
        return rest
    if scheme != "env":
        raise Unresolved(f'scheme "{scheme}" is not supported for uri "{reference}"')
    name, has_default, default = rest.partition(":-")
    if not _NAME.match(name):
        raise Unresolved(
            f'environment variable "{name}" has invalid name: must match regex '
            r"^[a-zA-Z_][a-zA-Z0-9_]*$"
        )
    value = os.environ.get(name)
    if value is not None:
        return value
    if has_default:
        return default
    raise Unresolved(
        f"environment variable {name} is not set (give a default with ${{env:{name}:-default}})"
    )


def read_file(path: str) -> str:
    """``file:PATH`` (a ``--config`` source or ``${file:PATH}``): the whole
    file, exactly as it is written (a trailing newline included, as
    upstream); raises :class:`Unresolved` in upstream's file provider's
    words, Go's error included (``unable to read the file file:/x.yaml:
    open /x.yaml: no such file or directory``)."""
    clean = os.path.normpath(path)
    try:
        return Path(clean).read_text(encoding="utf-8")
    except OSError as problem:
        # Go opens a directory, then fails to read it.
        op = "read" if isinstance(problem, IsADirectoryError) else "open"
        reason = problem.strerror or str(problem)
        raise Unresolved(
            f"unable to read the file file:{path}: {op} {clean}: {reason[:1].lower()}{reason[1:]}"
        ) from None
    except UnicodeDecodeError:
        raise Unresolved(f"unable to read the file file:{path}: not UTF-8 text") from None


FETCH_TIMEOUT = 30.0
"""Seconds an ``http``/``https`` reference or config source may take."""


_HOST_SYMBOLS = frozenset("-_.~!$&'()*+,;=:[]<>\"")
"""The ASCII symbols Go's url parser takes in a host name (besides letters,
digits and ``%`` escapes)."""


def _parse_problem(uri: str) -> str | None:
    """What Go's ``url.ParseRequestURI`` refuses in `uri`, in its words (the
    http providers check every URI with it before a request); None when it
    parses. Covers what Python's client would otherwise refuse with its
    own error: a control character, a host character, a port."""
    if any(ord(c) < 0x20 or c == "\x7f" for c in uri):
        return "net/url: invalid control character in URL"
    rest = uri.partition(":")[2].partition("?")[0]
    if not rest.startswith("//"):
        return None
    host = rest[2:].partition("/")[0].rpartition("@")[2]
    if host.startswith("["):
        return None  # an IPv6 literal: left to the client
    colon = host.rfind(":")
    if colon >= 0:
        port = host[colon + 1 :]
        if not port.isascii() or not (port.isdigit() or not port):
            return f"invalid port {quoted(host[colon:])} after host"
    for c in host:
        if c.isascii() and not c.isalnum() and c != "%" and c not in _HOST_SYMBOLS:
            return f"invalid character {quoted(c)} in host name"
    return None


_URL_SAFE = "".join(chr(c) for c in range(0x21, 0x7F))
"""Every printable ASCII character but the space, kept as written in a path or query."""


def _escaped(uri: str) -> str:
    """`uri` with a space or a non-ASCII character in its path or query
    percent-encoded, as Go's client sends them (Python's refuses them)."""
    scheme, _, rest = uri.partition(":")
    authority = ""
    if rest.startswith("//"):
        cut = len(rest)
        for mark in "/?":
            at = rest.find(mark, 2)
            if at >= 0:
                cut = min(cut, at)
        authority, rest = rest[:cut], rest[cut:]
    return f"{scheme}:{authority}{urllib.parse.quote(rest, safe=_URL_SAFE)}"


def fetch(uri: str) -> str:
    """``${https://...}`` (or ``--config https://...``): the body of a GET
    answered 200, as text; raises :class:`Unresolved` with upstream's words."""
    problem = _parse_problem(uri)
    if problem is not None:
        raise Unresolved(f"invalid uri {quoted(uri)}: parse {quoted(uri)}: {problem}")
    try:
        with urllib.request.urlopen(_escaped(uri), timeout=FETCH_TIMEOUT) as answer:
            body: bytes = answer.read()
    except urllib.error.HTTPError as refused:
        raise Unresolved(
            f'failed to load resource from uri "{uri}". status code: {refused.code}'
        ) from None
    except (OSError, ValueError, OverflowError, http.client.HTTPException) as problem:
        reason = getattr(problem, "reason", None) or problem
        if isinstance(problem, OverflowError):
            # digits past a C long as the port: Go's parser takes them, its dial refuses them
            reason = "invalid port"
        raise Unresolved(
            f'unable to download the file via HTTP GET for uri "{uri}": {reason}'
        ) from None
    try:
        return body.decode()
    except UnicodeDecodeError:
        raise Unresolved(f'the resource from uri "{uri}" is not UTF-8 text') from None


def find(text: str) -> tuple[int, int] | None:
    """Where the next reference to expand lies in `text`: the last ``${``
    before the first ``}`` (so the innermost of nested ones). Text with no
    ``${`` before a ``}`` is skipped; None when there is none, or when that
    ``${`` follows an odd run of ``$`` (escaped: expanding stops there)."""
    at = 0
    while True:
        close = text.find("}", at)
        if close < 0:
            return None
        start = text.rfind("${", at, close)
        if start >= 0:
            run = start
            while run > at and text[run - 1] == "$":
                run -= 1
            return None if (start - run) % 2 else (start, close + 1)
        at = close + 1


Typing = Callable[[str], Any]
"""Types the text a whole-value reference stood for (the collector: as YAML)."""


def _round(value: Any, typing: Typing | None) -> tuple[Any, bool]:
    """One expansion of every string in `value`, and whether any changed."""
    if isinstance(value, str):
        if "${" not in value or "}" not in value:
            return value, False
        found = find(value)
        if found is None:
            return value, False
        reference = value[found[0] : found[1]]
        text = lookup(reference[2:-1])
        if reference != value:
            return value.replace(reference, text), True
        return (Expanded(typing(text), text) if typing else text), True
    if isinstance(value, Expanded):
        inner, changed = _round(value.value, typing)
        if isinstance(inner, (str, Expanded)):
            return inner, changed
        try:
            text, text_changed = _round(value.text, typing)
        except Unresolved:
            return inner, changed
        if isinstance(text, str):
            return Expanded(inner, text), changed or text_changed
        return inner, changed
    if isinstance(value, Mapping):
        pairs = [(k, _round(v, typing)) for k, v in value.items()]
        return {k: v for k, (v, _) in pairs}, any(c for _, (_, c) in pairs)
    if isinstance(value, list):
        items = [_round(v, typing) for v in value]
        return [v for v, _ in items], any(c for _, c in items)
    return value, False


def _unescape(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("$$", "$")
    if isinstance(value, Expanded):
        return Expanded(_unescape(value.value), value.text.replace("$$", "$"))
    if isinstance(value, Mapping):
        return {k: _unescape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unescape(v) for v in value]
    return value


def expand_value(value: Any, typing: Typing | None = None) -> Any:
    """`value` (a string, or a map or list of them) fully expanded; raises
    :class:`Unresolved` for the first reference that cannot be, or a loop."""
    for _ in range(ROUNDS):
        value, changed = _round(value, typing)
        if not changed:
            return _unescape(value)
    raise Unresolved("too many recursive expansions")


def expand_text(value: str) -> str:
    """`value` with every reference replaced (text only); raises :class:`Unresolved`."""
    expanded = expand_value(value)
    return expanded if isinstance(expanded, str) else str(expanded)


def expand_string(value: str, path: str, report: Report, typing: Typing | None = None) -> Any:
    """One string value: with `typing`, one that was exactly one reference is
    an :class:`Expanded`; otherwise text. A reference that cannot be resolved
    is reported and the value is kept as written."""
    if "$" not in value:
        return value
    try:
        return expand_value(value, typing)
    except Unresolved as problem:
        report(path, str(problem))
        return value


def expand_tree(
    value: Any,
    path: str,
    report: Report,
    join: Callable[[str, str], str],
    typing: Typing | None = None,
) -> Any:
    """`value` with every string in it expanded (maps and lists walked; keys
    kept). `join(path, key)` spells a key path in the caller's notation; list
    items are ``path[i]``."""
    if isinstance(value, str):
        return expand_string(value, path, report, typing)
    if isinstance(value, Mapping):
        return {
            k: expand_tree(v, join(path, str(k)), report, join, typing) for k, v in value.items()
        }
    if isinstance(value, list):
        return [expand_tree(v, f"{path}[{i}]", report, join, typing) for i, v in enumerate(value)]
    return value
