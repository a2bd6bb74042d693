"""Map manifest entries to the Python packages that hold the components.

``gomod`` entries name upstream module paths (core
``go.opentelemetry.io/collector/...``, contrib
``github.com/open-telemetry/opentelemetry-collector-contrib/...``, and the
policy processor's own path); every factory Sluice ships declares the path it
stands for. ``pymod`` entries name a Python module registered in the
``sluice.components`` entry-point group by an installed distribution.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from sluice.builder.manifest import Entry, Version
from sluice.collector.component import CORE_VERSION, Factory, Kind
from sluice.collector.factories import BUILTIN

ENTRY_POINT_GROUP = "sluice.components"


@dataclass(frozen=True)
class Resolved:
    """A manifest entry and the component it builds in."""

    entry: Entry
    package: str
    """The module whose ``FACTORY`` the program loads."""
    factory: Factory[Any]
    distribution: str = ""
    """The installed Python distribution of a pymod component, with its version."""
    distribution_version: str = ""


def shipped() -> dict[str, tuple[str, Factory[Any]]]:
    """Upstream module path -> (package, factory) of every component Sluice ships."""
    table: dict[str, tuple[str, Factory[Any]]] = {}
    for package in BUILTIN:
        factory = importlib.import_module(package).FACTORY
        table[factory.module] = (package, factory)
    return table


def resolve(
    entries: list[Entry], strict: bool = False
) -> tuple[list[Resolved], list[str], list[str]]:
    """The components of `entries`, one problem line per entry that cannot
    be built in, and notes. `strict` is ocb's strict versioning: a component's
    release line must be the one built in, not an older one."""
    table = shipped()
    points = {point.value: point for point in metadata.entry_points(group=ENTRY_POINT_GROUP)}
    resolved: list[Resolved] = []
    problems: list[str] = []
    notes: list[str] = []
    for entry in entries:
        if entry.python:
            found, problem = _python(entry, points)
        else:
            found, problem = _shipped(entry, table, strict, notes)
        if problem:
            problems.append(problem)
        elif found is not None and found.factory.kind is not entry.kind:
            problems.append(
                f"{entry.key}: {entry.package} is a {singular(found.factory.kind)}, "
                f"listed under {entry.section}"
            )
        elif found is not None:
            resolved.append(found)
    seen: dict[tuple[Kind, str], str] = {}
    for item in resolved:
        type_key = (item.factory.kind, item.factory.component_type)
        if type_key in seen:
            problems.append(
                f"{item.entry.key}: component type {item.factory.component_type!r} is already "
                f"built in by {seen[type_key]}"
            )
        seen[type_key] = item.entry.key
    return resolved, problems, notes


PROVIDERS = {
    f"go.opentelemetry.io/collector/confmap/provider/{scheme}provider": scheme
    for scheme in ("env", "file", "http", "https", "yaml")
}
"""The confmap providers (config sources) a program can hold, by module path."""
PROVIDERS_VERSION = "v1.21.0"
"""Their release in collector core v0.115."""


def provider_notes(
    entries: list[Entry] | None, strict: bool = False
) -> tuple[list[str], list[str]]:
    """Problems and notes of the confmap providers `entries` name (None: the
    manifest names none, which is every one, as ocb's default). Sluice's
    programs hold every provider whichever are named."""
    if entries is None:
        return [], []
    provided = Version.parse(PROVIDERS_VERSION)
    assert provided is not None
    problems: list[str] = []
    notes: list[str] = []
    seen: dict[str, str] = {}
    for entry in entries:
        if entry.package not in PROVIDERS:
            problems.append(
                f"{entry.package_key}: unknown module {entry.package!r}: Sluice has no config "
                f"provider for it (it has {', '.join(PROVIDERS)})"
            )
            continue
        problem = _version_problem(entry, provided, strict, notes)
        if problem:
            problems.append(problem)
        # Upstream's program cannot hold one scheme twice (its resolver
        # refuses a "duplicate 'confmap.Provider' scheme").
        scheme = PROVIDERS[entry.package]
        if scheme in seen:
            problems.append(
                f"{entry.key}: config provider scheme {scheme!r} is already built in by "
                f"{seen[scheme]}"
            )
        seen.setdefault(scheme, entry.key)
    named = {PROVIDERS.get(entry.package) for entry in entries}
    missing = [scheme for scheme in PROVIDERS.values() if scheme not in named]
    if missing and not problems:
        notes.append(
            f"providers: the program reads {', '.join(missing)} config sources too "
            "(Sluice's programs hold every provider)"
        )
    return problems, notes


def converter_problems(entries: list[Entry]) -> list[str]:
    """Sluice holds no confmap converter: one problem per converter named."""
    return [
        f"{entry.package_key}: unknown module {entry.package!r}: Sluice has no config converter"
        for entry in entries
    ]


def _shipped(
    entry: Entry, table: dict[str, tuple[str, Factory[Any]]], strict: bool, notes: list[str]
) -> tuple[Resolved | None, str]:
    found = table.get(entry.package)
    if found is None:
        return None, (
            f"{entry.package_key}: unknown module {entry.package!r}: Sluice has no component "
            "for it (sluice-builder --help lists the module paths it maps)"
        )
    package, factory = found
    provided = Version.parse(factory.version)
    assert provided is not None
    problem = _version_problem(entry, provided, strict, notes)
    if problem:
        return None, problem
    return Resolved(entry, package, factory), ""


def _version_problem(entry: Entry, provided: Version, strict: bool, notes: list[str]) -> str:
    """Go resolves a module named at an older release to the newest one any
    module requires, so an older release line builds in the one Sluice
    provides (a note), unless `strict`; a newer line is not there to build."""
    if entry.version.line > provided.line:
        return (
            f"{entry.key}::gomod: {entry.module} {entry.version.text}: this Sluice provides "
            f"v{provided.major}.{provided.minor} of it ({provided.text})"
        )
    if entry.version.line < provided.line:
        if strict:
            return (
                f"{entry.key}::gomod: mismatch in go.mod and builder configuration versions: "
                f'component "{entry.module}" version calculated by dependencies '
                f'"{provided.go_text}" does not match configured version '
                f'"{entry.version.text}". Use --skip-strict-versioning to temporarily disable '
                "this check. This flag will be removed in a future minor version"
            )
        notes.append(
            f"{entry.key}::gomod: {entry.module} {entry.version.text} builds in "
            f"{provided.go_text}, the release Sluice provides"
        )
    return ""


def _python(entry: Entry, points: dict[str, metadata.EntryPoint]) -> tuple[Resolved | None, str]:
    module = entry.package
    point = points.get(module)
    if point is None:
        return None, (
            f"{entry.key}::pymod: no installed distribution registers {module!r} in the "
            f"{ENTRY_POINT_GROUP!r} entry points (install the component's package first)"
        )
    dist = point.dist
    dist_name = dist.name if dist is not None else ""
    dist_version = dist.version if dist is not None else ""
    installed = Version.parse(dist_version)
    if installed is None or not entry.version.same_release_line(installed):
        return None, (
            f"{entry.key}::pymod: {module} {entry.version.text}: the installed "
            f"{dist_name or module} is {dist_version or 'of no known version'}"
        )
    try:
        factory = point.load().FACTORY
    except Exception as problem:  # a third party's import failing is its problem, reported
        return None, f"{entry.key}::pymod: {module} does not load: {problem!r}"
    if not isinstance(factory, Factory):
        return None, f"{entry.key}::pymod: {module}.FACTORY is not a component factory"
    return Resolved(entry, module, factory, dist_name, dist_version), ""


def singular(kind: Kind) -> str:
    """``receiver`` for Kind.RECEIVER (whose value is the config key ``receivers``)."""
    return kind.value[:-1]


def core_version() -> Version:
    version = Version.parse(CORE_VERSION)
    assert version is not None
    return version
