"""``health_check``: an HTTP path answering whether the collector is running
(200) or not yet, or no longer (503), for liveness and readiness probes."""

from sluice.collector.components.extensions.healthcheck.factory import HealthCheckFactory

FACTORY = HealthCheckFactory()

__all__ = ["FACTORY", "HealthCheckFactory"]
