"""Mutation fuzzing of every decoder and reader, through Edge's own request
path (:func:`sluice.edge.filtering.filter_body`), in process.

A target is one wire format of one signal: OTLP protobuf and OTLP JSON logs,
metrics and traces, Datadog logs and series (JSON, and the Agent's protobuf
series and sketches). Each input is a mutant of a
valid seed body (``tests/faults/mutation.py``), sent as it is or compressed
(gzip members, zstd frames, deflate), and filtered by a policy set that uses
every selector, condition type, transform and sampling mode. What is checked:

* nothing raises out of ``filter_body`` (a crash: Edge would answer 500);
* evaluation never fails (that forwards the whole request unfiltered), and no
  view or engine error is caught per record (logged as an error);
* a body is only refused as unreadable (forwarded unchanged) when a reference
  parser (the protobuf runtime's standard classes, ``json.loads`` within the
  documented nesting limit) cannot read it either, or when it holds NaN or an
  infinity that writing it back would put out as a word JSON does not have;
* no record is lost: the records out are the records in minus the ones a
  policy dropped, and containers that are not objects go out as they came.

``run`` is shared by the bounded CI test (``test_fuzz_decoders.py``) and the
long run (``bench/fuzz.py``).
"""

from __future__ import annotations

import gzip
import json
import logging
import math
import random
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import zstandard
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from sluice.edge.filtering import (
    Decoder,
    Verdict,
    datadog_decoder,
    decode_agent_sketches,
    filter_body,
    otlp_decoder,
)
from sluice.policy import PolicySnapshot, Signal, load_document
from sluice.policy.view import MalformedRecord
from sluice.telemetry import jsonbody
from sluice.telemetry.agent_payload import LeanMetricPayload, LeanSketchPayload
from sluice.telemetry.otlp_codec import JSON, PROTOBUF
from sluice.telemetry.otlp_raw import LeanLogsRequest
from sluice.telemetry.wire.agent_payload_pb2 import MetricPayload, SketchPayload
from tests.faults.fuzz_corpus import (
    POLICIES,
    agent_series,
    agent_sketches,
    datadog_logs,
    datadog_series,
    otlp_requests,
)
from tests.faults.mutation import mutate_json, mutate_protobuf
from tests.telemetry.otlp_convert import to_json

LIMIT = 4 << 20
"""max_body_size for fuzzing: large enough that mutants are never refused for size."""

# -- counting records the way a reference reader sees them ---------------------------


@dataclass(frozen=True)
class Census:
    """What a body holds, by a reader independent of Sluice's: the records, and
    the entries Sluice must pass through without reading (resources and scopes
    that are not objects, container keys that hold no list)."""

    records: int
    opaque: int = 0


_LAYOUT = {
    "resourceLogs": ("scopeLogs", "logRecords"),
    "resourceMetrics": ("scopeMetrics", "metrics"),
    "resourceSpans": ("scopeSpans", "spans"),
}


def _json_census(document: Any, top: str) -> Census | None:
    """Records of an OTLP JSON export request; None when it is not one."""
    if not isinstance(document, dict):
        return None
    resources = document.get(top, [])
    if not isinstance(resources, list):
        return None
    scopes_key, records_key = _LAYOUT[top]
    records = opaque = 0
    for resource in resources:
        if not isinstance(resource, dict):
            opaque += 1
            continue
        scopes = resource.get(scopes_key)
        if scopes is None:
            continue
        if not isinstance(scopes, list):
            opaque += 1
            continue
        for scope in scopes:
            if not isinstance(scope, dict):
                opaque += 1
                continue
            items = scope.get(records_key)
            if isinstance(items, list):
                records += len(items)
            elif items is not None:
                opaque += 1
    return Census(records, opaque)


def _depth_ok(document: Any) -> bool:
    try:
        jsonbody.check_depth(document)
    except jsonbody.TooDeep:
        return False
    return True


def _load_json(body: bytes | str) -> Any:
    """The document, or None when the standard library cannot read it within
    the documented nesting limit. (Given bytes, ``json.loads`` also takes
    UTF-16 and UTF-32, and lone surrogates written as UTF-8 bytes, as OTLP JSON
    bodies do; Datadog bodies must be UTF-8.)"""
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return document if _depth_ok(document) else None


