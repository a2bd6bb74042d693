"""The compiled modules against their own source, on odd telemetry.

mypyc checks annotated types at run time, so an annotation that does not hold
for some input (a value that comes out of a decoded document as ``Any``)
changes behaviour only in the compiled build: a TypeError that the engine
counts as a malformed record. The conformance cases check the compiled build
against expected outputs, but only for the inputs they have. This module
evaluates every public conformance case's policies against its inputs and
against variants with unusual but valid values (non-string bodies and
attributes, empty values, duplicate keys, missing fields) and, for the JSON
view, malformed shapes, through the JSON and protobuf views. It also evaluates
a policy for every selector under every condition type (string conditions,
``exists``, ``equals`` with each typed literal, ``gt``/``gte``/``lt``/``lte``
with int and double literals; see ``tests/compiled_selectors.py``) against
documents holding every value type at every level, and their variants,
through every view: OTLP JSON, OTLP protobuf as Edge decodes it, OTLP protobuf
log messages, Datadog logs and series, the Agent's protobuf series. ``results()`` gives the outcome of
every run as JSON-able data.

Run as ``python -m tests.compiled_source``, it imports Sluice from its ``.py``
sources even where a compiled module sits next to them, with the C readers
and scanners off (``SLUICE_NATIVE=0``), and prints the same data: a test
compares the two.
"""

from __future__ import annotations

import copy
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import random
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

ODD_VALUES: list[Any] = [
    {"intValue": "7"},
    {"doubleValue": 1.5},
    {"boolValue": True},
    {"bytesValue": "AAE="},
    {"arrayValue": {"values": [{"stringValue": "x"}, {"intValue": "1"}]}},
    {"kvlistValue": {"values": [{"key": "k", "value": {"stringValue": "error"}}]}},
    {},
    {"stringValue": ""},
]
MALFORMED_VALUES: list[Any] = [5, "bare string", None, [1, 2], {"stringValue": 3}]
CONTAINERS = {
    "resourceLogs": ("scopeLogs", "logRecords"),
    "resourceMetrics": ("scopeMetrics", "metrics"),
    "resourceSpans": ("scopeSpans", "spans"),
}


