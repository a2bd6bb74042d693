"""The ``memory_limiter`` processor: upstream's config checks, limits from MiB
and percentages, refusal above the soft limit (retryable) and acceptance once
memory is back below it, garbage collection at the hard limit."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import CollectorRegistry

from sluice.collector.component import ConsumerError, Host, refused
from sluice.collector.components.processors.memorylimiter import FACTORY
from sluice.collector.components.processors.memorylimiter import limiter as limiter_module
from sluice.collector.components.processors.memorylimiter import memory as memory_module
from sluice.collector.components.processors.memorylimiter.config import MemoryLimiterConfig
from sluice.collector.components.processors.memorylimiter.limiter import Limits, MemoryLimiter
from sluice.collector.components.processors.memorylimiter.memory import MIB, total_memory
from sluice.collector.components.processors.memorylimiter.processor import (
    MemoryLimiterProcessor,
)
from sluice.collector.components.processors.memorylimiter.telemetry import (
    MemoryLimiterTelemetry,
)
from sluice.collector.confmap.decode import Duration, Problems, decode
from sluice.collector.telemetry import ServiceTelemetry
from sluice.heap import resident_bytes
from sluice.policy import Signal
from tests.collector.components.pipeline_data import Sink, logs, metrics, settings

TESTDATA = Path(__file__).parent / "testdata" / "memory_limiter"
LOGGER = logging.getLogger("test.memory_limiter")


def load(name: str) -> tuple[MemoryLimiterConfig, list[str]]:
    problems = Problems()
    raw = yaml.safe_load((TESTDATA / name).read_text())
    config = decode(MemoryLimiterConfig, raw, "processors::memory_limiter", problems)
    return config, list(problems.lines) + [message for _, message in config.validate()]


# -- config --------------------------------------------------------------------


def test_limits_from_mib_and_from_percentages() -> None:
    config, problems = load("config_mib.yaml")
    assert problems == []
    limits = Limits.of(config, total_memory=0)
    assert (limits.hard, limits.spike, limits.soft) == (4000 * MIB, 800 * MIB, 3200 * MIB)
    config, problems = load("config_percentage.yaml")
    assert problems == [] and config.check_interval == 5.0
    limits = Limits.of(config, total_memory=1000 * MIB)
    assert (limits.hard, limits.spike) == (800 * MIB, 250 * MIB)


def test_an_unset_spike_is_a_fifth_of_the_limit() -> None:
    config = MemoryLimiterConfig(check_interval=Duration(1), limit_mib=100)
    assert Limits.of(config, total_memory=0) == Limits(100 * MIB, 20 * MIB)
    config = MemoryLimiterConfig(check_interval=Duration(1), limit_percentage=50)
    assert Limits.of(config, total_memory=1000 * MIB) == Limits(500 * MIB, 100 * MIB)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("config_no_interval.yaml", "'check_interval' must be greater than zero"),
        ("config_no_limit.yaml", "'limit_mib' or 'limit_percentage' must be greater than zero"),
        (
            "config_percentage_over_100.yaml",
            "'limit_percentage' and 'spike_limit_percentage' must be greater than zero"
            " and less than or equal to hundred",
        ),
        ("config_spike_too_large.yaml", "'spike_limit_mib' must be smaller than 'limit_mib'"),
        (
            "config_spike_percentage_too_large.yaml",
            "'spike_limit_percentage' must be smaller than 'limit_percentage'",
        ),
    ],
)
def test_invalid_configs_with_upstreams_wording(name: str, message: str) -> None:
    assert load(name)[1] == [message]


def test_negative_limits_do_not_fit_upstreams_unsigned_fields() -> None:
    """Upstream's TestUnmarshalInvalidConfig: both limits are named."""
    problems = Problems()
    raw = yaml.safe_load((TESTDATA / "config_negative_limits.yaml").read_text())
    decode(MemoryLimiterConfig, raw, "processors::memory_limiter", problems)
    assert problems.lines == [
        "processors::memory_limiter::limit_mib: cannot parse 'limit_mib', -2000 overflows uint",
        "processors::memory_limiter::spike_limit_mib: cannot parse 'spike_limit_mib', "
        "-2300 overflows uint",
    ]


def test_the_default_config_must_be_completed() -> None:
    assert [m for _, m in FACTORY.default_config().validate()] == [
        "'check_interval' must be greater than zero"
    ]
    assert FACTORY.stability == {"logs": "beta", "metrics": "beta", "traces": "beta"}


