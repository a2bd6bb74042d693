"""Benchmarks of the Sluice policy engine (see ``README.md``).

``engine.py`` is the entry point; ``workload.py`` generates the records and policy sets it
measures with, and ``naive.py`` is the stdlib-``re`` evaluator the engine is checked and
compared against.
"""

from typing import Any

JsonObj = dict[str, Any]
"""A decoded JSON object: an OTLP JSON batch, a policy document, a result."""
