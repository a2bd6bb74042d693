"""Every public file-mode conformance testcase, and Sluice's own ones, through
the real ``sluice eval``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conformance.harness import EXTRA_TESTCASES, file_mode_cases, run_case

CASES = file_mode_cases()
ALL_CASES = CASES + file_mode_cases(EXTRA_TESTCASES)


def test_all_public_file_mode_cases_are_present() -> None:
    assert len(CASES) == 126


@pytest.mark.parametrize("case", ALL_CASES, ids=[c.name for c in ALL_CASES])
def test_conformance_case(case: Path, tmp_path: Path) -> None:
    pairs, actual_stats, expected_stats = run_case(case, tmp_path)
    for n, (actual, expected) in enumerate(pairs, start=1):
        assert actual == expected, f"batch {n} output differs"
    assert actual_stats == expected_stats
