"""What a collector program is: its name, description and version, the
collector core version its configs follow, and the component packages it
holds. ``sluice-collector`` is one distribution (built from
``sluice/builder/default.yaml``); ``sluice-builder`` writes programs that run
:func:`sluice.collector.cli.main` with others."""

from __future__ import annotations

from dataclasses import dataclass

from sluice import __version__
from sluice.collector.component import CORE_VERSION
from sluice.collector.factories import BUILTIN


@dataclass(frozen=True)
class Distribution:
    command: str
    description: str
    version: str
    packages: tuple[str, ...]
    """Importable modules each holding one component's ``FACTORY``."""
    modules: tuple[str, ...] = ()
    """The manifest's ``<module> <version>`` of each package, in order, which
    ``components`` shows; when empty, each factory's module path and version."""
    otelcol_version: str = CORE_VERSION
    default_config: bool = False
    """Whether running with no ``--config`` starts the built-in default
    (which needs the built-in components); otherwise it is an error, as
    upstream's custom builds."""


SLUICE_COLLECTOR = Distribution(
    command="sluice-collector",
    description="Sluice collector: OpenTelemetry Collector distribution with the policy processor",
    version=__version__,
    packages=BUILTIN,
    default_config=True,
)
