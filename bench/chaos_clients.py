"""The retrying clients of the chaos benchmark.

* ``otlp-proto`` and ``otlp-json``: OTLP/HTTP as the specification asks of an
  exporter: retry 429, 502, 503 and 504 and connection errors, honour
  ``Retry-After``, give up on any other status.
* ``otel-sdk``: the real OpenTelemetry Python exporter
  (``opentelemetry-exporter-otlp-proto-http``, its own retry loop), through a
  ``requests`` session that stamps each attempt.
* ``datadog``: gzip JSON batches, retried as the Datadog Agent does: on 5xx,
  408, 429 and connection errors, honouring ``Retry-After``.

Each attempt carries a fresh ``X-Chaos-Attempt`` id, so the upstream can tell
a client's retry from Edge sending one request twice. Every client thread
keeps a :class:`Tally` of what it sent and how each batch ended: acked (2xx),
given up (a status the client does not retry, or out of attempts or time),
or unfinished (still retrying when the run's drain time ran out).
"""

from __future__ import annotations

import gzip
import http.client
import itertools
import logging
import random
import threading
import time
from array import array
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import requests
from opentelemetry._logs import LogRecord
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.sdk._logs import ReadableLogRecord
from opentelemetry.sdk._logs.export import LogRecordExportResult
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.util.instrumentation import InstrumentationScope

from bench.chaos_records import ID_KEY, Record, datadog, make_record, otlp_json, otlp_proto
from bench.chaos_upstream import ATTEMPT_HEADER

RECORD_IDS = itertools.count(1)
ATTEMPT_IDS = itertools.count(1)
"""Process-wide; ``next`` on a count is atomic under the GIL."""

MAX_ATTEMPTS = 15
GIVE_UP_AFTER = 60.0
"""Seconds a hand-written client keeps retrying one batch."""
SDK_TIMEOUT = 30.0
"""The SDK exporter's whole-export timeout (its retries stop within it)."""
REQUEST_TIMEOUT = 10.0
"""Socket timeout towards Edge: Edge itself answers within its upstream timeout."""


@dataclass
class Tally:
    """What one client thread sent, and how each batch ended."""

    kind: str
    attempts: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    batches: Counter[str] = field(default_factory=Counter)
    kept: dict[str, array[int]] = field(
        default_factory=lambda: {o: array("q") for o in ("acked", "gave up", "unfinished")}
    )
    """Ids the policies keep, by how their batch ended."""
    dropped: array[int] = field(default_factory=lambda: array("q"))
    """Ids the policies drop by design (DEBUG)."""

    def all_ids(self) -> list[array[int]]:
        """Every id this client made, kept or dropped, however its batch ended."""
        return [*self.kept.values(), self.dropped]

    def record(self, records: list[Record], outcome: str) -> None:
        self.batches[outcome] += 1
        self.kept[outcome].extend(r.id for r in records if not r.dropped)
        self.dropped.extend(r.id for r in records if r.dropped)


def otlp_retryable(status: int) -> bool:
    """The statuses the OTLP/HTTP specification says to retry."""
    return status in (429, 502, 503, 504)


def datadog_retryable(status: int) -> bool:
    """The statuses the Datadog Agent's log sender retries."""
    return status >= 500 or status in (408, 429)


def _retry_after(value: str | None) -> float | None:
    try:
        return min(max(float(value), 0.0), 10.0) if value is not None else None
    except ValueError:
        return None


class UnframedAnswer(http.client.HTTPException):
    """A 2xx whose end was the connection's close: Edge always frames its answers."""


class RetryingSender:
    """POSTs batches to Edge over one keep-alive connection, reconnecting
    after any error, with capped exponential backoff and jitter."""

    def __init__(
        self,
        port: int,
        retryable: Callable[[int], bool],
        tally: Tally,
        abandon: threading.Event,
        rng: random.Random,
    ):
        self.port = port
        self.retryable = retryable
        self.tally = tally
        self.abandon = abandon
        self.rng = rng
        self._conn: http.client.HTTPConnection | None = None

    def _post(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, str | None]:
        if self._conn is None:
            self._conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=REQUEST_TIMEOUT)
        self._conn.request("POST", path, body, headers)
        response = self._conn.getresponse()
        response.read()
        if response.will_close:
            self._close()
        if 200 <= response.status < 300 and response.getheader("Content-Length") is None:
            # http.client takes a header block cut short by a close for a whole
            # answer that ends at close; Go's client (the Agent's, the
            # Collector's) calls it an error, and so do these clients.
            raise UnframedAnswer(f"{response.status} without Content-Length")
        return response.status, response.getheader("Retry-After")

    def _close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def deliver(self, path: str, body: bytes, headers: dict[str, str]) -> str:
        """``acked``, ``gave up`` or ``unfinished``."""
        started = time.monotonic()
        for attempt in range(MAX_ATTEMPTS):
            self.tally.attempts += 1
            wait = min(1.0, 0.05 * 2**attempt) * self.rng.uniform(0.5, 1.5)
            try:
                status, retry_after = self._post(
                    path, body, {**headers, ATTEMPT_HEADER: str(next(ATTEMPT_IDS))}
                )
            except (OSError, http.client.HTTPException) as error:
                self.tally.errors[type(error).__name__] += 1
                self._close()
            else:
                self.tally.statuses[status] += 1
                if 200 <= status < 300:
                    return "acked"
                if not self.retryable(status):
                    return "gave up"
                after = _retry_after(retry_after)
                wait = wait if after is None else after
            if time.monotonic() - started + wait > GIVE_UP_AFTER:
                return "gave up"
            if self.abandon.wait(wait):
                return "unfinished"
        return "gave up"


