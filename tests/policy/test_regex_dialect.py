"""Tests for the RE2 -> Hyperscan dialect translation, against the real libraries.

The central property: whenever ``to_hyperscan`` returns a pattern, a single-pattern Hyperscan
block database (``UTF8 | SINGLEMATCH | ALLOWEMPTY``, plus ``CASELESS`` for the caseless
variant) finds a match in a subject exactly when RE2's unanchored search does.
"""

from __future__ import annotations

import hyperscan
import pytest
import re2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sluice.policy.hyperscan_syntax import (
    literal_to_hyperscan,
    needs_re2_for_caseless,
    to_hyperscan,
)
from sluice.policy.regex_dialect import (
    RE2_OPTIONS,
    capture_names,
    compile_re2,
    go_syntax_error,
    re2_error,
)

BASE_FLAGS = hyperscan.HS_FLAG_UTF8 | hyperscan.HS_FLAG_SINGLEMATCH | hyperscan.HS_FLAG_ALLOWEMPTY


def hs_compile(expression: bytes, caseless: bool = False) -> hyperscan.Database:
    """A single-pattern block-mode database, flagged like the engine's."""
    flags = BASE_FLAGS | (hyperscan.HS_FLAG_CASELESS if caseless else 0)
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    database.compile(expressions=[expression], ids=[0], elements=1, flags=[flags])
    return database


def hs_search(database: hyperscan.Database, subject: str) -> bool:
    """Whether the database reports a match anywhere in `subject`."""
    hits: list[int] = []

    def on_match(pattern_id: int, start: int, end: int, flags: int, context: object) -> None:
        hits.append(end)

    database.scan(subject.encode("utf-8"), match_event_handler=on_match)
    return bool(hits)


def re2_search(pattern: str, subject: str, caseless: bool = False) -> bool:
    """RE2's unanchored search result, the reference answer."""
    return compile_re2(pattern, case_insensitive=caseless).search(subject) is not None


def assert_agrees(pattern: str, subjects: list[str]) -> None:
    """Translate, compile and compare with RE2, case-sensitively and (if allowed) caselessly."""
    variants = [False] if needs_re2_for_caseless(pattern) else [False, True]
    for caseless in variants:
        translated = to_hyperscan(pattern, caseless)
        if translated is None and caseless:
            continue  # left to RE2: a negated class holding s or k, folded
        assert translated is not None, pattern
        database = hs_compile(translated, caseless)
        for subject in subjects:
            expected = re2_search(pattern, subject, caseless)
            got = hs_search(database, subject)
            assert got == expected, (pattern, translated, subject, caseless)


COMMON_SUBJECTS = [
    "",
    "a",
    "A",
    "ab",
    "foo",
    "foo\n",
    "\nfoo",
    "x\ny",
    "a\n",
    "\n",
    "\v",
    "a\vb",
    "a b",
    "\t",
    "é",
    "É",
    "\u017f",  # LATIN SMALL LETTER LONG S, folds to s
    "\u212a",  # KELVIN SIGN, folds to k
    "k",
    "K",
    "s",
    "_",
    "1",
    "-",
    ".",
    "a.b",
]

