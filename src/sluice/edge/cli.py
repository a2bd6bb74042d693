"""``sluice-edge [validate] CONFIG.json`` and ``sluice-edge-datadog ...``.

Serving, everything on stderr is a log line in the configured format, from
the first line on (records before the config is read are held, then written
in its format); a config that does not load is logged one problem per line,
exit 1. ``validate`` (or ``--dry-run``) prints plain text instead.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from sluice import __version__
from sluice.edge.app import run
from sluice.edge.config import load_config
from sluice.logs import configure_logging, env_level, hold_early_records
from sluice.providers.config import ConfigError

log = logging.getLogger("sluice.edge")


def _parser(program: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=program,
        usage="%(prog)s [validate] CONFIG.json [--dry-run]",
        description="Sluice Edge: a policy proxy for OTLP/HTTP and Datadog intake. Filters "
        "telemetry with policies and forwards the rest to upstream_url.",
        epilog="validate: check the config, load every policy provider once and print what "
        "would run, then exit (0 valid, 1 not); nothing listens",
    )
    parser.add_argument("words", nargs="+", metavar="CONFIG.json", help="Edge configuration file")
    parser.add_argument("--dry-run", action="store_true", help="same as the validate command")
    parser.add_argument("--version", action="version", version=f"{program} {__version__}")
    return parser


def _arguments(argv: Sequence[str] | None, program: str) -> tuple[str, bool]:
    """The config path and whether to validate only. ``validate`` is a
    command only before a path (``./validate`` names a file of that name);
    anything else is a usage error, exit 2."""
    parser = _parser(program)
    args = parser.parse_intermixed_args(argv)
    words: list[str] = args.words
    validating = words[0] == "validate"
    if validating:
        words = words[1:]
        if not words:
            parser.error("validate needs the config file: validate CONFIG.json")
    if len(words) > 1:
        parser.error(f"unrecognized arguments: {' '.join(words[1:])}")
    return words[0], validating or args.dry_run


def _validate(path: str, program: str) -> int:
    from sluice.edge.validate import validate

    try:
        env_level()
        config = load_config(path)
    except (ConfigError, ValueError) as problem:
        for line in str(problem).splitlines():
            print(line, file=sys.stderr)
        print(f"{program}: the config does not load", file=sys.stderr)
        return 1
    level = env_level()
    if level is None:
        logging.disable(logging.CRITICAL)  # the report says what the logs would
    else:
        configure_logging(level)
    return validate(config, program, sys.stdout, sys.stderr)


def _main(argv: Sequence[str] | None, program: str) -> int:
    path, validating = _arguments(argv, program)
    if validating:
        return _validate(path, program)
    hold_early_records()
    try:
        env_level()
        config = load_config(path)
    except (ConfigError, ValueError) as problem:
        configure_logging("info")
        for line in str(problem).splitlines():
            log.error("config error: %s", line)
        return 1
    return run(config, program)


def main(argv: Sequence[str] | None = None) -> int:
    """``sluice-edge``: OTLP/HTTP (and Datadog) routes."""
    return _main(argv, "sluice-edge")


def main_datadog(argv: Sequence[str] | None = None) -> int:
    """``sluice-edge-datadog``: the same program, named for Datadog Agent sidecars
    (adds DD_API_KEY as DD-API-KEY to forwarded Datadog requests that lack one)."""
    return _main(argv, "sluice-edge-datadog")