def test_memory_readings() -> None:
    assert resident_bytes() > MIB
    assert total_memory() > resident_bytes()


def test_a_cgroup_limit_is_the_total_even_above_the_machines_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Upstream's iruntime.TotalMemory: a set cgroup limit is the total,
    whatever /proc/meminfo says; only an unset one falls back to it."""
    memory_max = tmp_path / "memory.max"
    monkeypatch.setattr(memory_module, "_CGROUP_LIMITS", (memory_max,))
    above = memory_module._mem_total() + 1024 * MIB
    memory_max.write_text(f"{above}\n")
    assert total_memory() == above
    memory_max.write_text("max\n")
    assert total_memory() == memory_module._mem_total()


# -- refusing ------------------------------------------------------------------


class Usage:
    """A settable resident size, read by the limiter instead of /proc."""

    def __init__(self) -> None:
        self.bytes = 10 * MIB

    def __call__(self) -> int:
        return self.bytes


async def outcome(processor: Any) -> Any:
    try:
        await processor.consume(logs(("INFO", "x")))
    except ConsumerError as refused:
        return refused
    return "accepted"


def test_data_is_refused_above_the_soft_limit_until_memory_drops(
    caplog: pytest.LogCaptureFixture,
) -> None:
    usage = Usage()
    sink = Sink()
    limiter = MemoryLimiter(Limits(100 * MIB, 20 * MIB), 0.005, LOGGER, usage)
    counters = MemoryLimiterTelemetry(CollectorRegistry()).series("memory_limiter", Signal.LOG)
    processor = MemoryLimiterProcessor(limiter, sink, Signal.LOG, *counters)

    async def scenario() -> list[Any]:
        await processor.start(Host())
        results = [await outcome(processor)]
        usage.bytes = 80 * MIB  # the soft limit itself
        await asyncio.sleep(0.05)  # several checks
        results.append(await outcome(processor))
        usage.bytes = 79 * MIB
        await asyncio.sleep(0.05)
        results.append(await outcome(processor))
        await processor.shutdown()
        return results

    with caplog.at_level(logging.INFO, LOGGER.name):
        before, during, after = asyncio.run(scenario())
    assert before == "accepted" and after == "accepted"
    assert isinstance(during, ConsumerError)
    assert during.retryable and str(during) == "data refused due to high memory usage"
    assert len(sink.received) == 2
    messages = [r.getMessage() for r in caplog.records]
    # Transitions are logged once, not at every check.
    assert sum("Refusing data" in m for m in messages) == 1
    assert sum("Resuming normal operation" in m for m in messages) == 1
    assert sum("above soft limit. Forcing a GC" in m for m in messages) == 1


def test_above_the_soft_limit_free_pages_are_given_back_at_every_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Freed but unreturned heap pages count in the resident size: while
    refusing, every check gives them back (cheap), so refusing ends once the
    data has left, even with no new data arriving to trigger the traffic
    trimmer; cycles are collected at most every 10 s there, as upstream."""
    usage = Usage()
    usage.bytes = 90 * MIB
    releases: list[float] = []

    def release() -> None:
        releases.append(time.monotonic())
        if len(releases) == 3:
            usage.bytes = 50 * MIB  # the queue drained; its pages go back now

    monkeypatch.setattr(limiter_module, "release_free_memory", release)
    limiter = MemoryLimiter(Limits(100 * MIB, 20 * MIB), 1.0, LOGGER, usage)
    limiter.check()  # forced collection (gc + release), still above: refusing
    collected = limiter.last_collection
    assert limiter.refusing and len(releases) == 1
    limiter.check()  # release only
    assert limiter.refusing and len(releases) == 2 and limiter.last_collection == collected
    limiter.check()
    assert not limiter.refusing and len(releases) == 3


def test_the_hard_limit_forces_a_collection_and_is_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    usage = Usage()
    usage.bytes = 120 * MIB
    limiter = MemoryLimiter(Limits(100 * MIB, 20 * MIB), 1.0, LOGGER, usage)
    with caplog.at_level(logging.INFO, LOGGER.name):
        limiter.check()
        first = limiter.last_collection
        limiter.check()
    assert limiter.refusing and limiter.above_hard
    assert limiter.last_collection > first > float("-inf")  # collected at every check
    messages = [r.getMessage() for r in caplog.records]
    assert sum("above hard limit" in m for m in messages) == 1


