"""The files of a built distribution: the program, the resolved component
list, the Python requirements and a Dockerfile. Everything is rendered from
the manifest and the installed components alone (no time, no random), so the
same manifest gives the same files."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import yaml

from sluice import __version__
from sluice.builder.manifest import KINDS, Manifest
from sluice.builder.modules import Resolved
from sluice.collector.component import CORE_VERSION
from sluice.collector.default_config import default_components
from sluice.collector.internal.go_text import path_error

VENDOR = "components"
"""Folder of the output holding copies of pymod entries' ``path`` sources."""
_COPY_IGNORE = shutil.ignore_patterns(
    "__pycache__", "*.pyc", "*.egg-info", "build", "dist", ".git", ".venv"
)


class OutputError(Exception):
    """A file of the distribution cannot be written (ocb's wording)."""


def generate(manifest: Manifest, components: list[Resolved], out: Path) -> list[Path]:
    """ocb's *generate* step: the files that describe the distribution, and
    the third-party sources, in `out` (made if missing, but not its parents,
    as ocb; an existing path is written into, whatever it is); the paths
    written."""
    try:
        out.stat()
    except FileNotFoundError:
        try:
            out.mkdir(0o750)  # as ocb's os.Mkdir
        except OSError as problem:
            raise OutputError(
                f"failed to create output path: {path_error('mkdir', problem)}"
            ) from None
    except OSError as problem:
        raise OutputError(f"failed to create output path: {path_error('stat', problem)}") from None
    files = {
        "components.yaml": components_yaml(manifest, components),
        "requirements.txt": requirements(components),
        "Dockerfile": dockerfile(manifest, components),
    }
    written = []
    for name, text in files.items():
        path = out / name
        try:
            path.write_text(text)
        except OSError as problem:
            raise OutputError(
                f'failed to generate source file "{name}": {path_error("open", problem)}'
            ) from None
        written.append(path)
    for item, folder in _vendored(components):
        target = out / folder
        if target.exists():
            shutil.rmtree(target)
        assert item.entry.path is not None
        shutil.copytree(item.entry.path, target, ignore=_COPY_IGNORE)
        written.append(target)
    return written


def compile_program(manifest: Manifest, components: list[Resolved], out: Path) -> Path:
    """ocb's *compile* step: the runnable program, ``out/<name>``."""
    path = out / manifest.name
    try:
        path.write_text(program(manifest, components))
        path.chmod(0o755)
    except OSError as problem:
        raise OutputError(
            "failed to compile the OpenTelemetry Collector distribution: "
            f"{path_error('open', problem)}"
        ) from None
    return path


def _vendored(components: list[Resolved]) -> Iterator[tuple[Resolved, str]]:
    for item in components:
        if item.entry.python and item.entry.path is not None:
            yield item, f"{VENDOR}/{item.distribution or item.package}"


def program(manifest: Manifest, components: list[Resolved]) -> str:
    packages = "".join(f"        {item.package!r},\n" for item in components)
    specs = "".join(f"        {item.entry.spec!r},\n" for item in components)
    has_default = default_components() <= {
        (item.factory.kind, item.factory.component_type) for item in components
    }
    title = " ".join(filter(None, (manifest.name, manifest.version)))
    about = f"{title}: {manifest.description}" if manifest.description else title
    return f'''#!{sys.executable}
"""{about}

Written by sluice-builder {__version__} from {manifest.source_name}; rebuild rather than edit.
Same command line as sluice-collector; `{manifest.name} components` lists what it holds.
"""

import sys

from sluice.entry import collector

DISTRIBUTION = dict(
    command={manifest.name!r},
    description={manifest.description!r},
    version={manifest.version!r},
    otelcol_version={(manifest.otelcol_version.text if manifest.otelcol_version else CORE_VERSION)!r},
    packages=(
{packages}    ),
    modules=(
{specs}    ),
    default_config={has_default!r},
)
"""The fields of its Distribution."""

if __name__ == "__main__":
    sys.exit(collector(**DISTRIBUTION))
'''


def components_yaml(manifest: Manifest, components: list[Resolved]) -> str:
    doc = {
        "dist": {
            "name": manifest.name,
            "description": manifest.description,
            "version": manifest.version,
            "module": manifest.module,
            "otelcol_version": (
                manifest.otelcol_version.text if manifest.otelcol_version else CORE_VERSION
            ),
            "cgo_enabled": manifest.cgo_enabled,
            "sluice_version": __version__,
        },
        **{
            kind.value: [
                {
                    "type": item.factory.component_type,
                    ("pymod" if item.entry.python else "gomod"): item.entry.spec,
                    "package": item.package,
                    "follows": item.distribution_version or item.factory.version,
                    "native": item.factory.needs_native,
                }
                for item in components
                if item.factory.kind is kind
            ]
            for kind in KINDS
        },
    }
    header = f"# Resolved by sluice-builder {__version__} from {manifest.source_name}.\n"
    return header + yaml.safe_dump(doc, sort_keys=False)


def requirements(components: list[Resolved]) -> str:
    lines = [
        "# Python distributions this collector needs beyond Sluice itself",
        f"# (sluice {__version__}, with its own locked dependencies).",
    ]
    vendored = dict((item.package, folder) for item, folder in _vendored(components))
    for item in components:
        if not item.entry.python:
            continue
        if item.package in vendored:
            lines.append(f"./{vendored[item.package]}")
        else:
            lines.append(f"{item.distribution}=={item.distribution_version}")
    return "\n".join(lines) + "\n"


def dockerfile(manifest: Manifest, components: list[Resolved]) -> str:
    third_party = any(item.entry.python for item in components)
    install = (
        "RUN python -m pip install --no-cache-dir --no-deps -r requirements.txt\n"
        if third_party
        else ""
    )
    tag = f"{manifest.name}:{manifest.version or 'latest'}"
    return f"""# {manifest.name} {manifest.version}, written by sluice-builder {__version__}.
# It starts from the Sluice image, built from the Sluice repository with its
# Dockerfile (docker build -t sluice-edge:{__version__} .), so the collector runs
# on the same locked dependencies and compiled modules. From this folder:
#   docker build -t {tag} .
#   docker run -v $PWD/config.yaml:/etc/{manifest.name}/config.yaml {tag}
ARG SLUICE_IMAGE=sluice-edge:{__version__}
FROM ${{SLUICE_IMAGE}}
USER root
WORKDIR /opt/{manifest.name}
COPY . .
{install}RUN sed -i '1s|.*|#!/usr/bin/env python3|' {manifest.name}
USER sluice
ENTRYPOINT ["/opt/{manifest.name}/{manifest.name}"]
CMD ["--config", "/etc/{manifest.name}/config.yaml"]
"""
