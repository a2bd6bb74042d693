"""The ``otlphttp`` exporter: OTLP over HTTP (protobuf or JSON, compressed)
to ``<endpoint>/v1/<signal>`` or per-signal URLs, with a sending queue and
retries."""

from sluice.collector.components.exporters.otlphttp.factory import OtlpHttpExporterFactory

FACTORY = OtlpHttpExporterFactory()

__all__ = ["FACTORY", "OtlpHttpExporterFactory"]