def test_a_tiny_limit_refuses_with_the_real_resident_size() -> None:
    shared: dict[str, Any] = {}
    tiny = MemoryLimiterConfig(check_interval=Duration(1), limit_mib=1)
    roomy = MemoryLimiterConfig(check_interval=Duration(1), limit_mib=1 << 20)
    refusing = FACTORY.create(settings("memory_limiter", shared), tiny, Signal.LOG, Sink())
    sink = Sink()
    accepting = FACTORY.create(settings("memory_limiter/roomy", shared), roomy, Signal.LOG, sink)

    async def scenario() -> list[Any]:
        for processor in (refusing, accepting):
            await processor.start(Host())
        results = [await outcome(refusing), await outcome(accepting)]
        for processor in (refusing, accepting):
            await processor.shutdown()
        return results

    refused, accepted = asyncio.run(scenario())
    assert isinstance(refused, ConsumerError) and refused.retryable
    assert accepted == "accepted" and len(sink.received) == 1


def test_pipelines_naming_one_memory_limiter_share_its_check() -> None:
    shared: dict[str, Any] = {}
    config = MemoryLimiterConfig(check_interval=Duration(1), limit_mib=1 << 20)
    logs_processor = FACTORY.create(settings("memory_limiter", shared), config, Signal.LOG, Sink())
    traces_processor = FACTORY.create(
        settings("memory_limiter", shared, pipeline="traces"), config, Signal.TRACE, Sink()
    )
    limiter = logs_processor.limiter
    assert traces_processor.limiter is limiter

    async def scenario() -> None:
        await logs_processor.start(Host())
        await traces_processor.start(Host())
        task = limiter._task
        await logs_processor.shutdown()
        assert limiter._task is task and not task.done()  # still checking for traces
        await traces_processor.shutdown()
        assert limiter._task is None and task.done()

    asyncio.run(scenario())


def test_accepted_and_refused_items_are_counted_per_processor() -> None:
    """Upstream's (deprecated, still emitted) ``otelcol_processor_accepted_*``
    and ``otelcol_processor_refused_*`` counters, labelled by ``processor``
    alone; an item the limiter let through counts as accepted even when the
    next component refuses it, and each series appears when first added to,
    so a limiter that only accepted has no refused series
    (TestMetricsTelemetry lists accepted alone)."""
    telemetry = ServiceTelemetry()
    shared: dict[str, Any] = {}
    tiny = MemoryLimiterConfig(check_interval=Duration(1), limit_mib=1)
    roomy = MemoryLimiterConfig(check_interval=Duration(1), limit_mib=1 << 20)
    refusing = FACTORY.create(
        settings("memory_limiter", shared, telemetry), tiny, Signal.LOG, Sink()
    )
    failing = Sink(refused("the exporter's queue is full"))
    accepting = FACTORY.create(
        settings("memory_limiter/roomy", shared, telemetry, "metrics"),
        roomy,
        Signal.METRIC,
        failing,
    )

    async def scenario() -> None:
        for processor in (refusing, accepting):
            await processor.start(Host())
        with contextlib.suppress(ConsumerError):
            await refusing.consume(logs(("INFO", "a"), ("INFO", "b")))
        with contextlib.suppress(ConsumerError):
            await accepting.consume(metrics("m1", "m2", points=3))
        for processor in (refusing, accepting):
            await processor.shutdown()

    asyncio.run(scenario())

    def sample(name: str, processor: str) -> float | None:
        return telemetry.registry.get_sample_value(name, {"processor": processor})

    assert sample("otelcol_processor_refused_log_records_total", "memory_limiter") == 2
    assert sample("otelcol_processor_accepted_log_records_total", "memory_limiter") is None
    assert sample("otelcol_processor_accepted_metric_points_total", "memory_limiter/roomy") == 6
    assert sample("otelcol_processor_refused_metric_points_total", "memory_limiter/roomy") is None
    assert sample("otelcol_processor_accepted_spans_total", "memory_limiter/roomy") is None


def _logged(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str, dict[str, Any]]]:
    return [(r.levelname, r.getMessage(), dict(getattr(r, "fields", {}))) for r in caplog.records]


