"""The fault suite: every defect found by fault injection against the real
Edge process (a scripted misbehaving upstream, client or policy server) is a
test here, so that the collector, which stands on the same HTTP layer and
readers, inherits them. Fixtures are the Edge suite's."""

from tests.edge.conftest import start_edge, upstream

__all__ = ["start_edge", "upstream"]