TABLE: list[tuple[str, list[str]]] = [
    # $ without (?m) is end of text only; Hyperscan's $ also matches before a final \n.
    ("foo$", ["foo\n", "foo", "foo\n\n", "xfoo"]),
    ("^foo$", ["foo\n", "foo"]),
    ("foo\\z", ["foo\n", "foo"]),
    ("\\Afoo", ["foo", "xfoo"]),
    ("a$|b", ["a\n", "b\n"]),
    # Multi-line mode and flag scopes.
    ("(?m)^foo$", ["x\nfoo\ny", "foo\n", "xfoo", "foo\nx"]),
    ("(?m)^$", ["a\n", "a", "\n", "a\n\nb"]),
    ("(?m)^", ["a\n"]),
    ("(?m)$", ["a\n"]),
    ("(?m)^\\z", ["a\n", "a"]),
    ("(?m)^b|c", ["a\nb", "ab", "c"]),
    ("(?m:^a)|b$", ["x\na", "b\n", "b"]),
    ("a(?m)$|b$", ["a\n", "b\n", "b\nc"]),
    ("(?:(?m)x$)|y$", ["x\n", "y\n", "y"]),
    ("(?m)a$(?-m)|b$", ["a\n", "b\n"]),
    ("(?m)(?-m)a$", ["a\n", "a"]),
    ("(?m)^(?:a|b)$", ["x\nb\ny", "ab"]),
    # Mid-pattern flags apply to the end of the enclosing group, across alternatives.
    ("x(?i)Y", ["xy", "xY", "Xy"]),
    ("(x(?i)Y)z", ["xyz", "xyZ", "xYz"]),
    ("a(?i)b|c", ["C", "aB", "Ab"]),
    ("(?i)a(?-i)b", ["AB", "Ab", "aB"]),
    ("(?i:a)b", ["Ab", "AB"]),
    ("(?-i)abc", ["ABC", "abc"]),
    ("(?i)k", []),
    ("(?i)s", []),
    ("(?is)a.b", ["A\nB", "a\nb"]),
    ("(?s:.)x|.y", ["\nx", "\ny"]),
    # \s has no \v in RE2; \v is a single character.
    ("\\s", ["\v", "\f", "\r"]),
    ("\\S", ["\v", " "]),
    ("[\\s]", ["\v"]),
    ("[^\\s]", ["\v", " "]),
    ("[\\S]", ["\v", " "]),
    ("[\\s\\S]", []),
    ("[^\\S\\n]", ["\n", " ", "\v"]),
    ("a\\sb", ["a\vb", "a b"]),
    ("\\v", ["\n", "\v", "\r"]),
    ("[\\v]", ["\n", "\v"]),
    # Perl and POSIX classes, alone and mixed, with case folding of U+017F and U+212A.
    ("\\w", []),
    ("\\W", []),
    ("\\d+", ["123", "x"]),
    ("[^\\W]", []),
    ("[^\\W\\d]", []),
    ("[a\\W]", []),
    ("[^\\WaA]", []),
    ("(?i)[^\\W\\d]", []),
    ("(?-i)[^\\Wa]", []),
    ("[[:alpha:]]+", ["é"]),
    ("[[:^alpha:]]", ["é"]),
    ("[[:word:]]", []),
    ("[[:space:]]", ["\v"]),
    ("[^[:space:]]", ["\v"]),
    ("[[:punct:]]", ["!", "~"]),
    ("[[:upper:]]", []),
    ("[[:^upper:]]", []),
    ("[^[:^upper:]]", []),
    ("[k[:^alpha:]]", []),
    ("[[:alpha:]-z]", []),
    # \Q...\E literal spans.
    ("\\Qa.b\\E", ["axb", "a.b"]),
    ("\\Qa.b", ["axb"]),
    ("\\Qa\\E*", ["aa", ""]),
    ("x\\Q\\E*", ["xxx"]),
    ("\\Q[(*|)\\E", ["[(*|)", "("]),
    ("\\Qa\\\\E", ["a\\", "a\\E"]),
    # Named groups (duplicate and non-ASCII names are fine in RE2, not in Hyperscan).
    ("(?P<name>a+)b", ["aab", "b"]),
    ("(?<n>a)(?P<n>b)", ["ab"]),
    ("(?P<ñ>a)", []),
    # UTF-8 and the dot.
    ("^.$", ["é", "\n", "ab", "\u212a", "😀"]),
    ("^..$", ["é", "ab"]),
    ("(?s)^.$", ["\n"]),
    ("é+", ["é", "e"]),
    ("\\x{e9}", ["é", "É"]),
    ("\\351", ["é"]),
    ("[à-ÿ]", ["é", "a"]),
    ("[\\x{D7FF}-\\x{E000}]", ["\ud7ff", "\ue000", "\ue001"]),
    ("\\x41\\101\\0", ["AA\x00"]),
    # Empty-matching patterns and empty-width items.
    ("", []),
    ("x*", []),
    ("(?:)", []),
    ("()|a", []),
    ("a?", []),
    ("\\b", ["", " ", "é"]),
    ("\\B|", ["", "é"]),
    ("^", []),
    ("$", []),
    ("^*a", ["a", "ba"]),
    ("\\b+a", ["a", "ba"]),
    ("(?:^){2}a", ["ba"]),
    ("a{0}b", ["b"]),
    ("\\bfoo\\b", ["é foo", "éfoo", "foox"]),
    # Repetitions, and braces that are literals in RE2.
    ("a{2,3}", ["a", "aa"]),
    ("a{2}?", ["aa", "a"]),
    ("(?:ab){2}", ["abab", "ab"]),
    ("a+?b*?", ["a", "ab"]),
    ("a{,2}", ["a{,2}", "aa"]),
    ("a{02}", ["a{02}", "aa"]),
    ("a{2", ["a{2", "aa"]),
    ("a{1234567890}", ["a{1234567890}"]),
    ("x{", ["x{"]),
    ("}", ["}"]),
    # Bracket-class corner cases and escaped punctuation.
    ("[]a]", ["]"]),
    ("[^]a]", ["]", "b"]),
    ("[a-]", []),
    ("[a\\-z]", ["b", "z"]),
    ("[\\d-z]", ["y", "z"]),
    ("[[a]", ["[", "a"]),
    ("\\.\\*\\+\\?\\(\\)\\[\\]\\{\\}\\|\\^\\$\\\\", [".*+?()[]{}|^$\\"]),
    ("[.*+?^$|]", ["|", "x"]),
]


