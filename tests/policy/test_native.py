"""The C scanner (``sluice.policy._hsnative`` through ``sluice.policy.native``):
databases the binding compiled, loaded by vectorgrep's libhs and scanned in
one call per value."""

from __future__ import annotations

import os
import subprocess
import sys

import hyperscan
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sluice.policy import native
from sluice.policy.model import MatchOp
from sluice.policy.patterns import FieldScanner, PatternSpec
from sluice.policy.shardplan import compiled_form, end_check

FLAGS = hyperscan.HS_FLAG_SINGLEMATCH | hyperscan.HS_FLAG_UTF8


def blob(*expressions: bytes, flags: list[int] | None = None) -> bytes:
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    database.compile(
        expressions=list(expressions),
        ids=list(range(len(expressions))),
        flags=flags or [FLAGS] * len(expressions),
    )
    return bytes(hyperscan.dumpb(database))


def test_the_installed_build_scans_natively() -> None:
    assert native.ACTIVE


def test_a_matcher_maps_each_databases_ids_to_pattern_ids() -> None:
    first = native.load_database(blob(b"error", b"time ?out", b"^GET "))
    second = native.load_database(blob(b"\\d{3}$", b"x"))
    matcher = native.matcher(
        [
            (first, [[1], [2, 3, 4], []]),  # id 1 of the database stands for three patterns
            (second, [[10], [11]]),
        ]
    )
    assert sorted(matcher.scan(b"GET / error timeout 503")) == [1, 2, 3, 4, 10]
    assert matcher.scan(b"GET / fine") == ()  # ^GET maps to no pattern any more
    assert matcher.scan(b"") == ()
    assert sorted(matcher.scan("x é timeout".encode())) == [2, 3, 4, 11]
    with pytest.raises(TypeError):
        matcher.scan("not bytes")


