"""Redact templates and replacement semantics (Go's Expand and ReplaceAll)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sluice.policy.regex_dialect import compile_re2
from sluice.policy.transform import Redactor, parse_template


def redact(pattern: str, template: str, text: str) -> str | None:
    return Redactor.compile(pattern, template).replace(text)


def test_template_parts() -> None:
    assert parse_template("a$1 b${name}c$$d") == ("a", 1, " b", ("name",), "c$d")
    assert parse_template("$1x") == (("1x",),)
    assert parse_template("${1}x") == (1, "x")
    assert parse_template("cost: $") == ("cost: $",)
    assert parse_template("${unclosed") == ("${unclosed",)
    assert parse_template("$-") == ("$-",)


@pytest.mark.parametrize(
    "pattern, template, text, expected",
    [
        (r"(\w+)@(\w+)\.com", "$1 at $2", "mail bob@corp.com now", "mail bob at corp now"),
        (
            r"(?P<scheme>https?)://[^/\s]+",
            "${scheme}://[REDACTED]",
            "fetched https://api.example.com/v1",
            "fetched https://[REDACTED]/v1",
        ),
        (r"\d+", "<$0>", "a1b22", "a<1>b<22>"),
        (r"(?P<x>a)|(?P<y>b)", "[${y}]", "ab", "[][b]"),
        (r"secret", "$$", "a secret", "a $"),
        (r"(?i)token=\w+", "token=***", "TOKEN=abc x", "token=*** x"),
        (r"x*", "-", "abxd", "-a-b-d-"),
        (r"^.*$", "all", "whole line", "all"),
        (r"é+", "E", "café éé", "cafE E"),
    ],
)
def test_replace(pattern: str, template: str, text: str, expected: str) -> None:
    assert redact(pattern, template, text) == expected


def test_no_match_is_none() -> None:
    assert redact(r"\d{16}", "x", "no digits here") is None


def test_missing_group_number_expands_empty() -> None:
    assert redact(r"(a)", "[$1$2]", "a") == "[a]"


def reference_replace(pattern: str, template: str, text: str) -> str | None:
    """Go's ReplaceAll written out with one search per match, over str."""
    regex = compile_re2(pattern)
    out: list[str] = []
    last_end = pos = 0
    matched = False
    while pos <= len(text):
        match = regex.search(text, pos)
        if match is None:
            break
        start, end = match.span()
        matched = True
        out.append(text[last_end:start])
        if end > last_end or start == 0:
            for part in parse_template(template):
                if isinstance(part, str):
                    out.append(part)
                elif isinstance(part, int):
                    out.append((match.group(part) if part <= regex.groups else None) or "")
                else:
                    name = part[0]
                    out.append((match.group(name) if name in regex.groupindex else None) or "")
        last_end = end
        pos = end if end > pos else pos + 1
    return "".join([*out, text[last_end:]]) if matched else None


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(
        [
            r"x*",
            r"\b",
            r"(?P<w>\w+)@(\w+)",
            r"[a-z]+@[a-z]+\.com",
            r"(a)|(?P<y>b)",
            r"$",
            r"^",
            r"é*",
            r"(?i)X+",
            r"\s+",
            r"\B",
        ]
    ),
    st.sampled_from(["-", "<$0>", "[$1|${w}|${y}|$9]", "", "€$$"]),
    st.text(alphabet="abxX @.comé\u00a0\n", max_size=30),
)
def test_replace_matches_one_search_per_match(pattern: str, template: str, text: str) -> None:
    # ASCII text is matched as bytes, other text as str: both agree with the reference.
    assert redact(pattern, template, text) == reference_replace(pattern, template, text)


def test_a_template_with_a_lone_surrogate_still_compiles() -> None:
    # JSON policies can carry "\ud800"; only a str holds it, so ASCII text takes the str path.
    assert redact("x", "[\ud800]", "axb") == "a[\ud800]b"


def test_lone_surrogates_pass_through_a_redact() -> None:
    # RE2 reads UTF-8, which cannot hold them: they are matched as U+FFFD and kept.
    assert redact(r"\d+", "#", "a\ud800 12 \udfff3") == "a\ud800 # \udfff#"
    assert redact(r"(.)(\d)", "$2$1", "\ud8001 x2") == "1\ud800 2x"
    assert redact(r"\d", "#", "\ud800 no digits") is None
