"""``sluice-collector``: run, validate or describe a collector distribution.

The command line follows the OpenTelemetry Collector's: ``--config`` (repeat
to merge; a path, ``env:NAME`` or ``yaml:...``), ``--set key.path=value``,
``validate`` (or ``--dry-run``), ``components``, ``--version``. With no
``--config`` the built-in default config runs.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence
from typing import Any

from sluice import heap
from sluice.collector import config as collector_config
from sluice.collector.component import SIGNAL_NAMES, BuildInfo, Factory, Kind
from sluice.collector.confmap import expand, goyaml, sources
from sluice.collector.confmap.decode import Problems
from sluice.collector.default_config import default_yaml
from sluice.collector.distribution import SLUICE_COLLECTOR, Distribution
from sluice.collector.factories import Factories
from sluice.commandline import CommandParser
from sluice.logs import env_level
from sluice.transport import loop

NO_CONFIG = "at least one config flag must be provided"
"""Upstream's answer when a distribution without a default config gets none."""


SUBCOMMANDS = ("validate", "components")

CONFIG_FLAGS = ("--config", "--set", "--feature-gates", "--dry-run")
"""The flags of running and of ``validate``; ``components`` takes none (upstream
adds its flag set to the root and validate commands only)."""


ROOT_FLAGS = ("--version", "-v")
"""Flags of the root command alone: cobra gives a subcommand no version flag."""


def _foreign_flag(argv: Sequence[str], names: Sequence[str]) -> str | None:
    """The first flag of `argv` named in `names`, as written (``-v=true``)."""
    for token in argv:
        if token == "--":
            break
        if token.split("=", 1)[0] in names:
            return token
    return None


def _parser(distribution: Distribution) -> CommandParser:
    program = distribution.command
    default = (
        "with no --config it runs the built-in default (OTLP on localhost:4317/4318, the "
        "bundled example policies, the debug exporter)"
        if distribution.default_config
        else "--config is required"
    )
    parser = CommandParser(
        commands=SUBCOMMANDS,
        prog=program,
        description=f"{distribution.description}. Reads standard collector YAML; {default}.",
        epilog="commands: validate (load and check the config, start nothing), components "
        "(list the components built in and their stability), help",
    )
    parser.add_argument("command", nargs="*", help=argparse.SUPPRESS)
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
    parser.add_switch("--dry-run", "validate the config and exit (same as validate)")
    parser.add_argument(
        "--feature-gates",
        action="append",
        default=[],
        metavar="IDS",
        help="accepted for upstream command lines; this distribution registers no feature "
        "gates, so each one named is reported and ignored",
    )
    if distribution.version:  # as cobra, which has no version flag for an empty version
        parser.add_switch("--version", f"version for {program}", short="-v")
    return parser


def components_yaml(distribution: Distribution) -> str:
    """Upstream's ``components`` output, as its yaml.v3 writes it."""
    listed: dict[Kind, list[tuple[str, str, Factory[Any]]]] = {kind: [] for kind in Kind}
    for index, package in enumerate(distribution.packages):
        factory: Factory[Any] = importlib.import_module(package).FACTORY
        module = (
            distribution.modules[index]
            if distribution.modules
            else f"{factory.module} v{factory.version}"
        )
        listed[factory.kind].append((factory.component_type, module, factory))
    doc: dict[str, object] = {
        "buildinfo": {
            "command": distribution.command,
            "description": distribution.description,
            "version": distribution.version,
        }
    }
    for kind in Kind:
        doc[kind.value] = [
            {"name": type_, "module": module, "stability": _stability(factory)}
            for type_, module, factory in sorted(listed[kind], key=lambda item: item[0])
        ]
    return goyaml.dump(doc)


def _stability(factory: Factory[Any]) -> dict[str, str]:
    """The level of each signal upstream lists for the kind; ``Undefined``
    where the component does not support it."""
    if factory.kind is Kind.EXTENSION:
        keys = {"extension": "extension"}
    elif factory.kind is Kind.CONNECTOR:
        keys = {
            f"{SIGNAL_NAMES[a]}-to-{SIGNAL_NAMES[b]}": f"{SIGNAL_NAMES[a]}_to_{SIGNAL_NAMES[b]}"
            for a in SIGNAL_NAMES
            for b in SIGNAL_NAMES
        }
    else:
        keys = {name: name for name in SIGNAL_NAMES.values()}
    return {
        shown: factory.stability.get(key, "undefined").capitalize() for shown, key in keys.items()
    }


def load(
    configs: list[str], sets: list[str], factories: Factories, default: bool = True
) -> tuple[collector_config.Config | None, list[str]]:
    """The config, or the problems (one line each, naming the source when
    known). With no `configs`, the built-in default config when `default`,
    under the `sets`; otherwise the `sets` alone, as upstream, where a
    ``--set`` is a config flag too."""
    try:
        loaded = (
            sources.Loaded(configs, sets)
            if configs or not default
            else sources.Loaded([f"yaml:{default_yaml()}"], sets)
        )
    except sources.SourceError as problem:
        return None, [str(problem)]
    problems = Problems()
    raw = expand.expand(loaded.raw, "", problems)
    if problems:
        return None, _located(loaded, problems.lines, problems.paths, configs)
    try:
        config = collector_config.load(raw, factories)
    except collector_config.ConfigInvalid as invalid:
        return None, _located(loaded, invalid.problems, invalid.paths, configs)
    notice = collector_config.telemetry_notice(config.telemetry.metrics)
    if notice is not None:
        print(notice, flush=True)
    return config, []


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
    parser = _parser(distribution)
    given = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse(given)
    command = args.command[0] if args.command else ""
    if command == "help":
        parser.print_help()
        return 0
    if command and command not in SUBCOMMANDS:
        parser.error(f"unrecognized arguments: {command}")
    foreign = ROOT_FLAGS + (CONFIG_FLAGS if command == "components" else ())
    flag = _foreign_flag(given, foreign) if command else None
    if flag is not None:
        parser.error(f"unrecognized arguments: {flag}")
    if not command and getattr(args, "version", False):  # before cobra checks arguments
        print(f"{program} version {distribution.version}")
        return 0
    if len(args.command) > 1:
        parser.error(f"accepts 0 arg(s), received {len(args.command) - 1}")
    for assignment in args.set:  # checked while reading the flags, as upstream
        try:
            sources.set_snippet(assignment)
        except sources.SourceError as bad:
            parser.error(str(bad))
    if command == "components":
        sys.stdout.write(components_yaml(distribution))
        return 0
    if not args.config and not args.set and not distribution.default_config:
        print(f"Error: {NO_CONFIG}", file=sys.stderr)
        return 1
    factories = Factories.load(distribution.packages)
    config, problems = load(args.config, args.set, factories, distribution.default_config)
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
    if command == "validate" or args.dry_run:
        for line in warnings:
            print(f"{program}: warning: {line}", file=sys.stderr)
        print("config is valid")
        return 0
    from sluice.collector.service import log_as, run

    try:
        log_as(config)
    except OSError as problem:
        print(f"Error: {problem}", file=sys.stderr)
        return 1
    for line in warnings:
        logging.getLogger("sluice.collector").warning(line)
    heap.limit_arenas()
    build_info = BuildInfo(program, distribution.description, distribution.version)

    def reload() -> tuple[collector_config.Config | None, list[str]]:
        return load(args.config, args.set, factories, distribution.default_config)

    return loop.run(run(config, build_info=build_info, reload=reload))
