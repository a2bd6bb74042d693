"""Thresholds, randomness and the ot tracestate entry (POLICY.md sections 5 and 7)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sluice.policy import sampling
from sluice.policy.model import Keep, KeepKind, SamplingMode
from sluice.policy.sampling import (
    MASK,
    MAX,
    encode_threshold,
    fnv1a64,
    read_ot,
    sample_log,
    sample_trace,
    threshold,
    write_threshold,
)


@pytest.mark.parametrize(
    "percent, expected",
    [
        (10, 0xE6666666666668),
        (25, 0xC0000000000000),
        (50, 0x80000000000000),
        (75, 0x40000000000000),
        (90, 0x19999999999998),
        (100, 0),
        (0, MAX),
    ],
)
def test_threshold(percent: float, expected: int) -> None:
    assert threshold(percent) == expected


def test_encode_threshold_truncates_and_strips() -> None:
    assert encode_threshold(threshold(10), 4) == "e666"
    assert encode_threshold(threshold(10), 14) == "e6666666666668"
    assert encode_threshold(threshold(50), 8) == "8"
    assert encode_threshold(0, 4) == "0"


def test_fnv1a_examples() -> None:
    assert fnv1a64(b"") & MASK == 0xF29CE484222325
    assert fnv1a64(b"req-001") == 0x8D298694BDCA4CA1
    assert fnv1a64(b"api-server") & MASK == 0x787B8BB2866A19


@given(st.binary(max_size=64))
def test_fnv1a_on_limbs_is_fnv1a(data: bytes) -> None:
    expected = 0xCBF29CE484222325
    for byte in data:  # the textbook definition, on one Python int
        expected = ((expected ^ byte) * 0x100000001B3) % 2**64
    assert fnv1a64(data) == expected


@given(st.binary(max_size=300))
def test_the_hash_in_c_is_fnv1a(data: bytes) -> None:
    assert sampling._fnv1a64 is not fnv1a64, "the C hash did not load"
    assert sampling._fnv1a64(data) == fnv1a64(data)


@pytest.mark.parametrize(
    "state, rv, th",
    [
        ("", None, None),
        ("ot=th:8", None, 0x80000000000000),
        ("ot=rv:abc123;th:c", None, 0xC0000000000000),
        ("vendor=a,ot=rv:ffffffffffffff;th:0", 0xFFFFFFFFFFFFFF, 0),
        ("ot=th:xyz", None, None),
    ],
)
def test_read_ot(state: str, rv: int | None, th: int | None) -> None:
    assert read_ot(state) == (rv, th)


@pytest.mark.parametrize(
    "before, after",
    [
        ("", "ot=th:8"),
        ("ot=th:4;rv:abc123", "ot=rv:abc123;th:8"),
        ("ot=th:c,vendor=xyz", "ot=th:8,vendor=xyz"),
        ("vendor1=abc, vendor2=xyz", "ot=th:8,vendor1=abc,vendor2=xyz"),
        ("ot=rv:ffffffffffffff,vendor=keep-me", "ot=rv:ffffffffffffff;th:8,vendor=keep-me"),
    ],
)
def test_write_threshold(before: str, after: str) -> None:
    assert write_threshold(before, threshold(50), 4) == after


def _keep(percent: float, **kw: object) -> Keep:
    return Keep(KeepKind.TRACE_SAMPLE, percent=percent, **kw)  # type: ignore[arg-type]


def test_hash_seed_mode_uses_trace_id_randomness_with_boundary_kept() -> None:
    tid = bytes.fromhex("0000000000000000" + "00c0000000000000")
    assert sample_trace(_keep(25), "", tid) == (True, threshold(25))
    below = bytes.fromhex("0000000000000000" + "00bfffffffffffff")
    assert sample_trace(_keep(25), "", below) == (False, None)


def test_rv_wins_over_trace_id_and_inconsistent_state_is_kept_untouched() -> None:
    tid = bytes.fromhex("f" * 32)
    assert sample_trace(_keep(50), "ot=rv:10000000000000", tid) == (False, None)
    assert sample_trace(_keep(50), "ot=rv:10000000000000;th:8", tid) == (True, None)


def test_no_randomness_follows_fail_closed() -> None:
    assert sample_trace(_keep(50), "", b"") == (False, None)
    assert sample_trace(_keep(50, fail_closed=False), "", b"") == (True, None)


def test_proportional_and_equalizing() -> None:
    prop = _keep(50, mode=SamplingMode.PROPORTIONAL)
    tid_c = bytes.fromhex("00" * 9 + "c0000000000000")
    tid_b = bytes.fromhex("00" * 9 + "bfffffffffffff")
    assert sample_trace(prop, "ot=th:8", tid_c) == (True, 0xC0000000000000)
    assert sample_trace(prop, "ot=th:8", tid_b) == (False, None)
    eq = _keep(50, mode=SamplingMode.EQUALIZING)
    assert sample_trace(eq, "ot=th:c", tid_b) == (True, 0xC0000000000000)
    assert sample_trace(eq, "ot=th:4", tid_c) == (True, 0x80000000000000)


def test_hash_seed_with_seed_hashes_raw_trace_id_and_le_seed() -> None:
    tid = bytes(range(16))
    keep = _keep(50, hash_seed=42)
    r = fnv1a64(tid + (42).to_bytes(4, "little")) & MASK
    assert sample_trace(keep, "ot=rv:ffffffffffffff", tid)[0] == (r >= threshold(50))


def test_log_sampling_keys() -> None:
    assert sample_log(50, b"", False) is True  # configured key absent: keep
    tid = bytes.fromhex("00" * 9 + "80000000000000")
    assert sample_log(50, tid, True) is True
    assert sample_log(50.0001, tid, True) is True
    assert sample_log(49.9, tid, True) is False
    assert sample_log(50, b"req-001", False) is False  # R = 0x298694bdca4ca1 < T(50)
    draws = [sample_log(30, None, False) for _ in range(4000)]  # unkeyed: random
    assert 0.25 < sum(draws) / len(draws) < 0.35
