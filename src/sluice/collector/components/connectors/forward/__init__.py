"""``forward``: the exporter of one pipeline that is the receiver of others
of the same signal."""

from sluice.collector.components.connectors.forward.factory import ForwardConnectorFactory

FACTORY = ForwardConnectorFactory()

__all__ = ["FACTORY", "ForwardConnectorFactory"]
