"""Attributes and resource processor benchmark, in process: the processor's
``consume`` on ~1,600-record OTLP log requests (bench/edge.py's 1 MiB bodies:
four attributes per record), as the collector's pipeline hands them over
(lean logs, records as wire bytes). Reports CPU microseconds per record, median
of ``--rounds``, for:

  3 actions:          upsert env, delete trace, hash version (every record)
  3 actions+include:  the same, include: log_bodies regexp (about 1 in 4 records)
  1 action, no match: update a key no record has (the parse/select floor)
  resource, 3 actions: the resource processor (per resource, not per record)

Run from the repository root: ``.venv/bin/python bench/attributes.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

if not __package__:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.edge import otlp_body
from sluice.collector.component import ComponentID, Consumer, Kind, Settings
from sluice.collector.components.processors.attributes import FACTORY as ATTRIBUTES
from sluice.collector.components.processors.resource import FACTORY as RESOURCE
from sluice.collector.confmap.decode import Problems, decode
from sluice.collector.telemetry import ServiceTelemetry
from sluice.policy import Signal
from sluice.telemetry.otlp_raw import LeanLogsRequest

THREE = [
    {"key": "env", "value": "production", "action": "upsert"},
    {"key": "trace", "action": "delete"},
    {"key": "version", "action": "hash"},
]
CASES: dict[str, tuple[Any, dict[str, Any]]] = {
    "3 actions": (ATTRIBUTES, {"actions": THREE}),
    "3 actions+include": (
        ATTRIBUTES,
        {"actions": THREE, "include": {"match_type": "regexp", "log_bodies": ["^(GET|POST) "]}},
    ),
    "1 action, no match": (
        ATTRIBUTES,
        {"actions": [{"key": "absent", "value": 1, "action": "update"}]},
    ),
    "upsert, no change": (
        ATTRIBUTES,
        {"actions": [{"key": "env", "from_attribute": "env", "action": "upsert"}]},
    ),
    "resource, 3 actions": (RESOURCE, {"attributes": THREE}),
}


class _Drop(Consumer):
    async def consume(self, data: Any) -> None:
        return None


def _processor(factory: Any, raw: dict[str, Any]) -> Any:
    problems = Problems()
    config = decode(factory.config_type, raw, "", problems)
    assert not problems and not list(config.validate()), problems.lines
    settings = Settings(ComponentID(factory.component_type), Kind.PROCESSOR, ServiceTelemetry())
    return factory.create(settings, config, Signal.LOG, _Drop())


async def _timed(processor: Any, requests: list[Any]) -> float:
    started = time.process_time()
    for request in requests:
        await processor.consume(request)
    return time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rng = random.Random(7)
    bodies = [otlp_body(rng) for _ in range(args.requests)]
    records = sum(count for _, count in bodies)
    print(f"{args.requests} requests, {records // args.requests} records each")
    for name, (factory, raw) in CASES.items():
        processor = _processor(factory, raw)
        timings = []
        for _ in range(args.rounds):
            requests = [LeanLogsRequest.FromString(body) for body, _ in bodies]
            timings.append(asyncio.run(_timed(processor, requests)))
        per_record = statistics.median(timings) / records * 1e6
        print(f"{name:22s} {per_record:6.2f} us/record")


if __name__ == "__main__":
    main()
