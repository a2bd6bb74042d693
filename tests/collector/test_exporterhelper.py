"""The exporter helper's parts on their own: backoff, the retry loop, the
queue, and the google.rpc.Status reader (against googleapis' own messages)."""

from __future__ import annotations

import asyncio
import logging

import pytest
from google.rpc import error_details_pb2, status_pb2

from sluice.collector.confmap.decode import Duration
from sluice.collector.exporterhelper import Attempt, ExportError, QueueSettings, RetrySettings
from sluice.collector.exporterhelper.queue import QueuedBatch, SendingQueue
from sluice.collector.exporterhelper.retry import Backoff, RetryPolicy
from sluice.collector.rpc_status import encode_status, parse_status

LOGGER = logging.getLogger("test")


def test_backoff_grows_by_the_multiplier_up_to_the_max_interval() -> None:
    settings = RetrySettings(max_interval=Duration(10.0), max_elapsed_time=Duration(0.0))
    middle = Backoff(settings, started=0.0, draw=lambda: 0.5)
    assert [middle.next_delay(0.0) for _ in range(6)] == [5.0, 7.5, 10.0, 10.0, 10.0, 10.0]


def test_each_delay_is_spread_by_the_randomization_factor() -> None:
    settings = RetrySettings()
    assert Backoff(settings, 0.0, draw=lambda: 0.0).next_delay(0.0) == 2.5
    assert Backoff(settings, 0.0, draw=lambda: 1.0).next_delay(0.0) == 7.5


def test_backoff_stops_when_the_wait_would_pass_max_elapsed_time() -> None:
    settings = RetrySettings(max_elapsed_time=Duration(300.0))
    backoff = Backoff(settings, started=100.0, draw=lambda: 0.5)
    assert backoff.next_delay(now=394.0) == 5.0
    assert backoff.next_delay(now=394.0) is None  # 294 + 7.5 > 300
    throttled = Backoff(settings, started=0.0, draw=lambda: 0.5)
    assert throttled.next_delay(now=0.0, at_least=60.0) == 60.0
    # As upstream, the server's delay is applied after the elapsed-time
    # check: 250 + 7.5 fits in 300, so the wait is 60 s even past it.
    assert throttled.next_delay(now=250.0, at_least=60.0) == 60.0
    assert throttled.next_delay(now=295.0, at_least=60.0) is None  # 295 + 10 > 300


@pytest.mark.parametrize(
    ("settings", "problem"),
    [
        # configretry backoff_test TestInvalidInitialInterval etc.: Validate
        # returns its first failing check, however many fail.
        (
            RetrySettings(initial_interval=Duration(-1.0), randomization_factor=2.0),
            "'initial_interval' must be non-negative",
        ),
        (
            RetrySettings(randomization_factor=-1.0, max_elapsed_time=Duration(10.0)),
            "'randomization_factor' must be within [0, 1]",
        ),
        (
            RetrySettings(multiplier=-1.0, max_interval=Duration(-1.0)),
            "'multiplier' must be non-negative",
        ),
        (
            RetrySettings(initial_interval=Duration(60.0), max_elapsed_time=Duration(10.0)),
            "'max_elapsed_time' must not be less than 'initial_interval'",
        ),
    ],
)
def test_retry_settings_report_upstreams_first_problem_only(
    settings: RetrySettings, problem: str
) -> None:
    assert list(settings.problems()) == [("retry_on_failure", problem)]


def test_queue_settings_report_upstreams_first_problem_only() -> None:
    # exporterhelper QueueConfig.Validate: queue_size is checked before num_consumers.
    both = QueueSettings(queue_size=0, num_consumers=0)
    assert list(both.problems()) == [("sending_queue", "queue size must be positive")]
    consumers = QueueSettings(num_consumers=-1)
    assert list(consumers.problems()) == [
        ("sending_queue", "number of queue consumers must be positive")
    ]


def attempts(*outcomes: ExportError | None) -> tuple[list[float], Attempt]:
    """An attempt that fails with `outcomes` in turn (None: succeeds); the
    loop times of the calls."""
    calls: list[float] = []
    queue = list(outcomes)

    async def attempt() -> None:
        calls.append(asyncio.get_running_loop().time())
        outcome = queue.pop(0)
        if outcome is not None:
            raise outcome

    return calls, attempt


FAST = RetrySettings(initial_interval=Duration(0.01), max_interval=Duration(0.01))


def test_only_retryable_failures_are_retried() -> None:
    calls, attempt = attempts(ExportError("busy", retryable=True), None)
    asyncio.run(RetryPolicy(FAST, LOGGER).run(attempt))
    assert len(calls) == 2
    calls, attempt = attempts(ExportError("bad", retryable=False))
    # Upstream's exporters mark it consumererror.NewPermanent ("Permanent error: ").
    with pytest.raises(ExportError, match=r"^not retryable error: Permanent error: bad$") as failed:
        asyncio.run(RetryPolicy(FAST, LOGGER).run(attempt))
    assert not failed.value.retryable and len(calls) == 1


