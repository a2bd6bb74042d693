"""What every exporter shares (upstream's ``exporterhelper``): the
``sending_queue`` and ``retry_on_failure`` sections, the queue and its
sending tasks, retries with backoff and the exporter counters. Client TLS
and authentication come from :mod:`sluice.collector.configtls` and
:mod:`sluice.collector.configauth`, which receivers use too.

An exporter implements :class:`Sender` (encode a batch once, then attempts
that raise :class:`ExportError`) and is wrapped in
:class:`QueuedRetryExporter`.
"""

from sluice.collector.exporterhelper.config import QueueSettings, RetrySettings
from sluice.collector.exporterhelper.exporter import (
    DEFAULT_SHUTDOWN_SECS,
    QueuedRetryExporter,
    Sender,
    SignalExporter,
)
from sluice.collector.exporterhelper.retry import Attempt, ExportError

__all__ = [
    "DEFAULT_SHUTDOWN_SECS",
    "Attempt",
    "ExportError",
    "QueueSettings",
    "QueuedRetryExporter",
    "RetrySettings",
    "Sender",
    "SignalExporter",
]