def test_log_lines_carry_upstreams_fields(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Upstream's messages are bare and the memory in use is the zap field
    ``cur_mem_mib`` (a key of its own in the console and json encodings)."""
    monkeypatch.setattr(limiter_module, "release_free_memory", lambda: None)
    usage = Usage()
    limiter = MemoryLimiter(Limits(100 * MIB, 20 * MIB), 1.0, LOGGER, usage)
    usage.bytes = 85 * MIB
    with caplog.at_level(logging.DEBUG, LOGGER.name):
        limiter.check()
        usage.bytes = 30 * MIB
        limiter.check()
    assert _logged(caplog) == [
        ("DEBUG", "Currently used memory.", {"cur_mem_mib": 85}),
        ("INFO", "Memory usage is above soft limit. Forcing a GC.", {"cur_mem_mib": 85}),
        ("INFO", "Memory usage after GC.", {"cur_mem_mib": 85}),
        ("WARNING", "Memory usage is above soft limit. Refusing data.", {"cur_mem_mib": 85}),
        ("DEBUG", "Currently used memory.", {"cur_mem_mib": 30}),
        (
            "INFO",
            "Memory usage back within limits. Resuming normal operation.",
            {"cur_mem_mib": 30},
        ),
    ]


def test_the_configured_limits_are_logged_as_fields(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Upstream's NewMemoryLimiter: ``Using percentage memory limiter`` then
    ``Memory limiter configured``, with the numbers as zap fields (the check
    interval a zap duration: seconds, in the collector's encoder)."""
    monkeypatch.setattr(memory_module, "total_memory", lambda: 1000 * MIB)
    config = MemoryLimiterConfig(
        check_interval=Duration(0.25), limit_percentage=50, spike_limit_percentage=10
    )
    shared: dict[str, Any] = {}
    name = "sluice.collector.processor.memory_limiter"
    with caplog.at_level(logging.INFO, name):
        FACTORY.create(settings("memory_limiter", shared), config, Signal.LOG, Sink())
    assert _logged(caplog) == [
        (
            "INFO",
            "Using percentage memory limiter",
            {"total_memory_mib": 1000, "limit_percentage": 50, "spike_limit_percentage": 10},
        ),
        (
            "INFO",
            "Memory limiter configured",
            {"limit_mib": 500, "spike_limit_mib": 100, "check_interval": 0.25},
        ),
    ]


def test_an_unknown_total_memory_fails_creation_with_upstreams_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Upstream's getMemUsageChecker: a percentage limit without a known total
    memory fails the processor's creation, pointing at ``limit_mib``."""

    def unknown() -> int:
        raise OSError("no MemTotal in /proc/meminfo")

    monkeypatch.setattr(memory_module, "total_memory", unknown)
    config = MemoryLimiterConfig(check_interval=Duration(1), limit_percentage=50)
    with pytest.raises(OSError) as failed:
        FACTORY.create(settings("memory_limiter"), config, Signal.LOG, Sink())
    assert str(failed.value) == (
        "failed to get total memory, use fixed memory settings (limit_mib): "
        "no MemTotal in /proc/meminfo"
    )


def test_the_soft_limit_forces_a_collection_only_when_refusing_starts(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Upstream's CheckMemLimits: crossing the soft limit forces a collection
    (unless one was done in the last 10 s); staying above it while refusing
    forces none, however long that lasts. The next crossing does again."""
    clock = [1000.0]
    monkeypatch.setattr(limiter_module.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(limiter_module, "release_free_memory", lambda: None)
    collections: list[float] = []
    monkeypatch.setattr(limiter_module.gc, "collect", lambda: collections.append(clock[0]))
    usage = Usage()
    usage.bytes = 90 * MIB
    limiter = MemoryLimiter(Limits(100 * MIB, 20 * MIB), 1.0, LOGGER, usage)
    with caplog.at_level(logging.INFO, LOGGER.name):
        limiter.check()
        for _ in range(30):  # a minute of refusing
            clock[0] += 2
            limiter.check()
        assert limiter.refusing and collections == [1000.0]
        usage.bytes = 50 * MIB
        limiter.check()
        usage.bytes = 90 * MIB
        clock[0] += 2
        limiter.check()
    assert limiter.refusing and collections == [1000.0, clock[0]]
    messages = [r.getMessage() for r in caplog.records]
    assert messages.count("Memory usage is above soft limit. Forcing a GC.") == 2
    assert messages.count("Memory usage is above soft limit. Refusing data.") == 2
