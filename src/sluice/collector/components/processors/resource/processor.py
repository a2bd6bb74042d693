"""The ``resource`` processor: the actions, applied in place to the
attributes of every resource of a request, before the data goes on. Log
records are not touched (they stay wire bytes)."""

from __future__ import annotations

import logging
from typing import Any

from sluice.collector import pdata
from sluice.collector.component import Consumer, Host, Processor
from sluice.collector.internal.attraction import AttrProc, warn_about_context
from sluice.policy import Signal


class ResourceProcessor(Processor):
    mutates_data = True

    def __init__(self, signal: Signal, next_: Consumer, actions: AttrProc, logger: logging.Logger):
        self.resources = pdata.RESOURCES[signal]
        self.next = next_
        self.actions = actions
        self.logger = logger

    async def start(self, host: Host) -> None:
        warn_about_context(self.actions, self.logger)

    async def consume(self, data: Any) -> None:
        process = self.actions.process
        for container in getattr(data, self.resources):
            process(container.resource.attributes)
        await self.next.consume(data)
