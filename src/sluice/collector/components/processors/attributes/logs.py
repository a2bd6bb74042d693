"""Logs: the attributes of each selected log record.

Records travel as their wire bytes (``LeanLogsRequest``). Each record of a
scope with anything selected is parsed on its own, and written back only when
an action changed it, so other records leave byte for byte. When no action
can change a record that lacks the keys they name (update, delete, hash,
extract and convert by key), a record whose bytes hold none of those keys is
not parsed at all. A record whose bytes do not parse is left as it is and
counted.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord

from sluice.collector.internal.attraction import AttrProc
from sluice.collector.internal.filtermatch import Selection


def process_logs(data: Any, actions: AttrProc, selection: Selection) -> int:
    """Apply `actions` in place; the number of records that could not be read."""
    unreadable = 0
    parse = LogRecord.FromString
    holds_needed_key = actions.holds_needed_key
    for scope_logs, choose in selection.scopes(data.resource_logs, "scope_logs"):
        records = scope_logs.log_records
        for index, raw in enumerate(records):
            if holds_needed_key is not None and holds_needed_key(raw) is None:
                continue
            try:
                record = parse(raw)
            except DecodeError:
                unreadable += 1
                continue
            attributes = choose(record, record.attributes)
            if attributes is not None and actions.apply(attributes):
                records[index] = record.SerializeToString()
    return unreadable
