"""The ``otlp`` receiver: OTLP over gRPC and HTTP (protobuf and JSON) into the
pipelines that name it. See README.md in this package for every option."""

from sluice.collector.components.receivers.otlp.factory import OtlpReceiverFactory

FACTORY = OtlpReceiverFactory()

__all__ = ["FACTORY", "OtlpReceiverFactory"]
