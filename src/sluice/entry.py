"""The console commands. Each imports its program with Ctrl-C (SIGINT) at
the operating system's default, so that an interrupt while the program is
still loading ends it at once, as any Unix command, instead of printing a
``KeyboardInterrupt`` traceback from somewhere in an import; the program
then gets Python's usual handler back, and installs its own when it runs."""

from __future__ import annotations

import importlib
import signal
from typing import Any


def _run(module: str, function: str = "main", **distribution: Any) -> int:
    previous = signal.signal(signal.SIGINT, signal.SIG_DFL)
    main = getattr(importlib.import_module(module), function)
    if distribution:
        from sluice.collector.distribution import Distribution

        distribution = {"distribution": Distribution(**distribution)}
    signal.signal(signal.SIGINT, previous)
    result: int = main(**distribution)
    return result


def sluice() -> int:
    return _run("sluice.cli")


def edge() -> int:
    return _run("sluice.edge.cli")


def edge_datadog() -> int:
    return _run("sluice.edge.cli", "main_datadog")


def collector(**distribution: Any) -> int:
    """``sluice-collector``, or with `distribution` (the fields of a
    :class:`~sluice.collector.distribution.Distribution`) a custom build's
    program, which sluice-builder writes."""
    return _run("sluice.collector.cli", **distribution)


def builder() -> int:
    return _run("sluice.builder.cli")
