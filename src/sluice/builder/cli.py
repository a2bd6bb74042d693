"""``sluice-builder --config manifest.yaml``: build a custom collector
distribution from a manifest in the OpenTelemetry Collector Builder's format.

Nothing is written unless the whole manifest resolves: a problem is printed
as ``<manifest>: <key path>: <problem>``, one per line, and the exit status
is 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from sluice import __version__
from sluice.builder import modules, output
from sluice.builder.manifest import Manifest, ManifestError, load


def _parser() -> argparse.ArgumentParser:
    shipped = "\n".join(
        f"  {modules.singular(factory.kind):<10} {factory.component_type:<16} {module}"
        f" v{factory.version}"
        for module, (_, factory) in sorted(modules.shipped().items())
    )
    parser = argparse.ArgumentParser(
        prog="sluice-builder",
        description="Build a custom Sluice collector distribution from a builder manifest "
        "(the OpenTelemetry Collector Builder's format): a program with the same command "
        "line as sluice-collector holding exactly the manifest's components.",
        epilog=f"gomod module paths Sluice maps:\n{shipped}\n\nThird-party Python "
        "components: {pymod: '<module> <version>'}, registered in the "
        f"'{modules.ENTRY_POINT_GROUP}' entry points of an installed distribution.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--config", required=True, metavar="MANIFEST", help="the manifest")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="check the manifest and print what would be built; write nothing",
    )
    parser.add_argument("--version", action="version", version=f"sluice-builder {__version__}")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    source = Path(args.config)
    try:
        manifest = load(source)
    except ManifestError as invalid:
        return _fail(source, invalid.problems)
    components, problems = modules.resolve(manifest.entries)
    problems += _checks(manifest, components)
    if problems:
        return _fail(source, problems)
    for note in manifest.notes:
        print(f"{source}: {note}", file=sys.stderr)
    if args.dry_run:
        print(f"would build {manifest.name} {manifest.version} into {manifest.output_path}:")
        for item in components:
            print(
                f"  {modules.singular(item.factory.kind)} {item.factory.component_type}"
                f" ({item.entry.module} {item.entry.version.text} -> {item.package})"
            )
        return 0
    written = output.write(manifest, components)
    print(f"built {manifest.name} {manifest.version}: {manifest.output_path / manifest.name}")
    for path in written[1:]:
        print(f"  {path}")
    return 0


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
                    f"{modules.singular(item.factory.kind)} ({item.entry.module}) needs native regex "
                    "libraries (Hyperscan/Vectorscan, RE2): set dist::cgo_enabled: true"
                )
    return problems


def _fail(source: Path, problems: list[str]) -> int:
    for line in problems:
        print(f"{source}: {line}", file=sys.stderr)
    print(
        f"sluice-builder: the manifest does not build ({len(problems)} problem(s)); "
        "nothing was written",
        file=sys.stderr,
    )
    return 1
