"""A record view for tests that watch or break what the engine asks of a view."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sluice.policy import Signal
from sluice.policy.model import Level, Selector
from sluice.policy.view import Ctx, FieldReader, RecordView, Scan, Value
from sluice.telemetry.otlp_json import json_view


class ForwardingView(RecordView):
    """The OTLP JSON view of a signal, method by method: compiled views cannot
    be subclassed, so a test subclasses this and overrides what it watches."""

    def __init__(self, signal: Signal = Signal.LOG) -> None:
        self.json = json_view(signal)

    def context(self, resource: Any, scope: Any, records: Any, position: int, record: Any) -> Ctx:
        return self.json.context(resource, scope, records, position, record)

    def resources(self, batch: Any) -> Sequence[Any]:
        return self.json.resources(batch)

    def scopes(self, resource: Any) -> Sequence[Any]:
        return self.json.scopes(resource)

    def records(self, scope: Any) -> Sequence[Any]:
        return self.json.records(scope)

    def remove_records(self, scope: Any, indexes: list[int]) -> None:
        self.json.remove_records(scope, indexes)

    def prune(self, batch: Any) -> bool:
        return self.json.prune(batch)

    def reader(self, fields: Sequence[tuple[Scan, Selector]]) -> FieldReader:
        return self.json.reader(fields)

    def level_of(self, selector: Selector) -> Level:
        return self.json.level_of(selector)

    def get(self, ctx: Ctx, selector: Selector) -> Value | None:
        return self.json.get(ctx, selector)

    def values(self, ctx: Ctx, selector: Selector) -> Sequence[Value]:
        return self.json.values(ctx, selector)

    def set_string(self, ctx: Ctx, selector: Selector, value: str) -> None:
        self.json.set_string(ctx, selector, value)

    def remove(self, ctx: Ctx, selector: Selector) -> bool:
        return self.json.remove(ctx, selector)

    def rename(self, ctx: Ctx, source: Selector, to: str, upsert: bool) -> bool:
        return self.json.rename(ctx, source, to, upsert)

    def trace_state(self, record: Any) -> str:
        return self.json.trace_state(record)

    def set_trace_state(self, record: Any, value: str) -> None:
        self.json.set_trace_state(record, value)

    def trace_id(self, record: Any) -> bytes:
        return self.json.trace_id(record)
