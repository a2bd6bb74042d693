"""Traces: the attributes of each selected span."""

from __future__ import annotations

from typing import Any

from sluice.collector.internal.attraction import AttrProc
from sluice.collector.internal.filtermatch import Selection


def process_traces(data: Any, actions: AttrProc, selection: Selection) -> int:
    """Apply `actions` in place (every span is readable: returns 0)."""
    for resource_spans in data.resource_spans:
        resource = resource_spans.resource
        for scope_spans in resource_spans.scope_spans:
            choose = selection.scope_test(resource, scope_spans.scope)
            if choose is None:
                continue
            for span in scope_spans.spans:
                attributes = choose(span, span.attributes)
                if attributes is not None:
                    actions.apply(attributes)
    return 0
