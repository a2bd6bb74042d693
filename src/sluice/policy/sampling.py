"""Consistent probability sampling: thresholds, randomness, and the OTel
``ot`` tracestate entry (``th`` and ``rv`` sub-keys).

All values are 56-bit integers as in the OpenTelemetry sampling
specification: a record is kept when its randomness ``R >= T``.
"""

from __future__ import annotations

import random
from typing import Any, Final

from sluice.policy import native
from sluice.policy.model import Keep, SamplingMode

MAX = 1 << 56
MASK = MAX - 1
FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
_OFFSET_LIMBS = tuple(FNV_OFFSET >> shift & 0xFFFF for shift in (0, 16, 32, 48))
_PRIME_LOW = FNV_PRIME - (1 << 40)
"""The prime is 2**40 + _PRIME_LOW (0x1B3)."""
_HEX = frozenset("0123456789abcdefABCDEF")


def threshold(percent: float) -> int:
    """T(p) = floor((1 - p/100) * 2^56) in float64; 0 keeps all, MAX keeps none."""
    if percent >= 100:
        return 0
    if percent <= 0:
        return MAX
    return int((1.0 - percent / 100.0) * float(MAX))


def encode_threshold(value: int, precision: int) -> str:
    """14 hex digits, truncated to `precision`, trailing zeros stripped ('0' if empty)."""
    digits = f"{value:014x}"[:precision].rstrip("0")
    return digits or "0"


def fnv1a64(data: bytes) -> int:
    """64-bit FNV-1a, computed on four 16-bit limbs (a0 lowest). No value then
    passes 2**26, so the compiled module multiplies machine integers instead
    of allocating a Python int per byte (7x faster). With the prime
    2**40 + _PRIME_LOW, h * prime = h * _PRIME_LOW + (h << 40) (mod 2**64), and
    h << 40 adds a0 << 8 to limb 2 and a1 << 8 to limb 3."""
    a0, a1, a2, a3 = _OFFSET_LIMBS
    low = _PRIME_LOW
    for byte in data:
        a0 ^= byte
        t0 = a0 * low
        t1 = a1 * low + (t0 >> 16)
        t2 = a2 * low + (a0 << 8) + (t1 >> 16)
        t3 = a3 * low + (a1 << 8) + (t2 >> 16)
        a0, a1, a2, a3 = t0 & 0xFFFF, t1 & 0xFFFF, t2 & 0xFFFF, t3 & 0xFFFF
    return a3 << 48 | a2 << 32 | a1 << 16 | a0


_native: Final[Any] = native.extension("sluice.policy._sampling")
_fnv1a64: Final[Any] = fnv1a64 if _native is None else _native.fnv1a64
"""The hash sampling uses: :func:`fnv1a64`, or the same in C."""


def id_randomness(raw_id: bytes) -> int:
    """The last 7 bytes of an id, big-endian: the W3C trace-id randomness."""
    return int.from_bytes(raw_id[-7:], "big") & MASK


def random56() -> int:
    return random.getrandbits(56)


# -- tracestate -------------------------------------------------------------------


def _ot_value(tracestate: str) -> str | None:
    for entry in tracestate.split(","):
        key, sep, value = entry.strip().partition("=")
        if sep and key == "ot":
            return value
    return None


def read_ot(tracestate: str) -> tuple[int | None, int | None]:
    """(rv, th) from the ``ot`` entry; each None when missing or invalid."""
    ot = _ot_value(tracestate) if tracestate else None
    if ot is None:
        return None, None
    rv = th = None
    for part in ot.split(";"):
        key, sep, value = part.strip().partition(":")
        if not sep:
            continue
        if key == "rv" and rv is None and len(value) == 14 and set(value) <= _HEX:
            rv = int(value, 16)
        elif key == "th" and th is None and 1 <= len(value) <= 14 and set(value) <= _HEX:
            th = int(value, 16) << (4 * (14 - len(value)))
    return rv, th


def write_threshold(tracestate: str, value: int, precision: int) -> str:
    """Merge ``th:<encoded>`` into the ``ot`` entry: ``ot`` first, ``th`` last in it,
    other ``ot`` sub-keys and vendor entries kept in order."""
    new = "th:" + encode_threshold(value, precision)
    parts: list[str] = []
    vendors: list[str] = []
    for entry in (e.strip() for e in tracestate.split(",")):
        if not entry:
            continue
        key, sep, ot = entry.partition("=")
        if sep and key == "ot":
            for part in (p.strip() for p in ot.split(";")):
                if part and part.partition(":")[0] != "th":
                    parts.append(part)
        else:
            vendors.append(entry)
    return ",".join(["ot=" + ";".join([*parts, new]), *vendors])


# -- decisions --------------------------------------------------------------------


def sample_trace(keep: Keep, tracestate: str, trace_id: bytes) -> tuple[bool, int | None]:
    """Decide a span under a winning sampling policy with 0 < p < 100.

    Returns (kept, threshold to write or None). Follows the reference algorithm:
    a consistent incoming (rv, th) with rv < th is kept untouched; otherwise the
    policy's mode decides; no randomness means fail_closed decides.
    """
    rv, th = read_ot(tracestate)
    if rv is not None and th is not None and rv < th:
        return True, None
    if keep.mode is SamplingMode.HASH_SEED and keep.hash_seed:
        if not trace_id:
            return not keep.fail_closed, None
        r = _fnv1a64(trace_id + keep.hash_seed.to_bytes(4, "little")) & MASK
    elif rv is not None:
        r = rv
    elif trace_id:
        r = id_randomness(trace_id)
    else:
        return not keep.fail_closed, None
    if keep.mode is SamplingMode.PROPORTIONAL:
        incoming = th or 0
        product = (keep.percent / 100.0) * ((MAX - incoming) / MAX)
        if product <= 0:
            return False, None
        t_out = 0 if product >= 1 else MAX - int(product * MAX)
        if t_out >= MAX:
            return False, None
        return (True, t_out) if r >= t_out else (False, None)
    t_policy = threshold(keep.percent)
    if keep.mode is SamplingMode.EQUALIZING and th is not None and th > t_policy:
        return True, th
    return (True, t_policy) if r >= t_policy else (False, None)


def sample_log(percent: float, key: bytes | None, key_is_trace_id: bool) -> bool:
    """Log `N%` sampling for 0 < N < 100: keyed by trace id randomness or FNV-1a
    of the key bytes; no key configured means a fresh random draw; a configured
    key that is absent or empty keeps the record."""
    if key is None:
        return random56() >= threshold(percent)
    if not key:
        return True
    r = id_randomness(key) if key_is_trace_id else _fnv1a64(key) & MASK
    return r >= threshold(percent)
