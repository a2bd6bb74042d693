"""The fault suite: every defect found by fault injection against the real
Edge process (a scripted misbehaving upstream, client or policy server) is a
test here, so that the collector, which stands on the same HTTP layer and
readers, inherits them. Fixtures: the Edge suite's, and a scripted upstream."""

from collections.abc import Iterator

import pytest

from tests.edge.conftest import start_edge, upstream
from tests.faults.scripted import ScriptedUpstream

__all__ = ["scripted", "start_edge", "upstream"]


@pytest.fixture
def scripted() -> Iterator[ScriptedUpstream]:
    """A :class:`ScriptedUpstream` answering 200 ``{}`` until its script is set;
    pass ``upstream_url=scripted.url`` to ``start_edge``."""
    server = ScriptedUpstream()
    yield server
    server.stop()
