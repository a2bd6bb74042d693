"""Decoder fuzzing, the long run: the fuzzers of ``tests/faults/fuzzing.py``
(structure-aware mutants of valid OTLP protobuf, OTLP JSON and Datadog bodies
through Edge's request path, in process) for a while per target.

Prints one row per target: inputs tried, crashes (an exception out of the
request path: Edge would answer 500), exceptions reaching the request path
(an evaluation that failed, so the whole request went out unfiltered, or a
view or engine error caught per record), bodies wrongly refused as unreadable,
records lost, and what the inputs were (unreadable bodies, records, records
kept as malformed, records dropped by policies). Exit status 1 when anything
but the last four is not zero.

Run from the repository root: ``.venv/bin/python bench/fuzz.py [--seconds 60]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

if not __package__:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.faults import fuzzing

COLUMNS = (
    "target",
    "inputs",
    "inputs/s",
    "crashes",
    "exceptions",
    "wrongly unreadable",
    "records lost",
    "unreadable bodies",
    "records",
    "malformed",
    "dropped",
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="per target")
    parser.add_argument("--seed", type=int, default=20261124)
    parser.add_argument("--only", default="", help="targets whose name contains this")
    args = parser.parse_args()
    policies = fuzzing.snapshot()
    rows = []
    failed = False
    for target in fuzzing.targets():
        if args.only not in target.name:
            continue
        print(f"fuzzing {target.name} for {args.seconds:g} s", file=sys.stderr)
        started = time.monotonic()
        report = fuzzing.run(target, policies, args.seed, args.seconds)
        elapsed = time.monotonic() - started
        failed = failed or report.problems > 0
        for example in report.examples:
            print(f"  {example}", file=sys.stderr)
        rows.append(
            (
                target.name,
                f"{report.inputs:,}",
                f"{report.inputs / elapsed:,.0f}",
                str(report.crashes),
                str(report.failed_open + report.record_errors),
                str(report.wrongly_unreadable),
                str(report.records_lost + report.opaque_lost),
                f"{report.unreadable:,}",
                f"{report.records:,}",
                f"{report.malformed:,}",
                f"{report.dropped:,}",
            )
        )
    print("| " + " | ".join(COLUMNS) + " |")
    print("|---|" + "---:|" * (len(COLUMNS) - 1))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
