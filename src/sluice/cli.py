"""Command-line entry points: parse arguments, call into the library."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from sluice import __version__
from sluice.demo import run_demo
from sluice.evaluate import InputError, evaluate_document, read_json, stats_document, write_json
from sluice.policy import LoadReport, PolicySnapshot, Signal
from sluice.providers.file import PolicyFileError, read_policy_file

log = logging.getLogger("sluice")

SIGNALS = {"log": Signal.LOG, "metric": Signal.METRIC, "trace": Signal.TRACE}


def _report(report: LoadReport, source: str) -> int:
    """Log document warnings and per-policy errors; returns the error count."""
    for warning in report.warnings:
        log.warning("%s: %s", source, warning)
    errors = 0
    for policy in report.policies:
        if policy.enabled:
            for error in policy.errors:
                log.error("%s: policy %r skipped: %s", source, policy.id, error)
                errors += 1
    return errors


def cmd_eval(args: argparse.Namespace) -> int:
    report = read_policy_file(args.policies)
    _report(report, args.policies)
    snapshot = PolicySnapshot.compile(report.policies)
    doc = read_json(args.input)
    evaluate_document(snapshot, doc, SIGNALS[args.signal] if args.signal else None)
    write_json(args.output, doc)
    if args.stats:
        write_json(args.stats, stats_document(snapshot.runtime.stats))
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    failed = 0
    for path in args.files:
        report = read_policy_file(path)
        for warning in report.warnings:
            print(f"{path}: warning: {warning}")
        for policy in report.policies:
            if not policy.enabled:
                continue
            for error in policy.errors:
                print(f"{path}: {policy.id}: {error}")
                failed += 1
        valid = sum(1 for p in report.policies if p.enabled and p.valid and p.signal)
        print(
            f"{path}: {valid} valid, {failed} error(s), "
            f"{sum(1 for p in report.policies if not p.enabled)} disabled"
        )
    return 1 if failed else 0


def cmd_demo(args: argparse.Namespace) -> int:
    return run_demo(sys.stdout, Path(args.output_dir) if args.output_dir else None)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sluice", description="Telemetry policy filtering for OpenTelemetry and Datadog."
    )
    parser.add_argument("--version", action="version", version=f"sluice {__version__}")
    parser.add_argument(
        "--log-level", default="warning", choices=["debug", "info", "warning", "error"]
    )
    sub = parser.add_subparsers(dest="command", required=True)

    ev = sub.add_parser("eval", help="apply a policy file to one OTLP JSON export request")
    ev.add_argument("--policies", required=True, help="policy file (JSON)")
    ev.add_argument("--input", required=True, help="OTLP JSON export request to filter")
    ev.add_argument("--output", required=True, help="where to write the filtered request")
    ev.add_argument("--stats", help="where to write per-policy hit/miss counts")
    ev.add_argument(
        "--signal",
        choices=sorted(SIGNALS),
        help="log, metric or trace (default: from the input's top-level key)",
    )
    ev.set_defaults(run=cmd_eval)

    check = sub.add_parser("check", help="validate policy files; exit 1 on any error")
    check.add_argument("files", nargs="+", metavar="POLICIES.json")
    check.set_defaults(run=cmd_check)

    demo = sub.add_parser("demo", help="run the bundled example policies on bundled telemetry")
    demo.add_argument("--output-dir", help="also write the filtered documents here")
    demo.set_defaults(run=cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=args.log_level.upper(),
        stream=sys.stderr,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        code: int = args.run(args)
    except (PolicyFileError, InputError) as problem:
        print(f"sluice: error: {problem}", file=sys.stderr)
        return 1
    return code


if __name__ == "__main__":
    sys.exit(main())
