"""Evaluate one OTLP JSON file against a policy set: the work behind
``sluice eval`` (the conformance runner contract) and ``sluice demo``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sluice.policy import BatchOutcome, PolicySnapshot, Signal
from sluice.policy.stats import PolicyStats
from sluice.telemetry import jsonbody
from sluice.telemetry.otlp_json import detect_signal, json_view


class InputError(Exception):
    """The telemetry input cannot be read; the message names the file."""


def read_json(path: str | Path) -> Any:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as problem:
        raise InputError(f"{path}: cannot read: {problem}") from None
    except json.JSONDecodeError as problem:
        raise InputError(f"{path}: not valid JSON: {problem}") from None


def evaluate_document(
    snapshot: PolicySnapshot, doc: Any, signal: Signal | None = None
) -> BatchOutcome:
    """Apply the snapshot to an OTLP JSON export request in place."""
    signal = signal or detect_signal(doc)
    if signal is None:
        return BatchOutcome()
    return snapshot.evaluate(signal, json_view(signal), doc)


def stats_document(stats: PolicyStats) -> dict[str, Any]:
    """The file-mode stats JSON: policies with hits or misses, sorted by id;
    ``misses`` only when non-zero."""
    entries = []
    for policy_id, counts in sorted(stats.totals().items()):
        if not (counts.hits or counts.misses):
            continue
        entry: dict[str, Any] = {"policy_id": policy_id, "hits": counts.hits}
        if counts.misses:
            entry["misses"] = counts.misses
        entries.append(entry)
    return {"policies": entries}


def write_json(path: str | Path, value: Any) -> None:
    # A lone surrogate (from a \ud800 escape in the input) goes out as that escape.
    Path(path).write_bytes(jsonbody.to_utf8(json.dumps(value, ensure_ascii=False)) + b"\n")
