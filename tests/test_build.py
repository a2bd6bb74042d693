"""The install compiles exactly the modules setup.py lists and the C sources
under src (or none with SLUICE_PURE_PYTHON=1), so the tests exercise the
build that ships."""

from __future__ import annotations

import ast
import importlib
import importlib.machinery
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _listed() -> list[str]:
    tree = ast.parse((ROOT / "setup.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "COMPILED" for target in node.targets
        ):
            return list(ast.literal_eval(node.value))
    raise AssertionError("setup.py has no COMPILED list")


def test_listed_modules_exist() -> None:
    listed = _listed()
    assert listed, "nothing is compiled"
    for path in listed:
        assert (ROOT / "src" / "sluice" / path).is_file(), path


def test_modules_load_from_the_build_kind_installed() -> None:
    pure = os.environ.get("SLUICE_PURE_PYTHON") == "1"
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    for path in _listed():
        module = importlib.import_module("sluice." + path.removesuffix(".py").replace("/", "."))
        origin = str(module.__file__)
        if pure:
            assert origin.endswith(".py"), f"{origin}: compiled, but SLUICE_PURE_PYTHON=1"
        else:
            assert origin.endswith(suffixes), f"{origin}: not compiled (rerun scripts/bootstrap.sh)"


def test_c_sources_are_built_unless_pure() -> None:
    pure = os.environ.get("SLUICE_PURE_PYTHON") == "1"
    sources = sorted((ROOT / "src").rglob("*.c"))
    assert sources, "no C extension sources"
    for source in sources:
        name = ".".join(source.relative_to(ROOT / "src").with_suffix("").parts)
        built = list(source.parent.glob(source.stem + ".*.so"))
        assert (not built) if pure else built, f"{source}: built {built}, pure={pure}"
        if not pure:
            importlib.import_module(name)


def test_nothing_else_is_compiled() -> None:
    listed = {str(Path("src/sluice") / path).removesuffix(".py") for path in _listed()}
    for found in (ROOT / "src").rglob("*.so"):
        stem = str(found.relative_to(ROOT)).split(".", 1)[0]
        from_c = (ROOT / (stem + ".c")).is_file()
        assert stem in listed or from_c or found.parent == ROOT / "src", (
            f"stale compiled module {found}"
        )
