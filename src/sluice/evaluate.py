"""Evaluate one OTLP JSON file against a policy set: the work behind
``sluice eval`` (the conformance runner contract) and ``sluice demo``."""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from sluice.policy import BatchOutcome, PolicySnapshot, Signal
from sluice.policy.stats import PolicyStats
from sluice.telemetry import jsonbody
from sluice.telemetry.otlp_json import detect_signal, json_view


class InputError(Exception):
    """The telemetry input cannot be read; the message names the file."""


class OutputError(Exception):
    """An output file cannot be written; the message names the file."""


@dataclass(frozen=True, slots=True)
class JsonFile:
    """A JSON file's document, and whether orjson read it."""

    document: Any
    plain: bool
    """orjson read it, so it holds no NaN or Infinity (which orjson would
    write as null), no integer past 64 bits and no lone surrogate: orjson can
    write it back, and it writes what the standard library would read as the
    same document."""


def read_json_file(path: str | Path) -> JsonFile:
    """Read a JSON file through Edge's JSON path (:mod:`sluice.telemetry.jsonbody`):
    orjson, and the standard library for whatever orjson refuses or might read
    differently, so the document is exactly what ``json`` would give."""
    try:
        raw = Path(path).read_bytes()
        document = jsonbody.parse(raw)
        if document is not jsonbody.UNPARSED:
            return JsonFile(document, True)
        # The bytes, as Edge's codec does: the standard library then detects
        # UTF-16 and UTF-32, takes a UTF-8 byte order mark and reads a
        # surrogate written as UTF-8 bytes.
        return JsonFile(jsonbody.check_depth(json.loads(raw)), False)
    except (OSError, UnicodeDecodeError) as problem:
        raise InputError(f"{path}: cannot read: {problem}") from None
    except json.JSONDecodeError as problem:
        raise InputError(f"{path}: not valid JSON: {problem}") from None
    except jsonbody.TooDeep as problem:
        raise InputError(f"{path}: {problem}") from None
    except ValueError:  # what int() refuses to read (sys.get_int_max_str_digits)
        raise InputError(f"{path}: not valid JSON: an integer has too many digits") from None
    except RecursionError:
        raise InputError(f"{path}: JSON nested too deeply") from None


def read_json(path: str | Path) -> Any:
    """The document of a JSON file (see :func:`read_json_file`)."""
    return read_json_file(path).document


def evaluate_document(
    snapshot: PolicySnapshot, doc: Any, signal: Signal | None = None
) -> BatchOutcome:
    """Apply the snapshot to an OTLP JSON export request in place."""
    signal = signal or detect_signal(doc)
    if signal is None:
        return BatchOutcome()
    return snapshot.evaluate(signal, json_view(signal), doc)


_ID_KEYS = ("traceId", "spanId", "parentSpanId")
_HEX_DIGITS = frozenset("0123456789abcdef")
_METRIC_DATA = ("gauge", "sum", "histogram", "exponentialHistogram", "summary")


def _objects(holder: Any, key: str) -> list[Any]:
    """The objects in the list ``holder[key]`` (none when it is not a list)."""
    items = holder.get(key) if isinstance(holder, dict) else None
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []


def _lowercase_ids_of(holder: dict[str, Any]) -> None:
    for key in _ID_KEYS:
        value = holder.get(key)
        if isinstance(value, str) and not value.islower():
            lower = value.lower()
            if lower != value and all(char in _HEX_DIGITS for char in lower):
                holder[key] = lower


def lowercase_ids(doc: Any, signal: Signal | None) -> None:
    """Write the hex trace and span ids of an export request in lowercase, in
    place (POLICY.md 10.3: the harness does not normalise their case, and
    OTLP JSON writers write lowercase): log records', spans' and their links',
    and metric exemplars'. A value that is not hex text is left as it is."""
    if signal is None:
        return
    view = json_view(signal)
    for resource in view.resources(doc):
        for scope in view.scopes(resource):
            for item in view.records(scope):
                if not isinstance(item, dict):
                    continue
                if signal is Signal.METRIC:
                    for data in _METRIC_DATA:
                        for point in _objects(item.get(data), "dataPoints"):
                            for exemplar in _objects(point, "exemplars"):
                                _lowercase_ids_of(exemplar)
                    continue
                _lowercase_ids_of(item)
                if signal is Signal.TRACE:
                    for link in _objects(item, "links"):
                        _lowercase_ids_of(link)


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


def write_json(path: str | Path, value: Any, plain: bool = False) -> None:
    """Write `value` as compact JSON and a newline. With `plain` (the value
    was read by orjson, see :attr:`JsonFile.plain`) orjson writes it, unless
    evaluation put in something orjson refuses (a policy's string with a lone
    surrogate); otherwise the standard library does, a lone surrogate going
    out as its escape. Raises :class:`OutputError` when the file cannot be
    written."""
    text = None
    if plain:
        with contextlib.suppress(orjson.JSONEncodeError):
            text = orjson.dumps(value, option=orjson.OPT_APPEND_NEWLINE)
    if text is None:
        text = jsonbody.encode(value, allow_nan=True) + b"\n"
    try:
        Path(path).write_bytes(text)
    except OSError as problem:
        raise OutputError(f"{path}: cannot write: {problem}") from None
