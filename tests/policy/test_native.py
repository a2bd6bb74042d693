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