def _not_writable(body: bytes) -> bool:
    """Whether `body` is JSON holding NaN or an infinity (``1e400`` reads as
    one), which Edge forwards unchanged rather than write back."""
    finite = True

    def number(text: str) -> float:
        nonlocal finite
        value = float(text)
        finite = finite and math.isfinite(value)
        return value

    try:
        json.loads(body, parse_float=number, parse_constant=number)
    except (ValueError, RecursionError):
        return False
    return not finite


def _load_utf8_json(body: bytes) -> Any:
    try:
        return _load_json(body.decode("utf-8"))
    except UnicodeDecodeError:
        return None


def otlp_json_census(top: str) -> Callable[[bytes], Census | None]:
    def census(body: bytes) -> Census | None:
        document = _load_json(body)
        return None if document is None else _json_census(document, top)

    return census


def otlp_proto_census(request: Any, scopes: str, records: str) -> Callable[[bytes], Census | None]:
    containers = {
        ExportLogsServiceRequest: "resource_logs",
        LeanLogsRequest: "resource_logs",
        ExportMetricsServiceRequest: "resource_metrics",
        ExportTraceServiceRequest: "resource_spans",
    }[request]

    def census(body: bytes) -> Census | None:
        try:
            message = request.FromString(body)
        except DecodeError:
            return None
        return Census(
            sum(
                len(getattr(scope, records))
                for resource in getattr(message, containers)
                for scope in getattr(resource, scopes)
            )
        )

    return census


def datadog_logs_census(body: bytes) -> Census | None:
    """An array's logs, or the one log of a body that is a single object (as
    the intake takes it)."""
    document = _load_utf8_json(body)
    if isinstance(document, dict):
        return Census(1)
    return Census(len(document)) if isinstance(document, list) else None


def datadog_series_census(body: bytes) -> Census | None:
    document = _load_utf8_json(body)
    if not isinstance(document, dict) or not isinstance(document.get("series"), list):
        return None
    return Census(len(document["series"]))


def agent_census(lean: Any, records: str) -> Callable[[bytes], Census | None]:
    """Counts an Agent payload's series or sketches. Edge reads the lean
    messages (``agent_payload``), which carry the points as unknown bytes: a
    series whose points are broken inside is still one series."""

    def census(body: bytes) -> Census | None:
        try:
            return Census(len(getattr(lean.FromString(body), records)))
        except DecodeError:
            return None

    return census


# -- targets ---------------------------------------------------------------------------


@dataclass
class Target:
    """One decoder and reader to fuzz."""

    name: str
    signal: Signal
    decode: Decoder
    seeds: list[bytes]
    mutate: Callable[[random.Random, bytes], bytes]
    census: Callable[[bytes], Census | None]
    """Counts a body's records the reference way; None when it cannot be read."""
    readable: Callable[[bytes], bool] | None = None
    """Whether a reference parser reads the body (default: a census exists)."""


def _stock_readable(request: Any) -> Callable[[bytes], bool]:
    def readable(body: bytes) -> bool:
        try:
            request.FromString(body)
        except DecodeError:
            return False
        return True

    return readable


