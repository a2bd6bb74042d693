"""Record views over OTLP JSON export requests (decoded with :func:`json.loads`).

The documents are edited in place and written back with the same OTLP
camelCase keys, so a record no policy touched comes out exactly as it came in.
Ids are lowercase hex strings; enums may be names or numbers; 64-bit integers
may be strings.

Reading is total: a document of any shape is read without raising, so one
malformed value never switches filtering off for the rest of a request. A
value of the wrong JSON type reads as absent, an AnyValue of the wrong shape
(a body or attribute value that is not an object, a ``stringValue`` that is
not a string) as present without text, an attribute entry that is not an
object with a string ``key`` is skipped (a missing ``key`` is the empty key,
as in the protobuf JSON mapping), and an ``attributes`` that is not a list
holds none. Only a record that is not an object is unreadable: the engine
keeps it as it came and counts it malformed. Edits never overwrite a value
they cannot read: such a record is kept unchanged and counted malformed.

The shared machinery is in :mod:`.view` (containers, the record reader,
typed reads), AnyValues and attribute lists in :mod:`.attributes`, scalar
fields in :mod:`.fields`, and each signal's view in its own module.
"""

from __future__ import annotations

from typing import Any

from sluice.policy.model import Signal
from sluice.policy.view import RecordView
from sluice.telemetry.otlp_json.logs import JsonLogView
from sluice.telemetry.otlp_json.metrics import JsonMetricView
from sluice.telemetry.otlp_json.traces import JsonTraceView

__all__ = ["JsonLogView", "JsonMetricView", "JsonTraceView", "detect_signal", "json_view"]

_VIEWS: dict[Signal, RecordView] = {
    Signal.LOG: JsonLogView(),
    Signal.METRIC: JsonMetricView(),
    Signal.TRACE: JsonTraceView(),
}
_TOP_KEYS = (
    ("resourceLogs", Signal.LOG),
    ("resourceMetrics", Signal.METRIC),
    ("resourceSpans", Signal.TRACE),
)


def json_view(signal: Signal) -> RecordView:
    """The OTLP JSON view of a signal (views hold no state; one each is shared)."""
    return _VIEWS[signal]


def detect_signal(doc: Any) -> Signal | None:
    """The signal of an export request, from its first top-level key."""
    if isinstance(doc, dict):
        for key in doc:
            for top, signal in _TOP_KEYS:
                if key == top:
                    return signal
    return None
