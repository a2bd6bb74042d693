"""Running totals of policy outcomes, the one implementation behind Edge's and
the collector's ``processor_policy_records`` counters (COLLECTOR.md section 4).

Counting is per batch: :meth:`OutcomeTally.add` takes a batch's
:class:`~sluice.policy.snapshot.BatchOutcome` (a few integer additions,
nothing per record), and the totals become labelled series only when a
scrape reads them.
"""

from __future__ import annotations

from sluice.policy.snapshot import BatchOutcome

RESULTS = ("dropped", "kept", "sampled", "transformed", "no_match", "malformed")
"""The ``result`` label values, each record counted under exactly one: a kept
record a transform changed is ``transformed`` whatever kept it (a sample, a
rate limit or a plain keep), as the reference processor counts it."""


class OutcomeTally:
    """Records evaluated and their results, summed over batches."""

    def __init__(self) -> None:
        self.records = 0
        self.dropped = 0
        self.kept = 0
        self.sampled = 0
        self.transformed = 0
        self.no_match = 0
        self.malformed = 0

    def add(self, outcome: BatchOutcome) -> None:
        # Spelled out: a loop over RESULTS with getattr would cost more on
        # every batch.
        self.records += outcome.records
        self.dropped += outcome.dropped
        self.kept += outcome.kept
        self.sampled += outcome.sampled
        self.transformed += outcome.transformed
        self.no_match += outcome.no_match
        self.malformed += outcome.malformed

    def results(self) -> list[tuple[str, int]]:
        """Every result with its total (in :data:`RESULTS` order, zeros included)."""
        return [
            ("dropped", self.dropped),
            ("kept", self.kept),
            ("sampled", self.sampled),
            ("transformed", self.transformed),
            ("no_match", self.no_match),
            ("malformed", self.malformed),
        ]
