"""The config sections every queued, retrying exporter shares, with upstream's
keys, defaults and validation messages: ``sending_queue`` (exporterhelper's
``QueueConfig``) and ``retry_on_failure`` (``configretry.BackOffConfig``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from sluice.collector.component import Problem
from sluice.collector.confmap.decode import Duration
from sluice.transport.header_rules import valid_header_name


@dataclass
class QueueSettings:
    """``sending_queue``: batches wait here for one of `num_consumers` senders.

    `queue_size` counts what `sizer` says (upstream's default ``requests``:
    batches). A full queue refuses data back to the receiver with a
    retryable error (upstream drops it), unless `block_on_overflow` makes
    ``consume`` wait for room. `wait_for_result` makes ``consume`` return only
    once the batch was sent (or failed for good).
    """

    enabled: bool = True
    num_consumers: int = 10
    queue_size: int = 1000
    sizer: Literal["requests", "items", "bytes"] = "requests"
    block_on_overflow: bool = False
    blocking: bool = False
    """`block_on_overflow`'s name from collector v0.118 (deprecated in v0.124)."""
    wait_for_result: bool = False
    storage: str | None = None
    """A storage extension for a persistent queue: not supported (reported)."""

    def problems(self) -> Iterator[Problem]:
        """Upstream's QueueConfig.Validate reports its first failing check
        only (then Sluice's own about `storage`)."""
        if not self.enabled:
            return
        if self.queue_size <= 0:
            yield "sending_queue", "queue size must be positive"
        elif self.num_consumers <= 0:
            yield "sending_queue", "number of queue consumers must be positive"
        if self.storage is not None:
            yield (
                "sending_queue::storage",
                "a persistent queue is not supported by Sluice; remove 'storage' "
                "(the queue is kept in memory)",
            )

    @property
    def blocks(self) -> bool:
        return self.block_on_overflow or self.blocking


_INITIAL_INTERVAL = Duration(5.0)
_MAX_INTERVAL = Duration(30.0)
_MAX_ELAPSED_TIME = Duration(300.0)


@dataclass
class RetrySettings:
    """``retry_on_failure``: exponential backoff between attempts at one batch
    (each wait drawn in ``interval * (1 ± randomization_factor)``, the
    interval growing by `multiplier` up to `max_interval`), until
    `max_elapsed_time` has passed (0: no limit). Only retryable failures are
    retried; a server's ``Retry-After`` (or gRPC ``RetryInfo``) lengthens a wait."""

    enabled: bool = True
    initial_interval: Duration = _INITIAL_INTERVAL
    randomization_factor: float = 0.5
    multiplier: float = 1.5
    max_interval: Duration = _MAX_INTERVAL
    max_elapsed_time: Duration = _MAX_ELAPSED_TIME

    def problems(self) -> Iterator[Problem]:
        """Upstream's BackOffConfig.Validate: its first failing check only."""
        if not self.enabled:
            return
        problem = self._first_problem()
        if problem:
            yield "retry_on_failure", problem

    def _first_problem(self) -> str:
        if self.initial_interval < 0:
            return "'initial_interval' must be non-negative"
        if not 0 <= self.randomization_factor <= 1:
            return "'randomization_factor' must be within [0, 1]"
        if self.multiplier < 0:
            return "'multiplier' must be non-negative"
        if self.max_interval < 0:
            return "'max_interval' must be non-negative"
        if self.max_elapsed_time < 0:
            return "'max_elapsed_time' must be non-negative"
        if self.max_elapsed_time > 0:
            if self.max_elapsed_time < self.initial_interval:
                return "'max_elapsed_time' must not be less than 'initial_interval'"
            if self.max_elapsed_time < self.max_interval:
                return "'max_elapsed_time' must not be less than 'max_interval'"
        return ""


def is_header_name(name: str) -> bool:
    """An HTTP token, as a header name must be."""
    return valid_header_name(name)


def is_header_value(value: str) -> bool:
    """ASCII on one line: a value that cannot smuggle a header or a request."""
    return value.isascii() and not any(c in value for c in "\r\n\0")