@pytest.mark.parametrize(("pattern", "extra_subjects"), TABLE, ids=[p for p, _ in TABLE])
def test_translation_agrees_with_re2(pattern: str, extra_subjects: list[str]) -> None:
    assert re2_error(pattern) is None
    assert_agrees(pattern, extra_subjects + COMMON_SUBJECTS)


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("foo$", b"foo\\z"),
        ("(?m)^foo$", b"(?:\\A|\\x0a)foo(?m:$)"),
        ("(?P<n>a)", b"a"),
        ("\\s", b"[\\x09-\\x0a\\x0c-\\x0d\\x20]"),
        ("\\v", b"\\x0b"),
        ("\\Qa.b\\E", b"a\\x2eb"),
        ("x(?i)Y", b"x(?i:Y)"),
        ("a*?", b"a*"),
    ],
)
def test_translation_text(pattern: str, expected: bytes) -> None:
    assert to_hyperscan(pattern) == expected


@pytest.mark.parametrize(
    "pattern",
    [
        "\\pN",
        "\\p{Greek}",
        "\\PN",
        "\\P{L}",
        "[\\pL]",
        "\\C",
        "(?U)a+",
        "(?-U)a",
        "(?i)é",
        "(?i)\\x{e9}",
        "(?i:[^é])",
        "\\x{D800}",
        "a(?m)^b",
        "(?m)a|b^c",
        "(?m)(?:^a)+",
        "[^\\Wa]",
        "[^\\W\\S]",
        "(?=a)",
        "(a)\\1",
        # An empty match through \B: RE2 also finds it inside a multi-byte character.
        "\\B",
        "a|\\B",
        "x*\\B",
        "\\B+",
    ],
)
def test_untranslatable_returns_none(pattern: str) -> None:
    assert to_hyperscan(pattern) is None


def test_none_for_patterns_re2_rejects() -> None:
    assert to_hyperscan("a++") is None
    assert to_hyperscan("(") is None


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("(?=a)", "invalid perl operator: (?="),
        ("(?!a)", "invalid perl operator: (?!"),
        ("(?<=a)", "invalid perl operator: (?<="),
        ("(a)\\1", "invalid escape sequence: \\1"),
        ("a++", "bad repetition operator: ++"),
        ("\\Z", "invalid escape sequence: \\Z"),
        ("a{1001}", "invalid repetition size: {1001}"),
        ("[z-a]", "invalid character class range: z-a"),
        ("(", "missing ): ("),
    ],
)
def test_re2_error_rejects(pattern: str, message: str) -> None:
    assert re2_error(pattern) == message


@pytest.mark.parametrize(
    "pattern",
    ["\\z", "(?<n>a)", "(?P<n>a)", "\\pN", "[[:alpha:]]", "a{1000}", "x{,2}", "é", ""],
)
def test_re2_error_accepts(pattern: str) -> None:
    assert re2_error(pattern) is None


