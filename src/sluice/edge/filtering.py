"""What a filtered route does with a request body, without HTTP: decompress,
decode, evaluate against one snapshot, re-encode and re-compress.

:func:`filter_body` is the whole synchronous part of a filtered request, so
that the routes and the decoder fuzzing (``tests/faults/fuzzing.py``) run the
same code. It never raises for a body, whatever it holds: every way a body can
fail is a :class:`Verdict` the route answers or fails open on.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sluice.policy import BatchOutcome, PolicySnapshot, RecordView, Signal
from sluice.telemetry import compression, datadog, datadog_metrics, jsonbody, otlp_codec

log = logging.getLogger(__name__)

READABLE_ENCODINGS = frozenset({"", "identity", *compression.SUPPORTED})
"""Content-Encodings Edge can decode (no header, identity, or a supported codec)."""


@dataclass(slots=True)
class Decoded:
    """A filtered route's request body, decoded: the batch, the view that reads
    it, and how to re-encode it."""

    batch: Any
    view: RecordView
    encode: Callable[[], bytes]


Decoder = Callable[[bytes], Decoded]
"""Decodes a decompressed body; raises ValueError when it is unreadable."""


def unknown_media(raw: bytes) -> Decoded:
    """The decoder of a body whose Content-Type its route does not read: it
    is forwarded unchanged (EDGE.md section 2, fail open)."""
    raise ValueError("unknown Content-Type")


def otlp_decoder(signal: Signal, media: str | None) -> Decoder:
    """The decoder of an OTLP export request in `media` (None: unknown type)."""
    if media is None:
        return unknown_media

    def decode(raw: bytes) -> Decoded:
        batch, view = otlp_codec.decode(signal, media, raw)
        return Decoded(batch, view, lambda: otlp_codec.encode(media, batch))

    return decode


def _decode_logs(raw: bytes) -> Decoded:
    logs = datadog.DatadogBatch.parse(raw)
    return Decoded(logs, datadog.LOG_VIEW, logs.encode)


def _decode_json_series(raw: bytes) -> Decoded:
    series = datadog_metrics.DatadogSeries.parse(raw)
    return Decoded(series, datadog_metrics.SERIES_VIEW, series.encode)


def _decode_agent_series(raw: bytes) -> Decoded:
    payload = datadog_metrics.AgentPayload.parse_series(raw)
    return Decoded(payload, datadog_metrics.AGENT_SERIES_VIEW, payload.encode)


def decode_agent_sketches(raw: bytes) -> Decoded:
    """The decoder of an Agent ``SketchPayload`` (``/api/beta/sketches``)."""
    payload = datadog_metrics.AgentPayload.parse_sketches(raw)
    return Decoded(payload, datadog_metrics.AGENT_SKETCH_VIEW, payload.encode)


def datadog_decoder(signal: Signal, media: str | None = None) -> Decoder:
    """The decoder of a Datadog log array (LOG) or series payload (METRIC): the
    Agent's protobuf ``MetricPayload`` when `media` is protobuf, else JSON (the
    v1 and v2 forms)."""
    if signal is Signal.LOG:
        return _decode_logs
    return _decode_agent_series if media == otlp_codec.PROTOBUF else _decode_json_series


class Verdict(enum.Enum):
    """How a filtered request ends."""

    TOO_LARGE = "too_large"
    """Inflates past the size limit: 413, nothing forwarded."""
    CORRUPT = "corrupt"
    """Not valid data for its Content-Encoding: 400, nothing forwarded."""
    UNREADABLE = "unreadable"
    """Unknown encoding, not a request of its format, or one that cannot be
    written back as it was read: forward it unchanged."""
    FAILED = "failed"
    """The policies failed at run time: forward it unchanged."""
    DROPPED = "dropped"
    """Every record dropped: answer locally, nothing forwarded."""
    UNCHANGED = "unchanged"
    """Nothing changed: forward the original bytes."""
    CHANGED = "changed"
    """Forward :attr:`Filtered.body`, re-encoded in the same format and encoding."""


@dataclass(slots=True)
class Filtered:
    """What :func:`filter_body` did with one body."""

    verdict: Verdict
    outcome: BatchOutcome | None = None
    """The evaluation's counts, once the body was decoded and evaluated."""
    body: bytes = b""
    """The body to forward when CHANGED."""
    reason: str = ""
    """Why, for every verdict that refuses or fails open."""


def filter_body(
    snapshot: PolicySnapshot,
    signal: Signal,
    decode: Decoder,
    body: bytes,
    encoding: str,
    limit: int,
) -> Filtered:
    """Filter one request body that arrived with Content-Encoding `encoding`
    through `snapshot` (which has policies for `signal`): bounded decompression,
    decode (fail open), evaluate (fail open), then the re-encoded body in the
    encoding it arrived in, when anything changed (fail open when it cannot be
    re-encoded)."""
    if encoding not in READABLE_ENCODINGS:
        return Filtered(Verdict.UNREADABLE, reason=f"unknown Content-Encoding {encoding!r}")
    try:
        raw = compression.decompress(encoding, body, limit)
    except compression.BodyTooLarge as too_large:
        return Filtered(Verdict.TOO_LARGE, reason=str(too_large))
    except compression.CorruptBody as corrupt:
        return Filtered(Verdict.CORRUPT, reason=f"corrupt {encoding} body: {corrupt}")
    try:
        decoded = decode(raw)
    except (ValueError, UnicodeDecodeError) as problem:
        return Filtered(Verdict.UNREADABLE, reason=str(problem))
    try:
        outcome = snapshot.evaluate(signal, decoded.view, decoded.batch)
    except Exception:  # a policy failing at run time must not lose telemetry
        log.exception("policy evaluation failed on %s; forwarding unfiltered", signal.value)
        return Filtered(Verdict.FAILED, reason="policy evaluation failed")
    if outcome.records and outcome.dropped == outcome.records:
        return Filtered(Verdict.DROPPED, outcome)
    if not outcome.modified:
        return Filtered(Verdict.UNCHANGED, outcome)
    try:
        written = decoded.encode()
    except jsonbody.NotFinite as problem:
        # What was read as NaN or infinity would go out as a word no JSON
        # reader takes, and every kept record with it: the upstream decides.
        return Filtered(Verdict.UNREADABLE, reason=f"cannot write the body back: {problem}")
    return Filtered(Verdict.CHANGED, outcome, compression.compress(encoding, written))
