"""``healthcheckv2``: collector, pipeline and component status as JSON over
HTTP and through the standard gRPC health service, aggregated from the
status every component reports."""

from sluice.collector.components.extensions.healthcheckv2.factory import HealthCheckV2Factory

FACTORY = HealthCheckV2Factory()

__all__ = ["FACTORY", "HealthCheckV2Factory"]
