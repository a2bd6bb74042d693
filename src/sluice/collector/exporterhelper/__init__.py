"""What every exporter shares (upstream's ``exporterhelper``): the
``sending_queue`` and ``retry_on_failure`` sections, the queue and its
sending tasks, retries with backoff, the exporter counters, client TLS and
client authentication.

An exporter implements :class:`Sender` (encode a batch once, then attempts
that raise :class:`ExportError`) and is wrapped in
:class:`QueuedRetryExporter`.
"""

from sluice.collector.exporterhelper.auth import ClientAuthenticator, resolve_authenticator
from sluice.collector.exporterhelper.client_tls import ClientTLSSettings
from sluice.collector.exporterhelper.config import AuthSettings, QueueSettings, RetrySettings
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
    "AuthSettings",
    "ClientAuthenticator",
    "ClientTLSSettings",
    "ExportError",
    "QueueSettings",
    "QueuedRetryExporter",
    "RetrySettings",
    "Sender",
    "SignalExporter",
    "resolve_authenticator",
]
