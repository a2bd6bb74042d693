"""``sluice-edge CONFIG.json`` and ``sluice-edge-datadog CONFIG.json``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from sluice import __version__
from sluice.edge.app import run
from sluice.edge.config import load_config
from sluice.providers.config import ConfigError


def _main(argv: Sequence[str] | None, program: str) -> int:
    parser = argparse.ArgumentParser(
        prog=program,
        description="Sluice Edge: a policy proxy for OTLP/HTTP and Datadog intake. Filters "
        "telemetry with policies and forwards the rest to upstream_url.",
    )
    parser.add_argument("config", metavar="CONFIG.json", help="Edge configuration file")
    parser.add_argument("--version", action="version", version=f"{program} {__version__}")
    args = parser.parse_args(argv)
    try:
        config = load_config(args.config)
    except ConfigError as problem:
        print(f"{program}: config error: {problem}", file=sys.stderr)
        return 2
    return run(config, program)


def main(argv: Sequence[str] | None = None) -> int:
    """``sluice-edge``: OTLP/HTTP (and Datadog) routes."""
    return _main(argv, "sluice-edge")


def main_datadog(argv: Sequence[str] | None = None) -> int:
    """``sluice-edge-datadog``: the same program, named for Datadog Agent sidecars
    (adds DD_API_KEY as DD-API-KEY to forwarded Datadog requests that lack one)."""
    return _main(argv, "sluice-edge-datadog")
