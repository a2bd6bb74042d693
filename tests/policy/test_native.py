"""The C scanner (``sluice.policy._hsnative`` through ``sluice.policy.native``):
databases the binding compiled, loaded by vectorgrep's libhs and scanned in
one call per value."""

from __future__ import annotations

import os
import subprocess
import sys

import hyperscan
import pytest

from sluice.policy import native
from sluice.policy.model import MatchOp
from sluice.policy.patterns import FieldScanner, PatternSpec

FLAGS = hyperscan.HS_FLAG_SINGLEMATCH | hyperscan.HS_FLAG_UTF8


def blob(*expressions: bytes) -> bytes:
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    database.compile(
        expressions=list(expressions),
        ids=list(range(len(expressions))),
        flags=[FLAGS] * len(expressions),
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
         PatternSpec(MatchOp.EXACT, "GET /", True), PatternSpec(MatchOp.REGEX, "^[ab]{2}$")]
scanner = FieldScanner(list(enumerate(specs)), 99, None, memoize=False)
values = ["error now", "a timeout", "GET /", "get /", "price 5 €", "aa", "ab", "", "err"]
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
