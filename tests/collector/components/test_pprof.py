"""The ``pprof`` extension: config as upstream's; CPU and heap profiles of a
running, busy collector parsed with the message classes generated from
pprof's ``profile.proto``; thread stacks; the sampler's attribution in
process; and ``save_to_file``."""

from __future__ import annotations

import abc
import asyncio
import gzip
import http.client
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider

from sluice.collector.component import ComponentID, Host, Kind, Settings
from sluice.collector.components.extensions.pprof import FACTORY
from sluice.collector.components.extensions.pprof.config import DialerConfig, PprofConfig
from sluice.collector.components.extensions.pprof.cpu import SAMPLER
from sluice.collector.components.extensions.pprof.extension import PprofExtension
from sluice.collector.components.extensions.pprof.heap import SourceFunctions
from sluice.collector.components.extensions.pprof.profile_pb2 import Profile
from sluice.collector.telemetry import ServiceTelemetry
from tests.collector.background import go_redirect, http_get
from tests.collector.components.package_checks import assert_imports_lazily, assert_validates
from tests.collector.helpers import CollectorProcess, free_ports
from tests.collector.testdata_configs import load_config

TESTDATA = Path(__file__).parent / "testdata" / "pprof"


def load(name: str) -> tuple[PprofConfig, list[str]]:
    return load_config(PprofConfig, TESTDATA / name)


# -- config ---------------------------------------------------------------------------


def test_default_config_is_upstreams() -> None:
    config, problems = load("config_default.yaml")
    assert problems == []
    assert config == FACTORY.default_config() == PprofConfig("localhost:1777")
    assert (config.block_profile_fraction, config.mutex_profile_fraction) == (0, 0)
    assert config.save_to_file == ""


def test_upstream_testdata_and_save_to_file_decode() -> None:
    config, problems = load("config_upstream.yaml")
    assert problems == []
    assert config == PprofConfig(
        "127.0.0.1:1777", block_profile_fraction=3, mutex_profile_fraction=5
    )
    config, problems = load("config_save_to_file.yaml")
    assert problems == []
    assert (config.save_to_file, config.dialer) == (
        "/var/tmp/collector-cpu.pprof",
        DialerConfig(timeout=5),
    )


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("config_missing_endpoint.yaml", '"endpoint" is required when using the "pprof" extension'),
        ("config_bad_endpoint.yaml", "endpoint: address localhost: missing port in address"),
        ("config_unknown_key.yaml", "'' has invalid keys: cpu_profile_rate"),
    ],
)
def test_invalid_configs_name_the_key(name: str, problem: str) -> None:
    assert load(name)[1] == [problem]


def test_upstream_examples_validate() -> None:
    assert_validates(TESTDATA / "collector_upstream_examples.yaml")


def test_factory_describes_the_upstream_component_and_imports_lazily() -> None:
    assert (FACTORY.kind, FACTORY.component_type) == (Kind.EXTENSION, "pprof")
    assert FACTORY.module.endswith("/opentelemetry-collector-contrib/extension/pprofextension")
    assert FACTORY.stability == {"extension": "beta"}
    assert_imports_lazily("sluice.collector.components.extensions.pprof", "extension")


# -- profiles --------------------------------------------------------------------------


def parse(body: bytes) -> Profile:
    profile = Profile()
    profile.ParseFromString(gzip.decompress(body))
    return profile


def value_types(profile: Profile) -> list[tuple[str, str]]:
    strings = profile.string_table
    return [(strings[t.type], strings[t.unit]) for t in profile.sample_type]


def functions_by_location(profile: Profile) -> dict[int, str]:
    """Location id -> its function's name; checks every reference resolves."""
    strings = profile.string_table
    assert strings[0] == ""
    names = {f.id: strings[f.name] for f in profile.function}
    assert {m.id for m in profile.mapping} == {1}
    located = {}
    for location in profile.location:
        assert location.mapping_id == 1 and len(location.line) == 1
        located[location.id] = names[location.line[0].function_id]
    for sample in profile.sample:
        assert sample.location_id and all(i in located for i in sample.location_id)
        assert len(sample.value) == len(profile.sample_type)
    return located


def cpu_by_function(profile: Profile, leaf: bool = False) -> dict[str, int]:
    """CPU ns by function (cumulative, or only where it was the leaf)."""
    located = functions_by_location(profile)
    spent: dict[str, int] = {}
    for sample in profile.sample:
        ids = sample.location_id[:1] if leaf else sample.location_id
        for name in {located[i] for i in ids}:
            spent[name] = spent.get(name, 0) + sample.value[-1]
    return spent


def burn(cpu_seconds: float) -> int:
    """Busy Python until this thread has used `cpu_seconds` of CPU (wall
    time says little on a shared machine)."""
    total, end = 0, time.thread_time() + cpu_seconds
    while time.thread_time() < end:
        total += sum(i * i for i in range(500))
    return total


