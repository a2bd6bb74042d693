"""Component status as upstream's service reports it (``service/internal/status``):
only valid transitions reach the listeners, in the order the service makes them."""

from __future__ import annotations

import asyncio
import socket

import pytest

from sluice.collector import cli
from sluice.collector.component import Host, Status
from sluice.collector.factories import BUILTIN, Factories
from sluice.collector.service import SHUTDOWN_SECS, Service, ShutdownError, StartError
from tests.collector import failing_shutdown
from tests.collector.helpers import free_ports

S = Status


def reported(statuses: list[Status], instance: str = "receiver:otlp") -> list[Status]:
    """What a listener sees of `statuses` reported in turn for `instance`."""
    host = Host()
    seen: list[Status] = []
    host.status_listeners.append(lambda _, status, __: seen.append(status))
    for status in statuses:
        host.report_status(instance, status)
    return seen


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        pytest.param(
            [S.STARTING, S.OK, S.STOPPING, S.STOPPED],
            [S.STARTING, S.OK, S.STOPPING, S.STOPPED],
            id="successful startup and shutdown",
        ),
        pytest.param(
            [S.STARTING, S.RECOVERABLE_ERROR, S.OK, S.STOPPING, S.STOPPED],
            [S.STARTING, S.RECOVERABLE_ERROR, S.OK, S.STOPPING, S.STOPPED],
            id="component recovered",
        ),
        pytest.param(
            [S.STARTING, S.OK, *[S.RECOVERABLE_ERROR] * 3, S.OK, S.STOPPING, S.STOPPED],
            [S.STARTING, S.OK, S.RECOVERABLE_ERROR, S.OK, S.STOPPING, S.STOPPED],
            id="repeated events are dropped",
        ),
        pytest.param(
            [S.STARTING, S.OK, S.PERMANENT_ERROR, S.OK],
            [S.STARTING, S.OK, S.PERMANENT_ERROR],
            id="PermanentError is terminal",
        ),
        pytest.param(
            [S.STARTING, S.OK, S.FATAL_ERROR, S.OK],
            [S.STARTING, S.OK, S.FATAL_ERROR],
            id="FatalError is terminal",
        ),
        pytest.param(
            [S.STARTING, S.OK, S.STOPPING, S.STOPPED, S.OK],
            [S.STARTING, S.OK, S.STOPPING, S.STOPPED],
            id="Stopped is terminal",
        ),
        pytest.param([S.OK, S.STOPPING], [], id="nothing before Starting"),
        pytest.param(
            [S.STARTING, S.PERMANENT_ERROR, S.STOPPING, S.STOPPED],
            [S.STARTING, S.PERMANENT_ERROR],
            id="a failed start is not stopped",
        ),
    ],
)
def test_only_valid_transitions_are_reported(
    statuses: list[Status], expected: list[Status]
) -> None:
    assert reported(statuses) == expected


@pytest.mark.parametrize(
    "status", [S.STARTING, S.OK, S.RECOVERABLE_ERROR, S.PERMANENT_ERROR, S.FATAL_ERROR]
)
def test_stopped_only_follows_stopping(status: Status) -> None:
    before = [status] if status is S.STARTING else [S.STARTING, status]
    seen = reported([*before, S.STOPPED, S.STOPPING, S.STOPPED])
    if status in (S.PERMANENT_ERROR, S.FATAL_ERROR):
        assert seen == before
    else:
        assert seen == [*before, S.STOPPING, S.STOPPED]


def test_a_dropped_report_leaves_the_last_status() -> None:
    host = Host()
    for status in (S.STARTING, S.OK, S.PERMANENT_ERROR):
        host.report_status(
            "exporter:otlp", status, "port taken" if status is S.PERMANENT_ERROR else ""
        )
    host.report_status("exporter:otlp", S.OK)
    assert host.statuses["exporter:otlp"].status is S.PERMANENT_ERROR


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        ([S.STARTING], [S.STARTING, S.OK]),
        ([S.STARTING, S.OK], [S.STARTING, S.OK]),
        ([S.STARTING, S.RECOVERABLE_ERROR], [S.STARTING, S.RECOVERABLE_ERROR]),
        ([S.STARTING, S.PERMANENT_ERROR], [S.STARTING, S.PERMANENT_ERROR]),
    ],
)
def test_ok_if_starting(statuses: list[Status], expected: list[Status]) -> None:
    host = Host()
    seen: list[Status] = []
    host.status_listeners.append(lambda _, status, __: seen.append(status))
    for status in statuses:
        host.report_status("processor:batch", status)
    host.report_ok_if_starting("processor:batch")
    assert seen == expected


def test_components_report_independently() -> None:
    host = Host()
    seen: list[tuple[str, Status]] = []
    host.status_listeners.append(lambda instance, status, _: seen.append((instance, status)))
    for status in (S.STARTING, S.OK):
        host.report_status("receiver:otlp", status)
        host.report_status("exporter:otlp", status)
    host.report_status("exporter:otlp", S.RECOVERABLE_ERROR)
    assert seen == [
        ("receiver:otlp", S.STARTING),
        ("exporter:otlp", S.STARTING),
        ("receiver:otlp", S.OK),
        ("exporter:otlp", S.OK),
        ("exporter:otlp", S.RECOVERABLE_ERROR),
    ]


# -- what the service reports --------------------------------------------------