def targets() -> list[Target]:
    """The ten targets, with their seed bodies."""
    requests = otlp_requests()
    out = []
    for signal, (top, scopes_key, records_key), request_class in (
        (Signal.LOG, ("resourceLogs", "scope_logs", "log_records"), ExportLogsServiceRequest),
        (
            Signal.METRIC,
            ("resourceMetrics", "scope_metrics", "metrics"),
            ExportMetricsServiceRequest,
        ),
        (Signal.TRACE, ("resourceSpans", "scope_spans", "spans"), ExportTraceServiceRequest),
    ):
        messages = requests[signal]
        name = {Signal.LOG: "logs", Signal.METRIC: "metrics", Signal.TRACE: "traces"}[signal]
        # Log records stay bytes in Edge (otlp_lean): count them as such, so a
        # record broken inside is still one record; anything the standard
        # classes read, Edge must read too.
        counted = LeanLogsRequest if signal is Signal.LOG else request_class
        out.append(
            Target(
                f"otlp-protobuf-{name}",
                signal,
                otlp_decoder(signal, PROTOBUF),
                [bytes(m.SerializeToString()) for m in messages],
                mutate_protobuf,
                otlp_proto_census(counted, scopes_key, records_key),
                readable=_stock_readable(request_class),
            )
        )
        out.append(
            Target(
                f"otlp-json-{name}",
                signal,
                otlp_decoder(signal, JSON),
                [json.dumps(to_json(m)).encode() for m in messages],
                mutate_json,
                otlp_json_census(top),
            )
        )
    out.append(
        Target(
            "datadog-logs",
            Signal.LOG,
            datadog_decoder(Signal.LOG),
            datadog_logs(),
            mutate_json,
            datadog_logs_census,
        )
    )
    out.append(
        Target(
            "datadog-series",
            Signal.METRIC,
            datadog_decoder(Signal.METRIC),
            datadog_series(),
            mutate_json,
            datadog_series_census,
        )
    )
    for name, decode, seeds, lean, records, stock in (
        (
            "datadog-agent-series",
            datadog_decoder(Signal.METRIC, PROTOBUF),
            agent_series(),
            LeanMetricPayload,
            "series",
            MetricPayload,
        ),
        (
            "datadog-agent-sketches",
            decode_agent_sketches,
            agent_sketches(),
            LeanSketchPayload,
            "sketches",
            SketchPayload,
        ),
    ):
        out.append(
            Target(
                name,
                Signal.METRIC,
                decode,
                seeds,
                mutate_protobuf,
                agent_census(lean, records),
                readable=_stock_readable(stock),
            )
        )
    return out


def snapshot() -> PolicySnapshot:
    return PolicySnapshot.compile(load_document(POLICIES).policies)


# -- running ---------------------------------------------------------------------------


def _compressed(rng: random.Random, body: bytes) -> tuple[str, bytes]:
    """`body` as sent: mostly as it is, else gzip members, zstd frames or deflate."""
    roll = rng.random()
    if roll < 0.7 or not body:
        return "", body
    cuts = sorted(rng.sample(range(len(body)), min(len(body), rng.randint(0, 2))))
    parts = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    if roll < 0.8:
        return "gzip", b"".join(gzip.compress(part) for part in parts)
    if roll < 0.9:
        return "zstd", b"".join(zstandard.ZstdCompressor().compress(part) for part in parts)
    return "deflate", zlib.compress(body)


def _decompressed(encoding: str, body: bytes) -> bytes:
    """What a forwarded body holds, by the codecs' reference implementations."""
    if encoding == "gzip":
        return gzip.decompress(body)
    if encoding == "zstd":
        return zstandard.ZstdDecompressor().stream_reader(body, read_across_frames=True).read()
    if encoding == "deflate":
        return zlib.decompress(body)
    return body


class _Errors(logging.Handler):
    """Collects what the engine logs about records it could not read: errors
    (a view or engine bug caught per record or container), and records kept as
    malformed for any reason but the documented ones (a record that is not an
    object or whose bytes are broken, a protobuf string that is not UTF-8, an
    edit that would overwrite a value it cannot read)."""

    DOCUMENTED = (MalformedRecord, UnicodeDecodeError)

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        args = record.args if isinstance(record.args, tuple) else ()
        if record.levelno >= logging.ERROR or not any(
            isinstance(arg, self.DOCUMENTED) for arg in args
        ):
            self.messages.append(self.format(record))


