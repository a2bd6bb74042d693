"""One signal's way into its pipeline over one transport: count the items,
hand the request to the pipeline, and turn a refusal into the status the
sender gets (the same for HTTP and gRPC)."""

from __future__ import annotations

import logging
from typing import Any

from sluice.collector import pdata
from sluice.collector.component import Consumer, ConsumerError
from sluice.collector.components.receivers.otlp.status import Code, Refusal
from sluice.collector.telemetry import Series
from sluice.policy import Signal


class Ingest:
    """Exports requests of one signal into `consumer`, counting accepted and
    refused items (``otelcol_receiver_{accepted,refused}_*``)."""

    def __init__(
        self,
        signal: Signal,
        consumer: Consumer,
        accepted: Series,
        refused: Series,
        log: logging.Logger,
    ):
        self.signal = signal
        self._consumer = consumer
        self._accepted = accepted
        self._refused = refused
        self._log = log

    async def export(self, request: Any) -> Refusal | None:
        """Pass `request` on (the caller no longer touches it); None when the
        pipeline took it. A request with no items is accepted without
        calling the pipeline, as upstream does."""
        items = pdata.item_count(self.signal, request)
        if not items:
            return None
        try:
            await self._consumer.consume(request)
        except ConsumerError as error:
            self._refused.inc(items)
            if error.code is not None and error.code != Code.OK:
                # A server's answer passed on (upstream hands on a status error as it is).
                return Refusal(Code(error.code), str(error), error.retry_after)
            if error.retryable:
                return Refusal(Code.UNAVAILABLE, str(error), error.retry_after)
            # Upstream answers a permanent error INTERNAL (HTTP 500).
            return Refusal(Code.INTERNAL, str(error))
        except Exception as error:
            # A failure that is not a refusal is retryable, as upstream treats
            # any error that is not marked permanent.
            self._log.exception("pipeline failed on %d items", items)
            self._refused.inc(items)
            return Refusal(Code.UNAVAILABLE, str(error) or type(error).__name__)
        self._accepted.inc(items)
        return None
