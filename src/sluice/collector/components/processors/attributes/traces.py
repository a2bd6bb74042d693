"""Traces: the attributes of each selected span."""

from __future__ import annotations

from typing import Any

from sluice.collector.internal.attraction import AttrProc
from sluice.collector.internal.filtermatch import Selection


def process_traces(data: Any, actions: AttrProc, selection: Selection) -> int:
    """Apply `actions` in place (every span is readable: returns 0)."""
    for scope_spans, choose in selection.scopes(data.resource_spans, "scope_spans"):
        for span in scope_spans.spans:
            attributes = choose(span, span.attributes)
            if attributes is not None:
                actions.apply(attributes)
    return 0
