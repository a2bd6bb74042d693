"""The ``debug`` exporter: writes what it receives to the collector's log
(or stdout), as counts, one line per record, or every field."""

from sluice.collector.components.exporters.debug.factory import DebugExporterFactory

FACTORY = DebugExporterFactory()

__all__ = ["FACTORY", "DebugExporterFactory"]