def test_disabled_retries_make_one_attempt() -> None:
    calls, attempt = attempts(ExportError("busy", retryable=True), None)
    off = RetrySettings(enabled=False)
    with pytest.raises(ExportError, match=r"^busy$") as failed:
        asyncio.run(RetryPolicy(off, LOGGER).run(attempt))
    assert failed.value.retryable and len(calls) == 1
    # Without a retry sender, upstream's permanent error is not wrapped again.
    calls, attempt = attempts(ExportError("bad", retryable=False))
    with pytest.raises(ExportError, match=r"^Permanent error: bad$") as failed:
        asyncio.run(RetryPolicy(off, LOGGER).run(attempt))
    assert not failed.value.retryable and len(calls) == 1


def test_each_retry_is_logged_with_upstreams_message_and_fields(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """retry_sender.go: Info "Exporting failed. Will retry the request after
    interval." with the error and the interval as Go writes a duration."""
    steady = RetrySettings(initial_interval=Duration(0.0125), randomization_factor=0.0)
    _, attempt = attempts(ExportError("busy", retryable=True), None)
    with caplog.at_level(logging.INFO, logger=LOGGER.name):
        asyncio.run(RetryPolicy(steady, LOGGER).run(attempt))
    (record,) = caplog.records
    assert record.levelno == logging.INFO
    assert record.getMessage() == "Exporting failed. Will retry the request after interval."
    assert getattr(record, "fields", None) == {"error": "busy", "interval": "12.5ms"}


def test_the_server_delay_is_the_least_wait() -> None:
    calls, attempt = attempts(ExportError("slow down", retryable=True, retry_after=0.2), None)
    asyncio.run(RetryPolicy(FAST, LOGGER).run(attempt))
    assert calls[1] - calls[0] >= 0.2


def test_stop_ends_retrying_at_once() -> None:
    """As upstream's retry sender once shut down: a wait for the next attempt
    ends at once, and a failure after that is not retried."""

    async def main() -> float:
        loop = asyncio.get_running_loop()
        calls, attempt = attempts(ExportError("busy", retryable=True), None)
        policy = RetryPolicy(RetrySettings(), LOGGER)
        running = asyncio.create_task(policy.run(attempt))
        await asyncio.sleep(0.05)
        started = loop.time()
        policy.stop()
        with pytest.raises(ExportError, match=r"^interrupted due to shutdown: busy$") as failed:
            await running
        assert failed.value.retryable and len(calls) == 1
        calls, attempt = attempts(ExportError("busy", retryable=True), None)
        with pytest.raises(ExportError, match=r"^interrupted due to shutdown: busy$"):
            await policy.run(attempt)
        assert len(calls) == 1
        return loop.time() - started

    assert asyncio.run(main()) < 0.1


def test_queue_capacity_counts_sizes_until_taken() -> None:
    async def main() -> None:
        queue = SendingQueue(capacity=5)
        assert queue.offer(QueuedBatch("a", items=3, size=3))
        assert not queue.offer(QueuedBatch("b", items=3, size=3))
        assert queue.offer(QueuedBatch("c", items=2, size=2))
        assert (await queue.take()).data == "a"
        assert queue.used == 2 and len(queue) == 1
        waiting = asyncio.create_task(queue.put(QueuedBatch("d", items=4, size=4)))
        await asyncio.sleep(0.01)
        assert not waiting.done()
        await queue.take()
        await asyncio.wait_for(waiting, 1.0)
        assert [batch.data for batch in queue.take_all()] == ["d"] and queue.used == 0

    asyncio.run(main())


def test_status_reader_matches_googleapis_messages() -> None:
    info = error_details_pb2.RetryInfo()
    info.retry_delay.seconds, info.retry_delay.nanos = 2, 500_000_000
    status = status_pb2.Status(code=8, message="quota")
    status.details.add().Pack(info)
    parsed = parse_status(status.SerializeToString())
    assert parsed is not None
    assert (parsed.code, parsed.message, parsed.retry_delay) == (8, "quota", 2.5)
    assert parsed.detail_types == ("type.googleapis.com/google.rpc.RetryInfo",)
    written = status_pb2.Status.FromString(encode_status(14, "busy", 0.25))
    assert (written.code, written.message) == (14, "busy")
    assert written.details[0].Unpack(info) and info.retry_delay.nanos == 250_000_000
    assert parse_status(b"\xff\x01") is None


def test_the_first_retry_info_of_a_status_is_read() -> None:
    """otlpexporter getRetryInfo returns the first RetryInfo among the details."""
    status = status_pb2.Status(code=8, message="quota")
    for seconds in (2, 30):
        info = error_details_pb2.RetryInfo()
        info.retry_delay.seconds = seconds
        status.details.add().Pack(info)
    parsed = parse_status(status.SerializeToString())
    assert parsed is not None and parsed.retry_delay == 2.0
