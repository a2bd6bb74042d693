"""The ``filter`` processor: drops the items an OTTL condition matches.

``error_mode`` decides what a condition that fails on an item does:
``propagate`` refuses the whole batch (a permanent error: the same data
fails the same way again), ``ignore`` counts the condition as false and logs
it (one warning per condition and batch, with how many items it failed on),
``silent`` counts it as false. A batch left empty goes nowhere; the sender
still gets success.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, Counter

from sluice.collector import pdata
from sluice.collector.component import SIGNAL_NAMES, Consumer, Processor, Settings, permanent
from sluice.ottl import ConditionFailed, Failures
from sluice.policy import Signal

FILTERED = {
    Signal.LOG: (
        "otelcol_processor_filter_logs.filtered",
        "Number of logs dropped by the filter processor",
    ),
    Signal.METRIC: (
        "otelcol_processor_filter_datapoints.filtered",
        "Number of metric data points dropped by the filter processor",
    ),
    Signal.TRACE: (
        "otelcol_processor_filter_spans.filtered",
        "Number of spans dropped by the filter processor",
    ),
}
"""Upstream's counters (``metadata.yaml``), exposed as
``otelcol_processor_filter_logs_filtered_total{filter="<id>"}``..."""


class Walker(Protocol):
    def apply(self, batch: Any) -> int: ...


class Matcher(Protocol):
    """What a walker asks of each item: an OTTL
    :class:`~sluice.ottl.ConditionSequence` or the legacy include/exclude
    (:class:`~sluice.collector.components.processors.filter.legacy.LegacyMatcher`)."""

    failures: Failures

    def matches(self, item: Any) -> bool:
        """Whether `item` is to be dropped."""
        ...

    def release(self) -> None:
        """Forget the containers of the batch just walked."""
        ...


class FilteredCounters:
    """The service's ``otelcol_processor_filter_*_filtered`` families, shared
    by its filter processors (``settings.shared``)."""

    SHARED_KEY = "filter"

    def __init__(self, registry: CollectorRegistry):
        self.families = {
            signal: Counter(name.replace(".", "_"), text, ["filter"], registry=registry)
            for signal, (name, text) in FILTERED.items()
        }

    @classmethod
    def of(cls, settings: Settings) -> FilteredCounters:
        return settings.service_wide(cls.SHARED_KEY, cls)


class FilterProcessor(Processor):
    mutates_data = True

    def __init__(
        self,
        signal: Signal,
        next_: Consumer,
        walker: Walker | None,
        sequences: list[Matcher],
        counter: Any,
        processor_id: str,
        logger: logging.Logger,
    ):
        self.signal = signal
        self.next = next_
        self.walker = walker
        """None when no condition applies to the signal: data passes untouched."""
        self.sequences = sequences
        self.counter = counter
        """The signal's ``*_filtered`` family; its series (``filter`` = the
        processor id) is made by the first batch filtered, as upstream's
        counter has none before it adds to it."""
        self.processor_id = processor_id
        self.logger = logger
        self.resources = pdata.RESOURCES[signal]

    async def consume(self, data: Any) -> None:
        if self.walker is None:
            await self.next.consume(data)
            return
        try:
            dropped = self.walker.apply(data)
        except ConditionFailed as failed:
            self.logger.error("failed processing %s: %s", SIGNAL_NAMES[self.signal], failed)
            raise permanent(str(failed)) from None
        finally:
            self._report_failures()
        self.counter.labels(self.processor_id).inc(dropped)  # 0 too, as upstream adds it
        if not len(getattr(data, self.resources)):
            return  # everything dropped: an empty request goes nowhere
        await self.next.consume(data)

    def _report_failures(self) -> None:
        for sequence in self.sequences:
            for condition, (count, first) in sequence.failures.take().items():
                self.logger.warning(
                    "failed to eval condition %r on %d item(s) of a batch; treated as false: %s",
                    condition,
                    count,
                    first,
                )