def test_cpu_samples_charge_the_running_function_in_each_thread() -> None:
    worker = threading.Thread(target=burn, args=(0.3,), name="burner")
    recording = SAMPLER.open()
    try:
        worker.start()
        burn(0.3)
        worker.join()
        time.sleep(0.2)  # waiting: no CPU, no samples
    finally:
        SAMPLER.close(recording)
    profile = parse(recording.profile())
    assert value_types(profile) == [("samples", "count"), ("cpu", "nanoseconds")]
    strings = profile.string_table
    assert (strings[profile.period_type.type], profile.period) == ("cpu", 10_000_000)
    assert profile.duration_nanos > 0.2e9
    here = f"{__name__}.burn"
    by_thread: dict[str, int] = {}
    located = functions_by_location(profile)
    for sample in profile.sample:
        (label,) = sample.label
        assert strings[label.key] == "thread"
        if here in {located[i] for i in sample.location_id}:
            by_thread[strings[label.str]] = by_thread.get(strings[label.str], 0) + sample.value[1]
    # Each thread burned 0.3 s of CPU; samples come every 10 ms of CPU, so
    # up to a period of each thread's time may not be charged yet.
    assert set(by_thread) == {"MainThread", "burner"}
    for thread, charged in by_thread.items():
        assert 0.25e9 < charged < 0.35e9, (thread, charged)
    total = sum(s.value[1] for s in profile.sample)
    assert sum(by_thread.values()) > 0.9 * total, "time spent sleeping is not charged"
    assert f"{__name__}.burn.<locals>.<genexpr>" in cpu_by_function(profile, leaf=True)


def test_sampler_stops_its_timer_with_the_last_recording() -> None:
    import signal

    first, second = SAMPLER.open(), SAMPLER.open()
    SAMPLER.close(first)
    assert signal.getitimer(signal.ITIMER_PROF)[1] > 0
    # Until the first sample, within 2 s of CPU: on a host running more
    # busy processes than it has cores, profiling signals come late.
    limit = time.thread_time() + 2.0
    while not second.samples and time.thread_time() < limit:
        burn(0.05)
    SAMPLER.close(second)
    assert signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)
    assert second.samples, "the recording still open got samples"


def test_source_functions_name_lines_from_code_objects() -> None:
    functions = SourceFunctions()
    this = __file__
    first = burn.__code__.co_firstlineno
    assert functions.function(this, first + 3) == ("burn", first)
    genexpr_line = first + 4
    assert functions.function(this, genexpr_line)[0] in ("burn", "burn.<locals>.<genexpr>")
    assert functions.function(this, 1) == ("<module>", 1)
    assert functions.function("<frozen nowhere>", 3) == ("<module>", 1)
    frozen = abc.ABCMeta.__instancecheck__.__code__  # the interpreter's frozen abc
    assert frozen.co_filename == "<frozen abc>"
    assert functions.function(frozen.co_filename, frozen.co_firstlineno + 1) == (
        "ABCMeta.__instancecheck__",
        frozen.co_firstlineno,
    )
    method = PprofExtension.handle.__code__
    assert functions.function(method.co_filename, method.co_firstlineno + 2) == (
        "PprofExtension.handle",
        method.co_firstlineno,
    )


# -- a running collector ------------------------------------------------------------------


@pytest.fixture(scope="module")
def collector(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[CollectorProcess, int, int]]:
    http, pprof = free_ports(2)
    config = {
        "receivers": {"otlp": {"protocols": {"http": {"endpoint": f"127.0.0.1:{http}"}}}},
        "processors": {"batch": {"timeout": "10ms"}},
        "exporters": {"debug": None},
        "extensions": {"pprof": {"endpoint": f"127.0.0.1:{pprof}"}},
        "service": {
            "telemetry": {"metrics": {"level": "none"}},
            "extensions": ["pprof"],
            "pipelines": {
                "traces": {"receivers": ["otlp"], "processors": ["batch"], "exporters": ["debug"]}
            },
        },
    }
    process = CollectorProcess(tmp_path_factory.mktemp("pprof"), config).wait_ready()
    yield process, pprof, http
    process.terminate()


def spans_body(count: int) -> bytes:
    """`count` spans made with the SDK, encoded once by the SDK's OTLP encoder."""
    finished: list[Any] = []

    class Keep(SpanProcessor):
        def on_end(self, span: Any) -> None:
            finished.append(span)

    provider = TracerProvider(resource=Resource.create({"service.name": "pprof-test"}))
    provider.add_span_processor(Keep())
    tracer = provider.get_tracer("pprof-test")
    for n in range(count):
        with tracer.start_as_current_span(f"work-{n}", attributes={"n": n, "tag": "x" * 40}):
            pass
    body: bytes = encode_spans(finished).SerializeToString()
    return body


