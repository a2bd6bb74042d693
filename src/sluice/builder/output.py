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

VENDOR = "components"
"""Folder of the output holding copies of pymod entries' ``path`` sources."""
_COPY_IGNORE = shutil.ignore_patterns(
    "__pycache__", "*.pyc", "*.egg-info", "build", "dist", ".git", ".venv"
)


def render(manifest: Manifest, components: list[Resolved]) -> dict[str, str]:
    """File name (relative to the output folder) -> text."""
    return {
        manifest.name: program(manifest, components),
        "components.yaml": components_yaml(manifest, components),
        "requirements.txt": requirements(components),
        "Dockerfile": dockerfile(manifest, components),
    }


def write(manifest: Manifest, components: list[Resolved]) -> list[Path]:
    """Write the distribution into its output folder; the paths written."""
    out = manifest.output_path
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in render(manifest, components).items():
        path = out / name
        path.write_text(text)
        written.append(path)
    (out / manifest.name).chmod(0o755)
    for item, folder in _vendored(components):
        target = out / folder
        if target.exists():
            shutil.rmtree(target)
        assert item.entry.path is not None
        shutil.copytree(item.entry.path, target, ignore=_COPY_IGNORE)
        written.append(target)
    return written


def _vendored(components: list[Resolved]) -> Iterator[tuple[Resolved, str]]:
    for item in components:
        if item.entry.python and item.entry.path is not None:
            yield item, f"{VENDOR}/{item.distribution or item.package}"


def program(manifest: Manifest, components: list[Resolved]) -> str:
    packages = "".join(f"        {item.package!r},\n" for item in components)
    has_default = default_components() <= {
        (item.factory.kind, item.factory.component_type) for item in components
    }
    description = manifest.description or f"{manifest.name}, built by sluice-builder"
    return f'''#!{sys.executable}
"""{manifest.name} {manifest.version}: {description}

Written by sluice-builder {__version__} from {manifest.source.name}; rebuild rather than edit.
Same command line as sluice-collector; `{manifest.name} components` lists what it holds.
"""

import sys

from sluice.entry import collector

DISTRIBUTION = dict(
    command={manifest.name!r},
    description={description!r},
    version={manifest.version!r},
    otelcol_version={(manifest.otelcol_version.text if manifest.otelcol_version else CORE_VERSION)!r},
    packages=(
{packages}    ),
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
                    ("pymod" if item.entry.python else "gomod"): (
                        f"{item.entry.module} {item.entry.version.text}"
                    ),
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
    header = f"# Resolved by sluice-builder {__version__} from {manifest.source.name}.\n"
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
    return f"""# {manifest.name} {manifest.version}, written by sluice-builder {__version__}.
# It starts from the Sluice image, built from the Sluice repository with its
# Dockerfile (docker build -t sluice-edge:{__version__} .), so the collector runs
# on the same locked dependencies and compiled modules. From this folder:
#   docker build -t {manifest.name}:{manifest.version} .
#   docker run -v $PWD/config.yaml:/etc/{manifest.name}/config.yaml {manifest.name}:{manifest.version}
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
