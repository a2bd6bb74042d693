"""``sluice-builder --config manifest.yaml``: build a custom collector
distribution from a manifest in the OpenTelemetry Collector Builder's format,
with ocb's command line.

ocb's three steps map onto Sluice's output: *generate* writes the files
that describe the distribution (``components.yaml``, ``requirements.txt``,
the ``Dockerfile`` and the third-party sources), *get modules* resolves the
components against what is installed (always needed here, so
``--skip-get-modules`` changes nothing), and *compile* writes the runnable
program. Nothing is written unless the whole manifest resolves: a problem is
printed as ``<manifest>: <key path>: <problem>``, one per line, and the exit
status is 1.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from sluice import __version__
from sluice.builder import modules, output
from sluice.builder.manifest import Manifest, ManifestError, load
from sluice.commandline import CommandParser

PROGRAM = "sluice-builder"


def _parser() -> CommandParser:
    shipped = "\n".join(
        f"  {modules.singular(factory.kind):<10} {factory.component_type:<16} {module}"
        f" v{factory.version}"
        for module, (_, factory) in sorted(modules.shipped().items())
    )
    providers = "\n".join(
        f"  {'provider':<10} {scheme:<16} {module} {modules.PROVIDERS_VERSION}"
        for module, scheme in modules.PROVIDERS.items()
    )
    parser = CommandParser(
        prog=PROGRAM,
        description=f"OpenTelemetry Collector Builder for Sluice ({__version__}): builds a "
        "program with sluice-collector's command line holding exactly the components of "
        'the build configuration given by "--config" (without one, the sluice-collector '
        "distribution).",
        epilog="commands:\n  version    print the version of sluice-builder\n\n"
        f"gomod module paths Sluice maps:\n{shipped}\n{providers}\n\nThird-party Python "
        "components: {pymod: '<module> <version>'}, registered in the "
        f"'{modules.ENTRY_POINT_GROUP}' entry points of an installed distribution.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("command", nargs="*", help=argparse.SUPPRESS)
    parser.add_argument("--config", default="", metavar="MANIFEST", help="build configuration file")
    parser.add_switch(
        "--skip-generate",
        "whether builder should skip generating the distribution's files: components.yaml, "
        "requirements.txt, Dockerfile (default false)",
    )
    parser.add_switch(
        "--skip-compilation",
        "whether builder should only generate those files, not the program (default false)",
    )
    parser.add_switch(
        "--skip-get-modules",
        "accepted for ocb's command line: components are resolved against what is "
        "installed, never fetched (default false)",
    )
    parser.add_switch(
        "--skip-strict-versioning",
        "whether builder should skip checking that each gomod release line is the one "
        "built in; when skipped, an older one builds in the newer, with a note (default true)",
        default=True,
    )
    parser.add_switch("--verbose", "whether builder should print verbose output (default false)")
    parser.add_argument(
        "--ldflags", default="", help='accepted for ocb\'s command line ("go build" ldflags)'
    )
    parser.add_argument(
        "--output-path", default=None, help="deprecated: use config distribution::output_path"
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="check the manifest and print what would be built; write nothing",
    )
    parser.add_argument("--version", action="version", version=f"{PROGRAM} version {__version__}")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse(argv)
    if args.command:
        if args.command[0] not in ("version", "help"):
            parser.error(f"unrecognized arguments: {args.command[0]}")
        if args.command[0] == "help":
            parser.print_help()
        else:
            # ocb's version command prints with cobra's cmd.Println: to stderr.
            print(f"{PROGRAM} version {__version__}", file=sys.stderr)
        return 0
    if args.output_path is not None:
        print(
            "Flag --output-path has been deprecated, use config distribution::output_path",
            file=sys.stderr,
        )
    source = Path(args.config) if args.config else None
    _verbose(args, f"using {f'config file {source}' if source else 'default build configuration'}")
    try:
        manifest = load(source)
    except ManifestError as invalid:
        return _fail(source, invalid.problems)
    if args.output_path:
        manifest.output_path = Path(args.output_path)
    strict = not args.skip_strict_versioning
    components, problems, notes = modules.resolve(manifest.entries, strict)
    provider_problems, provider_notes = modules.provider_notes(manifest.providers, strict)
    problems += provider_problems + modules.converter_problems(manifest.converters)
    problems += _checks(manifest, components)
    if problems:
        return _fail(source, problems)
    for note in [*manifest.notes, *notes, *provider_notes]:
        print(f"{manifest.source_name}: {note}", file=sys.stderr)
    if args.ldflags:
        _verbose(args, "--ldflags ignored: there is no Go build")
    if args.dry_run:
        where = manifest.output_path or "a new temporary folder"
        print(f"would build {_title(manifest)} into {where}:")
        for item in components:
            print(
                f"  {modules.singular(item.factory.kind)} {item.factory.component_type}"
                f" ({item.entry.spec} -> {item.package})"
            )
        return 0
    out = manifest.output_path or Path(tempfile.mkdtemp(prefix="otelcol-distribution"))
    written: list[Path] = []
    try:
        if args.skip_generate:
            _verbose(args, "skipping generating the distribution's files")
        else:
            written += output.generate(manifest, components, out)
            _verbose(args, f"files created in {out}")
        if args.skip_compilation:
            _verbose(args, "generating the files only, the program will not be written")
        else:
            written.append(output.compile_program(manifest, components, out))
    except output.OutputError as problem:
        print(f"Error: {problem}", file=sys.stderr)
        return 1
    print(f"built {_title(manifest)} in {out}")
    for path in written:
        print(f"  {path}")
    return 0


def _title(manifest: Manifest) -> str:
    return " ".join(filter(None, (manifest.name, manifest.version)))


def _verbose(args: argparse.Namespace, line: str) -> None:
    if args.verbose:
        print(f"{PROGRAM}: {line}", file=sys.stderr)


def _checks(manifest: Manifest, components: list[modules.Resolved]) -> list[str]:
    problems = []
    core = modules.core_version()
    wanted = manifest.otelcol_version
    if wanted is not None and not wanted.same_release_line(core):
        problems.append(
            f"dist::otelcol_version: {wanted.text}: this Sluice provides collector core "
            f"v{core.major}.{core.minor} ({core.text})"
        )
    if not manifest.cgo_enabled:
        for item in components:
            if item.factory.needs_native:
                problems.append(
                    f"{item.entry.key}: the {item.factory.component_type} "
                    f"{modules.singular(item.factory.kind)} ({item.entry.package}) needs native regex "
                    "libraries (Hyperscan/Vectorscan, RE2): set dist::cgo_enabled: true"
                )
    return problems


def _fail(source: Path | None, problems: list[str]) -> int:
    name = source if source is not None else "the default build configuration"
    for line in problems:
        print(f"{name}: {line}", file=sys.stderr)
    print(
        f"{PROGRAM}: the manifest does not build ({len(problems)} problem(s)); nothing was written",
        file=sys.stderr,
    )
    return 1
