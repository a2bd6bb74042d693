"""RE2-dialect regular expressions: which patterns are valid, the error texts
RE2 and Go's ``regexp`` give for the others, and compiling them with RE2.

Policy patterns, OTTL's and the collector processors' are written in the RE2
dialect (Go/RE2 syntax), and RE2 is authoritative: a pattern RE2 rejects is
invalid. Where Go's ``regexp`` (upstream's engine) refuses more than RE2 does,
:func:`go_syntax_error` says so in Go's words. How the policy engine turns
valid patterns into Hyperscan databases is :mod:`sluice.policy.hyperscan_syntax`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import re2

from sluice.gostrconv import backquoted

__all__ = [
    "RE2_OPTIONS",
    "capture_names",
    "compile_re2",
    "go_regexp_error",
    "go_syntax_error",
    "re2_error",
]

RE2_OPTIONS = re2.Options()
"""Options for every RE2 compilation: RE2 defaults, but parse errors are not logged to stderr."""
RE2_OPTIONS.log_errors = False


def _error_text(exc: BaseException) -> str:
    """The message of an RE2 exception as text (google-re2 reports it as bytes)."""
    if exc.args:
        message = exc.args[0]
        if isinstance(message, bytes):
            return message.decode("utf-8", "replace")
        return str(message)
    return str(exc)


def re2_error(pattern: str) -> str | None:
    """Return ``None`` if RE2 accepts `pattern`, else RE2's error text.

    The text is a decoded ``str`` such as ``"invalid perl operator: (?="``.  A pattern that
    cannot be encoded as UTF-8 (a lone surrogate) is reported as an error too.
    """
    try:
        re2.compile(pattern, RE2_OPTIONS)
    except re2.error as exc:
        return _error_text(exc)
    except UnicodeEncodeError as exc:
        return f"pattern is not valid UTF-8: {exc.reason}"
    return None


_GO_ERROR_CODES = {
    "invalid escape sequence": "invalid escape sequence",
    "invalid character class": "invalid character class",
    "invalid character class range": "invalid character class range",
    "missing ]": "missing closing ]",
    "missing )": "missing closing )",
    "unexpected )": "unexpected )",
    "trailing \\": "trailing backslash at end of expression",
    "no argument for repetition operator": "missing argument to repetition operator",
    "invalid repetition size": "invalid repeat count",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid UTF-8": "invalid UTF-8",
    "invalid named capture group": "invalid named capture",
}
"""RE2's error code texts and Go's ``regexp/syntax`` ones for the same codes
(Go's parser is a port of RE2's: both name the same offending text)."""


def go_regexp_error(pattern: str) -> str | None:
    """``None`` if Go's ``regexp`` accepts `pattern` (see :func:`go_syntax_error`),
    else the error its ``regexp.Compile`` reports for it: ``error parsing regexp: <code>: <offending text>``, the
    text quoted as Go's ``%#q`` quotes it (RE2's own text for an error Go
    has no code for)."""
    problem = go_syntax_error(pattern)
    if problem is None:
        return None
    code, _, culprit = problem.partition(": ")
    if code not in _GO_ERROR_CODES:
        return f"error parsing regexp: {problem}: {backquoted(pattern)}"
    return f"error parsing regexp: {_GO_ERROR_CODES[code]}: {backquoted(culprit)}"


def compile_re2(pattern: str, case_insensitive: bool = False) -> re2._Regexp:
    """Compile `pattern` with :data:`RE2_OPTIONS`; `case_insensitive` prefixes ``(?i)``.

    Raises:
        ValueError: RE2 rejects the pattern; the message is RE2's error text.
    """
    source = "(?i)" + pattern if case_insensitive else pattern
    try:
        return re2.compile(source, RE2_OPTIONS)
    except re2.error as exc:
        # Report the error for the pattern as written, not for the "(?i)"-prefixed source.
        raise ValueError(re2_error(pattern) or _error_text(exc)) from exc
    except UnicodeEncodeError as exc:
        raise ValueError(f"pattern is not valid UTF-8: {exc.reason}") from exc


@dataclass(frozen=True)
class _Group:
    """A capturing group as written: its opening (``(``, ``(?P<n>``, ``(?<n>``)
    and name (``""`` for an unnamed one)."""

    opening: str
    name: str


def _scan_groups(pattern: str) -> tuple[list[_Group], bool]:
    """The capturing groups of `pattern` (one RE2 accepts) in order, and
    whether it uses ``\\C`` outside a class (RE2's any byte)."""
    groups: list[_Group] = []
    any_byte = False
    end = len(pattern)
    i = 0
    in_class = False
    while i < end:
        char = pattern[i]
        if char == "\\":
            if not in_class and pattern.startswith("Q", i + 1):
                quoted_end = pattern.find("\\E", i + 2)
                i = end if quoted_end < 0 else quoted_end + 2
                continue
            any_byte = any_byte or (not in_class and pattern.startswith("C", i + 1))
            i += 2
            continue
        if in_class:
            if pattern.startswith("[:", i):
                posix_end = pattern.find(":]", i + 2)
                if posix_end >= 0:
                    i = posix_end + 2
                    continue
            in_class = char != "]"
            i += 1
        elif char == "[":
            # A "]" first in the class (after any "^") is a literal.
            i += 2 if pattern.startswith("^", i + 1) else 1
            i += 1 if pattern.startswith("]", i) else 0
            in_class = True
        else:
            if char == "(":
                for prefix in ("(?P<", "(?<"):
                    if pattern.startswith(prefix, i):
                        close = pattern.index(">", i)
                        name = pattern[i + len(prefix) : close]
                        groups.append(_Group(pattern[i : close + 1], name))
                        break
                else:
                    if not pattern.startswith("(?", i):
                        groups.append(_Group("(", ""))
            i += 1
    return groups, any_byte


def capture_names(pattern: str) -> list[str]:
    """The name of each capturing group of `pattern` (one RE2 accepts), in
    order, ``""`` for an unnamed one, as Go's ``Regexp.SubexpNames()[1:]``.

    A name may be used by several groups, which RE2's ``groupindex`` cannot
    show (it keeps one group per name)."""
    return [group.name for group in _scan_groups(pattern)[0]]


_GO_NAME = re.compile(r"[0-9A-Za-z_]+")


def go_syntax_error(pattern: str) -> str | None:
    """``None`` if Go's ``regexp`` accepts `pattern`, else the error in RE2's
    words: RE2's own, or, for what RE2 takes and Go does not (a group name
    with other than ASCII letters, digits and ``_``; ``\\C``), the text RE2
    gives for the same code."""
    problem = re2_error(pattern)
    if problem is not None:
        return problem
    groups, any_byte = _scan_groups(pattern)
    for group in groups:
        if group.opening != "(" and not _GO_NAME.fullmatch(group.name):
            return f"invalid named capture group: {group.opening}"
    return "invalid escape sequence: \\C" if any_byte else None