class _SourceFirst(importlib.abc.MetaPathFinder):
    """Loads ``sluice`` modules from ``.py`` even where a compiled one exists."""

    def find_spec(
        self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if name != "sluice" and not name.startswith("sluice."):
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.origin is None or spec.origin.endswith(".py"):
            return spec
        origin = Path(spec.origin)  # a module's, or a package's __init__
        source = origin.with_name(origin.name.partition(".")[0] + ".py")
        return importlib.util.spec_from_file_location(
            name, source, submodule_search_locations=spec.submodule_search_locations
        )


def _records(doc: Any) -> Iterator[dict[str, Any]]:
    for top, (scopes_key, records_key) in CONTAINERS.items():
        for resource in doc.get(top, []):
            yield resource.get("resource", {})
            for scope in resource.get(scopes_key, []):
                yield scope.get("scope", {})
                for record in scope.get(records_key, []):
                    yield record
                    yield from _points(record)
                    yield from record.get("events", [])


def _points(metric: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for kind in ("gauge", "sum", "histogram", "exponentialHistogram", "summary"):
        if isinstance(metric.get(kind), dict):
            yield from metric[kind].get("dataPoints", [])


def _mutate(doc: Any, rng: random.Random, malformed: bool) -> Any:
    doc = copy.deepcopy(doc)
    odd = MALFORMED_VALUES if malformed else ODD_VALUES
    for item in _records(doc):
        if "body" in item or rng.random() < 0.2:
            roll = rng.random()
            if roll < 0.6:
                item["body"] = copy.deepcopy(rng.choice(odd))
            elif roll < 0.7:
                item.pop("body", None)
        attributes = item.get("attributes")
        if isinstance(attributes, list) and attributes:
            kv = rng.choice(attributes)
            roll = rng.random()
            if roll < 0.5:
                kv["value"] = copy.deepcopy(rng.choice(odd))
            elif roll < 0.65:
                attributes.append({**copy.deepcopy(kv), "value": {"stringValue": "dup"}})
            elif roll < 0.75:
                kv.pop("value", None)
            elif malformed and roll < 0.9:
                attributes.append(rng.choice(MALFORMED_VALUES))
        if malformed and rng.random() < 0.1:
            item["attributes"] = "not a list"
        if "severityText" in item and rng.random() < 0.3:
            item["severityText"] = rng.choice([7, "", "DEBUG"]) if malformed else ""
    return doc


def _outcome(outcome: Any) -> dict[str, Any]:
    fields = ("records", "no_match", "kept", "dropped", "sampled", "transformed", "malformed")
    return {name: getattr(outcome, name) for name in fields} | {"modified": outcome.modified}


def _compile(policies: Any) -> tuple[Any, Any]:
    """A snapshot of `policies` and the runtime its counters live in."""
    from sluice.policy import PolicySnapshot
    from sluice.policy.parse import load_document
    from sluice.policy.stats import PolicyRuntime

    runtime = PolicyRuntime()
    return PolicySnapshot.compile(load_document(policies).policies, runtime), runtime


def _run(
    policies: Any, doc: Any, signal_name: str, wire: str, compiled: tuple[Any, Any] | None = None
) -> dict[str, Any]:
    """Evaluate `doc` (OTLP JSON, or a Datadog body for the ``datadog`` wire)
    through the view of `wire`, with `policies` compiled afresh or, when they
    hold no state that a run changes (no rate limits), `compiled` once."""
    from sluice.policy import Signal
    from sluice.telemetry import datadog, datadog_metrics, otlp_codec
    from sluice.telemetry.otlp_json import json_view
    from sluice.telemetry.otlp_proto import proto_view
    from sluice.telemetry.wire.agent_payload_pb2 import MetricPayload
    from tests.telemetry.otlp_convert import REQUESTS, to_json, to_proto

    signal = {"log": Signal.LOG, "metric": Signal.METRIC, "trace": Signal.TRACE}[signal_name]
    snapshot, runtime = compiled or _compile(policies)
    random.seed(20261121)  # unkeyed sampling draws the same numbers in both builds
    out: Any
    if wire == "json":
        outcome = snapshot.evaluate(signal, json_view(signal), doc)
        out = doc
    elif wire == "datadog":
        batch: Any = (
            datadog.DatadogBatch.parse(doc)
            if signal is Signal.LOG
            else datadog_metrics.DatadogSeries.parse(doc)
        )
        view = datadog.LOG_VIEW if signal is Signal.LOG else datadog_metrics.SERIES_VIEW
        outcome = snapshot.evaluate(signal, view, batch)
        out = json.loads(batch.encode())
    elif wire == "agent":
        payload = datadog_metrics.AgentPayload.parse_series(doc)
        outcome = snapshot.evaluate(signal, datadog_metrics.AGENT_SERIES_VIEW, payload)
        out = [series.metric for series in MetricPayload.FromString(payload.encode()).series]
    elif wire == "message":  # protobuf messages all the way down (logs: not Edge's view)
        message = to_proto(doc, signal)
        outcome = snapshot.evaluate(signal, proto_view(signal), message)
        out = to_json(message)
    else:
        body = to_proto(doc, signal).SerializeToString()
        decoded, view = otlp_codec.decode(signal, otlp_codec.PROTOBUF, body)
        outcome = snapshot.evaluate(signal, view, decoded)
        out = to_json(REQUESTS[signal].FromString(otlp_codec.encode(otlp_codec.PROTOBUF, decoded)))
    counts = runtime.stats.pending()  # this run's counts
    runtime.stats.commit(counts)
    stats = [
        {"policy_id": pid, "hits": c.hits, "misses": c.misses, "transform": c.transform}
        for pid, c in sorted(counts.items())
    ]
    return {"out": out, "stats": stats, "outcome": _outcome(outcome)}


def _attempt(
    policies: Any, doc: Any, signal_name: str, wire: str, compiled: tuple[Any, Any] | None = None
) -> dict[str, Any]:
    try:
        return _run(policies, copy.deepcopy(doc), signal_name, wire, compiled)
    except Exception as problem:  # both builds must fail alike
        return {"error": type(problem).__name__}


def _selector_runs(variants: int) -> dict[str, Any]:
    """Every selector under every condition type, through every view."""
    from sluice.policy import Signal
    from tests import compiled_selectors

    found: dict[str, Any] = {}
    for signal in Signal:
        policies = compiled_selectors.policies(signal)
        compiled = _compile(policies)
        wires = ("json", "protobuf", "message") if signal is Signal.LOG else ("json", "protobuf")
        for n, document in enumerate(compiled_selectors.documents(signal)):
            rng = random.Random(f"selectors/{signal.value}/{n}")
            docs = [("typed", document, wires)]
            docs += [(f"odd{v}", _mutate(document, rng, False), wires) for v in range(variants)]
            docs.append(("malformed", _mutate(document, rng, True), ("json",)))
            for label, doc, doc_wires in docs:
                for wire in doc_wires:
                    key = f"selectors/{signal.value}/{n}/{label}/{wire}"
                    found[key] = _attempt(policies, doc, signal.value, wire, compiled)
        datadog = (
            compiled_selectors.datadog_documents()
            if signal is Signal.LOG
            else compiled_selectors.series_documents()
            if signal is Signal.METRIC
            else []
        )
        for n, body in enumerate(datadog):
            key = f"selectors/{signal.value}/datadog{n}/typed/datadog"
            found[key] = _attempt(policies, body, signal.value, "datadog", compiled)
        if signal is Signal.METRIC:
            for n, body in enumerate(compiled_selectors.agent_series_documents()):
                key = f"selectors/metric/agent{n}/typed/agent"
                found[key] = _attempt(policies, body, signal.value, "agent", compiled)
    return found


def results(variants: int = 4) -> dict[str, Any]:
    """Every run's output, stats and counts, keyed by case, batch, variant and view."""
    from tests.conformance.harness import batches, file_mode_cases

    frozen = time.monotonic()
    real_monotonic = time.monotonic
    time.monotonic = lambda: frozen  # rate-limit windows never roll over mid-run
    try:
        found: dict[str, Any] = {}
        for case in file_mode_cases():
            policies = json.loads((case / "policies.json").read_text())
            for n, batch in enumerate(batches(case)):
                original = json.loads(batch.input.read_text())
                rng = random.Random(f"{case.name}/{n}")
                docs = [("original", original, ("json", "protobuf"))]
                for v in range(variants):
                    docs.append((f"odd{v}", _mutate(original, rng, False), ("json", "protobuf")))
                docs.append(("malformed", _mutate(original, rng, True), ("json",)))
                for label, doc, wires in docs:
                    for wire in wires:
                        key = f"{case.name}/{n}/{label}/{wire}"
                        found[key] = _attempt(policies, doc, batch.signal, wire)
        found.update(_selector_runs(variants))
        return found
    finally:
        time.monotonic = real_monotonic


def main() -> None:
    # Plain Python all the way: no mypyc modules, no C readers or scanners
    # (the Hyperscan binding scans), against the compiled and native build.
    os.environ["SLUICE_NATIVE"] = "0"
    sys.meta_path.insert(0, _SourceFirst())
    loaded = [name for name in sys.modules if name == "sluice" or name.startswith("sluice.")]
    assert not loaded, f"imported before the source-first finder: {loaded}"
    json.dump(results(), sys.stdout, sort_keys=True)
    import sluice.policy.snapshot

    assert str(sluice.policy.snapshot.__file__).endswith(".py")
    import sluice.policy.native

    assert not sluice.policy.native.ACTIVE


if __name__ == "__main__":
    main()
