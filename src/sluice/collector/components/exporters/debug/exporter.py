"""Writing batches out for people to read.

Every batch first gives a count entry, as upstream's: the message ``Logs``
with the fields ``resource logs`` and ``log records`` (stdout: ``Logs
{"resource logs": 1, "log records": 2}``); ``normal`` and ``detailed`` then
write the batch's text (:mod:`.normal`, :mod:`.detailed`) as one more entry.

With ``use_internal_logger`` (the default) both go to the collector's log at
info level, so they take its format: in the console format an entry is one
line, the text's line breaks escaped. Otherwise they go to stdout as plain
text, exactly as upstream prints them (``Logs\\t{...}`` then the text).

Sampling is upstream's (zap's sampler): per signal and second, the first
``sampling_initial`` entries with the same message are written, then every
``sampling_thereafter``-th (none when 0).
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Callable
from typing import Any

from sluice.collector import pdata
from sluice.collector.component import SIGNAL_NAMES
from sluice.collector.components.exporters.debug import detailed, normal
from sluice.collector.components.exporters.debug.config import DebugConfig
from sluice.collector.exporterhelper import Attempt, Sender
from sluice.logs import ZapSampling
from sluice.policy import Signal


class Sampler:
    """The debug exporter's sampling: zap's (:class:`sluice.logs.ZapSampling`)
    with a one-second tick, by message."""

    def __init__(self, initial: int, thereafter: int, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.sampling = ZapSampling(1.0, initial, thereafter)

    def allows(self, message: str) -> bool:
        return self.sampling.allows(0, message, int(self.clock() * 1e9))


def summary(signal: Signal, data: Any) -> tuple[str, dict[str, int]]:
    """The count entry's message and fields."""
    items = pdata.item_count(signal, data)
    if signal is Signal.LOG:
        return "Logs", {"resource logs": len(data.resource_logs), "log records": items}
    if signal is Signal.TRACE:
        return "Traces", {"resource spans": len(data.resource_spans), "spans": items}
    metric_count = sum(
        len(scope.metrics) for resource in data.resource_metrics for scope in resource.scope_metrics
    )
    return "Metrics", {
        "resource metrics": len(data.resource_metrics),
        "metrics": metric_count,
        "data points": items,
    }


_RENDERERS = {
    "normal": {Signal.LOG: normal.logs, Signal.METRIC: normal.metrics, Signal.TRACE: normal.traces},
    "detailed": {
        Signal.LOG: detailed.logs,
        Signal.METRIC: detailed.metrics,
        Signal.TRACE: detailed.traces,
    },
}


def render(level: str, signal: Signal, data: Any) -> str:
    """The batch's text at `level` (normal or detailed)."""
    full = pdata.full_logs(data) if signal is Signal.LOG else data
    return str(_RENDERERS[level][signal](full))


class DebugSender(Sender):
    def __init__(self, config: DebugConfig, logger: logging.Logger, name: str):
        self.level = config.level
        self.logger = logger
        self.name = name
        """The component id, which the log's entries name as upstream's do."""
        self.to_log = config.use_internal_logger
        # Upstream makes an exporter, and with it a sampler, per signal.
        self.samplers = {
            signal: Sampler(config.sampling_initial, config.sampling_thereafter)
            for signal in Signal
        }

    def _write(self, signal: Signal, message: str, fields: dict[str, int] | None = None) -> None:
        if not self.samplers[signal].allows(message):
            return
        if self.to_log:
            # The fields upstream's exporter logger (the collector's) adds to
            # every entry; its own stdout logger has none.
            exporter = {"kind": "exporter", "data_type": SIGNAL_NAMES[signal], "name": self.name}
            self.logger.info("%s", message, extra={"fields": {**exporter, **(fields or {})}})
        else:
            sys.stdout.write(f"{message}\t{json.dumps(fields)}\n" if fields else f"{message}\n")
            sys.stdout.flush()

    async def prepare(self, signal: Signal, data: Any) -> Attempt:
        async def attempt() -> None:
            self._write(signal, *summary(signal, data))
            if self.level != "basic":
                self._write(signal, render(self.level, signal, data))

        return attempt
