"""The ``otlp`` exporter: OTLP over gRPC (the ``Export`` call of each
signal's service), with a sending queue and retries."""

from sluice.collector.components.exporters.otlp.factory import OtlpGrpcExporterFactory

FACTORY = OtlpGrpcExporterFactory()

__all__ = ["FACTORY", "OtlpGrpcExporterFactory"]