class _StampingSession(requests.Session):
    """The SDK exporter's session: a fresh attempt id per request, and a tally."""

    def __init__(self, tally: Tally):
        super().__init__()
        self.tally = tally

    def request(self, method: str | bytes, url: str | bytes, *args: Any, **kwargs: Any) -> Any:
        kwargs["headers"] = {
            **(kwargs.get("headers") or {}),
            ATTEMPT_HEADER: str(next(ATTEMPT_IDS)),
        }
        self.tally.attempts += 1
        try:
            response = super().request(method, url, *args, **kwargs)
        except requests.RequestException as error:
            self.tally.errors[type(error).__name__] += 1
            raise
        self.tally.statuses[response.status_code] += 1
        return response


@dataclass
class ClientKind:
    """How one kind of client encodes and sends a batch."""

    path: str
    batch: tuple[int, int]
    """Records per batch, at least and at most."""
    encode: Callable[[list[Record], str], bytes] | None
    content_type: str = "application/json"
    retryable: Callable[[int], bool] = otlp_retryable
    gzip_share: float = 0.5


CLIENT_KINDS: dict[str, ClientKind] = {
    "otlp-proto": ClientKind("/v1/logs", (20, 200), otlp_proto, "application/x-protobuf"),
    "otlp-json": ClientKind("/v1/logs", (20, 200), otlp_json),
    "otel-sdk": ClientKind("/v1/logs", (20, 200), None, "application/x-protobuf"),
    "datadog": ClientKind(
        "/api/v2/logs", (10, 100), datadog, retryable=datadog_retryable, gzip_share=1.0
    ),
}


@dataclass
class Run:
    """What the client threads share: where Edge is and when to stop."""

    port: int
    deadline: float
    """No new batch starts after this (monotonic)."""
    abandon: threading.Event
    """Set when the drain time is over: stop retrying at once."""
    exporters: list[OTLPLogExporter] = field(default_factory=list)
    """The SDK exporters, shut down on abandon (which ends their waits)."""

    def going(self) -> bool:
        return time.monotonic() < self.deadline and not self.abandon.is_set()


def run_client(run: Run, name: str, index: int, seed: int, tally: Tally) -> None:
    """Send batches until the deadline, each until acked or given up."""
    kind = CLIENT_KINDS[name]
    rng = random.Random(f"{seed}/{name}/{index}")
    service = f"{name}-{index}"
    sdk: OTLPLogExporter | None = None
    if kind.encode is None:
        sdk = OTLPLogExporter(
            endpoint=f"http://127.0.0.1:{run.port}{kind.path}",
            timeout=SDK_TIMEOUT,
            compression=Compression.Gzip if index % 2 else Compression.NoCompression,
            session=_StampingSession(tally),
        )
        run.exporters.append(sdk)
        resource = Resource.create({"service.name": service})
        scope = InstrumentationScope("chaos")
    sender = RetryingSender(run.port, kind.retryable, tally, run.abandon, rng)
    while run.going():
        records = [make_record(rng, next(RECORD_IDS)) for _ in range(rng.randint(*kind.batch))]
        if sdk is not None:
            batch = [
                ReadableLogRecord(
                    LogRecord(
                        timestamp=1_763_726_400_000_000_000 + r.id,
                        severity_text=r.level,
                        body=r.message,
                        attributes={ID_KEY: str(r.id)},
                    ),
                    resource=resource,
                    instrumentation_scope=scope,
                )
                for r in records
            ]
            result = sdk.export(batch)
            if result is LogRecordExportResult.SUCCESS:
                outcome = "acked"
            else:
                outcome = "unfinished" if run.abandon.is_set() else "gave up"
        else:
            assert kind.encode is not None
            body = kind.encode(records, service)
            headers = {"Content-Type": kind.content_type, "DD-API-KEY": "chaos"}
            if rng.random() < kind.gzip_share:
                body = gzip.compress(body, compresslevel=1)
                headers["Content-Encoding"] = "gzip"
            outcome = sender.deliver(kind.path, body, headers)
        tally.record(records, outcome)


def quiet_sdk_logging() -> None:
    """The SDK logs every retry and failure; the tallies count them instead."""
    logging.getLogger("opentelemetry").setLevel(logging.CRITICAL)