@contextmanager
def traffic(http_port: int, senders: int = 2) -> Iterator[list[int]]:
    """OTLP/HTTP requests of 500 spans from `senders` threads until the
    block ends; yields the statuses answered so far (all must be 200)."""
    body = spans_body(500)
    statuses: list[int] = []
    stop = threading.Event()

    def send() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", http_port, timeout=10)
        while not stop.is_set():
            connection.request(
                "POST", "/v1/traces", body, {"Content-Type": "application/x-protobuf"}
            )
            response = connection.getresponse()
            response.read()
            statuses.append(response.status)
        connection.close()

    threads = [threading.Thread(target=send) for _ in range(senders)]
    for thread in threads:
        thread.start()
    try:
        yield statuses
    finally:
        stop.set()
        for thread in threads:
            thread.join(10)
    assert statuses and set(statuses) == {200}


def get(collector: Any, target: str, timeout: float = 10.0) -> tuple[int, dict[str, str], bytes]:
    return http_get(collector[1], target)


def test_cpu_profile_of_a_busy_collector(collector: Any) -> None:
    with traffic(collector[2]) as statuses:
        status, headers, body = get(collector, "/debug/pprof/profile?seconds=1")
    assert len(statuses) > 2
    assert status == 200, body
    assert headers["content-type"] == "application/octet-stream"
    assert headers["content-disposition"] == 'attachment; filename="profile"'
    profile = parse(body)
    assert value_types(profile) == [("samples", "count"), ("cpu", "nanoseconds")]
    assert 0.9e9 < profile.duration_nanos < 3e9
    assert len(profile.sample) > 0
    spent = cpu_by_function(profile)
    sluice = {name: ns for name, ns in spent.items() if name.startswith("sluice.")}
    assert "sluice.collector.cli.main" in sluice
    # The CPU went into serving the requests: the HTTP server, the receiver,
    # the pipeline's components (which exactly depends on the moment sampled).
    at_work = [n for n in sluice if n.startswith(("sluice.transport.", "sluice.collector.comp"))]
    assert at_work, sorted(sluice)
    assert {"thread", "MainThread"} <= set(profile.string_table)


def test_cpu_profile_seconds_are_read_as_go_does(collector: Any) -> None:
    # Not a positive integer: Go's 30 seconds; too slow for a test, so only
    # check that a small valid value is honoured and a profile comes back.
    started = time.monotonic()
    status, _, body = get(collector, "/debug/pprof/profile?seconds=1")
    assert status == 200 and 0.9 < time.monotonic() - started < 5
    assert value_types(parse(body))[-1] == ("cpu", "nanoseconds")


def test_heap_profile_after_tracing_starts(collector: Any) -> None:
    status, headers, body = get(collector, "/debug/pprof/heap")
    assert (status, headers["content-disposition"]) == (200, 'attachment; filename="heap"')
    first = parse(body)
    assert value_types(first) == [("inuse_objects", "count"), ("inuse_space", "bytes")]
    assert collector[0].wait_log("tracemalloc started for /debug/pprof/heap")
    with traffic(collector[2], senders=1) as statuses:
        while len(statuses) < 3:
            time.sleep(0.05)
    profile = parse(get(collector, "/debug/pprof/heap?gc=1")[2])
    located = functions_by_location(profile)
    assert profile.sample and all(s.value[1] != 0 for s in profile.sample)
    assert any(name.startswith("sluice.") for name in located.values())
    status, _, text = get(collector, "/debug/pprof/heap?debug=1")
    assert status == 200 and text.startswith(b"heap profile: ")


def test_heap_delta_over_seconds(collector: Any) -> None:
    status, headers, body = get(collector, "/debug/pprof/heap?seconds=1")
    assert (status, headers["content-disposition"]) == (200, 'attachment; filename="heap-delta"')
    assert 0.9e9 < parse(body).duration_nanos < 5e9
    status, headers, body = get(collector, "/debug/pprof/heap?seconds=x")
    assert headers.pop("date"), "Go's server dates every answer"
    assert (status, headers, body) == (
        400,
        {
            "x-go-pprof": "1",
            "x-content-type-options": "nosniff",
            "content-type": "text/plain; charset=utf-8",
            "content-length": "57",
        },
        b'invalid value for "seconds" - must be a positive integer\n',
    )
    assert get(collector, "/debug/pprof/heap?seconds=1&debug=1")[0::2] == (
        400,
        b"seconds and debug params are incompatible\n",
    )