@pytest.mark.parametrize(
    ("pattern", "names"),
    [
        ("abc", []),
        ("(a)(?P<x>b)(?<y>c)", ["", "x", "y"]),
        ("(?P<a>x)(?P<a>y)", ["a", "a"]),
        ("(?:a)(?i)(?i:b)(c)", [""]),
        ("\\(a\\)(b)", [""]),
        ("[(][^)(]()[]()]", [""]),
        ("[[:alpha:](](x)", [""]),
        ("\\Q(x)\\E(y)", [""]),
        ("\\Q(x)", []),
        ("((?P<n>a)|(b))", ["", "n", ""]),
    ],
)
def test_capture_names_are_gos_subexp_names(pattern: str, names: list[str]) -> None:
    """Go's ``SubexpNames()[1:]``: a name may be used twice (RE2's
    ``groupindex`` keeps only one of them)."""
    assert capture_names(pattern) == names
    assert len(names) == compile_re2(pattern).groups


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        ("(", "missing ): ("),
        ("(?P<名>x)", "invalid named capture group: (?P<名>"),
        ("x(?<ä_1>y)", "invalid named capture group: (?<ä_1>"),
        ("a\\C", "invalid escape sequence: \\C"),
        ("\\Q\\C(?P<é>\\E", None),
        ("[\\\\C]", None),
        ("(?P<Aa_09>x)(?<b>y)", None),
    ],
)
def test_go_syntax_error_adds_what_only_go_refuses(pattern: str, problem: str | None) -> None:
    assert go_syntax_error(pattern) == problem


def test_re2_options_do_not_log() -> None:
    assert RE2_OPTIONS.log_errors is False


def test_compile_re2() -> None:
    assert compile_re2("ab").search("xaby") is not None
    assert compile_re2("AB").search("ab") is None
    assert compile_re2("AB", case_insensitive=True).search("ab") is not None
    assert compile_re2("(?-i)A", case_insensitive=True).search("a") is None
    with pytest.raises(ValueError, match=r"invalid perl operator: \(\?="):
        compile_re2("(?=a)")
    with pytest.raises(ValueError, match=r"^missing \): \($"):
        compile_re2("(", case_insensitive=True)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("abc", False),
        ("a.b*c(d)", False),
        ("\\x41\\101", False),
        ("é", True),
        ("\u212a", True),
        ("\\x{e9}", True),
        ("\\xe9", True),
        ("\\351", True),
        ("\\x{7f}", False),
    ],
)
def test_needs_re2_for_caseless(text: str, expected: bool) -> None:
    assert needs_re2_for_caseless(text) is expected


LITERALS = [
    "",
    "plain",
    "a.b*c+d?e(f)g[h]i{j}k|l^m$n\\o/p q#r-s",
    "line\nbreak\ttab\vvt",
    "\\Q\\E\\x41",
    "é😀",
]


def _re2_literal(text: str, anchor_start: bool, anchor_end: bool) -> str:
    """The same literal as an RE2 pattern, the reference for literal matching."""
    return ("\\A" if anchor_start else "") + str(re2.escape(text)) + ("\\z" if anchor_end else "")


@pytest.mark.parametrize("text", LITERALS)
@pytest.mark.parametrize(
    ("anchor_start", "anchor_end"), [(False, False), (True, False), (False, True), (True, True)]
)
def test_literal_to_hyperscan(text: str, anchor_start: bool, anchor_end: bool) -> None:
    expression = literal_to_hyperscan(text, anchor_start, anchor_end)
    reference = _re2_literal(text, anchor_start, anchor_end)
    subjects = [text, f"x{text}", f"{text}x", f"x{text}x", text.upper(), text[:-1], "", "\n"]
    for caseless in [False] if needs_re2_for_caseless(text) else [False, True]:
        database = hs_compile(expression, caseless)
        for subject in subjects:
            expected = re2_search(reference, subject, caseless)
            assert hs_search(database, subject) == expected, (text, subject, caseless)


def test_literal_to_hyperscan_escapes() -> None:
    assert literal_to_hyperscan("a.b", False, False) == b"a\\x2eb"
    assert literal_to_hyperscan("é", True, True) == b"\\A\xc3\xa9\\z"
    assert literal_to_hyperscan("", True, False) == b"\\A"


# Raw Hyperscan differs from RE2 on these; they are why the translation exists.
@pytest.mark.parametrize(
    ("pattern", "subject", "caseless"),
    [
        ("foo$", "foo\n", False),
        ("\\s", "\v", False),
        ("(?m)^$", "a\n", False),
        ("\\w", "\u017f", True),
        ("[[:alpha:]]", "\u212a", True),
    ],
)
def test_raw_hyperscan_differs(pattern: str, subject: str, caseless: bool) -> None:
    raw = hs_search(hs_compile(pattern.encode(), caseless), subject)
    assert raw != re2_search(pattern, subject, caseless)
    translated = to_hyperscan(pattern, caseless)
    assert translated is not None
    assert hs_search(hs_compile(translated, caseless), subject) == re2_search(
        pattern, subject, caseless
    )


