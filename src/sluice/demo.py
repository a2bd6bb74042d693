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


POLICY_COUNTER = "otelcol_processor_policy_records_total"
_PATHS = {Signal.LOG: "/v1/logs", Signal.METRIC: "/v1/metrics", Signal.TRACE: "/v1/traces"}


def _policy_counts(metrics_url: str) -> dict[tuple[str, str], float]:
    """``(telemetry_type, result) -> count`` from the collector's metrics."""
    import urllib.request

    from prometheus_client.parser import text_string_to_metric_families

    counts: dict[tuple[str, str], float] = {}
    with urllib.request.urlopen(metrics_url, timeout=5) as answer:
        text = answer.read().decode()
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == POLICY_COUNTER:
                key = (sample.labels.get("telemetry_type", ""), sample.labels.get("result", ""))
                counts[key] = counts.get(key, 0.0) + sample.value
    return counts


def _wait_until_listening(url: str, wait_secs: float, out: TextIO) -> bool:
    """Whether something accepts connections at ``url``'s host and port within
    ``wait_secs``: a demo started right after its collector waits for it
    rather than failing on the collector's start-up time."""
    import socket
    import time
    import urllib.parse

    parts = urllib.parse.urlsplit(url)
    address = (
        parts.hostname or "localhost",
        parts.port or (443 if parts.scheme == "https" else 80),
    )
    deadline = time.monotonic() + wait_secs
    said = False
    while True:
        try:
            socket.create_connection(address, timeout=1).close()
            return True
        except OSError:
            if time.monotonic() >= deadline:
                return False
        if not said:
            print(f"waiting for {url} (up to {wait_secs:g} s)", file=out, flush=True)
            said = True
        time.sleep(0.1)


def send_demo(out: TextIO, endpoint: str, metrics_url: str | None, wait_secs: float = 30) -> int:
    """Send the bundled logs, metrics and traces to a collector over OTLP/HTTP
    JSON; print each answer and, from the collector's metrics, what its
    policies did with them."""
    import urllib.error
    import urllib.request

    for url in (endpoint, metrics_url):
        if url and not _wait_until_listening(url, wait_secs, out):
            print(f"cannot reach {url}: nothing listens there", file=out)
            return 1
    try:
        before = _policy_counts(metrics_url) if metrics_url else {}
    except (OSError, ValueError) as problem:
        print(f"cannot read {metrics_url}: {problem}", file=out)
        return 1
    failed = False
    for signal, name in EXAMPLES.items():
        body = resources.files("sluice.examples").joinpath(name).read_bytes()
        url = endpoint.rstrip("/") + _PATHS[signal]
        request = urllib.request.Request(
            url, body, {"Content-Type": "application/json"}, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                status = answer.status
        except urllib.error.HTTPError as refused:
            status, failed = refused.code, True
        except OSError as problem:
            print(f"cannot reach {url}: {problem}", file=out)
            return 1
        print(f"sent {name:<13} to {url}: HTTP {status}", file=out)
    if metrics_url:
        import time

        time.sleep(0.5)  # the batch processor holds records up to 200 ms
        try:
            after = _policy_counts(metrics_url)
        except (OSError, ValueError) as problem:
            print(f"cannot read {metrics_url}: {problem}", file=out)
            return 1
        print(f"\nwhat the policies did (from {metrics_url}):", file=out)
        print(f"{'signal':<9}{'result':<13}{'records':>8}", file=out)
        for key in sorted(after):
            delta = after[key] - before.get(key, 0.0)
            if delta:
                print(f"{key[0]:<9}{key[1]:<13}{delta:>8g}", file=out)
    print("\nThe records that passed are in the collector's debug exporter output.", file=out)
    return 1 if failed else 0