def run_service(
    text: str, packages: tuple[str, ...] = BUILTIN, shutdown_secs: float = SHUTDOWN_SECS
) -> tuple[list[tuple[str, Status, str]], BaseException | None]:
    """The component reports (not the service's own) of a service on the
    config `text` that starts and shuts down, and why it could not start or
    stop."""
    config, problems = cli.load([f"yaml:{text}"], [], Factories.load(packages))
    assert config is not None, problems
    service = Service(config)
    seen: list[tuple[str, Status, str]] = []
    service.host.status_listeners.append(
        lambda instance, status, error: (
            seen.append((instance, status, error))
            if instance != "collector" and not instance.startswith("pipeline:")
            else None
        )
    )

    async def run() -> BaseException | None:
        try:
            await service.start()
            await service.shutdown(shutdown_secs)
        except Exception as problem:
            return problem
        return None

    failed = asyncio.run(run())
    return seen, failed


SERVICE = """
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:{port}
exporters:
  debug:
extensions:
  bearertokenauth:
    token: s3cret
service:
  telemetry:
    metrics:
      level: none
  extensions: [bearertokenauth]
  pipelines:
    logs:
      receivers: [otlp]
      exporters: [debug]
"""


def test_each_component_starts_and_stops_in_upstreams_order() -> None:
    (port,) = free_ports(1)
    seen, failed = run_service(SERVICE.format(port=port))
    assert failed is None
    assert [(instance, status) for instance, status, _ in seen] == [
        ("extension:bearertokenauth", S.STARTING),
        ("extension:bearertokenauth", S.OK),
        ("exporter:debug", S.STARTING),
        ("exporter:debug", S.OK),
        ("receiver:otlp", S.STARTING),
        ("receiver:otlp", S.OK),
        ("receiver:otlp", S.STOPPING),
        ("receiver:otlp", S.STOPPED),
        ("exporter:debug", S.STOPPING),
        ("exporter:debug", S.STOPPED),
        ("extension:bearertokenauth", S.STOPPING),
        ("extension:bearertokenauth", S.STOPPED),
    ]


def test_a_component_that_cannot_start_reports_a_permanent_error() -> None:
    # upstream's graph reports the error of Start as a PermanentError; the
    # shutdown that follows stops what started, and its Stopping for the
    # failed component is dropped (PermanentError is final)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        seen, failed = run_service(SERVICE.format(port=port))
    busy = f"listen tcp 127.0.0.1:{port}: bind: address already in use"
    assert isinstance(failed, StartError)
    assert str(failed) == f"cannot start pipelines: {busy}"
    assert seen == [
        ("extension:bearertokenauth", S.STARTING, ""),
        ("extension:bearertokenauth", S.OK, ""),
        ("exporter:debug", S.STARTING, ""),
        ("exporter:debug", S.OK, ""),
        ("receiver:otlp", S.STARTING, ""),
        ("receiver:otlp", S.PERMANENT_ERROR, busy),
        ("exporter:debug", S.STOPPING, ""),
        ("exporter:debug", S.STOPPED, ""),
        ("extension:bearertokenauth", S.STOPPING, ""),
        ("extension:bearertokenauth", S.STOPPED, ""),
    ]


FAILING = """
processors:
  failingproc:
    shutdown_error: {processor}
    shutdown_hangs: {hangs}
exporters:
  debug:
extensions:
  failingext:
    shutdown_error: {extension}
  bearertokenauth:
    token: s3cret
service:
  telemetry:
    metrics:
      level: none
  extensions: [failingext, bearertokenauth]
  pipelines:
    logs:
      receivers: [otlp]
      processors: [failingproc]
      exporters: [debug]
"""


def _failing(processor: str = "", extension: str = "", hangs: bool = False) -> str:
    (port,) = free_ports(1)
    receiver = SERVICE[: SERVICE.index("exporters:")].format(port=port)
    return receiver + FAILING.format(
        processor=processor or '""', extension=extension or '""', hangs=str(hangs).lower()
    )


def test_a_component_whose_shutdown_fails_reports_a_permanent_error() -> None:
    # upstream's Graph.ShutdownAll and Extensions.Shutdown: Stopping, then
    # the error of Shutdown as a PermanentError instead of Stopped; the
    # others still stop, and the service's Shutdown returns every error
    seen, failed = run_service(
        _failing(processor="flush failed", extension="close failed"),
        (*BUILTIN, *failing_shutdown.PACKAGES),
    )
    assert isinstance(failed, ShutdownError)
    assert str(failed) == (
        "failed to shutdown pipelines: flush failed; failed to shutdown extensions: close failed"
    )
    stops = [report for report in seen if report[1] not in (S.STARTING, S.OK)]
    by_instance: dict[str, list[tuple[Status, str]]] = {}
    for instance, status, error in stops:
        by_instance.setdefault(instance, []).append((status, error))
    assert by_instance == {
        "receiver:otlp": [(S.STOPPING, ""), (S.STOPPED, "")],
        "processor:failingproc": [(S.STOPPING, ""), (S.PERMANENT_ERROR, "flush failed")],
        "exporter:debug": [(S.STOPPING, ""), (S.STOPPED, "")],
        "extension:bearertokenauth": [(S.STOPPING, ""), (S.STOPPED, "")],
        "extension:failingext": [(S.STOPPING, ""), (S.PERMANENT_ERROR, "close failed")],
    }
    # pipelines first (the exporter after the processor), then extensions in reverse
    assert [instance for instance, *_ in stops][-6:] == [
        "exporter:debug",
        "exporter:debug",
        "extension:bearertokenauth",
        "extension:bearertokenauth",
        "extension:failingext",
        "extension:failingext",
    ]


def test_a_component_that_does_not_stop_in_time_reports_a_permanent_error() -> None:
    seen, failed = run_service(_failing(hangs=True), (*BUILTIN, *failing_shutdown.PACKAGES), 0.5)
    assert isinstance(failed, ShutdownError)
    assert str(failed) == "failed to shutdown pipelines: context deadline exceeded"
    assert ("processor:failingproc", S.PERMANENT_ERROR, "context deadline exceeded") in seen
    assert ("exporter:debug", S.STOPPED, "") in seen
