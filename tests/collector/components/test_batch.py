"""The ``batch`` processor: upstream's size, timeout and max-size semantics,
refused batches held (and new data refused) until accepted, shutdown flush;
and ``pdata.split``, which cuts batches."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from sluice.collector import client, pdata
from sluice.collector.component import ConsumerError, Host, refused
from sluice.collector.components.processors.batch import FACTORY
from sluice.collector.components.processors.batch.config import BatchConfig
from sluice.collector.confmap.decode import Duration, Problems, decode
from sluice.collector.telemetry import ServiceTelemetry
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
    # Upstream's Validate returns its first error only.
    assert load("config_three_problems.yaml")[1] == [
        "send_batch_max_size must be greater or equal to send_batch_size"
    ]
    assert load("config_negative_size.yaml")[1] == [
        "processors::batch::send_batch_size: cannot parse 'send_batch_size', -5 overflows uint"
    ]
    # Go's %q: quotes and control characters escaped.
    assert list(BatchConfig(metadata_keys=['Say"Hi\t', 'say"hi\t']).validate()) == [
        ("", 'duplicate entry in metadata_keys: "say\\"hi\\t" (case-insensitive)')
    ]


# -- batching ------------------------------------------------------------------


async def started(processor: Any) -> Any:
    await processor.start(Host())
    return processor


def test_a_batch_leaves_when_it_reaches_send_batch_size() -> None:
    sink = Sink()

    async def scenario() -> None:
        processor = await started(batcher(sink, send_batch_size=10, timeout=5))
        for _ in range(4):
            await processor.consume(numbered_logs(3))
        await asyncio.sleep(0.01)  # the send runs on its own

    asyncio.run(scenario())
    assert sink.items(Signal.LOG) == [12]  # one request: 4 x 3 items, merged; not the 5 s timeout


def test_a_batch_leaves_timeout_after_its_first_item() -> None:
    sink = Sink()

    async def scenario() -> float:
        processor = await started(batcher(sink, send_batch_size=100, timeout=0.05))
        begun = time.monotonic()
        await processor.consume(numbered_logs(3))
        assert sink.received == []  # accepted at once, held for the batch
        while not sink.received:
            await asyncio.sleep(0.005)
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
        await asyncio.sleep(0.01)

    asyncio.run(scenario())
    assert sink.items(Signal.LOG) == [3, 2]


def test_send_batch_max_size_splits_large_batches() -> None:
    sink = Sink()

    async def scenario() -> None:
        processor = await started(
            batcher(sink, send_batch_size=5, send_batch_max_size=7, timeout=5)
        )
        await processor.consume(numbered_logs(10, resources=2))
        await asyncio.sleep(0.01)

    asyncio.run(scenario())
    assert sink.items(Signal.LOG) == [7, 7, 6]  # 6 >= send_batch_size: sent too
    bodies = [log_bodies(request) for request in sink.received]
    assert [body for request in bodies for body in request] == [str(i) for i in range(10)] * 2
    second = pdata.full_logs(sink.received[1])
    # Resource 0's last 3 records went whole; resource 1 was cut: this part
    # has a copy of its resource and scope (upstream copies no schema URL).
    assert [r.schema_url for r in second.resource_logs] == ["https://schema/0", ""]
    for resource in second.resource_logs:
        assert resource.resource.attributes[0].value.string_value == "checkout"
        assert resource.scope_logs[0].scope.name == "app.logger"


class _Slows(Sink):
    """Takes each request the longer the earlier it came (an exporter with
    no queue, whose first send is slow), recording it when done."""

    def __init__(self) -> None:
        super().__init__()
        self.delays = [0.05, 0.03, 0.01]

    async def consume(self, data: Any) -> None:
        await asyncio.sleep(self.delays.pop(0) if self.delays else 0)
        await super().consume(data)


def test_the_requests_of_a_batch_are_sent_one_after_another_in_order() -> None:
    """Upstream's batcher exports from one goroutine per batch: the next
    request waits for the previous one, so a slow export cannot reorder
    the pieces of a cut batch (nor a later batch)."""
    sink = _Slows()

    async def scenario() -> None:
        processor = await started(batcher(sink, send_batch_max_size=3, timeout=0))
        await processor.consume(numbered_logs(7))
        await processor.consume(logs(("INFO", "later")))
        await processor.shutdown()

    asyncio.run(scenario())
    assert [log_bodies(request) for request in sink.received] == [
        ["0", "1", "2"],
        ["3", "4", "5"],
        ["6"],
        ["later"],
    ]


def test_a_remainder_below_send_batch_size_waits_for_the_timeout() -> None:
    sink = Sink()

    async def scenario() -> list[int]:
        processor = await started(
            batcher(sink, send_batch_size=5, send_batch_max_size=7, timeout=0.05)
        )
        await processor.consume(numbered_logs(17))
        await asyncio.sleep(0.01)
        early = sink.items(Signal.LOG)
        await asyncio.sleep(0.1)
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
        await asyncio.sleep(0.01)

    asyncio.run(scenario())
    assert metric_sink.items(Signal.METRIC) == [5, 5, 2]
    first, second, _ = metric_sink.received
    cut = second.resource_metrics[0].scope_metrics[0].metrics
    assert [(m.name, len(m.sum.data_points)) for m in cut] == [("b", 3), ("c", 2)]
    assert all(m.sum.is_monotonic and m.sum.aggregation_temporality == 2 for m in cut)
    assert first.resource_metrics[0].scope_metrics[0].metrics[1].sum.data_points[0].as_int == 0
    assert cut[0].sum.data_points[0].as_int == 1  # b's points 1..3 follow its point 0
    assert trace_sink.items(Signal.TRACE) == [2, 1]


def test_a_cut_container_keeps_its_fields_only_in_its_last_part() -> None:
    """Upstream's split moves the first items into a new request, copying only
    the resource, the scope, and a metric's name, description, unit,
    temporality and monotonicity; the original, with schema URLs and
    metadata, stays with the items left behind."""
    request = ExportLogsServiceRequest()
    resource = request.resource_logs.add(schema_url="https://resource")
    resource.resource.attributes.add(key="service.name").value.string_value = "checkout"
    scope = resource.scope_logs.add(schema_url="https://scope")
    scope.scope.name = "app.logger"
    for body in "abcde":
        scope.log_records.add().body.string_value = body
    parts = [pdata.full_logs(p) for p in pdata.split(Signal.LOG, pdata.lean_logs(request), 2)]
    assert [
        (r.schema_url, s.schema_url, s.scope.name, r.resource.attributes[0].value.string_value)
        for part in parts
        for r in part.resource_logs
        for s in r.scope_logs
    ] == [
        ("", "", "app.logger", "checkout"),
        ("", "", "app.logger", "checkout"),
        ("https://resource", "https://scope", "app.logger", "checkout"),
    ]

    points = metrics("m", points=3)
    metric = points.resource_metrics[0].scope_metrics[0].metrics[0]
    metric.description = "requests"
    metric.metadata.add(key="origin").value.string_value = "sdk"
    first, last = pdata.split(Signal.METRIC, points, 2)
    cut = first.resource_metrics[0].scope_metrics[0].metrics[0]
    assert (cut.name, cut.description, cut.unit, list(cut.metadata)) == ("m", "requests", "1", [])
    assert (cut.sum.is_monotonic, cut.sum.aggregation_temporality) == (True, 2)
    kept = last.resource_metrics[0].scope_metrics[0].metrics[0]
    assert [(kv.key, kv.value.string_value) for kv in kept.metadata] == [("origin", "sdk")]
    assert [p.as_int for p in kept.sum.data_points] == [2]


def test_empty_containers_after_the_last_cut_go_with_the_remainder() -> None:
    """No request without items: upstream leaves a trailing empty resource in
    what remains, which is the last part."""
    request = pdata.full_logs(numbered_logs(4))
    request.resource_logs.add(schema_url="https://empty")
    parts = pdata.split(Signal.LOG, pdata.lean_logs(request), 2)
    assert [pdata.item_count(Signal.LOG, p) for p in parts] == [2, 2]
    assert [r.schema_url for r in pdata.full_logs(parts[1]).resource_logs] == [
        "https://schema/0",
        "https://empty",
    ]


def test_split_returns_the_request_itself_when_it_fits() -> None:
    request = numbered_logs(4)
    assert pdata.split(Signal.LOG, request, 4)[0] is request
    assert pdata.split(Signal.LOG, request, 0)[0] is request
    assert [pdata.item_count(Signal.LOG, p) for p in pdata.split(Signal.LOG, request, 3)] == [3, 1]


# -- back-pressure -------------------------------------------------------------


class _Refuses(Sink):
    """Refuses (retryably, asking for a 10 ms wait) its first `times` requests."""

    def __init__(self, times: int, permanent: bool = False) -> None:
        super().__init__()
        self.times = times
        self.permanent = permanent
        self.calls = 0

    async def consume(self, data: Any) -> None:
        self.calls += 1
        if self.calls <= self.times:
            if self.permanent:
                raise ConsumerError("400 Bad Request", retryable=False)
            raise refused("sending queue is full", retry_after=0.01)
        await super().consume(data)


def test_a_refused_batch_is_held_new_data_refused_then_everything_delivered() -> None:
    sink = _Refuses(times=2)

    async def scenario() -> list[Any]:
        processor = await started(batcher(sink, send_batch_size=3, timeout=5))
        await processor.consume(numbered_logs(3))  # leaves at once, is refused
        await asyncio.sleep(0.001)
        outcomes: list[Any] = []
        try:
            await processor.consume(numbered_logs(2))
            outcomes.append(None)
        except ConsumerError as refusal:
            outcomes.append(refusal)
        deadline = time.monotonic() + 2
        while not sink.received and time.monotonic() < deadline:
            await asyncio.sleep(0.005)
        await processor.consume(numbered_logs(3))  # accepted again
        await processor.shutdown()
        return outcomes

    [refusal] = asyncio.run(scenario())
    assert isinstance(refusal, ConsumerError) and refusal.retryable
    assert "sending queue is full" in str(refusal)
    assert refusal.retry_after == 0.01
    assert sink.calls == 4  # refused twice, then the held batch, then the new one
    assert sink.items(Signal.LOG) == [3, 3]


def test_a_permanent_refusal_is_logged_not_held(caplog: pytest.LogCaptureFixture) -> None:
    sink = _Refuses(times=1, permanent=True)

    async def scenario() -> None:
        processor = await started(batcher(sink, send_batch_size=3, timeout=5))
        await processor.consume(numbered_logs(3))
        await asyncio.sleep(0.01)
        await processor.consume(numbered_logs(3))  # not refused: nothing is held
        await processor.shutdown()

    asyncio.run(scenario())
    assert sink.items(Signal.LOG) == [3]
    assert "dropping a batch of 3 items the next component refused: 400 Bad Request" in caplog.text


def test_a_batch_still_refused_at_shutdown_is_logged_as_dropped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    sink = Sink(refused("sending queue is full", retry_after=10))

    async def scenario() -> None:
        processor = await started(batcher(sink, send_batch_size=3, timeout=5))
        await processor.consume(numbered_logs(3))
        await asyncio.sleep(0.01)
        await asyncio.wait_for(processor.shutdown(), 1)

    asyncio.run(scenario())
    assert (
        "dropping a batch of 3 items" in caplog.text and "still refused at shutdown" in caplog.text
    )


# -- lifecycle -----------------------------------------------------------------


def test_shutdown_sends_what_is_pending() -> None:
    sink = Sink()

    async def scenario() -> None:
        processor = await started(batcher(sink, send_batch_size=100, timeout=10))
        await processor.consume(numbered_logs(3))
        await asyncio.sleep(0.01)
        assert sink.received == []
        await processor.shutdown()

    asyncio.run(scenario())
    assert sink.items(Signal.LOG) == [3]


# -- metadata_keys -------------------------------------------------------------


class _SeesClient(Sink):
    """Records, with each request, the client it was sent as."""

    def __init__(self) -> None:
        super().__init__()
        self.clients: list[client.Info] = []

    async def consume(self, data: Any) -> None:
        self.clients.append(client.current())
        await super().consume(data)


def sender(**metadata: str | tuple[str, ...]) -> client.Info:
    pairs = [
        (name, value)
        for name, values in metadata.items()
        for value in ((values,) if isinstance(values, str) else values)
    ]
    return client.Info("192.0.2.7", client.metadata_of(pairs), {"username": "alice"})


def test_metadata_keys_batch_each_combination_of_values_apart() -> None:
    sink = _SeesClient()

    async def scenario() -> None:
        processor = await started(
            batcher(sink, send_batch_size=100, timeout=0.05, metadata_keys=["X-Tenant", "Zone"])
        )
        for info, count in (
            (sender(**{"x-tenant": "a", "zone": "eu", "other": "1"}), 3),
            (sender(**{"X-TENANT": "b", "zone": "eu"}), 2),
            (sender(**{"x-tenant": "a", "Zone": "eu", "other": "2"}), 4),  # joins the first
            (sender(**{"x-tenant": ("a", "c"), "zone": "eu"}), 1),  # both values: apart
            (sender(zone="eu"), 5),  # no tenant is a combination too
        ):
            with client.serving(info):
                await processor.consume(numbered_logs(count))
        assert sink.received == []  # each batch waits for its own timeout
        await processor.shutdown()

    asyncio.run(scenario())
    batches = sorted(
        (sorted(info.metadata.items()), items)
        for info, items in zip(sink.clients, sink.items(Signal.LOG), strict=True)
    )
    # Sent as clients holding only the keys batched by, lower-cased: no
    # address, no auth, no other header, as upstream's export context.
    assert batches == [
        ([("x-tenant", ()), ("zone", ("eu",))], 5),
        ([("x-tenant", ("a",)), ("zone", ("eu",))], 7),
        ([("x-tenant", ("a", "c")), ("zone", ("eu",))], 1),
        ([("x-tenant", ("b",)), ("zone", ("eu",))], 2),
    ]
    assert {(info.address, info.auth) for info in sink.clients} == {("", None)}


def test_past_the_cardinality_limit_a_new_combination_is_refused_for_good() -> None:
    sink = _SeesClient()

    async def scenario() -> list[str]:
        processor = await started(
            batcher(
                sink,
                send_batch_size=100,
                timeout=5,
                metadata_keys=["tenant"],
                metadata_cardinality_limit=2,
            )
        )
        outcomes = []
        for tenant in ("a", "b", "c", "a"):
            with client.serving(sender(tenant=tenant)):
                try:
                    await processor.consume(numbered_logs(1))
                    outcomes.append("accepted")
                except ConsumerError as refusal:
                    assert not refusal.retryable
                    outcomes.append(str(refusal))
        await processor.shutdown()
        return outcomes

    assert asyncio.run(scenario()) == [
        "accepted",
        "accepted",
        # upstream's consumererror.NewPermanent, as the receiver answers it
        "Permanent error: too many batcher metadata-value combinations",
        "accepted",
    ]
    assert sorted(info.get("tenant") for info in sink.clients) == [("a",), ("b",)]
    assert sorted(sink.items(Signal.LOG)) == [1, 2]


def test_a_request_without_items_still_opens_its_combination() -> None:
    """Upstream's multiShardBatcher finds (or makes) the batch of the
    request's metadata values before looking at its items: an empty request
    counts towards metadata_cardinality_limit and is refused past it."""
    telemetry = ServiceTelemetry()
    processor = FACTORY.create(
        settings("batch", {}, telemetry),
        BatchConfig(metadata_keys=["tenant"], metadata_cardinality_limit=2),
        Signal.LOG,
        Sink(),
    )

    async def scenario() -> list[str]:
        await started(processor)
        outcomes = []
        for tenant, count in (("a", 0), ("b", 1), ("c", 0)):
            with client.serving(sender(tenant=tenant)):
                try:
                    await processor.consume(numbered_logs(count))
                    outcomes.append("accepted")
                except ConsumerError as refusal:
                    outcomes.append(str(refusal))
        await processor.shutdown()
        return outcomes

    assert asyncio.run(scenario()) == [
        "accepted",
        "accepted",
        "Permanent error: too many batcher metadata-value combinations",
    ]
    cardinality = telemetry.registry.get_sample_value(
        "otelcol_processor_batch_metadata_cardinality", {"processor": "batch"}
    )
    assert cardinality == 2


def test_without_metadata_keys_batches_are_sent_with_no_client() -> None:
    sink = _SeesClient()

    async def scenario() -> None:
        processor = await started(batcher(sink, send_batch_size=2, timeout=5))
        with client.serving(sender(tenant="a")):
            await processor.consume(numbered_logs(1))
        with client.serving(sender(tenant="b")):
            await processor.consume(numbered_logs(1))  # fills the batch: it leaves
        await asyncio.sleep(0.01)

    asyncio.run(scenario())
    assert sink.items(Signal.LOG) == [2]
    assert sink.clients == [client.NOBODY]


def test_a_held_combination_refuses_its_own_data_only() -> None:
    class _RefusesTenantA(_SeesClient):
        async def consume(self, data: Any) -> None:
            if client.current().get("tenant") == ("a",):
                raise refused("tenant a's backend is down", retry_after=30)
            await super().consume(data)

    sink = _RefusesTenantA()

    async def scenario() -> list[str]:
        processor = await started(
            batcher(sink, send_batch_size=1, timeout=5, metadata_keys=["tenant"])
        )
        outcomes = []
        for tenant in ("a", "a", "b"):
            with client.serving(sender(tenant=tenant)):
                try:
                    await processor.consume(numbered_logs(1))
                    outcomes.append(f"{tenant} accepted")
                except ConsumerError as refusal:
                    outcomes.append(f"{tenant} refused: {refusal.retryable}")
            await asyncio.sleep(0.01)
        return outcomes

    assert asyncio.run(scenario()) == ["a accepted", "a refused: True", "b accepted"]
    assert [info.get("tenant") for info in sink.clients] == [("b",)]


def test_its_own_metrics_count_sends_by_trigger_sizes_and_combinations() -> None:
    telemetry, shared = ServiceTelemetry(), {}  # what the service gives its components
    config = BatchConfig(send_batch_size=4, timeout=Duration(0.05), metadata_keys=["tenant"])
    sinks = {Signal.LOG: Sink(), Signal.TRACE: Sink()}
    processors = [
        FACTORY.create(settings("batch", shared, telemetry), config, signal, sink)
        for signal, sink in sinks.items()  # one id in two pipelines
    ]

    def value(name: str, **labels: str) -> float | None:
        return telemetry.registry.get_sample_value(name, {"processor": "batch", **labels})

    async def scenario() -> None:
        logs, spans = [await started(p) for p in processors]
        with client.serving(sender(tenant="a")):
            await logs.consume(numbered_logs(9))  # leaves at once
        with client.serving(sender(tenant="b")):
            await logs.consume(numbered_logs(2))
            await spans.consume(traces(*(f"s{i}" for i in range(30))))
        assert value("otelcol_processor_batch_metadata_cardinality") == 3
        await asyncio.sleep(0.2)  # the timeouts send the rest
        await logs.shutdown()
        await spans.shutdown()

    asyncio.run(scenario())
    assert sorted(sinks[Signal.LOG].items(Signal.LOG)) == [2, 9]
    assert sinks[Signal.TRACE].items(Signal.TRACE) == [30]
    # 9 logs and 30 spans reached send_batch_size; 2 logs waited for the timeout.
    assert value("otelcol_processor_batch_batch_size_trigger_send_total") == 2
    assert value("otelcol_processor_batch_timeout_trigger_send_total") == 1
    assert value("otelcol_processor_batch_batch_send_size_count") == 3
    assert value("otelcol_processor_batch_batch_send_size_sum") == 41
    assert value("otelcol_processor_batch_batch_send_size_bucket", le="10.0") == 2
    assert value("otelcol_processor_batch_batch_send_size_bucket", le="25.0") == 2
    assert value("otelcol_processor_batch_batch_send_size_bucket", le="50.0") == 3


def test_its_send_metrics_appear_with_their_first_value() -> None:
    """As upstream's instruments (TestBatchMetricProcessorBatchSize expects
    no timeout series when only the size sent): a trigger counter or the
    size histogram has no series until it records; the cardinality is
    always there."""
    telemetry = ServiceTelemetry()
    processor = FACTORY.create(
        settings("batch", {}, telemetry),
        BatchConfig(send_batch_size=2, timeout=Duration(5)),
        Signal.LOG,
        Sink(),
    )

    def value(name: str) -> float | None:
        return telemetry.registry.get_sample_value(name, {"processor": "batch"})

    async def scenario() -> None:
        await started(processor)
        assert value("otelcol_processor_batch_metadata_cardinality") == 1
        for name in (
            "otelcol_processor_batch_batch_size_trigger_send_total",
            "otelcol_processor_batch_timeout_trigger_send_total",
            "otelcol_processor_batch_batch_send_size_count",
        ):
            assert value(name) is None, name
        await processor.consume(numbered_logs(2))
        await asyncio.sleep(0.01)
        await processor.shutdown()

    asyncio.run(scenario())
    assert value("otelcol_processor_batch_batch_size_trigger_send_total") == 1
    assert value("otelcol_processor_batch_batch_send_size_count") == 1
    assert value("otelcol_processor_batch_timeout_trigger_send_total") is None
