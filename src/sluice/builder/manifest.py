"""Read a builder manifest (the OpenTelemetry Collector Builder's format).

Every problem is collected with the key path it concerns (``dist::name``,
``processors::0::gomod``), so one run reports all of them. Unknown top-level
keys are ignored with a warning, as upstream; keys upstream uses for the Go
build (``replaces``, ``excludes``, ``providers``, ``dist.go``...) are
accepted and noted as having no meaning here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from sluice.collector.component import Kind
from sluice.collector.confmap import goyaml

KINDS: tuple[Kind, ...] = (
    Kind.RECEIVER,
    Kind.PROCESSOR,
    Kind.EXPORTER,
    Kind.CONNECTOR,
    Kind.EXTENSION,
)
_SECTIONS = {kind.value: kind for kind in KINDS}
_GO_BUILD_KEYS = ("replaces", "excludes", "providers", "converters", "conf_resolver")
"""Top-level keys of upstream manifests that only steer the Go build."""
_DIST_KEYS = {
    "name",
    "description",
    "output_path",
    "version",
    "module",
    "otelcol_version",
    "cgo_enabled",
}
_GO_DIST_KEYS = {"go", "debug_compilation", "build_tags", "go_proxy"}
_ENTRY_KEYS = {"gomod", "pymod", "import", "name", "path"}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_SEMVER = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)(?:[-+][0-9A-Za-z.+-]+)?$")


@dataclass(frozen=True)
class Version:
    text: str
    major: int
    minor: int

    @classmethod
    def parse(cls, text: str) -> Version | None:
        found = _SEMVER.match(text)
        if found is None:
            return None
        return cls(text, int(found[1]), int(found[2]))

    def same_release_line(self, other: Version) -> bool:
        return (self.major, self.minor) == (other.major, other.minor)


@dataclass(frozen=True)
class Entry:
    """One component line of the manifest."""

    kind: Kind
    key: str
    """Its key path, for messages: ``processors::0``."""
    module: str
    """The gomod module path, or the pymod Python module."""
    version: Version
    python: bool
    """A ``pymod`` entry (a third-party Python component)."""
    path: Path | None = None
    import_path: str = ""
    name: str = ""


@dataclass
class Manifest:
    source: Path
    name: str = ""
    description: str = ""
    output_path: Path = Path("./_build")
    version: str = "1.0.0"
    module: str = ""
    otelcol_version: Version | None = None
    cgo_enabled: bool = False
    entries: list[Entry] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """Accepted keys that mean nothing here, and ignored unknown keys."""


class ManifestError(Exception):
    """The manifest does not load; `problems` are ``key: problem`` lines."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


