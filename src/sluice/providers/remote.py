"""Policies from a policy server over the sync protocol (HTTP or gRPC).

Every sync reports, for this provider's policies, the match and transform
counts since the last *successful* report and every compile error. Counts are
marked reported only when the server accepted the sync, so a failed sync
loses nothing: the next one carries them. A response whose ``hash`` equals
the last one applied is not recompiled.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from sluice.policy import PolicyCounts
from sluice.providers.config import ProviderConfig
from sluice.providers.file import log_report
from sluice.providers.http_transport import HttpSyncTransport
from sluice.providers.provider import Provider
from sluice.providers.registry import PolicyRegistry
from sluice.providers.sync import ClientIdentity, SyncError, SyncTransport, build_request

log = logging.getLogger(__name__)


def make_transport(config: ProviderConfig) -> SyncTransport:
    if config.type == "grpc":
        from sluice.providers.grpc_transport import GrpcSyncTransport  # imports grpc: see there

        return GrpcSyncTransport(
            config.url,
            config.headers,
            config.tls,
            config.ca_file,
            config.timeout_secs,
            config.max_response_bytes,
            config.poll_interval_secs,
        )
    return HttpSyncTransport(
        config.url,
        config.headers,
        config.encoding,
        config.timeout_secs,
        config.ca_file,
        config.max_response_bytes,
    )


class RemoteProvider(Provider):
    """An http or grpc provider."""

    def __init__(
        self,
        config: ProviderConfig,
        registry: PolicyRegistry,
        order: int = 0,
        identity: ClientIdentity | None = None,
        transport: SyncTransport | None = None,
    ) -> None:
        super().__init__(config, registry, order)
        self.identity = identity or ClientIdentity()
        self.transport = transport or make_transport(config)
        self.transport.cache = registry.cache
        self.last_hash = ""
        self.last_sync_nanos = 0
        self.recommended_interval: float | None = None

    @property
    def interval(self) -> float:
        return self.recommended_interval or self.config.poll_interval_secs

    def _request(self, full_sync: bool) -> tuple[Any, dict[str, PolicyCounts]]:
        mine = self.registry.owned_by(self.config.id)
        ids = {p.id for p in mine}
        pending = self.registry.runtime.stats.pending()
        counts = {pid: c for pid, c in pending.items() if pid in ids}
        errors = {p.id: list(p.errors) for p in mine if p.enabled and p.errors}
        request = build_request(
            self.identity,
            full_sync=full_sync or not self.last_hash,
            last_hash=self.last_hash,
            last_sync_nanos=self.last_sync_nanos,
            counts=counts,
            errors=errors,
        )
        return request, counts

    def sync(self, full_sync: bool = False, timeout: float | None = None) -> bool:
        """One sync: report, receive, apply. True on success; never raises.
        The exchange takes at most `timeout` seconds (default: the configured one)."""
        request, counts = self._request(full_sync)
        try:
            result = self.transport.sync(request, timeout)
        except SyncError as problem:
            return self._record(False, str(problem))
        except Exception as problem:  # never raise: a broken sync must not stop anything
            log.exception("provider %s: unexpected sync failure", self.config.id)
            return self._record(False, f"unexpected sync failure: {problem!r}")
        self.registry.runtime.stats.commit(counts)
        # Handed back as the next request's last_sync_timestamp_unix_nano, as
        # the hash is: the server's clock, not ours (ours when it gave none).
        self.last_sync_nanos = result.timestamp_nanos or time.time_ns()
        self.recommended_interval = result.interval_secs
        if result.hash and result.hash == self.last_hash and self.loaded.is_set():
            return self._record(True)
        log_report(result.report, f"provider {self.config.id}")
        self.registry.update(
            self.config.id, self.config.priority, self.order, result.report.policies
        )
        self.last_hash = result.hash
        self.loaded.set()
        return self._record(True)

    def poll(self) -> bool:
        return self.sync()

    def stop(self) -> None:
        """Stop polling, then send a last sync so no counts are left behind,
        all within one ``timeout_secs``. When a sync in progress has not ended
        by then, no last sync is sent (the two would report the same counts)."""
        deadline = time.monotonic() + self.config.timeout_secs
        if self._halt(deadline):
            left = deadline - time.monotonic()
            if left > 0:
                self.sync(full_sync=True, timeout=left)
            else:
                log.warning("provider %s: no time left for a last status sync", self.config.id)
        self.transport.close()
