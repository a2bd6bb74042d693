"""Fixtures: the Edge suite's recording upstream serves as the OTLP/HTTP sink."""

from tests.edge.conftest import upstream

__all__ = ["upstream"]
