"""The OpenTelemetry Transformation Language's conditions (upstream's
``pkg/ottl``), the subset Sluice runs: paths of the log, span, span event,
metric and data point contexts, literals and enums, comparisons, ``and``,
``or``, ``not`` and a few converters. A condition is parsed with lark (LALR)
and compiled once into closures; pattern leaves share multi-pattern scans.

Pure: no I/O. Callers hand each item as the context's ``*Item`` object.
"""

from sluice.ottl.contexts import (
    DATAPOINT,
    LOG,
    METRIC,
    SPAN,
    SPAN_EVENT,
    Context,
    DataPointItem,
    LogItem,
    MetricItem,
    SpanEventItem,
    SpanItem,
)
from sluice.ottl.errors import OttlConfigError, OttlRuntimeError
from sluice.ottl.sequence import (
    IGNORE,
    PROPAGATE,
    SILENT,
    ConditionFailed,
    ConditionSequence,
    Failures,
    check,
)

__all__ = [
    "DATAPOINT",
    "IGNORE",
    "LOG",
    "METRIC",
    "PROPAGATE",
    "SILENT",
    "SPAN",
    "SPAN_EVENT",
    "ConditionFailed",
    "ConditionSequence",
    "Context",
    "DataPointItem",
    "Failures",
    "LogItem",
    "MetricItem",
    "OttlConfigError",
    "OttlRuntimeError",
    "SpanEventItem",
    "SpanItem",
    "check",
]