def test_threads_lists_the_main_thread_first_and_the_event_loop_tasks(collector: Any) -> None:
    status, headers, body = get(collector, "/debug/pprof/threads")
    assert (status, headers["content-type"]) == (200, "text/plain; charset=utf-8")
    text = body.decode()
    assert text.startswith("thread MainThread (ident ")
    assert "in main\n    return loop.run(" in text
    assert "in run\n    return uvloop.run(" in text
    assert "asyncio tasks of the event loop: " in text
    assert "task Task-" in text and "threads_text" in text


def test_index_cmdline_and_unknown_profiles(collector: Any) -> None:
    status, headers, body = get(collector, "/debug/pprof/")
    assert (status, headers["content-type"]) == (200, "text/html; charset=utf-8")
    for name in ("profile?seconds=30", "heap", "threads", "cmdline"):
        assert f'<a href="{name}">' in body.decode()
    status, _, body = get(collector, "/debug/pprof/cmdline")
    assert status == 200 and b"\x00--config\x00" in body
    assert get(collector, "/debug/pprof/goroutine")[0::2] == (404, b"Unknown profile\n")
    assert get(collector, "/debug/vars")[0::2] == (404, b"404 page not found\n")


def test_paths_are_redirected_as_gos_servemux_does(collector: Any) -> None:
    # net/http/pprof registers the index on the /debug/pprof/ subtree of Go's
    # ServeMux: /debug/pprof is answered 301 to it, and a path with empty,
    # "." or ".." segments 301 to the clean path, query kept.
    for target, location in [
        ("/debug/pprof", "/debug/pprof/"),
        ("/debug/pprof?debug=1", "/debug/pprof/?debug=1"),
        ("//debug/pprof", "/debug/pprof/"),
        ("/debug//pprof/cmdline", "/debug/pprof/cmdline"),
        ("/debug/pprof/x/../heap?debug=1", "/debug/pprof/heap?debug=1"),
        ("/debug/./vars", "/debug/vars"),
    ]:
        status, headers, body = get(collector, target)
        assert (status, headers["location"], headers["content-type"], body) == go_redirect(
            location
        ), target


def test_save_to_file_writes_a_profile_of_the_run(tmp_path: Path) -> None:
    http, pprof = free_ports(2)
    saved = tmp_path / "run.pprof"
    config = {
        "receivers": {"otlp": {"protocols": {"http": {"endpoint": f"127.0.0.1:{http}"}}}},
        "exporters": {"debug": None},
        "extensions": {"pprof": {"endpoint": f"127.0.0.1:{pprof}", "save_to_file": str(saved)}},
        "service": {
            "telemetry": {"metrics": {"level": "none"}},
            "extensions": ["pprof"],
            "pipelines": {"traces": {"receivers": ["otlp"], "exporters": ["debug"]}},
        },
    }
    process = CollectorProcess(tmp_path / "run", config).wait_ready()
    try:
        assert saved.exists() and saved.stat().st_size == 0, "created at start, written at stop"
        with traffic(http) as statuses:
            while len(statuses) < 10:
                time.sleep(0.05)
    finally:
        assert process.terminate() == 0
    profile = parse(saved.read_bytes())
    assert value_types(profile)[-1] == ("cpu", "nanoseconds")
    assert "sluice.collector.cli.main" in cpu_by_function(profile)
    assert "CPU profile of the run written to" in process.stderr()


# -- lifecycle, in process -------------------------------------------------------------------


def _extension(**config: Any) -> PprofExtension:
    settings = Settings(ComponentID("pprof"), Kind.EXTENSION, ServiceTelemetry())
    extension = FACTORY.create(settings, PprofConfig(endpoint="127.0.0.1:0", **config))
    assert isinstance(extension, PprofExtension)
    return extension


def test_one_instance_per_process_and_warnings_for_go_knobs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    first, second = _extension(block_profile_fraction=3), _extension()

    async def lifecycle() -> str:
        await first.start(Host())
        try:
            await second.start(Host())
        except RuntimeError as refused:
            return str(refused)
        finally:
            await first.shutdown()
        return "started"

    with caplog.at_level(logging.WARNING):
        assert asyncio.run(lifecycle()) == (
            "only a single pprof extension instance can be running per process"
        )
    assert "block_profile_fraction has no effect" in caplog.text
    assert "mutex_profile_fraction" not in caplog.text

    async def again() -> None:
        await second.start(Host())
        await second.shutdown()

    asyncio.run(again())  # the first one's shutdown let another start


def test_save_to_file_that_cannot_be_created_fails_start(tmp_path: Path) -> None:
    extension = _extension(save_to_file=str(tmp_path / "missing" / "cpu.pprof"))
    with pytest.raises(FileNotFoundError):
        asyncio.run(extension.start(Host()))
    assert extension.listener is None
    other = _extension()
    asyncio.run(other.start(Host()))
    asyncio.run(other.shutdown())
