"""The policy engine: parse and validate policies, compile them into pattern
databases, and decide keep/drop/sample/rate-limit/transform for records.

Pure: no I/O, no asyncio, no HTTP. Callers decode telemetry, hand the engine a
:class:`RecordView` over it, and encode what remains.
"""

from sluice.policy.model import LoadReport, Policy, Signal
from sluice.policy.parse import PolicyDocumentError, load_document
from sluice.policy.snapshot import BatchOutcome, PolicySnapshot
from sluice.policy.stats import PolicyCounts, PolicyRuntime, PolicyStats
from sluice.policy.view import PRESENT, Ctx, RecordView

__all__ = [
    "PRESENT",
    "BatchOutcome",
    "Ctx",
    "LoadReport",
    "Policy",
    "PolicyCounts",
    "PolicyDocumentError",
    "PolicyRuntime",
    "PolicySnapshot",
    "PolicyStats",
    "RecordView",
    "Signal",
    "load_document",
]
