"""The ``filter`` processor's config: OTTL conditions per signal and
``error_mode``, with upstream's keys and checks."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from sluice.collector.component import ComponentConfig, Problem
from sluice.ottl import DATAPOINT, LOG, METRIC, PROPAGATE, SPAN, SPAN_EVENT, Context, check

ERROR_MODES = ("ignore", "propagate", "silent")
LEGACY = (
    "the legacy include/exclude matching is not supported by Sluice's filter processor; "
    "write it as OTTL conditions ({where})"
)


@dataclass(frozen=True)
class LogFilters:
    log_record: list[str] = field(default_factory=list)
    """Drop a log record when any condition is true (log context)."""
    include: Any = None
    exclude: Any = None


@dataclass(frozen=True)
class MetricFilters:
    metric: list[str] = field(default_factory=list)
    """Drop a metric when any condition is true (metric context)."""
    datapoint: list[str] = field(default_factory=list)
    """Drop a data point when any condition is true (data point context); a
    metric left with no data points is dropped."""
    include: Any = None
    exclude: Any = None
    regexp: Any = None


@dataclass(frozen=True)
class TraceFilters:
    span: list[str] = field(default_factory=list)
    """Drop a span when any condition is true (span context)."""
    spanevent: list[str] = field(default_factory=list)
    """Drop a span event when any condition is true (span event context)."""


@dataclass(frozen=True)
class FilterConfig(ComponentConfig):
    error_mode: str = PROPAGATE
    """What a condition that fails on an item does: ``propagate`` (the batch
    is refused), ``ignore`` (logged, the condition counts as false) or
    ``silent`` (the same, not logged). Case-insensitive, as upstream."""
    logs: LogFilters = field(default_factory=LogFilters)
    metrics: MetricFilters = field(default_factory=MetricFilters)
    traces: TraceFilters = field(default_factory=TraceFilters)
    spans: Any = None
    """Upstream's legacy span include/exclude: recognised, refused."""

    @property
    def mode(self) -> str:
        return self.error_mode.lower()

    def conditions(self) -> list[tuple[str, Context, list[str]]]:
        """(key path, context, conditions) of every condition list."""
        return [
            ("logs::log_record", LOG, self.logs.log_record),
            ("metrics::metric", METRIC, self.metrics.metric),
            ("metrics::datapoint", DATAPOINT, self.metrics.datapoint),
            ("traces::span", SPAN, self.traces.span),
            ("traces::spanevent", SPAN_EVENT, self.traces.spanevent),
        ]

    def validate(self) -> Iterator[Problem]:
        if self.mode not in ERROR_MODES:
            yield "error_mode", f"unknown error mode {self.mode}"
        yield from self._legacy()
        for key, context, conditions in self.conditions():
            for index, condition in enumerate(conditions):
                if not isinstance(condition, str):
                    yield f"{key}[{index}]", "a condition must be a string"
            texts = [c for c in conditions if isinstance(c, str)]
            for index, message in check(context, texts):
                yield f"{key}[{index}]", message

    def _legacy(self) -> Iterator[Problem]:
        """Upstream's check against mixing both styles (its wording), then
        Sluice's refusal of the legacy keys themselves."""
        legacy_keys = {
            "spans": ["spans"] if self.spans is not None else [],
            "metrics": [
                f"metrics::{k}"
                for k in ("include", "exclude", "regexp")
                if getattr(self.metrics, k) is not None
            ],
            "logs": [
                f"logs::{k}" for k in ("include", "exclude") if getattr(self.logs, k) is not None
            ],
        }
        has_ottl = {
            "spans": bool(self.traces.span or self.traces.spanevent),
            "metrics": bool(self.metrics.metric or self.metrics.datapoint),
            "logs": bool(self.logs.log_record),
        }
        instead = {"spans": "traces.span", "metrics": "metrics.metric", "logs": "logs.log_record"}
        for signal, keys in legacy_keys.items():
            mixing = [k for k in keys if not k.endswith("regexp")]
            if mixing and has_ottl[signal]:
                yield (
                    "",
                    f"cannot use ottl conditions and include/exclude for {signal} at the same time",
                )
            for key in keys:
                yield key, LEGACY.format(where=instead[signal])
