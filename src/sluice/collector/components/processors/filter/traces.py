"""Filtering trace requests: spans against ``traces.span``, then the events
of each kept span against ``traces.spanevent`` (a span whose events are all
dropped stays). Emptied scopes and resources are pruned."""

from __future__ import annotations

from typing import Any

from sluice.collector.components.processors.filter.processor import Matcher
from sluice.ottl import SpanEventItem, SpanItem
from sluice.policy import Signal
from sluice.telemetry.otlp_codec import PROTOBUF_FORMS

VIEW = PROTOBUF_FORMS[Signal.TRACE][1]


class TraceFilter:
    def __init__(self, spans: Matcher | None, events: Matcher | None):
        self.spans = spans
        self.events = events

    def apply(self, batch: Any) -> int:
        """Drop matching spans and span events in place; the number of spans
        dropped. Raises :class:`~sluice.ottl.ConditionFailed` (``propagate``)."""
        span_matches = self.spans.matches if self.spans is not None else None
        span = SpanItem()
        event = SpanEventItem()
        dropped = 0
        try:
            for resource in batch.resource_spans:
                span.rc = event.rc = resource
                for scope in resource.scope_spans:
                    span.sc = event.sc = scope
                    drop = []
                    for index, record in enumerate(scope.spans):
                        span.span = record
                        if span_matches is not None and span_matches(span):
                            drop.append(index)
                        elif self.events is not None and len(record.events):
                            event.span = record
                            self._events(event, record.events)
                    if drop:
                        VIEW.remove_records(scope, drop)
                        dropped += len(drop)
        finally:
            for sequence in (self.spans, self.events):
                if sequence is not None:
                    sequence.release()
        VIEW.prune(batch)
        return dropped

    def _events(self, item: SpanEventItem, events: Any) -> None:
        assert self.events is not None
        matches = self.events.matches
        drop = []
        for index, record in enumerate(events):
            item.event = record
            if matches(item):
                drop.append(index)
        for index in reversed(drop):
            del events[index]
