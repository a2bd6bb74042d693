"""The ``batch`` processor: upstream's size, timeout and max-size semantics,
back-pressure to every contributing request, shutdown flush; and
``pdata.split``, which cuts batches."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from sluice.collector import pdata
from sluice.collector.component import ConsumerError, Host, refused
from sluice.collector.components.processors.batch import FACTORY
from sluice.collector.components.processors.batch.config import BatchConfig
from sluice.collector.confmap.decode import Duration, Problems, decode
from sluice.policy import Signal
from tests.collector.components.pipeline_data import (
    Sink,
    log_bodies,
    logs,
    metrics,
    settings,
    traces,
)

TESTDATA = Path(__file__).parent / "testdata" / "batch"


def load(name: str) -> tuple[BatchConfig, list[str]]:
    problems = Problems()
    raw = yaml.safe_load((TESTDATA / name).read_text())
    config = decode(BatchConfig, raw, "processors::batch", problems)
    lines = list(problems.lines)
    lines += [f"{path}: {message}" if path else message for path, message in config.validate()]
    return config, lines


def numbered_logs(count: int, resources: int = 1) -> Any:
    """`count` records per resource, bodies numbered across the request."""
    return logs(*(("INFO", str(i)) for i in range(count)), resources=resources)


def batcher(sink: Sink, signal: Signal = Signal.LOG, **options: Any) -> Any:
    if "timeout" in options:
        options["timeout"] = Duration(options["timeout"])
    return FACTORY.create(settings("batch"), BatchConfig(**options), signal, sink)


# -- config --------------------------------------------------------------------


def test_defaults_are_upstreams() -> None:
    config = FACTORY.default_config()
    assert (config.send_batch_size, config.send_batch_max_size, config.timeout) == (8192, 0, 0.2)
    assert (config.metadata_keys, config.metadata_cardinality_limit) == ([], 1000)
    assert FACTORY.stability == {"logs": "beta", "metrics": "beta", "traces": "beta"}


def test_configs_decode_and_validate_with_upstreams_wording() -> None:
    config, problems = load("config_sizes.yaml")
    assert problems == []
    assert (config.send_batch_size, config.send_batch_max_size, config.timeout) == (100, 150, 2.0)
    assert config.metadata_keys == ["tenant"]
    assert load("config_no_timeout.yaml") == (BatchConfig(timeout=Duration(0)), [])
    assert load("config_max_below_size.yaml")[1] == [
        "send_batch_max_size must be greater or equal to send_batch_size"
    ]
    assert load("config_duplicate_keys.yaml")[1] == [
        'duplicate entry in metadata_keys: "tenant" (case-insensitive)'
    ]
    assert load("config_negative_timeout.yaml")[1] == ["timeout must be greater or equal to 0"]
    assert load("config_negative_size.yaml")[1] == [
        "send_batch_size: cannot parse 'send_batch_size', -5 overflows uint"
    ]


# -- batching ------------------------------------------------------------------


async def started(processor: Any) -> Any:
    await processor.start(Host())
    return processor


def test_a_batch_leaves_when_it_reaches_send_batch_size() -> None:
    sink = Sink()

    async def scenario() -> float:
        processor = await started(batcher(sink, send_batch_size=10, timeout=5))
        begun = time.monotonic()
        await asyncio.gather(*(processor.consume(numbered_logs(3)) for _ in range(4)))
        return time.monotonic() - begun

    elapsed = asyncio.run(scenario())
    assert sink.items(Signal.LOG) == [12]  # one request: 4 x 3 items, merged
    assert elapsed < 1  # not the 5 s timeout


def test_a_batch_leaves_timeout_after_its_first_item() -> None:
    sink = Sink()

    async def scenario() -> float:
        processor = await started(batcher(sink, send_batch_size=100, timeout=0.05))
        begun = time.monotonic()
        await processor.consume(numbered_logs(3))
        return time.monotonic() - begun

    elapsed = asyncio.run(scenario())
    assert sink.items(Signal.LOG) == [3]
    assert 0.04 <= elapsed < 1


def test_without_a_timeout_every_request_leaves_at_once() -> None:
    sink = Sink()

    async def scenario() -> None:
        processor = await started(batcher(sink, send_batch_size=100, timeout=0))
        await processor.consume(numbered_logs(3))
        await processor.consume(numbered_logs(2))

    asyncio.run(scenario())
    assert sink.items(Signal.LOG) == [3, 2]


def test_send_batch_max_size_splits_large_batches() -> None:
    sink = Sink()

    async def scenario() -> None:
        processor = await started(
            batcher(sink, send_batch_size=5, send_batch_max_size=7, timeout=5)
        )
        await processor.consume(numbered_logs(10, resources=2))

    asyncio.run(scenario())
    assert sink.items(Signal.LOG) == [7, 7, 6]  # 6 >= send_batch_size: sent too
    bodies = [log_bodies(request) for request in sink.received]
    assert [body for request in bodies for body in request] == [str(i) for i in range(10)] * 2
    second = pdata.full_logs(sink.received[1])
    # The cut resources keep their attributes, schema URL and scope.
    assert [r.schema_url for r in second.resource_logs] == ["https://schema/0", "https://schema/1"]
    for resource in second.resource_logs:
        assert resource.resource.attributes[0].value.string_value == "checkout"
        assert resource.scope_logs[0].scope.name == "app.logger"


def test_a_remainder_below_send_batch_size_waits_for_the_timeout() -> None:
    sink = Sink()

    async def scenario() -> list[int]:
        processor = await started(
            batcher(sink, send_batch_size=5, send_batch_max_size=7, timeout=0.05)
        )
        task = asyncio.ensure_future(processor.consume(numbered_logs(17)))
        await asyncio.sleep(0.01)
        early = sink.items(Signal.LOG)
        assert not task.done()  # its last 3 items are not accepted yet
        await task
        return early

    early = asyncio.run(scenario())
    assert early == [7, 7]
    assert sink.items(Signal.LOG) == [7, 7, 3]


def test_metrics_split_between_data_points_and_traces_between_spans() -> None:
    metric_sink, trace_sink = Sink(), Sink()

    async def scenario() -> None:
        metric_batcher = await started(
            batcher(metric_sink, Signal.METRIC, send_batch_size=5, send_batch_max_size=5, timeout=0)
        )
        trace_batcher = await started(
            batcher(trace_sink, Signal.TRACE, send_batch_size=2, send_batch_max_size=2, timeout=0)
        )
        await metric_batcher.consume(metrics("a", "b", "c", points=4))
        await trace_batcher.consume(traces("x", "y", "z"))

    asyncio.run(scenario())
    assert metric_sink.items(Signal.METRIC) == [5, 5, 2]
    first, second, _ = metric_sink.received
    cut = second.resource_metrics[0].scope_metrics[0].metrics
    assert [(m.name, len(m.sum.data_points)) for m in cut] == [("b", 3), ("c", 2)]
    assert all(m.sum.is_monotonic and m.sum.aggregation_temporality == 2 for m in cut)
    assert first.resource_metrics[0].scope_metrics[0].metrics[1].sum.data_points[0].as_int == 0
    assert cut[0].sum.data_points[0].as_int == 1  # b's points 1..3 follow its point 0
    assert trace_sink.items(Signal.TRACE) == [2, 1]


def test_split_returns_the_request_itself_when_it_fits() -> None:
    request = numbered_logs(4)
    assert pdata.split(Signal.LOG, request, 4)[0] is request
    assert pdata.split(Signal.LOG, request, 0)[0] is request
    assert [pdata.item_count(Signal.LOG, p) for p in pdata.split(Signal.LOG, request, 3)] == [3, 1]


# -- back-pressure -------------------------------------------------------------


def test_a_refusal_downstream_reaches_every_contributing_request() -> None:
    sink = Sink(refused("sending queue is full"))

    async def scenario() -> list[Any]:
        processor = await started(batcher(sink, send_batch_size=6, timeout=5))
        return await asyncio.gather(
            processor.consume(numbered_logs(3)),
            processor.consume(numbered_logs(3)),
            return_exceptions=True,
        )

    outcomes = asyncio.run(scenario())
    for outcome in outcomes:
        assert isinstance(outcome, ConsumerError)
        assert outcome.retryable and str(outcome) == "sending queue is full"


class _FailsSecondRequest(Sink):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    async def consume(self, data: Any) -> None:
        self.calls += 1
        if self.calls == 2:
            raise refused("sending queue is full")
        await super().consume(data)


def test_a_request_fails_when_any_batch_holding_its_items_fails() -> None:
    sink = _FailsSecondRequest()

    async def scenario() -> list[Any]:
        processor = await started(
            batcher(sink, send_batch_size=5, send_batch_max_size=6, timeout=5)
        )
        first = asyncio.ensure_future(processor.consume(numbered_logs(4)))
        await asyncio.sleep(0)
        # 4 + 8 items: sent as 6 (4 of the first, 2 of the second) and 6.
        second = asyncio.ensure_future(processor.consume(numbered_logs(8)))
        return await asyncio.gather(first, second, return_exceptions=True)

    first, second = asyncio.run(scenario())
    assert first is None
    assert isinstance(second, ConsumerError) and second.retryable
    assert sink.items(Signal.LOG) == [6]


# -- lifecycle -----------------------------------------------------------------


def test_shutdown_sends_what_is_pending() -> None:
    sink = Sink()

    async def scenario() -> None:
        processor = await started(batcher(sink, send_batch_size=100, timeout=10))
        task = asyncio.ensure_future(processor.consume(numbered_logs(3)))
        await asyncio.sleep(0.01)
        assert not task.done() and sink.received == []
        await processor.shutdown()
        await asyncio.wait_for(task, 1)

    asyncio.run(scenario())
    assert sink.items(Signal.LOG) == [3]


def test_items_of_a_caller_that_gave_up_are_still_sent() -> None:
    sink = Sink()

    async def scenario() -> None:
        processor = await started(batcher(sink, send_batch_size=100, timeout=0.02))
        task = asyncio.ensure_future(processor.consume(numbered_logs(3)))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.05)

    asyncio.run(scenario())
    assert sink.items(Signal.LOG) == [3]
