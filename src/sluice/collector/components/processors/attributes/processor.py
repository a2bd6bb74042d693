"""The ``attributes`` processor: the actions, applied in place to the
attributes of every selected span, log record or metric data point, before
the data goes on."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from sluice.collector.component import Consumer, Host, Processor
from sluice.collector.components.processors.attributes.logs import process_logs
from sluice.collector.components.processors.attributes.metrics import process_metrics
from sluice.collector.components.processors.attributes.traces import process_traces
from sluice.collector.internal.attraction import AttrProc
from sluice.collector.internal.filtermatch import Selection
from sluice.policy import Signal

Walk = Callable[[Any, AttrProc, Selection], int]
WALKS: dict[Signal, Walk] = {
    Signal.LOG: process_logs,
    Signal.METRIC: process_metrics,
    Signal.TRACE: process_traces,
}


class AttributesProcessor(Processor):
    mutates_data = True

    def __init__(
        self,
        signal: Signal,
        next_: Consumer,
        actions: AttrProc,
        selection: Selection,
        logger: logging.Logger,
    ):
        self.signal = signal
        self.next = next_
        self.actions = actions
        self.selection = selection
        self.logger = logger
        self.walk = WALKS[signal]

    async def start(self, host: Host) -> None:
        for unused in self.selection.unused:
            self.logger.warning(
                "include/exclude: %s selects nothing, as upstream; an include that tests "
                "nothing else processes every metric, such an exclude none",
                unused,
            )

    async def consume(self, data: Any) -> None:
        self.actions.read_client()
        unreadable = self.walk(data, self.actions, self.selection)
        if unreadable:
            self.logger.warning(
                "%d log records are not valid protobuf; they pass on unchanged", unreadable
            )
        await self.next.consume(data)
