"""Logs: the attributes of each selected log record.

Records travel as their wire bytes (``LeanLogsRequest``); each record of a
scope with anything selected is parsed on its own, and written back only when
an action changed it, so untouched records leave byte for byte. A record
whose bytes do not parse is left as it is and counted.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord

from sluice.collector.internal.attraction import AttrProc
from sluice.collector.internal.filtermatch import EVERY, Selection


def process_logs(data: Any, actions: AttrProc, selection: Selection) -> int:
    """Apply `actions` in place; the number of records that could not be read."""
    unreadable = 0
    parse = LogRecord.FromString
    for resource_logs in data.resource_logs:
        resource = resource_logs.resource
        for scope_logs in resource_logs.scope_logs:
            test = selection.scope_test(resource, scope_logs.scope)
            if test is None:
                continue
            every = test is EVERY
            records = scope_logs.log_records
            for index, raw in enumerate(records):
                try:
                    record = parse(raw)
                except DecodeError:
                    unreadable += 1
                    continue
                if (every or test(record)) and actions.process(record.attributes):
                    records[index] = record.SerializeToString()
    return unreadable
