"""Bounded mutation fuzzing of every decoder and reader through Edge's request
path (see ``fuzzing.py``): a few seconds per target, seeded. ``bench/fuzz.py``
runs the same fuzzers for longer."""

from __future__ import annotations

import pytest

from sluice.policy import PolicySnapshot
from tests.faults import fuzzing

SECONDS = 3.0
TARGETS = {target.name: target for target in fuzzing.targets()}


@pytest.fixture(scope="module")
def policies() -> PolicySnapshot:
    return fuzzing.snapshot()


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_mutants_never_fail_the_request_or_lose_records(
    policies: PolicySnapshot, name: str
) -> None:
    report = fuzzing.run(TARGETS[name], policies, seed=20261124, seconds=SECONDS)
    assert report.problems == 0, report
    # The mutants reach what they are for: readable and unreadable bodies,
    # batches re-encoded after drops and edits.
    assert report.inputs >= 100, report
    assert report.unreadable and report.changed and report.dropped, report
