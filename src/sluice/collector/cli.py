"""``sluice-collector``: run, validate or describe a collector distribution.

The command line follows the OpenTelemetry Collector's: ``--config`` (repeat
to merge; a path, ``env:NAME`` or ``yaml:...``), ``--set key.path=value``,
``validate`` (or ``--dry-run``), ``components``, ``--version``. With no
``--config`` the built-in default config runs.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

import yaml

from sluice import heap
from sluice.collector import config as collector_config
from sluice.collector.component import SIGNAL_NAMES, BuildInfo, ConnectorFactory, Kind
from sluice.collector.confmap import expand, sources
from sluice.collector.confmap.decode import Problems
from sluice.collector.default_config import default_yaml
from sluice.collector.distribution import SLUICE_COLLECTOR, Distribution
from sluice.collector.factories import Factories
from sluice.logs import env_level
from sluice.transport import loop

NO_CONFIG = "at least one config flag must be provided"
"""Upstream's answer when a distribution without a default config gets none."""


def _parser(distribution: Distribution) -> argparse.ArgumentParser:
    program = distribution.command
    default = (
        "with no --config it runs the built-in default (OTLP on localhost:4317/4318, the "
        "bundled example policies, the debug exporter)"
        if distribution.default_config
        else "--config is required"
    )
    parser = argparse.ArgumentParser(
        prog=program,
        description=f"{distribution.description}. Reads standard collector YAML; {default}.",
        epilog="commands: validate (load and check the config, start nothing), components "
        "(list the components built in and their stability)",
    )
    parser.add_argument("command", nargs="?", choices=["validate", "components"])
    parser.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="URI",
        help="config file path, env:NAME or yaml:SNIPPET; repeat to merge in order",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one value, e.g. --set processors.batch.timeout=2s (applied last)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="validate the config and exit (same as validate)"
    )
    parser.add_argument(
        "--feature-gates",
        action="append",
        default=[],
        metavar="IDS",
        help="accepted for upstream command lines; this distribution registers no feature "
        "gates, so each one named is reported and ignored",
    )
    parser.add_argument(
        "--version", action="version", version=f"{program} version {distribution.version}"
    )
    return parser


def components_yaml(factories: Factories, distribution: Distribution) -> str:
    """Upstream's ``components`` output shape."""
    doc: dict[str, object] = {
        "buildinfo": {
            "command": distribution.command,
            "description": distribution.description,
            "version": distribution.version,
        }
    }
    for kind in Kind:
        items = []
        for type_ in factories.types(kind):
            factory = factories.by_kind[kind][type_]
            if kind is Kind.CONNECTOR:
                assert isinstance(factory, ConnectorFactory)
                stability = {
                    f"{SIGNAL_NAMES[a]}-to-{SIGNAL_NAMES[b]}": factory.stability.get(
                        f"{SIGNAL_NAMES[a]}_to_{SIGNAL_NAMES[b]}", "undefined"
                    ).capitalize()
                    for a in SIGNAL_NAMES
                    for b in SIGNAL_NAMES
                }
            else:
                stability = {k: v.capitalize() for k, v in sorted(factory.stability.items())}
            items.append({"name": type_, "module": factory.module, "stability": stability})
        doc[kind.value] = items
    return yaml.safe_dump(doc, sort_keys=False, indent=4, default_flow_style=False)


def load(
    configs: list[str], sets: list[str], factories: Factories
) -> tuple[collector_config.Config | None, list[str]]:
    """The config, or the problems (one line each, naming the source when known)."""
    try:
        loaded = (
            sources.Loaded(configs, sets)
            if configs
            else sources.Loaded([f"yaml:{default_yaml()}"], sets)
        )
    except sources.SourceError as problem:
        return None, [str(problem)]
    problems = Problems()
    raw = expand.expand(loaded.raw, "", problems)
    if problems:
        return None, _located(loaded, problems.lines, problems.paths, configs)
    try:
        return collector_config.load(raw, factories), []
    except collector_config.ConfigInvalid as invalid:
        return None, _located(loaded, invalid.problems, invalid.paths, configs)


def _located(
    loaded: sources.Loaded, lines: list[str], paths: list[str], configs: list[str]
) -> list[str]:
    if not configs:
        return lines
    out = []
    for line, path in zip(lines, paths, strict=True):
        origin = loaded.origin(path) if path else (configs[0] if len(configs) == 1 else None)
        out.append(f"{origin}: {line}" if origin else line)
    return out


def ignored_gates(values: list[str]) -> list[str]:
    """One warning per gate named by ``--feature-gates`` (comma-separated ids, each
    optionally ``+`` or ``-``): upstream refuses ids it does not register, but
    refusing would stop a swapped binary over a flag that changes nothing here."""
    ids = [part.strip() for value in values for part in value.split(",") if part.strip()]
    return [
        f"--feature-gates: {gate!r} ignored: this distribution registers no feature gates"
        for gate in ids
    ]


def main(argv: Sequence[str] | None = None, distribution: Distribution = SLUICE_COLLECTOR) -> int:
    """``sluice-collector``, or a program ``sluice-builder`` wrote (which
    passes its own distribution)."""
    program = distribution.command
    args = _parser(distribution).parse_args(argv)
    factories = Factories.load(distribution.packages)
    if args.command == "components":
        sys.stdout.write(components_yaml(factories, distribution))
        return 0
    if not args.config and not distribution.default_config:
        print(f"{program}: {NO_CONFIG}", file=sys.stderr)
        return 1
    config, problems = load(args.config, args.set, factories)
    try:
        env_level()
    except ValueError as bad:
        problems.append(str(bad))
        config = None
    if config is None:
        for line in problems:
            print(line, file=sys.stderr)
        print(f"{program}: the config does not load ({len(problems)} problem(s))", file=sys.stderr)
        return 1
    warnings = ignored_gates(args.feature_gates)
    if args.command == "validate" or args.dry_run:
        for line in warnings:
            print(f"{program}: warning: {line}", file=sys.stderr)
        print("config is valid")
        return 0
    from sluice.collector.service import log_as, run

    log_as(config)
    for line in warnings:
        logging.getLogger("sluice.collector").warning(line)
    heap.limit_arenas()
    build_info = BuildInfo(program, distribution.description, distribution.version)
    return loop.run(
        run(config, build_info=build_info, reload=lambda: load(args.config, args.set, factories))
    )
