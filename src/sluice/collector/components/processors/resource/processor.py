"""The ``resource`` processor: the actions, applied in place to the
attributes of every resource of a request, before the data goes on. Log
records are not touched (they stay wire bytes)."""

from __future__ import annotations

from typing import Any

from sluice.collector import pdata
from sluice.collector.component import Consumer, Processor
from sluice.collector.internal.attraction import AttrProc
from sluice.policy import Signal


class ResourceProcessor(Processor):
    mutates_data = True

    def __init__(self, signal: Signal, next_: Consumer, actions: AttrProc):
        self.resources = pdata.RESOURCES[signal]
        self.next = next_
        self.actions = actions

    async def consume(self, data: Any) -> None:
        self.actions.read_client()
        process = self.actions.process
        for container in getattr(data, self.resources):
            process(container.resource.attributes)
        await self.next.consume(data)
