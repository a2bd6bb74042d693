"""What a policy keeps of what it matches: ``log.keep`` (all, none, a
percentage or a rate limit) or ``sample_rate``, ``metric.keep``, and
``trace.keep``'s sampling configuration."""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Mapping
from typing import Any

from sluice.policy.model import KEEP_ALL, KEEP_NONE, Keep, KeepKind, SamplingMode
from sluice.policy.parse.dialect import (
    SAMPLING_MODE_ENUM,
    Invalid,
    has,
    int64,
    json_repr,
    member,
    optional_boolean,
)

# ASCII digits only: Python's \d (and int/float) also take fullwidth and other
# Unicode digits, which no other engine reads as numbers.
_RATE = re.compile(r"([0-9]+)/([0-9]*)([sm])")
_DECIMAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")


def parse_log_keep(raw: Any) -> Keep:
    """`log.keep`: all, none, N%, N/s, N/m, N/Ds, N/Dm (plus legacy bool and {percentage})."""
    if raw is None:
        return KEEP_ALL
    if raw is True:
        return KEEP_ALL
    if raw is False:
        return KEEP_NONE
    if isinstance(raw, Mapping) and has(raw, "percentage"):
        pct = raw.get("percentage")
        if isinstance(pct, bool) or not isinstance(pct, int | float) or not 0 <= pct <= 100:
            raise Invalid(f"invalid value {json_repr(raw)}")
        return _percent_keep(float(f"{pct:.0f}"))
    if not isinstance(raw, str):
        raise Invalid(f"invalid value {json_repr(raw)}")
    text = raw.strip()
    if text in ("", "all"):
        return KEEP_ALL
    if text == "none":
        return KEEP_NONE
    if text.endswith("%") and _DECIMAL.fullmatch(text[:-1]):
        pct = float(text[:-1])
        if math.isfinite(pct) and 0 <= pct <= 100:
            return _percent_keep(pct, text)
    rate = _RATE.fullmatch(text)
    if rate:
        limit, every, unit = int(rate.group(1)), rate.group(2), rate.group(3)
        windows = int(every) if every else 1
        if limit >= 1 and windows >= 1:
            unit_ms = 1000 if unit == "s" else 60000
            return Keep(KeepKind.RATE, limit=limit, window_ms=windows * unit_ms, text=text)
    raise Invalid(f"invalid value {json_repr(raw)}")


def _percent_keep(pct: float, text: str = "") -> Keep:
    text = text or f"{pct:g}%"
    if pct >= 100:
        return Keep(KeepKind.ALL, text=text)
    if pct <= 0:
        return Keep(KeepKind.NONE, percent=0.0, text=text)
    return Keep(KeepKind.PERCENT, percent=pct, text=text)


def parse_sample_rate(raw: Any) -> Keep:
    """The product dialect's `log.sample_rate` (a fraction 0..1)."""
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not 0 <= raw <= 1:
        raise Invalid(f"{json_repr(raw)} out of range [0, 1]")
    return _percent_keep(raw * 100.0)


def _float32(value: float) -> float:
    """`value` rounded to float32 and widened back; past float32's range it is
    an infinity, as Go's float32(x) makes it."""
    try:
        return float(struct.unpack("<f", struct.pack("<f", value))[0])
    except OverflowError:
        return math.copysign(math.inf, value)


def parse_trace_keep(raw: Any) -> Keep:
    """`trace.keep`: a TraceSamplingConfig object."""
    if not isinstance(raw, Mapping):
        raise Invalid(f"invalid value {json_repr(raw)}")
    pct_raw = member(raw, "percentage")
    if pct_raw is None:
        pct = 0.0  # proto3 default: an encoder may leave a zero out
    elif isinstance(pct_raw, bool) or not isinstance(pct_raw, int | float | str):
        raise Invalid(f"invalid percentage {json_repr(pct_raw)}")
    else:
        try:
            pct = _float32(float(pct_raw))
        except ValueError:
            raise Invalid(f"invalid percentage {json_repr(pct_raw)}") from None
        except OverflowError:  # an integer past the double range, either sign
            pct = math.inf
    if not 0 <= pct <= 100:  # also rejects NaN
        raise Invalid(f"percentage {pct_raw} out of range [0, 100]")
    mode_raw = member(raw, "mode")
    mode = SamplingMode.HASH_SEED
    if mode_raw is not None:
        if isinstance(mode_raw, int) and not isinstance(mode_raw, bool):
            mode = SamplingMode(mode_raw) if mode_raw in (1, 2, 3) else SamplingMode.HASH_SEED
        else:
            name = (
                SAMPLING_MODE_ENUM.parse(mode_raw, "mode")
                if mode_raw != "SAMPLING_MODE_UNSPECIFIED"
                else "hash_seed"
            )
            mode = SamplingMode[name.upper()]
    precision_raw = member(raw, "sampling_precision")
    precision = 4
    if precision_raw is not None:
        precision = int64(precision_raw, "sampling_precision")
        precision = 4 if precision <= 0 else min(precision, 14)
    seed_raw = member(raw, "hash_seed")
    seed = 0 if seed_raw is None else int64(seed_raw, "hash_seed")
    if not 0 <= seed <= 0xFFFFFFFF:
        raise Invalid(f"hash_seed {seed} out of range [0, 4294967295]")
    fail_closed = optional_boolean(member(raw, "fail_closed"), True, "fail_closed")
    common: dict[str, Any] = {
        "mode": mode,
        "precision": precision,
        "hash_seed": seed,
        "fail_closed": fail_closed,
    }
    if pct >= 100:
        return Keep(KeepKind.ALL, percent=100.0, text="100%", **common)
    if pct <= 0:
        return Keep(KeepKind.NONE, percent=0.0, text="0%", **common)
    return Keep(KeepKind.TRACE_SAMPLE, percent=pct, text=f"{pct:g}%", **common)


def parse_metric_keep(raw: Any) -> Keep:
    """`metric.keep`: true (all) or false (none); "all"/"none" are accepted too."""
    if raw is True or raw == "all":
        return KEEP_ALL
    if raw is False or raw == "none":
        return KEEP_NONE
    raise Invalid(f"invalid value {json_repr(raw)}")
