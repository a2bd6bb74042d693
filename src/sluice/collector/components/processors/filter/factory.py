"""The ``filter`` processor's factory: compiles the signal's conditions, or
its legacy include/exclude."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import ClassVar

from sluice.collector.component import Consumer, Problem, Processor, ProcessorFactory, Settings
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

    def signal_problems(self, config: FilterConfig, signal: Signal) -> Iterable[Problem]:
        """The legacy include/exclude properties the signal does not have, or
        that do not compile (upstream's errors when it creates the processor)."""
        from sluice.collector.components.processors.filter.legacy import legacy_problems

        return legacy_problems(config, signal)

    def create(
        self, settings: Settings, config: FilterConfig, signal: Signal, next_: Consumer
    ) -> Processor:
        from sluice.collector.components.processors.filter.legacy import (
            legacy_matcher,
            metric_skip,
        )
        from sluice.collector.components.processors.filter.logs import LogFilter
        from sluice.collector.components.processors.filter.metrics import (
            LegacyMetricFilter,
            MetricFilter,
        )
        from sluice.collector.components.processors.filter.processor import (
            FilteredCounters,
            FilterProcessor,
            Matcher,
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

        def compiled(context: Context, conditions: list[str] | None) -> ConditionSequence | None:
            """None when the list is not written; a list written empty drops
            nothing but still has the batch walked (and pruned), as upstream."""
            if conditions is None:
                return None
            return ConditionSequence(context, conditions, config.mode, cache)

        walker: Walker | None = None
        sequences: list[Matcher | None]
        if signal is Signal.LOG:
            records: Matcher | None = compiled(LOG, config.logs.log_record)
            if records is None:
                records = legacy_matcher(config, signal)
            sequences = [records]
            if records is not None:
                walker = LogFilter(records)
        elif signal is Signal.METRIC:
            sequences = [
                compiled(METRIC, config.metrics.metric),
                compiled(DATAPOINT, config.metrics.datapoint),
            ]
            if any(s is not None for s in sequences):
                walker = MetricFilter(*sequences)
            else:
                skip = metric_skip(config)
                if skip is not None:
                    walker = LegacyMetricFilter(skip)
        else:
            spans: Matcher | None = compiled(SPAN, config.traces.span)
            if not config.traces.has_conditions():
                spans = legacy_matcher(config, signal)
            sequences = [spans, compiled(SPAN_EVENT, config.traces.spanevent)]
            if any(s is not None for s in sequences):
                walker = TraceFilter(*sequences)
        return FilterProcessor(
            signal,
            next_,
            walker,
            [s for s in sequences if s is not None],
            FilteredCounters.of(settings).families[signal],
            str(settings.id),
            settings.logger,
        )
