"""``sluice demo``: the bundled example policies applied to bundled logs,
metrics and traces, with a summary of what each policy did."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

from sluice.evaluate import evaluate_document, write_json
from sluice.policy import BatchOutcome, PolicySnapshot, Signal, load_document

EXAMPLES = {Signal.LOG: "logs.json", Signal.METRIC: "metrics.json", Signal.TRACE: "traces.json"}


def _example(name: str) -> Any:
    return json.loads(resources.files("sluice.examples").joinpath(name).read_text("utf-8"))


def run_demo(out: TextIO, output_dir: Path | None = None) -> int:
    """Evaluate the bundled examples; print the summary; optionally write the
    filtered documents to `output_dir`. Returns the process exit code."""
    report = load_document(_example("policies.json"))
    snapshot = PolicySnapshot.compile(report.policies)
    print(
        f"Sluice demo: {len(report.policies)} bundled policies "
        "(src/sluice/examples/policies.json) on bundled telemetry.\n",
        file=out,
    )
    print(
        f"{'signal':<8}{'in':>5}{'out':>6}{'dropped':>9}{'sampled':>9}"
        f"{'transformed':>13}{'no match':>10}",
        file=out,
    )
    outputs: dict[Signal, Any] = {}
    for signal, name in EXAMPLES.items():
        doc = _example(name)
        outcome: BatchOutcome = evaluate_document(snapshot, doc, signal)
        outputs[signal] = doc
        print(
            f"{signal.value:<8}{outcome.records:>5}{outcome.remaining:>6}{outcome.dropped:>9}"
            f"{outcome.sampled:>9}{outcome.transformed:>13}{outcome.no_match:>10}",
            file=out,
        )
    print(f"\n{'policy':<28}{'hits':>6}{'misses':>8}", file=out)
    totals = snapshot.runtime.stats.totals()
    for policy in snapshot.policies:
        counts = totals.get(policy.id)
        hits, misses = (counts.hits, counts.misses) if counts else (0, 0)
        print(f"{policy.id:<28}{hits:>6}{misses:>8}", file=out)
    redacted = _first_redacted(outputs[Signal.LOG])
    if redacted is not None:
        print("\nA transformed record (card number masked, e-mail removed):", file=out)
        print("  " + json.dumps(redacted, separators=(",", ":")), file=out)
    if output_dir is not None:
        output_dir.mkdir(parents=True, exist_ok=True)
        for signal, doc in outputs.items():
            write_json(output_dir / EXAMPLES[signal], doc)
        print(f"\nFiltered documents written to {output_dir}/", file=out)
    return 0


def _first_redacted(doc: Any) -> Any:
    for resource in doc.get("resourceLogs", []):
        for scope in resource.get("scopeLogs", []):
            for record in scope.get("logRecords", []):
                keys = [a.get("key") for a in record.get("attributes", [])]
                if "sluice.redacted" in keys:
                    return {"body": record.get("body"), "attributes": record.get("attributes")}
    return None