@pytest.mark.parametrize(
    "pattern",
    ["(([[:^alpha:]]+)|aaa)+a", "((\\W+)|aaa)+a", "(([^s]+)|aaa)+a", "(?i:([^s]+|aaa)+a)"],
)
def test_negated_classes_with_s_or_k_are_left_to_re2_when_folding(pattern: str) -> None:
    """Caselessly RE2 takes U+017F (long s) out of a negated class holding ``s`` (and the
    Kelvin sign with ``k``); Hyperscan lets it through these repeated alternations, even with
    U+017F named in the class. Case-sensitively they translate and agree."""
    database = hs_compile(pattern.encode(), caseless=True)
    assert hs_search(database, "\u017fa") != re2_search(pattern, "\u017fa", caseless=True)
    assert to_hyperscan(pattern, caseless=True) is None
    if pattern.startswith("(?i"):
        return
    translated = to_hyperscan(pattern)
    assert translated is not None
    for subject in ["\u017fA", "\u017fa", "\u212aa", "-a", "sa", "xa"]:
        assert hs_search(hs_compile(translated, False), subject) == re2_search(pattern, subject)


# ---------------------------------------------------------------------------------------------
# Differential property test over a grammar of safe RE2 pieces.

_LITERAL_ATOMS = st.sampled_from(
    ["a", "b", "A", "k", "s", "é", " ", "1", "_", "-", "\\.", "\\n", "\\v", "\\x41", "\\101"]
)
_CLASS_ATOMS = st.sampled_from(
    [
        "[ab]",
        "[^a]",
        "[a-c]",
        "[A-Z]",
        "[\\d]",
        "[^\\s]",
        "[\\s\\S]",
        "[^\\S\\n]",
        "[[:alpha:]]",
        "[[:^alpha:]]",
        "[[:space:]]",
        "[\\W]",
        "[^\\W\\d]",
        "[a\\W]",
        "[é]",
        "[^\\n]",
        "[k-s]",
    ]
)
_SHORTHAND_ATOMS = st.sampled_from([".", "\\d", "\\w", "\\s", "\\D", "\\W", "\\S"])
_ANCHOR_ATOMS = st.sampled_from(["^", "$", "\\A", "\\z", "\\b", "\\B"])
_FLAGS = st.sampled_from(["(?i)", "(?-i)", "(?m)", "(?-m)", "(?s)", "(?is)", "(?m-i)"])
_QUANTIFIERS = st.sampled_from(["", "", "", "?", "*", "+", "{2}", "{1,2}", "{0,1}", "{2,}", "*?"])
_GROUP_OPENERS = st.sampled_from(["(", "(?:", "(?P<g>", "(?i:", "(?-i:", "(?m:", "(?s:"])


def _alternation(atom: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    piece = st.one_of(st.builds(lambda a, q: a + q, atom, _QUANTIFIERS), _FLAGS)
    sequence = st.lists(piece, max_size=4).map("".join)
    return st.lists(sequence, min_size=1, max_size=3).map("|".join)


_ATOMS = st.recursive(
    st.one_of(_LITERAL_ATOMS, _CLASS_ATOMS, _SHORTHAND_ATOMS, _ANCHOR_ATOMS),
    lambda inner: st.builds(
        lambda opener, body: f"{opener}{body})", _GROUP_OPENERS, _alternation(inner)
    ),
    max_leaves=6,
)
PATTERNS = _alternation(_ATOMS)
SUBJECTS = st.lists(
    st.text(alphabet="abAkKs \n\v\t1_-.é\u017f\u212a", max_size=8), min_size=1, max_size=6
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pattern=PATTERNS, subjects=SUBJECTS)
def test_differential_against_re2(pattern: str, subjects: list[str]) -> None:
    assert re2_error(pattern) is None, pattern
    variants = [False] if needs_re2_for_caseless(pattern) else [False, True]
    for caseless in variants:
        translated = to_hyperscan(pattern, caseless)
        if translated is None:
            return
        try:
            database = hs_compile(translated, caseless)
        except hyperscan.error:
            return  # the engine falls back to RE2 for patterns Hyperscan rejects
        for subject in subjects:
            assert hs_search(database, subject) == re2_search(pattern, subject, caseless), (
                pattern,
                translated,
                subject,
                caseless,
            )