def test_a_blob_that_is_no_database_is_refused() -> None:
    good = blob(b"a")
    with pytest.raises(ValueError):
        native.load_database(good[: len(good) // 2])
    with pytest.raises(ValueError):
        native.load_database(b"")


def test_a_field_scanner_answers_alike_natively_and_through_the_binding() -> None:
    """The same patterns in a child process with SLUICE_NATIVE=0."""
    program = """
import json, sys
from sluice.policy import native
from sluice.policy.model import MatchOp
from sluice.policy.patterns import FieldScanner, PatternSpec
specs = [PatternSpec(MatchOp.REGEX, r"err(or)?\\b"), PatternSpec(MatchOp.CONTAINS, "TIME", True),
         PatternSpec(MatchOp.REGEX, "err(?:or)?\\\\b"), PatternSpec(MatchOp.ENDS_WITH, "€"),
         PatternSpec(MatchOp.EXACT, "GET /", True), PatternSpec(MatchOp.REGEX, "^[ab]{2}$"),
         PatternSpec(MatchOp.STARTS_WITH, "ab"), PatternSpec(MatchOp.EXACT, "err")]
scanner = FieldScanner(list(enumerate(specs)), 99, None, memoize=False)
values = ["error now", "a timeout", "GET /", "get /", "price 5 €", "aa", "ab", "", "err",
          "xab ab", "abab", "err err", "an err"]
print(json.dumps([native.ACTIVE, [sorted(scanner.compute(v)) for v in values]]))
"""
    runs = {}
    for switch in ("1", "0"):
        env = {**os.environ, "SLUICE_NATIVE": switch}
        done = subprocess.run(
            [sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        runs[switch] = done.stdout
    assert runs["1"].startswith("[true,") and runs["0"].startswith("[false,")
    assert runs["1"].split(",", 1)[1] == runs["0"].split(",", 1)[1]
    assert "[0, 2, 99]" in runs["1"]  # "error now" hits both spellings and the exists id


def test_start_anchored_literals_are_compiled_floating_and_confirmed_by_where_they_end() -> None:
    """starts_with and exact literals (case-sensitive, ASCII) leave Hyperscan's
    start-anchored DFA: found anywhere, a report counts only where one at the
    start would end (and, for exact, where the value ends)."""
    starts, exact = (b"\\Aab\\x2d1", 56), (b"\\Aab\\x2d1\\z", 56)
    assert (end_check(starts), end_check(exact)) == (4, -4)
    assert compiled_form(starts) == (b"ab\\x2d1", 56 & ~hyperscan.HS_FLAG_SINGLEMATCH)
    assert compiled_form(exact)[0] == b"ab\\x2d1"
    assert end_check((b"\\AaB\\x2d", 57)) == 3  # caseless: no letter folds longer
    # Left anchored: caseless ones with s or k (Hyperscan folds them to U+017F
    # and U+212A, longer), the empty literal, non-ASCII text and anything that
    # is not a plain literal.
    for kept in [(b"\\Aas", 57), (b"\\AK", 57), (b"\\A\\z", 56), ("\\Aé".encode(), 56)]:
        assert end_check(kept) == 0 and compiled_form(kept) == kept
    assert end_check((b"\\Aa+", 56)) == 0
    folded = FieldScanner(
        [
            (0, PatternSpec(MatchOp.STARTS_WITH, "as", True)),
            (1, PatternSpec(MatchOp.EXACT, "k", True)),
        ],
        None,
        None,
        memoize=False,
    )
    assert folded.compute("A\u017fX") == (0,) and folded.compute("\u212a") == (1,)
    compiled = [compiled_form(e) for e in (starts, exact, (b"zz", 56))]
    database = native.load_database(blob(*(e for e, _ in compiled), flags=[f for _, f in compiled]))
    matcher = native.matcher([(database, [[1], [2], [3]], [4, -4, 0])])
    assert matcher.scan(b"ab-1") == (1, 2)
    assert matcher.scan(b"ab-1 and ab-1") == (1,)
    assert matcher.scan(b"xab-1") == ()
    assert matcher.scan(b"ab-1zz ab-1") == (1, 3)
    assert matcher.scan(b"ab-1zzab-1") == (1, 3)
    assert matcher.scan(b"ab-") == ()


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.text("abB-", min_size=1, max_size=3), min_size=1, max_size=4),
    st.lists(st.text("abB-", max_size=9), min_size=1, max_size=6),
)
def test_literal_conditions_answer_as_python_strings_do(
    literals: list[str], values: list[str]
) -> None:
    ops = {
        MatchOp.STARTS_WITH: str.startswith,
        MatchOp.EXACT: str.__eq__,
        MatchOp.ENDS_WITH: str.endswith,
        MatchOp.CONTAINS: lambda value, text: text in value,
    }
    specs = [PatternSpec(op, text) for text in literals for op in ops]
    specs += [PatternSpec(op, text.upper(), True) for text in literals for op in ops]
    scanner = FieldScanner(list(enumerate(specs)), None, None, memoize=False)
    for value in values:
        expected = [
            i
            for i, spec in enumerate(specs)
            if ops[spec.op](value.upper() if spec.case_insensitive else value, spec.text)
        ]
        assert sorted(scanner.compute(value)) == expected, value


def test_scanner_with_duplicated_expressions_reports_every_pattern() -> None:
    specs = [PatternSpec(MatchOp.CONTAINS, "boom"), PatternSpec(MatchOp.REGEX, "boom")]
    scanner = FieldScanner(list(enumerate(specs)), None, None, memoize=False)
    assert sorted(scanner.compute(b"big boom")) == [0, 1]
    assert scanner.compute(b"quiet") == ()


# Vectorscan 5.4.12 reads up to 63 bytes past the end of a short value
# (VectorCamp/vectorscan#381): a value that ends just before an unmapped page
# crashed the process. The child places each value there (a copy of a bytes
# object at the end of a page whose next page is PROT_NONE) and scans it.
GUARD_PAGE_SCAN = r"""
import ctypes, mmap, sys
from sluice.policy.model import MatchOp
from sluice.policy.patterns import FieldScanner, PatternSpec

libc = ctypes.CDLL(None)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
PAGE = mmap.PAGESIZE
base = libc.mmap(None, 2 * PAGE, mmap.PROT_READ | mmap.PROT_WRITE,
                 mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
assert libc.mprotect(base + PAGE, PAGE, 0) == 0  # PROT_NONE

def ending_at(value, gap):
    # bytes objects are 8-aligned; the copy's data ends `gap` bytes before the guard.
    size = sys.getsizeof(value)
    address = base + PAGE - gap - size
    address -= address % 8
    ctypes.memmove(address, id(value), size)
    ctypes.c_ssize_t.from_address(address).value = 1 << 40  # never freed
    return ctypes.cast(address, ctypes.py_object).value

specs = [PatternSpec(MatchOp.REGEX, "timeout (after|in) [0-9]s$"),
         PatternSpec(MatchOp.ENDS_WITH, "after 3s"), PatternSpec(MatchOp.CONTAINS, "k1x"),
         PatternSpec(MatchOp.REGEX, "err-1-[0-9]+")]
matcher = FieldScanner(list(enumerate(specs)), None, None, memoize=False)._native
assert matcher is not None
body = b"err-3-7 timeout after 3s"
checked = 0
for length in range(1, 80):
    value = (body * 4)[-length:]
    for gap in range(0, 72, 8):
        placed = ending_at(value, gap)
        assert placed == value
        assert matcher.scan(placed) == matcher.scan(value), (length, gap)
        del placed  # before the next copy overwrites it
        checked += 1
print(checked)
"""


def test_a_value_that_ends_before_an_unmapped_page_is_scanned_without_a_crash() -> None:
    done = subprocess.run(
        [sys.executable, "-c", GUARD_PAGE_SCAN], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == str(79 * 9)
