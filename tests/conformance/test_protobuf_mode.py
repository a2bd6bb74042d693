"""Every public file-mode conformance testcase, and Sluice's own ones, again
as OTLP protobuf.

The conformance inputs are OTLP JSON; here each batch is converted to the
protobuf wire form, decoded by the codec Edge uses (log record attributes stay
raw bytes, see ``sluice.telemetry.otlp_raw``), evaluated, re-encoded, and
compared with the expected output like the JSON runs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sluice.evaluate import stats_document
from sluice.policy import PolicySnapshot, Signal
from sluice.policy.parse import load_document
from sluice.policy.stats import PolicyRuntime
from sluice.telemetry import otlp_codec
from tests.conformance.harness import EXTRA_TESTCASES, batches, file_mode_cases, merge_stats
from tests.conformance.normalize import normalize
from tests.telemetry.otlp_convert import REQUESTS, to_json, to_proto

CASES = file_mode_cases() + file_mode_cases(EXTRA_TESTCASES)
SIGNALS = {"log": Signal.LOG, "metric": Signal.METRIC, "trace": Signal.TRACE}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_conformance_case_as_protobuf(case: Path) -> None:
    policies = json.loads((case / "policies.json").read_text())
    stats = []
    for n, batch in enumerate(batches(case), start=1):
        signal = SIGNALS[batch.signal]
        wire = to_proto(json.loads(batch.input.read_text()), signal).SerializeToString()
        runtime = PolicyRuntime()  # one process per batch, as in the JSON runs
        snapshot = PolicySnapshot.compile(load_document(policies).policies, runtime)
        decoded, view = otlp_codec.decode(signal, otlp_codec.PROTOBUF, wire)
        snapshot.evaluate(signal, view, decoded)
        out = REQUESTS[signal].FromString(otlp_codec.encode(otlp_codec.PROTOBUF, decoded))
        expected = json.loads(batch.expected.read_text())
        assert normalize(to_json(out)) == normalize(expected), f"batch {n} output differs"
        stats.append(stats_document(runtime.stats))
    actual_stats = stats[0] if len(stats) == 1 else merge_stats(stats)
    assert actual_stats == json.loads((case / "expected_stats.json").read_text())
