"""Redact templates and replacement semantics (Go's Expand and ReplaceAll)."""

from __future__ import annotations

import pytest

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