def load(path: Path) -> Manifest:
    """The manifest at `path`; raises :class:`ManifestError` with every problem."""
    try:
        raw = goyaml.load(path.read_text())
    except OSError as problem:
        raise ManifestError([f"cannot read the manifest: {problem.strerror}"]) from None
    except yaml.YAMLError as problem:
        mark = getattr(problem, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        what = getattr(problem, "problem", None) or str(problem)
        raise ManifestError([f"yaml: {where}{what}"]) from None
    problems: list[str] = []
    manifest = Manifest(path)
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ManifestError([f"the manifest must be a mapping, not {_kind_of(raw)}"])
    _read_dist(raw.get("dist"), manifest, path.parent, problems)
    for key, value in raw.items():
        if key == "dist":
            continue
        if key in _SECTIONS:
            _read_entries(_SECTIONS[key], key, value, manifest, path.parent, problems)
        elif key in _GO_BUILD_KEYS:
            manifest.notes.append(f"{key}: ignored (it steers the Go build; nothing to do here)")
        else:
            manifest.notes.append(f"{key}: unknown top-level key, ignored")
    if not manifest.entries and not problems:
        problems.append("the manifest names no component")
    if problems:
        raise ManifestError(problems)
    return manifest


def _read_dist(raw: Any, manifest: Manifest, base: Path, problems: list[str]) -> None:
    if raw is None:
        problems.append("dist::name: missing (the distribution's program name)")
        return
    if not isinstance(raw, dict):
        problems.append(f"dist: must be a mapping, not {_kind_of(raw)}")
        return
    for key in raw:
        if key in _GO_DIST_KEYS:
            manifest.notes.append(f"dist::{key}: ignored (it steers the Go build)")
        elif key not in _DIST_KEYS:
            problems.append(
                f"dist::{key}: unknown key (valid keys: {', '.join(sorted(_DIST_KEYS))})"
            )
    name = raw.get("name")
    if name is None or name == "":
        problems.append("dist::name: missing (the distribution's program name)")
    elif not isinstance(name, str) or not _NAME.match(name):
        problems.append(
            f"dist::name: {name!r} is not a program name (letters, digits, '.', '_', '-')"
        )
    else:
        manifest.name = name
    for key in ("description", "version", "module"):
        value = raw.get(key)
        if value is not None:
            if isinstance(value, str):
                setattr(manifest, key, value)
            else:
                problems.append(f"dist::{key}: must be a string, not {_kind_of(value)}")
    output = raw.get("output_path")
    if output is not None:
        if isinstance(output, str) and output:
            manifest.output_path = Path(output)  # from the current folder, as upstream
        else:
            problems.append("dist::output_path: must be a non-empty string")
    otelcol = raw.get("otelcol_version")
    if otelcol is not None:
        version = Version.parse(str(otelcol))
        if version is None:
            problems.append(f"dist::otelcol_version: {otelcol!r} is not a version like 0.115.0")
        manifest.otelcol_version = version
    cgo = raw.get("cgo_enabled", False)
    if isinstance(cgo, bool):
        manifest.cgo_enabled = cgo
    else:
        problems.append(f"dist::cgo_enabled: must be true or false, not {cgo!r}")


def _read_entries(
    kind: Kind, section: str, raw: Any, manifest: Manifest, base: Path, problems: list[str]
) -> None:
    if raw is None:
        return
    if not isinstance(raw, list):
        problems.append(f"{section}: must be a list of {{gomod: ...}} entries")
        return
    for index, item in enumerate(raw):
        key = f"{section}::{index}"
        if not isinstance(item, dict):
            problems.append(f"{key}: must be a mapping with gomod or pymod, not {_kind_of(item)}")
            continue
        for extra in item:
            if extra not in _ENTRY_KEYS:
                problems.append(
                    f"{key}::{extra}: unknown key (valid keys: {', '.join(sorted(_ENTRY_KEYS))})"
                )
        entry = _entry(kind, key, item, base, problems)
        if entry is not None:
            manifest.entries.append(entry)


def _entry(
    kind: Kind, key: str, item: dict[str, Any], base: Path, problems: list[str]
) -> Entry | None:
    gomod, pymod = item.get("gomod"), item.get("pymod")
    if gomod is None and pymod is None:
        problems.append(f"{key}: missing gomod specification for module (or pymod)")
        return None
    if gomod is not None and pymod is not None:
        problems.append(f"{key}: gomod and pymod are exclusive; name one")
        return None
    field_name = "gomod" if gomod is not None else "pymod"
    spec = gomod if gomod is not None else pymod
    parts = spec.split() if isinstance(spec, str) else []
    if len(parts) != 2:
        problems.append(
            f"{key}::{field_name}: {spec!r} is not '<module> <version>'"
            f" (e.g. {'go.opentelemetry.io/collector/receiver/otlpreceiver v0.115.0' if gomod is not None else 'my_components.processor 1.0.0'})"
        )
        return None
    module, version_text = parts
    version = Version.parse(version_text)
    if version is None:
        problems.append(f"{key}::{field_name}: {version_text!r} is not a version like v0.115.0")
        return None
    path: Path | None = None
    if item.get("path") is not None:
        path = base / str(item["path"])  # from the manifest's folder, as upstream
        if not path.exists():
            problems.append(f"{key}::path: {path} does not exist")
            return None
    return Entry(
        kind,
        key,
        module,
        version,
        python=pymod is not None,
        path=path,
        import_path=str(item.get("import") or ""),
        name=str(item.get("name") or ""),
    )


def _kind_of(value: Any) -> str:
    names: dict[type, str] = {dict: "a mapping", list: "a list", str: "a string"}
    return names.get(type(value), type(value).__name__)
