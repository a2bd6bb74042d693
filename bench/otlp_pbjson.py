"""OTLP JSON <-> protobuf for one 1 MiB request per signal: the collector's
``sluice.telemetry.otlp_pbjson`` against protobuf's ``json_format`` (with the
hex ids turned into base64 first, and back), both from the JSON bytes to the
message and back to JSON bytes.

Run from the repository root: ``.venv/bin/python bench/otlp_pbjson.py``.
Reports the best of `--rounds` runs in milliseconds.
"""

from __future__ import annotations

import argparse
import base64
import random
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import orjson
from google.protobuf import json_format

if not __package__:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sluice.policy import Signal
from sluice.telemetry.otlp_pbjson import REQUESTS, from_json, to_json

TARGET = 1 << 20
_IDS = ("traceId", "spanId", "parentSpanId")


def _add_attributes(target: Any, rng: random.Random, count: int) -> None:
    for i in range(count):
        target.add(key=f"attr.{i}").value.string_value = f"value-{rng.randrange(1000)}"


def traces(n: int, rng: random.Random) -> Any:
    request = REQUESTS[Signal.TRACE]()
    resource = request.resource_spans.add()
    _add_attributes(resource.resource.attributes, rng, 3)
    scope = resource.scope_spans.add()
    for i in range(n):
        span = scope.spans.add(
            name=f"GET /api/{i}", kind=2, start_time_unix_nano=1_700_000_000 * 10**9 + i
        )
        span.end_time_unix_nano = span.start_time_unix_nano + 1000
        span.trace_id, span.span_id, span.parent_span_id = (
            rng.randbytes(16),
            rng.randbytes(8),
            rng.randbytes(8),
        )
        _add_attributes(span.attributes, rng, 6)
        span.attributes.add(key="http.status_code").value.int_value = 200
        span.events.add(name="exception", time_unix_nano=span.start_time_unix_nano)
        span.status.code = 1
    return request


def logs(n: int, rng: random.Random) -> Any:
    request = REQUESTS[Signal.LOG]()
    resource = request.resource_logs.add()
    _add_attributes(resource.resource.attributes, rng, 3)
    scope = resource.scope_logs.add()
    for i in range(n):
        record = scope.log_records.add(
            time_unix_nano=1_700_000_000 * 10**9 + i, severity_number=9, severity_text="INFO"
        )
        record.body.string_value = f"user {rng.randrange(10**6)} paid order {i}: accepted"
        record.trace_id, record.span_id = rng.randbytes(16), rng.randbytes(8)
        _add_attributes(record.attributes, rng, 5)
    return request


def metrics(n: int, rng: random.Random) -> Any:
    request = REQUESTS[Signal.METRIC]()
    scope = request.resource_metrics.add().scope_metrics.add()
    for i in range(n):
        metric = scope.metrics.add(name=f"metric.{i}", unit="1")
        points = metric.gauge.data_points if i % 2 else metric.sum.data_points
        for _ in range(4):
            point = points.add(time_unix_nano=1_700_000_000 * 10**9, as_double=rng.random() * 100)
            _add_attributes(point.attributes, rng, 3)
    return request


def _ids(value: Any, convert: Callable[[str], str]) -> Any:
    if isinstance(value, dict):
        return {k: convert(v) if k in _IDS else _ids(v, convert) for k, v in value.items()}
    if isinstance(value, list):
        return [_ids(v, convert) for v in value]
    return value


def json_format_from_json(signal: Signal, body: bytes) -> Any:
    document = _ids(orjson.loads(body), lambda h: base64.b64encode(bytes.fromhex(h)).decode())
    message = json_format.ParseDict(document, REQUESTS[signal](), ignore_unknown_fields=True)
    if signal is Signal.LOG:
        from sluice.telemetry.otlp_raw import LeanLogsRequest

        return LeanLogsRequest.FromString(message.SerializeToString())
    return message


def json_format_to_json(signal: Signal, message: Any) -> bytes:
    standard = REQUESTS[signal]
    if type(message) is not standard:
        message = standard.FromString(message.SerializeToString())
    document = json_format.MessageToDict(message, use_integers_for_enums=True)
    return orjson.dumps(_ids(document, lambda b: base64.b64decode(b).hex()))


def request_of_size(make: Callable[[int, random.Random], Any], signal: Signal) -> bytes:
    n = 100
    while True:
        body = to_json(signal, make(n, random.Random(7)))
        if len(body) >= TARGET:
            return body
        n = int(n * TARGET / len(body)) + 10


def best(rounds: int, run: Callable[[], Any]) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=7)
    rounds = parser.parse_args().rounds
    print(
        f"{'signal':8} {'JSON bytes':>10} {'from_json':>10} {'json_format':>12} {'to_json':>8} {'json_format':>12}"
    )
    for signal, make in ((Signal.TRACE, traces), (Signal.LOG, logs), (Signal.METRIC, metrics)):
        body = request_of_size(make, signal)
        message = from_json(signal, body)
        assert (
            json_format_from_json(signal, body).SerializeToString() == message.SerializeToString()
        )
        ours_in = best(rounds, partial(from_json, signal, body))
        theirs_in = best(rounds, partial(json_format_from_json, signal, body))
        ours_out = best(rounds, partial(to_json, signal, message))
        theirs_out = best(rounds, partial(json_format_to_json, signal, message))
        print(
            f"{signal.name.lower():8} {len(body):>10} {ours_in:>8.1f}ms {theirs_in:>10.1f}ms"
            f" {ours_out:>6.1f}ms {theirs_out:>10.1f}ms"
        )


if __name__ == "__main__":
    main()
