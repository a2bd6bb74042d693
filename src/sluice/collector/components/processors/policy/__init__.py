"""``policy``: filters, samples and transforms logs, metrics and traces with
Sluice's policy engine, policies coming from files and policy servers."""

from sluice.collector.components.processors.policy.factory import PolicyProcessorFactory

FACTORY = PolicyProcessorFactory()

__all__ = ["FACTORY", "PolicyProcessorFactory"]
