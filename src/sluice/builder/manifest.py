"""Read a builder manifest as the OpenTelemetry Collector Builder (ocb
v0.115) reads it.

ocb decodes the YAML with mapstructure's weak typing: a key matches its
field in any case (``Dist``, ``NAME``), a number or boolean given where text
is due becomes text (``version: 2`` is ``"2"``), ``"true"`` or ``1`` given
where a boolean is due is one, and keys it does not know are ignored (here
with a warning). ``DIST_<KEY>`` environment variables override ``dist``
keys. Every other problem is collected with the key path it concerns
(``dist::name``, ``processors::0::gomod``), so one run reports all of them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from sluice.collector.component import Kind
from sluice.collector.confmap import goyaml
from sluice.collector.internal.go_text import path_error
from sluice.gostrconv import parse_bool
from sluice.telemetry.pdata_text import float_fixed

KINDS: tuple[Kind, ...] = (
    Kind.RECEIVER,
    Kind.PROCESSOR,
    Kind.EXPORTER,
    Kind.CONNECTOR,
    Kind.EXTENSION,
)
_SECTIONS = {kind.value: kind for kind in KINDS}
_CONFMAP_SECTIONS = ("providers", "converters")
_TOP_KEYS = ("dist", *_SECTIONS, *_CONFMAP_SECTIONS, "replaces", "excludes", "conf_resolver")
_DIST_TEXT = (
    "module",
    "name",
    "go",
    "description",
    "otelcol_version",
    "output_path",
    "version",
    "build_tags",
)
_DIST_FLAGS = ("debug_compilation", "cgo_enabled")
_ENTRY_KEYS = ("name", "import", "gomod", "path", "pymod")
DEFAULT_MODULE = "go.opentelemetry.io/collector/cmd/builder"
"""``dist.module`` when the manifest sets none, as ocb."""
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

    @property
    def line(self) -> tuple[int, int]:
        """The release line, major and minor."""
        return self.major, self.minor

    @property
    def go_text(self) -> str:
        """As Go writes a module version: ``v0.115.0``."""
        return self.text if self.text.startswith("v") else f"v{self.text}"

    def same_release_line(self, other: Version) -> bool:
        return self.line == other.line


@dataclass(frozen=True)
class Entry:
    """One module line of the manifest: a component, or a confmap provider or converter."""

    section: str
    """Its top-level key: ``receivers``... ``providers``, ``converters``."""
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

    @property
    def kind(self) -> Kind | None:
        """The component kind; None for a provider or converter."""
        return _SECTIONS.get(self.section)

    @property
    def package(self) -> str:
        """What the program imports: ``import`` when given (a package
        within the gomod module, as ocb's generated sources import it), else
        the module itself."""
        return self.import_path or self.module

    @property
    def package_key(self) -> str:
        """The key path of :attr:`package`, for messages."""
        field_name = "import" if self.import_path else "pymod" if self.python else "gomod"
        return f"{self.key}::{field_name}"

    @property
    def spec(self) -> str:
        """``<module> <version>`` as the manifest names it (upstream's module
        text in ``components``)."""
        return f"{self.module} {self.version.text}"


@dataclass
class Manifest:
    source: Path | None
    """The manifest file; None for the default build configuration."""
    name: str = ""
    description: str = ""
    output_path: Path | None = None
    """None: a new temporary folder, as ocb."""
    version: str = ""
    module: str = DEFAULT_MODULE
    otelcol_version: Version | None = None
    cgo_enabled: bool = False
    entries: list[Entry] = field(default_factory=list)
    providers: list[Entry] | None = None
    """None: the manifest names none, so the program has every provider."""
    converters: list[Entry] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """Accepted keys that mean nothing here, and ignored unknown keys."""

    @property
    def source_name(self) -> str:
        return self.source.name if self.source is not None else DEFAULT_MANIFEST


class ManifestError(Exception):
    """The manifest does not load; `problems` are ``key: problem`` lines."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


DEFAULT_MANIFEST = "default.yaml"
"""The default build configuration, beside this module: ``sluice-collector``'s
own manifest, which ocb's counterpart builds with no ``--config``."""


def default_text() -> str:
    return resources.files("sluice.builder").joinpath(DEFAULT_MANIFEST).read_text()


def load(path: Path | None, environ: Mapping[str, str] | None = None) -> Manifest:
    """The manifest at `path` (None: the default build configuration), with
    `environ`'s ``DIST_*`` overrides; raises :class:`ManifestError` with
    every problem."""
    try:
        raw = goyaml.load(path.read_text() if path is not None else default_text())
    except OSError as problem:
        # Go's os.ReadFile opens a folder and fails reading it.
        operation = "read" if isinstance(problem, IsADirectoryError) else "open"
        raise ManifestError(
            [f"failed to load configuration file: {path_error(operation, problem)}"]
        ) from None
    except yaml.YAMLError as problem:
        mark = getattr(problem, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        what = getattr(problem, "problem", None) or str(problem)
        raise ManifestError([f"yaml: {where}{what}"]) from None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ManifestError([f"the manifest must be a mapping, not {_kind_of(raw)}"])
    problems: list[str] = []
    manifest = Manifest(path)
    top = _fields(raw, _TOP_KEYS, "", manifest.notes, "unknown top-level key, ignored")
    dist = _with_environment(top.get("dist"), os.environ if environ is None else environ)
    _read_dist(dist, manifest, problems)
    for section in (*_SECTIONS, *_CONFMAP_SECTIONS):
        if section in top:
            entries = _read_entries(section, top[section], problems, manifest.notes)
            if section in _SECTIONS:
                manifest.entries += entries
            elif section == "providers":
                manifest.providers = entries if top[section] is not None else None
            else:
                manifest.converters = entries
    for key in ("replaces", "excludes"):
        if top.get(key) is not None:
            for index, item in enumerate(_as_list(top[key])):
                _text(item, f"{key}::{index}", problems)
            manifest.notes.append(f"{key}: ignored (go.mod directives; there is no Go build here)")
    resolver = top.get("conf_resolver")
    if isinstance(resolver, dict):
        values = _fields(resolver, ("default_uri_scheme",), "conf_resolver", manifest.notes)
        key = "conf_resolver::default_uri_scheme"
        scheme = _text(values.get("default_uri_scheme"), key, problems)
        if scheme not in ("", "env"):
            manifest.notes.append(
                f"{key}: {scheme!r} ignored: ${{NAME}} reads the environment (env), as the "
                "collector's default"
            )
    elif resolver is not None:
        problems.append(f"conf_resolver: must be a mapping, not {_kind_of(resolver)}")
    if problems:
        raise ManifestError(problems)
    return manifest


def _fields(
    raw: dict[Any, Any],
    known: tuple[str, ...],
    where: str,
    notes: list[str],
    unknown: str = "unknown key, ignored",
) -> dict[str, Any]:
    """`raw`'s values by field name, each key matched as mapstructure matches
    it: exactly, else in any case. Keys no field takes are noted."""
    found: dict[str, Any] = {}
    taken = set()
    for name in known:
        key = name if name in raw else next((k for k in raw if str(k).lower() == name), None)
        if key is not None:
            found[name] = raw[key]
            taken.add(key)
    for key in raw:
        if key not in taken:
            notes.append(f"{where}::{key}: {unknown}" if where else f"{key}: {unknown}")
    return found


def _with_environment(dist: Any, environ: Mapping[str, str]) -> Any:
    """`dist` with ocb's environment overrides: a variable whose lowercased
    name starts with ``dist_`` sets the ``dist`` key named by the rest."""
    overrides = {
        name.lower()[len("dist_") :]: value
        for name, value in environ.items()
        if name.lower().startswith("dist_") and len(name) > len("dist_")
    }
    if not overrides:
        return dist
    base = dist if isinstance(dist, dict) else {}
    # An override replaces the key as the manifest spells it (mapstructure
    # would take the exact spelling first).
    kept = {k: v for k, v in base.items() if str(k).lower() not in overrides}
    return {**kept, **overrides}


def _read_dist(raw: Any, manifest: Manifest, problems: list[str]) -> None:
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        problems.append(f"dist: must be a mapping, not {_kind_of(raw)}")
        return
    values = _fields(raw, (*_DIST_TEXT, *_DIST_FLAGS), "dist", manifest.notes)
    text = {key: _text(values.get(key), f"dist::{key}", problems) for key in _DIST_TEXT}
    name = text["name"]
    if not name:
        problems.append("dist::name: missing (the distribution's program name)")
    elif not _NAME.match(name):
        problems.append(
            f"dist::name: {name!r} is not a program name (letters, digits, '.', '_', '-')"
        )
    manifest.name = name
    manifest.description = text["description"]
    manifest.version = text["version"]
    manifest.module = text["module"] or DEFAULT_MODULE
    if text["output_path"]:
        manifest.output_path = Path(text["output_path"])  # from the current folder, as ocb
    if text["otelcol_version"]:
        manifest.otelcol_version = Version.parse(text["otelcol_version"])
        if manifest.otelcol_version is None:
            problems.append(
                f"dist::otelcol_version: {text['otelcol_version']!r} is not a version like 0.115.0"
            )
    for key in ("go", "build_tags"):
        if text[key]:
            manifest.notes.append(f"dist::{key}: ignored (it steers the Go build)")
    if _flag(values.get("debug_compilation"), "dist::debug_compilation", problems):
        manifest.notes.append("dist::debug_compilation: ignored (it steers the Go build)")
    manifest.cgo_enabled = _flag(values.get("cgo_enabled"), "dist::cgo_enabled", problems)


def _read_entries(section: str, raw: Any, problems: list[str], notes: list[str]) -> list[Entry]:
    if raw is None:
        return []
    entries = []
    for index, item in enumerate(_as_list(raw)):
        key = f"{section}::{index}"
        if item is None:
            item = {}
        if not isinstance(item, dict):
            problems.append(f"{key}: must be a mapping with gomod or pymod, not {_kind_of(item)}")
            continue
        values = _fields(item, _ENTRY_KEYS, key, notes)
        texts = {name: _text(value, f"{key}::{name}", problems) for name, value in values.items()}
        entry = _entry(section, key, texts, problems)
        if entry is not None:
            entries.append(entry)
    return entries


def _as_list(raw: Any) -> list[Any]:
    """`raw` where a list is due, as mapstructure's weak typing decodes it."""
    if isinstance(raw, list):
        return raw
    if isinstance(raw, dict) and not raw:
        return []  # an empty map is an empty list
    return [raw]  # any other value is lifted into a one-element list


def _entry(section: str, key: str, item: dict[str, str], problems: list[str]) -> Entry | None:
    gomod, pymod = item.get("gomod", ""), item.get("pymod", "")
    if not gomod and not pymod:
        problems.append(f"{key}: missing gomod specification for module (or pymod)")
        return None
    if gomod and pymod:
        problems.append(f"{key}: gomod and pymod are exclusive; name one")
        return None
    if pymod and section not in _SECTIONS:
        problems.append(f"{key}::pymod: a {section[:-1]} is a gomod module")
        return None
    field_name, spec = ("gomod", gomod) if gomod else ("pymod", pymod)
    parts = spec.split()
    if len(parts) != 2:
        example = (
            "go.opentelemetry.io/collector/receiver/otlpreceiver v0.115.0"
            if gomod
            else "my_components.processor 1.0.0"
        )
        problems.append(
            f"{key}::{field_name}: {spec!r} is not '<module> <version>' (e.g. {example})"
        )
        return None
    module, version_text = parts
    version = Version.parse(version_text)
    if version is None:
        problems.append(f"{key}::{field_name}: {version_text!r} is not a version like v0.115.0")
        return None
    path: Path | None = None
    if item.get("path"):
        # From the current folder and cleaned lexically, as ocb's filepath.Abs.
        path = Path(os.path.abspath(item["path"]))
        if not path.exists():
            problems.append(f"{key}::path: filepath does not exist: {path}")
            return None
    return Entry(
        section,
        key,
        module,
        version,
        python=bool(pymod),
        path=path,
        import_path=item.get("import", ""),
        name=item.get("name", ""),
    )


def _text(value: Any, key: str, problems: list[str]) -> str:
    """`value` as mapstructure's weak typing decodes it into a string field."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return float_fixed(value)  # Go's strconv.FormatFloat(value, 'f', -1, 64)
    problems.append(f"{key}: expected a string, got {_kind_of(value)}")
    return ""


def _flag(value: Any, key: str, problems: list[str]) -> bool:
    """`value` as mapstructure's weak typing decodes it into a bool field."""
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value != 0
    if isinstance(value, str):
        if value == "":
            return False
        flag = parse_bool(value)
        if flag is not None:
            return flag
        problems.append(f"{key}: cannot parse {value!r} as bool (true or false)")
        return False
    problems.append(f"{key}: expected true or false, got {_kind_of(value)}")
    return False


def _kind_of(value: Any) -> str:
    names: dict[type, str] = {dict: "a mapping", list: "a list", str: "a string"}
    return names.get(type(value), type(value).__name__)
