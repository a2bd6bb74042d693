"""The ``forward`` connector: what one pipeline exports, the pipelines that
name it as a receiver get unchanged (same signal), with their answer."""

from __future__ import annotations

from typing import Any

from sluice.collector.component import Connector, Consumer


class ForwardConnector(Connector):
    def __init__(self, next_: Consumer):
        self.next = next_
        # Upstream's forward connector has the capabilities of what it feeds:
        # when that edits data, the fan-out before it hands it a copy.
        self.mutates_data = next_.mutates_data

    async def consume(self, data: Any) -> None:
        await self.next.consume(data)
