"""``pprof``: Go's ``net/http/pprof`` endpoints for the Python process: CPU
and heap profiles in pprof's format, and every thread's stack as text."""

from sluice.collector.components.extensions.pprof.factory import PprofFactory

FACTORY = PprofFactory()

__all__ = ["FACTORY", "PprofFactory"]
