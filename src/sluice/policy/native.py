"""Where the serving process's Hyperscan databases are loaded and scanned.

The ``hyperscan`` binding compiles (in compiler children, see
:mod:`sluice.policy.compiler_process`) and serializes every database. Scanning
through it costs a Python call per match and per database; the
``_hsnative`` extension (built with Sluice) scans a field's databases in
one C call instead, with the Vectorscan library the ``vectorgrep`` package
ships (the binding keeps its copy private). Same release, same serialized
format: a probe at import compiles one database with the binding (in a
compiler child) and checks that the library reads it and matches alike.

Without the extension (``SLUICE_PURE_PYTHON=1`` installs), without the
library (a platform the wheel does not cover), when the probe fails, or with
``SLUICE_NATIVE=0``, databases are loaded and scanned by the binding:
slower, same answers.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import hyperscan

from sluice.policy import compiler_process

log = logging.getLogger(__name__)

LIBRARY = "libhs.so.5.4.12"
"""The shared library in the ``vectorgrep`` package (its ``lib`` folder)."""
SWITCH = "SLUICE_NATIVE"
"""Set to 0, the process reads and scans without its C extensions."""


def enabled() -> bool:
    """Whether C extensions may be used (``$SLUICE_NATIVE`` is not 0)."""
    return os.environ.get(SWITCH, "").strip() != "0"


def _library_path() -> Path | None:
    spec = importlib.util.find_spec("vectorgrep")  # finds it without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder) / "lib" / LIBRARY
        if path.is_file():
            return path
    return None


def _probe_blob() -> bytes:
    """The probe's database, compiled by the binding and serialized."""
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    database.compile(
        expressions=[b"ab+c", b"^x", "é$".encode()],
        ids=[0, 1, 2],
        flags=[hyperscan.HS_FLAG_SINGLEMATCH | hyperscan.HS_FLAG_UTF8] * 3,
    )
    return bytes(hyperscan.dumpb(database))


def _probe(extension: Any) -> None:
    """Compile a small database with the binding, load it natively and check
    the matches; raises on any difference. The compile runs in a compiler
    child where the process can fork: compiling here would bring about
    4.5 MiB of the compiler's code and heap into the serving process for
    good, which the compiler children exist to keep out."""
    if compiler_process.can_fork():
        blob, _ = compiler_process.run_forked(_probe_blob, compiler_process.UNWATCHED)
    else:
        blob = _probe_blob()
    matcher = extension.Matcher([(extension.Database(blob), [[7], [], [8, 9]])])
    found = matcher.scan("x abbc é".encode())
    if sorted(found) != [7, 8, 9]:
        raise RuntimeError(f"probe matched {found!r}, expected 7, 8 and 9")


def extension(name: str) -> Any:
    """The C extension module `name` (``sluice.policy._hsnative``...); None in a
    pure-Python install or with ``$SLUICE_NATIVE`` set to 0."""
    if not enabled():
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _load() -> Any:
    """The extension module, ready; None when scans go through the binding."""
    _hsnative = extension("sluice.policy._hsnative")
    if _hsnative is None:
        return None
    path = _library_path()
    if path is None:
        log.warning("vectorgrep's %s not found: scanning through the binding (slower)", LIBRARY)
        return None
    try:
        _hsnative.load(str(path))
        _probe(_hsnative)
    except Exception as problem:
        log.warning(
            "native Hyperscan scans unavailable (%s): scanning through the binding", problem
        )
        return None
    return _hsnative


_EXTENSION: Any = _load()
ACTIVE: bool = _EXTENSION is not None
"""Whether databases load and scan natively in this process."""


def load_database(blob: bytes) -> Any:
    """A serialized block-mode database, loaded for scanning (ValueError or
    hyperscan.error when `blob` is not one)."""
    if _EXTENSION is not None:
        return _EXTENSION.Database(blob)
    return hyperscan.loadb(blob, hyperscan.HS_MODE_BLOCK)


def matcher(
    shards: Sequence[tuple[Any, Sequence[Sequence[int]], Sequence[int] | None]],
) -> Any:
    """A native matcher over `shards` ((database, ids, ends): ids[local] are
    the pattern ids of the database's pattern `local`, ends[local] how its
    reports are confirmed, see :func:`shardplan.end_check`; None when no
    pattern needs it); None when scans go through the binding. Its
    ``scan(data)`` returns the pattern ids that hit the UTF-8 bytes `data`."""
    if _EXTENSION is None:
        return None
    return _EXTENSION.Matcher(shards)
