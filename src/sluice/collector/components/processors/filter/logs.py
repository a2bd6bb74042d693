"""Filtering lean log requests: each record's bytes are evaluated against
``logs.log_record`` (or the legacy ``logs.include`` / ``logs.exclude``);
dropped records are removed, emptied scopes and resources pruned. Kept
records leave byte for byte."""

from __future__ import annotations

from typing import Any

from sluice.collector.components.processors.filter.processor import Matcher
from sluice.ottl import LogItem
from sluice.policy import Signal
from sluice.telemetry.otlp_codec import PROTOBUF_FORMS

VIEW = PROTOBUF_FORMS[Signal.LOG][1]


class LogFilter:
    def __init__(self, records: Matcher):
        self.records = records

    def apply(self, batch: Any) -> int:
        """Drop the matching records of `batch` in place; the number dropped.
        Raises :class:`~sluice.ottl.ConditionFailed` (``propagate``)."""
        matches = self.records.matches
        item = LogItem()
        dropped = 0
        try:
            for resource in batch.resource_logs:
                item.rc = resource
                for scope in resource.scope_logs:
                    item.sc = scope
                    drop = []
                    for index, raw in enumerate(scope.log_records):
                        item.reset(raw)
                        if matches(item):
                            drop.append(index)
                    if drop:
                        VIEW.remove_records(scope, drop)
                        dropped += len(drop)
        finally:
            self.records.release()
        VIEW.prune(batch)
        return dropped
