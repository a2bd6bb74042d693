"""The ``filter`` processor's factory: compiles the signal's conditions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from sluice.collector.component import Consumer, Processor, ProcessorFactory, Settings
from sluice.collector.components.processors.filter.config import FilterConfig
from sluice.policy import Signal


class FilterProcessorFactory(ProcessorFactory[FilterConfig]):
    component_type = "filter"
    module = "github.com/open-telemetry/opentelemetry-collector-contrib/processor/filterprocessor"
    stability: ClassVar[Mapping[str, str]] = {
        "logs": "alpha",
        "metrics": "alpha",
        "traces": "alpha",
    }
    config_type = FilterConfig
    needs_native = True
    """Pattern conditions are scanned with Hyperscan/Vectorscan."""

    def create(
        self, settings: Settings, config: FilterConfig, signal: Signal, next_: Consumer
    ) -> Processor:
        from sluice.collector.components.processors.filter.logs import LogFilter
        from sluice.collector.components.processors.filter.metrics import MetricFilter
        from sluice.collector.components.processors.filter.processor import (
            FilteredCounters,
            FilterProcessor,
            Walker,
        )
        from sluice.collector.components.processors.filter.traces import TraceFilter
        from sluice.ottl import (
            DATAPOINT,
            LOG,
            METRIC,
            SPAN,
            SPAN_EVENT,
            ConditionSequence,
            Context,
        )
        from sluice.policy.patterns import DatabaseCache

        cache = DatabaseCache.default()

        def compiled(context: Context, conditions: list[str]) -> ConditionSequence | None:
            if not conditions:
                return None
            return ConditionSequence(context, conditions, config.mode, cache)

        walker: Walker | None = None
        sequences: list[ConditionSequence | None]
        if signal is Signal.LOG:
            sequences = [compiled(LOG, config.logs.log_record)]
            if sequences[0] is not None:
                walker = LogFilter(sequences[0])
        elif signal is Signal.METRIC:
            sequences = [
                compiled(METRIC, config.metrics.metric),
                compiled(DATAPOINT, config.metrics.datapoint),
            ]
            if any(s is not None for s in sequences):
                walker = MetricFilter(*sequences)
        else:
            sequences = [
                compiled(SPAN, config.traces.span),
                compiled(SPAN_EVENT, config.traces.spanevent),
            ]
            if any(s is not None for s in sequences):
                walker = TraceFilter(*sequences)
        return FilterProcessor(
            signal,
            next_,
            walker,
            [s for s in sequences if s is not None],
            FilteredCounters.of(settings).families[signal].labels(str(settings.id)),
            settings.logger,
        )