@dataclass
class Report:
    """What fuzzing one target found."""

    target: str
    inputs: int = 0
    crashes: int = 0
    """Exceptions out of filter_body (Edge would answer 500)."""
    failed_open: int = 0
    """Evaluations that failed: the whole request forwarded unfiltered."""
    record_errors: int = 0
    """Errors caught per record or container and logged as bugs, and records
    kept as malformed for reasons that are not documented ones."""
    wrongly_unreadable: int = 0
    """Bodies refused as unreadable that the reference parser reads."""
    records_lost: int = 0
    """Records missing from what would be forwarded (not dropped by a policy)."""
    opaque_lost: int = 0
    """Unreadable containers missing from what would be forwarded."""
    unreadable: int = 0
    """Bodies refused as unreadable (and the reference agrees): forwarded as they came."""
    records: int = 0
    malformed: int = 0
    dropped: int = 0
    changed: int = 0
    examples: list[str] = field(default_factory=list)

    @property
    def problems(self) -> int:
        return (
            self.crashes
            + self.failed_open
            + self.record_errors
            + self.wrongly_unreadable
            + self.records_lost
            + self.opaque_lost
        )

    def note(self, what: str, body: bytes, detail: str = "") -> None:
        if len(self.examples) < 5:
            self.examples.append(f"{what}: {detail} {body[:300]!r}")


def _check(
    target: Target, report: Report, raw: bytes, encoding: str, sent: bytes, policies: Any
) -> None:
    """Filter one body (`raw`, sent as `sent` with `encoding`) and check it."""
    filtered = filter_body(policies, target.signal, target.decode, sent, encoding, LIMIT)
    verdict = filtered.verdict
    if verdict in (Verdict.TOO_LARGE, Verdict.CORRUPT):
        report.crashes += 1
        report.note("refused a valid compression", raw, filtered.reason)
        return
    if verdict is Verdict.FAILED:
        report.failed_open += 1
        report.note("evaluation failed", raw)
        return
    census = target.census(raw)
    readable = target.readable(raw) if target.readable else census is not None
    if verdict is Verdict.UNREADABLE:
        report.unreadable += 1
        if readable and not _not_writable(raw):
            report.wrongly_unreadable += 1
            report.note("refused a readable body", raw, filtered.reason)
        return
    outcome = filtered.outcome
    assert outcome is not None and census is not None, (verdict, census)
    report.records += outcome.records
    report.malformed += outcome.malformed
    report.dropped += outcome.dropped
    if outcome.records != census.records:
        report.records_lost += abs(census.records - outcome.records)
        report.note("records seen", raw, f"{outcome.records} of {census.records}")
        return
    if verdict is Verdict.DROPPED:
        return
    if verdict is Verdict.UNCHANGED:
        if outcome.dropped:
            report.records_lost += outcome.dropped
            report.note("dropped but forwarded unchanged", raw)
        return
    report.changed += 1
    out = target.census(_decompressed(encoding, filtered.body))
    if out is None:
        report.crashes += 1
        report.note("forwarded an unreadable body", raw, repr(filtered.body[:200]))
        return
    expected = census.records - outcome.dropped
    if out.records != expected:
        report.records_lost += abs(expected - out.records)
        report.note("records forwarded", raw, f"{out.records}, expected {expected}")
    if out.opaque != census.opaque:
        report.opaque_lost += abs(census.opaque - out.opaque)
        report.note("opaque entries forwarded", raw, f"{out.opaque} of {census.opaque}")


def run(
    target: Target,
    policies: PolicySnapshot,
    seed: int,
    seconds: float,
    inputs: int | None = None,
) -> Report:
    """Fuzz `target` for `seconds` (or until `inputs` inputs), seeded."""
    rng = random.Random(f"{target.name}/{seed}")
    report = Report(target.name)
    errors = _Errors()
    engine = logging.getLogger("sluice.policy.snapshot")  # failures caught per record
    engine.addHandler(errors)
    level = engine.level
    engine.setLevel(logging.DEBUG)
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline and (inputs is None or report.inputs < inputs):
            body = target.mutate(rng, rng.choice(target.seeds))
            encoding, sent = _compressed(rng, body)
            report.inputs += 1
            before = len(errors.messages)
            try:
                _check(target, report, body, encoding, sent, policies)
            except Exception as problem:  # a crash: Edge would answer 500
                report.crashes += 1
                report.note("crash", body, repr(problem))
            if len(errors.messages) > before:
                report.record_errors += len(errors.messages) - before
                report.note("logged error", body, errors.messages[-1][-400:])
    finally:
        engine.setLevel(level)
        engine.removeHandler(errors)
    return report
