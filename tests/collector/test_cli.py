"""``sluice-collector`` as a user runs it: validate, --dry-run, components,
--version, --help, and every kind of config error with its documented
message and exit code 1 (nothing started)."""

from __future__ import annotations

import functools
import http.server
import json
import logging
import os
import re
import socket
import sys
import tempfile
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml

from sluice import __version__
from sluice.collector import cli, service
from sluice.collector.component import ComponentID, Kind
from sluice.collector.factories import Factories
from tests.collector.helpers import CollectorProcess, free_port, run_cli


def _config(processors: str = "[batch]", extra: str = "", port: int = 0) -> str:
    return f"""\
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:{port or free_port()}
processors:
  batch:
    timeout: 1s
exporters:
  debug:
{extra}service:
  telemetry:
    metrics:
      level: none
  pipelines:
    logs:
      receivers: [otlp]
      processors: {processors}
      exporters: [debug]
"""


def _write(tmp_path: Path, text: str, name: str = "collector.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_validate_prints_config_is_valid(tmp_path: Path) -> None:
    path = _write(tmp_path, _config())
    for args in (["validate", "--config", str(path)], ["--config", str(path), "--dry-run"]):
        result = run_cli(*args)
        assert (result.returncode, result.stdout) == (0, "config is valid\n"), result.stderr


def test_metrics_on_with_no_readers_is_reported_on_stdout_and_the_config_loads(
    tmp_path: Path,
) -> None:
    """Upstream's service Config.Validate prints telemetry.Config.Validate's
    error (config_test TestConfigValidate: a level but no readers) and goes
    on; at level none there is nothing to say."""
    notice = (
        "service::telemetry config validation failed: collector telemetry metrics reader"
        " should exist when metric level is not none\n"
    )
    for metrics, expected in (
        ("      level: basic\n      readers: []\n", notice),
        ("      readers: []\n", notice),
        ("      level: none\n      readers: []\n", ""),
        ("      readers: []\n      address: 127.0.0.1:0\n", ""),
    ):
        text = _config().replace("      level: none\n", metrics)
        result = run_cli("validate", "--config", str(_write(tmp_path, text)))
        assert (result.returncode, result.stdout) == (0, f"{expected}config is valid\n"), metrics


def test_logs_go_to_every_output_path_as_zap_writes_them(tmp_path: Path) -> None:
    """Upstream hands service::telemetry::logs::output_paths to zap, which
    appends each line to every path (a file path, a file:// URL, stderr)."""
    plain, url = tmp_path / "collector.log", tmp_path / "url.log"
    plain.write_text("kept\n")
    outputs = f"    logs:\n      output_paths: [stderr, {plain}, 'file://{url}']\n"
    text = _config().replace("    metrics:\n", f"{outputs}    metrics:\n")
    collector = CollectorProcess(tmp_path / "run", text).wait_ready()
    collector.terminate()
    for path in (plain, url):
        lines = path.read_text().splitlines()
        assert any("Everything is ready" in line for line in lines), path
        assert any("Shutdown complete" in line for line in lines), path
    assert plain.read_text().startswith("kept\n"), "appended to"


def test_initial_fields_are_on_every_log_line(tmp_path: Path) -> None:
    """Upstream hands service::telemetry::logs::initial_fields to zap, which
    adds them to every entry of the root logger."""
    logs = "    logs:\n      encoding: json\n      initial_fields: {team: core, shard: 3}\n"
    text = _config().replace("    metrics:\n", f"{logs}    metrics:\n")
    collector = CollectorProcess(tmp_path, text).wait_ready()
    collector.terminate()
    entries = [json.loads(line) for line in collector.stderr().splitlines()]
    assert any(e["msg"].startswith("Everything is ready") for e in entries)
    assert all((e["team"], e["shard"]) == ("core", 3) for e in entries), entries


@pytest.mark.parametrize(
    ("signal", "exported", "level"),
    [("logs", "log is", ""), ("traces", "traces are", "      level: basic\n")],
)
def test_telemetry_processors_are_reported_as_not_supported_and_ignored(
    tmp_path: Path, signal: str, exported: str, level: str
) -> None:
    """Upstream exports its own log and traces through
    service::telemetry::<signal>::processors (OTel SDK providers, a batch
    processor and an OTLP exporter); Sluice does not, and says so at start
    instead of dropping them unseen."""
    processors = (
        f"    {signal}:\n{level}      processors:\n        - batch:\n            exporter:\n"
        "              otlp: {protocol: http/protobuf, endpoint: 'http://127.0.0.1:1'}\n"
    )
    text = _config().replace("    metrics:\n", f"{processors}    metrics:\n")
    collector = CollectorProcess(tmp_path, text).wait_ready()
    assert collector.terminate() == 0
    (warning,) = [line for line in collector.stderr().splitlines() if "processors" in line]
    assert "level=warn" in warning
    assert (
        f"msg=\"service::telemetry::{signal}::processors is not supported: the collector's own"
        f' {exported} not exported, the 1 configured processor is ignored"'
    ) in warning
    quiet = CollectorProcess(tmp_path / "none", _config()).wait_ready()
    quiet.terminate()
    assert "processors" not in quiet.stderr()


def test_traces_processors_at_level_none_are_not_reported(tmp_path: Path) -> None:
    """With traces::level none upstream builds no tracer provider, so its
    processors are never used: nothing to warn about."""
    processors = (
        "    traces:\n      level: none\n      processors:\n        - batch:\n"
        "            exporter:\n"
        "              otlp: {protocol: http/protobuf, endpoint: 'http://127.0.0.1:1'}\n"
    )
    text = _config().replace("    metrics:\n", f"{processors}    metrics:\n")
    collector = CollectorProcess(tmp_path, text).wait_ready()
    assert collector.terminate() == 0
    assert "processors" not in collector.stderr()


def test_an_output_path_that_cannot_be_opened_stops_the_collector(tmp_path: Path) -> None:
    """zap's Build fails to open the sink; upstream's service.New reports
    "failed to create logger: ..." and the collector does not run."""
    missing = tmp_path / "no-such-dir" / "collector.log"
    outputs = f"    logs:\n      output_paths: ['{missing}']\n"
    path = _write(tmp_path, _config().replace("    metrics:\n", f"{outputs}    metrics:\n"))
    result = run_cli("--config", str(path))
    assert result.returncode == 1
    assert (
        f"Error: failed to create logger: open {missing}: no such file or directory"
        in result.stderr
    )


@pytest.mark.parametrize(
    ("encoding", "reason"),
    [
        ("xml", 'no encoder registered for name "xml"'),
        ("JSON", 'no encoder registered for name "JSON"'),
        ("''", "no encoder name specified"),
    ],
)
def test_an_encoding_zap_does_not_know_is_valid_but_stops_the_collector(
    tmp_path: Path, encoding: str, reason: str
) -> None:
    """Upstream's config takes any encoding (service/telemetry Config.Encoding
    is a string it does not validate); zap's Build refuses it when the
    service creates its logger, so validate passes and running fails."""
    logs = f"    logs:\n      encoding: {encoding}\n"
    path = _write(tmp_path, _config().replace("    metrics:\n", f"{logs}    metrics:\n"))
    validated = run_cli("validate", "--config", str(path))
    assert (validated.returncode, validated.stdout) == (0, "config is valid\n"), validated.stderr
    result = run_cli("--config", str(path))
    assert result.returncode == 1
    assert f"Error: failed to create logger: {reason}" in result.stderr


@pytest.mark.parametrize(
    ("traces", "runs"),
    [
        ("{propagators: [b3, tracecontext]}", True),
        ("{propagators: [unknown, tracecontext]}", False),
        ("{level: none, propagators: [unknown]}", True),
    ],
)
def test_an_unknown_trace_propagator_is_valid_but_stops_the_collector(
    tmp_path: Path, traces: str, runs: bool
) -> None:
    """otelcol's testdata/otelcol-invalidprop.yaml: upstream's config takes
    any propagator name; its service refuses all but ``tracecontext`` and
    ``b3`` when it creates its tracer provider (not at all with traces at
    level none), so validate passes and running fails."""
    text = _config().replace("    metrics:\n", f"    traces: {traces}\n    metrics:\n")
    path = _write(tmp_path, text)
    validated = run_cli("validate", "--config", str(path))
    assert (validated.returncode, validated.stdout) == (0, "config is valid\n"), validated.stderr
    if runs:
        assert CollectorProcess(tmp_path, text).wait_ready().terminate() == 0
        return
    result = run_cli("--config", str(path))
    assert result.returncode == 1
    assert "failed to create tracer provider: unsupported trace propagator" in result.stderr
    assert "Setting up own telemetry" not in result.stderr


@pytest.mark.parametrize(
    ("prometheus", "problem"),
    [
        ("{port: 8888}", "host must be specified"),
        ("{host: 127.0.0.1}", "port must be specified"),
        ("{host: null, port: 8888}", "host must be specified"),
    ],
)
def test_a_prometheus_reader_without_host_or_port_is_valid_but_stops_the_collector(
    tmp_path: Path, prometheus: str, problem: str
) -> None:
    """Upstream's pull reader has no default host or port: its config takes
    one without them, and its meter provider refuses it when the service
    starts (not at all with metrics at level none)."""
    readers = f"      readers: [{{pull: {{exporter: {{prometheus: {prometheus}}}}}}}]\n"
    text = _config().replace("      level: none\n", readers)
    path = _write(tmp_path, text)
    validated = run_cli("validate", "--config", str(path))
    assert (validated.returncode, validated.stdout) == (0, "config is valid\n"), validated.stderr
    result = run_cli("--config", str(path))
    assert result.returncode == 1
    assert f"failed to create meter provider: {problem}" in result.stderr
    assert "Serving metrics" not in result.stderr
    off = text.replace("    metrics:\n", "    metrics:\n      level: none\n")
    assert CollectorProcess(tmp_path / "off", off).wait_ready().terminate() == 0


def test_feature_gates_are_accepted_and_each_reported_as_ignored(tmp_path: Path) -> None:
    path = _write(tmp_path, _config())
    result = run_cli(
        "validate", "--config", str(path), "--feature-gates=+a.b,-c", "--feature-gates", "d"
    )
    assert (result.returncode, result.stdout) == (0, "config is valid\n"), result.stderr
    assert [line.split("'")[1] for line in result.stderr.splitlines()] == ["+a.b", "-c", "d"]
    assert "registers no feature gates" in result.stderr


def test_dry_run_starts_nothing(tmp_path: Path) -> None:
    port = free_port()
    path = _write(tmp_path, _config(port=port))
    result = run_cli("--config", str(path), "--dry-run")
    assert result.returncode == 0, result.stderr
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))  # still free: nothing listened


def test_a_port_in_use_stops_start_with_the_services_words(tmp_path: Path) -> None:
    """Upstream's service wraps what a component's Start returned: ``cannot
    start pipelines: ...`` for a receiver, ``failed to start extensions:
    ...`` for an extension (health_check adds its own words)."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = f"listen tcp 127.0.0.1:{port}: bind: address already in use"
        receiver = run_cli("--config", str(_write(tmp_path, _config(port=port))))
        assert receiver.returncode == 1, receiver.stderr
        assert f"cannot start pipelines: {busy}" in receiver.stderr
        # The kind as Go's component.Kind prints it.
        assert f'"Failed to start component" error="{busy}" type=Receiver id=otlp' in (
            receiver.stderr
        )
        extension = _config(extra=f"extensions:\n  zpages:\n    endpoint: 127.0.0.1:{port}\n")
        extension = extension.replace("service:\n", "service:\n  extensions: [zpages]\n")
        failed = run_cli("--config", str(_write(tmp_path, extension, "ext.yaml")))
        assert failed.returncode == 1, failed.stderr
        assert f"failed to start extensions: {busy}" in failed.stderr
        assert "Failed to start extension" in failed.stderr


def _service_log(text: str) -> list[str]:
    """The service's own lines (not its components'): message and fields."""
    return [
        line.split(" msg=", 1)[1]
        for line in text.splitlines()
        if " logger=sluice.collector msg=" in line
    ]


def test_the_service_logs_its_start_and_shutdown_as_upstream(tmp_path: Path) -> None:
    """Upstream's service.Start and Shutdown, and its extensions' Start and
    Shutdown: each extension is logged as it starts, with its kind and name;
    every shutdown ends with "Shutdown complete.", also after a component
    failed to start."""
    extension = _config(extra=f"extensions:\n  zpages:\n    endpoint: 127.0.0.1:{free_port()}\n")
    text = extension.replace("service:\n", "service:\n  extensions: [zpages]\n")
    collector = CollectorProcess(tmp_path, text).wait_ready()
    assert collector.terminate() == 0
    lines = _service_log(collector.stderr())
    cpus = len(os.sched_getaffinity(0))
    assert lines[2] == f'"Starting sluice-collector..." Version={__version__} NumCPU={cpus}'
    assert lines[3:] == [
        '"Starting extensions..."',
        '"Extension is starting..." kind=extension name=zpages',
        '"Extension started." kind=extension name=zpages',
        '"Everything is ready. Begin running and processing data."',
        '"Received signal from OS" signal=terminated',
        '"Starting shutdown..."',
        '"Stopping extensions..."',
        '"Shutdown complete."',
    ]
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        failed = run_cli("--config", str(_write(tmp_path, _config(port=taken.getsockname()[1]))))
    assert failed.returncode == 1
    lines = _service_log(failed.stderr)
    assert lines[3] == '"Starting extensions..."'
    assert lines[4].startswith('"Failed to start component"')
    assert lines[5:8] == [
        '"Starting shutdown..."',
        '"Stopping extensions..."',
        '"Shutdown complete."',
    ]
    assert lines[8].startswith('"cannot start the collector: cannot start pipelines: ')


def test_a_component_whose_shutdown_fails_makes_the_collector_exit_1(tmp_path: Path) -> None:
    """Upstream's service.Shutdown returns the components' shutdown errors
    ("failed to shutdown pipelines: ..."), after stopping everything and
    logging "Shutdown complete."; the collector's Run returns them and its
    main exits 1 with them."""
    repo = Path(__file__).resolve().parents[2]
    program = tmp_path / "failing-collector"
    program.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"sys.path.insert(0, {str(repo)!r})\n"
        "from sluice.collector.cli import main\n"
        "from sluice.collector.distribution import BUILTIN, Distribution\n"
        "from tests.collector.failing_shutdown import PACKAGES\n"
        "mine = Distribution('failing-collector', '', '0', (*BUILTIN, *PACKAGES))\n"
        "sys.exit(main(distribution=mine))\n"
    )
    program.chmod(0o755)
    text = _config(processors="[failingproc]").replace(
        "processors:\n  batch:\n    timeout: 1s\n",
        "processors:\n  failingproc:\n    shutdown_error: flush failed\n",
    )
    collector = CollectorProcess(tmp_path, text, program=program).wait_ready()
    assert collector.terminate() == 1
    lines = _service_log(collector.stderr())
    assert lines[-4:] == [
        '"Starting shutdown..."',
        '"Stopping extensions..."',
        '"Shutdown complete."',
        '"collector server run finished with error: failed to shutdown service after error: '
        'failed to shutdown pipelines: flush failed"',
    ]


def test_each_component_made_logs_its_stability_before_the_service_starts(
    tmp_path: Path,
) -> None:
    """Upstream's builders log the stability of each component they create,
    at info for development (and below), at debug from alpha on; exporters
    and receivers once per signal, processors once per pipeline, when the
    service is made, before "Starting ..."."""
    text = _config().replace(
        "      exporters: [debug]\n",
        "      exporters: [debug]\n    traces:\n      receivers: [otlp]\n"
        "      processors: [batch]\n      exporters: [debug]\n",
    )
    collector = CollectorProcess(tmp_path, text).wait_ready()
    collector.terminate()
    lines = [line.split(" logger=", 1)[1] for line in collector.stderr().splitlines()]
    development = [i for i, line in enumerate(lines) if "Development component" in line]
    assert [lines[i] for i in development] == [
        f'sluice.collector.exporter.debug msg="Development component. May change in the future."'
        f" data_type={signal}"
        for signal in ("logs", "traces")
    ]
    assert development[-1] < next(i for i, line in enumerate(lines) if "Starting sluice" in line)
    assert "Beta component" not in collector.stderr()  # debug level
    debug = _config().replace("    metrics:\n", "    logs:\n      level: debug\n    metrics:\n")
    collector = CollectorProcess(tmp_path / "debug", debug).wait_ready()
    collector.terminate()
    assert (
        'logger=sluice.collector.processor.batch msg="Beta component. May change in the future."'
        " pipeline=logs"
    ) in collector.stderr()
    assert (
        'logger=sluice.collector.receiver.otlp msg="Beta component. May change in the future."'
        " data_type=logs"
    ) in collector.stderr()


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            ("timeout: 1s", "timeout: 1s\n    send_batch_sizee: 10"),
            "processors::batch: '' has invalid keys: send_batch_sizee",
        ),
        (
            ("timeout: 1s", "send_batch_size: lots"),
            "processors::batch::send_batch_size: 'send_batch_size' expected type 'uint32', "
            "got unconvertible type 'string', value: 'lots'",
        ),
        (
            ("  batch:\n", "  batch:\n  foo:\n"),
            'processors::foo: unknown type: "foo" for id: "foo" (valid values: '
            "[attributes batch filter memory_limiter policy resource])",
        ),
        (
            ("processors: [batch]", "processors: [batch, x]"),
            'service::pipelines::logs: references processor "x" which is not configured',
        ),
        (
            ("exporters: [debug]", "exporters: [otlphttp]"),
            'service::pipelines::logs: references exporter "otlphttp" which is not configured',
        ),
        (
            ("receivers: [otlp]", "receivers: []"),
            'service::pipelines config validation failed: pipeline "logs": must have at least '
            "one receiver",
        ),
        (
            ("timeout: 1s", "timeout: ${env:SLUICE_UNSET_FOR_TEST}"),
            "processors::batch::timeout: environment variable SLUICE_UNSET_FOR_TEST is not set",
        ),
        (
            ("timeout: 1s", "timeout: ${env:SLUICE_UNSET_FOR_TEST:-soon}"),
            'processors::batch::timeout: time: invalid duration "soon"',
        ),
        (
            ("    logs:\n", "    logz:\n"),
            'service::pipelines config validation failed: pipeline "logz": unknown signal "logz"',
        ),
    ],
    ids=[
        "typo-key",
        "wrong-type",
        "unknown-component",
        "unconfigured-processor",
        "unconfigured-exporter",
        "no-receiver",
        "unset-env",
        "unset-env-with-bad-default",
        "unknown-signal",
    ],
)
def test_config_errors_name_the_file_the_key_and_the_problem(
    tmp_path: Path, edit: tuple[str, str], message: str
) -> None:
    text = _config()
    assert edit[0] in text
    path = _write(tmp_path, text.replace(edit[0], edit[1], 1))
    for args in (["validate", "--config", str(path)], ["--config", str(path)]):
        result = run_cli(*args)
        assert result.returncode == 1, result.stderr
        assert result.stdout == ""
        assert message in result.stderr, result.stderr
        assert str(path) in result.stderr


def test_a_refused_component_is_not_also_reported_as_not_configured() -> None:
    """otelcol testdata/otelcol-invalid-components.yaml: upstream stops at
    the section that does not decode (an unknown type, the logging
    exporter); the pipelines and extensions naming the component are not
    reported as naming one that is not configured."""
    text = (
        _config(processors="[batch, nosuchprocessor]")
        .replace("  batch:\n", "  batch:\n  nosuchprocessor:\n")
        .replace("  debug:\n", "  debug:\n  logging:\n")
        .replace("exporters: [debug]", "exporters: [debug, logging]")
        .replace("service:\n", "extensions:\n  nosuchextension:\nservice:\n")
        .replace("service:\n", "service:\n  extensions: [nosuchextension]\n")
    )
    assert _loaded(text)[1] == [
        'processors::nosuchprocessor: unknown type: "nosuchprocessor" for id: '
        '"nosuchprocessor" (valid values: [attributes batch filter memory_limiter policy '
        "resource])",
        "exporters::logging: the logging exporter has been deprecated, use the debug exporter "
        "instead",
        'extensions::nosuchextension: unknown type: "nosuchextension" for id: '
        '"nosuchextension" (valid values: [basicauth bearertokenauth health_check '
        "healthcheckv2 pprof zpages])",
    ]


def test_pipelines_then_extensions_then_references_as_upstream_checks_them() -> None:
    """Upstream's Config.Validate: the service's own checks of its pipelines
    first, then the extensions it names, then what each pipeline names."""
    text = _config().replace("service:\n", "service:\n  extensions: [zpages]\n")
    empty = text.replace("receivers: [otlp]", "receivers: []")
    assert _loaded(empty)[1] == [
        'service::pipelines config validation failed: pipeline "logs": must have at least '
        "one receiver",
        'service::extensions: references extension "zpages" which is not configured',
    ]
    unconfigured = text.replace("processors: [batch]", "processors: [batch/2]")
    assert _loaded(unconfigured)[1] == [
        'service::extensions: references extension "zpages" which is not configured',
        'service::pipelines::logs: references processor "batch/2" which is not configured',
    ]


def test_a_default_from_the_environment_applies(tmp_path: Path) -> None:
    path = _write(tmp_path, _config().replace("timeout: 1s", "timeout: ${env:SLUICE_UNSET:-2s}"))
    assert run_cli("validate", "--config", str(path)).returncode == 0


def test_every_problem_is_reported_not_just_the_first(tmp_path: Path) -> None:
    text = _config().replace("timeout: 1s", "timeout: 1x\n    send_batch_size: many")
    result = run_cli("validate", "--config", str(_write(tmp_path, text)))
    assert result.returncode == 1
    assert 'timeout: time: unknown unit "x" in duration "1x"' in result.stderr
    assert "send_batch_size: 'send_batch_size' expected type 'uint32'" in result.stderr


def test_policy_provider_errors_have_key_paths(tmp_path: Path) -> None:
    text = _config("[policy]").replace(
        "  batch:\n    timeout: 1s\n",
        "  policy:\n    providers:\n      - type: file\n        id: x\n",
    )
    result = run_cli("validate", "--config", str(_write(tmp_path, text)))
    assert result.returncode == 1
    assert "processors::policy::providers[0]:" in result.stderr
    assert "'path' is required" in result.stderr


def test_files_merge_and_set_overrides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = _write(tmp_path, _config())
    broken = _write(tmp_path, "processors:\n  batch:\n    timeout: 1x\n", "override.yaml")
    result = run_cli("validate", "--config", str(base), "--config", str(broken))
    assert result.returncode == 1
    assert f'{broken}: processors::batch::timeout: time: unknown unit "x"' in result.stderr
    fixed = run_cli(
        "validate",
        "--config",
        str(base),
        "--config",
        str(broken),
        "--set",
        "processors.batch.timeout=3s",
    )
    assert fixed.returncode == 0, fixed.stderr
    snippet = run_cli(
        "validate", "--config", str(base), "--config", "yaml:processors::batch::timeout: 1y"
    )
    assert snippet.returncode == 1
    assert "yaml:processors::batch::timeout: 1y: processors::batch::timeout" in snippet.stderr
    env = run_cli("validate", "--config", "env:SLUICE_CONFIG", env={"SLUICE_CONFIG": _config()})
    assert env.returncode == 0, env.stderr


def test_connectors_must_be_used_on_both_sides(tmp_path: Path) -> None:
    text = _config().replace(
        "exporters:\n  debug:\n", "exporters:\n  debug:\nconnectors:\n  forward:\n"
    )
    text = text.replace("exporters: [debug]", "exporters: [debug, forward]")
    result = run_cli("validate", "--config", str(_write(tmp_path, text)))
    assert result.returncode == 1
    assert (
        'connector "forward" used as exporter in logs pipeline but not used in any supported '
        "receiver pipeline"
    ) in result.stderr


def _pipelines(pipelines: str, connectors: str = "  forward:\n") -> list[str]:
    """The problems of a config with these pipelines (and connectors)."""
    text = _config()
    text = text[: text.index("  pipelines:")] + "  pipelines:\n" + pipelines
    text = text.replace(
        "exporters:\n  debug:\n", f"exporters:\n  debug:\nconnectors:\n{connectors}"
    )
    return cli.load([f"yaml:{text}"], [], Factories.load())[1]


def test_a_connector_used_on_one_side_names_the_signal_not_the_pipeline() -> None:
    """Upstream's graph_test cases (orphaned and partially orphaned
    connectors): the message names the pipelines' signal, once per signal."""
    problems = _pipelines(
        "    traces/in: {receivers: [otlp], exporters: [forward]}\n"
        "    traces/out: {receivers: [forward], exporters: [debug]}\n"
        "    metrics/in: {receivers: [otlp], exporters: [forward]}\n"
        "    metrics/other: {receivers: [otlp], exporters: [forward]}\n"
    )
    assert [p[p.index("connectors::") :] for p in problems] == [
        'connectors::forward: connector "forward" used as exporter in metrics pipeline but not'
        " used in any supported receiver pipeline"
    ]
    problems = _pipelines(
        "    logs/in: {receivers: [otlp], exporters: [debug]}\n"
        "    logs/out: {receivers: [forward], exporters: [debug]}\n"
    )
    assert [p[p.index("connectors::") :] for p in problems] == [
        'connectors::forward: connector "forward" used as receiver in logs pipeline but not'
        " used in any supported exporter pipeline"
    ]


def test_pipelines_feeding_themselves_are_a_cycle_named_as_upstream_names_it() -> None:
    """Upstream's graph_test cycle cases: the first cycle, from a connector."""
    [problem] = _pipelines(
        "    logs: {receivers: [otlp, forward], processors: [batch], exporters: [forward]}\n"
    )
    assert problem.endswith(
        ': service::pipelines: cycle detected: connector "forward" (logs to logs) -> '
        'processor "batch" in pipeline "logs" -> connector "forward" (logs to logs)'
    )
    [problem] = _pipelines(
        "    traces/in: {receivers: [otlp], processors: [batch], exporters: [forward]}\n"
        "    traces/1: {receivers: [forward], processors: [batch], exporters: [forward/1]}\n"
        "    traces/2: {receivers: [forward/1], processors: [batch],"
        " exporters: [forward/2, forward]}\n"
        "    traces/out: {receivers: [forward/2], processors: [batch], exporters: [debug]}\n",
        "  forward:\n  forward/1:\n  forward/2:\n",
    )
    assert problem.endswith(
        ': service::pipelines: cycle detected: connector "forward/1" (traces to traces) -> '
        'processor "batch" in pipeline "traces/2" -> connector "forward" (traces to traces) -> '
        'processor "batch" in pipeline "traces/1" -> connector "forward/1" (traces to traces)'
    )


def test_connectors_and_cycles_are_found_before_components_are_created() -> None:
    """Upstream's graph checks connectors as it lays out the nodes, then
    sorts them (stopping at a cycle), and only then creates components: a
    processor's creation problem comes after both."""
    text = _config().replace(
        "  batch:\n    timeout: 1s\n",
        "  batch:\n    timeout: 1s\n  resource:\n    attributes: [{key: a, action: insert}]\n",
    )
    text = text.replace("exporters:\n  debug:\n", "exporters:\n  debug:\nconnectors:\n  forward:\n")
    created = (
        "processors::resource::attributes[0]: error creating AttrProc. Either field "
        '"value", "from_attribute" or "from_context" setting must be specified for 0-th '
        'action (creating it for pipeline "logs")'
    )
    cyclic = text.replace("receivers: [otlp]", "receivers: [otlp, forward]")
    cyclic = cyclic.replace("processors: [batch]", "processors: [resource]")
    cyclic = cyclic.replace("exporters: [debug]", "exporters: [debug, forward]")
    assert _loaded(cyclic)[1] == [
        'service::pipelines: cycle detected: connector "forward" (logs to logs) -> '
        'processor "resource" in pipeline "logs" -> connector "forward" (logs to logs)',
        created,
    ]
    orphan = text.replace("processors: [batch]", "processors: [resource]")
    orphan = orphan.replace("exporters: [debug]", "exporters: [debug, forward]")
    assert _loaded(orphan)[1] == [
        'connectors::forward: connector "forward" used as exporter in logs pipeline but not '
        "used in any supported receiver pipeline",
        created,
    ]


TYPES = {Kind.RECEIVER: "otlp", Kind.PROCESSOR: "batch", Kind.EXPORTER: "debug"}


class _TracesOnly:
    """A built-in factory that supports traces only (as upstream's graph_test
    "bf" components, which support no signal)."""

    stability: ClassVar[Mapping[str, str]] = {"traces": "beta"}


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        (
            Kind.RECEIVER,
            'failed to create "otlp" receiver for data type "logs": telemetry type is not'
            " supported",
        ),
        (
            Kind.PROCESSOR,
            'failed to create "batch" processor, in pipeline "logs/2": telemetry type is not'
            " supported",
        ),
        (
            Kind.EXPORTER,
            'failed to create "debug" exporter for data type "logs": telemetry type is not'
            " supported",
        ),
    ],
)
def test_a_component_in_a_pipeline_of_a_signal_it_lacks_is_named_as_upstream_names_it(
    kind: Kind, message: str
) -> None:
    """Upstream's graph_test not_supported cases: a processor is named with
    its pipeline, a receiver or exporter with the pipeline's signal."""
    factories = Factories.load()
    factory = factories.by_kind[kind][TYPES[kind]]
    factories.by_kind[kind][factory.component_type] = type(
        "TracesOnly", (_TracesOnly, type(factory)), {}
    )()
    text = _config().replace("    logs:\n", "    logs/2:\n")
    config, [problem] = cli.load([f"yaml:{text}"], [], factories)
    assert config is None
    assert problem.endswith(f": service::pipelines::logs/2: {message}")


def test_unreadable_and_malformed_config_files(tmp_path: Path) -> None:
    missing = run_cli("validate", "--config", str(tmp_path / "nope.yaml"))
    assert missing.returncode == 1
    assert f"unable to read the file file:{tmp_path}/nope.yaml: open " in missing.stderr
    bad = run_cli("validate", "--config", str(_write(tmp_path, "receivers: [\n")))
    assert bad.returncode == 1
    assert "not valid YAML (line" in bad.stderr


def test_components_lists_every_builtin_with_stability() -> None:
    result = run_cli("components")
    assert result.returncode == 0, result.stderr
    doc = yaml.safe_load(result.stdout)
    assert list(doc) == [
        "buildinfo",
        "receivers",
        "processors",
        "exporters",
        "connectors",
        "extensions",
    ]
    assert set(doc["buildinfo"]) == {"command", "description", "version"}
    names = {kind: [c["name"] for c in doc[kind]] for kind in list(doc)[1:]}
    assert names == {
        "receivers": ["otlp"],
        "processors": ["attributes", "batch", "filter", "memory_limiter", "policy", "resource"],
        "exporters": ["debug", "otlp", "otlphttp"],
        "connectors": ["forward"],
        "extensions": [
            "basicauth",
            "bearertokenauth",
            "health_check",
            "healthcheckv2",
            "pprof",
            "zpages",
        ],
    }
    policy = next(c for c in doc["processors"] if c["name"] == "policy")
    assert policy["stability"] == {
        "logs": "Alpha",
        "metrics": "Development",
        "traces": "Development",
    }
    assert all(c["module"] for kind in names for c in doc[kind])
    forward = doc["connectors"][0]["stability"]
    assert forward["logs-to-logs"] == "Beta" and forward["logs-to-metrics"] == "Undefined"


def test_components_is_written_as_upstreams_yaml_v3_writes_it() -> None:
    """Module with its version (the builder manifest's gomod), sequences
    indented under their key, no line wrapping."""
    result = run_cli("components")
    assert result.stdout.startswith(
        "buildinfo:\n"
        "    command: sluice-collector\n"
        "    description: 'Sluice collector: OpenTelemetry Collector distribution with the"
        " policy processor'\n"
        "    version: 0.1.0\n"
        "receivers:\n"
        "    - name: otlp\n"
        "      module: go.opentelemetry.io/collector/receiver/otlpreceiver v0.115.0\n"
        "      stability:\n"
        "        logs: Beta\n"
        "        metrics: Stable\n"
        "        traces: Stable\n"
        "processors:\n"
    ), result.stdout
    assert (
        "      module: github.com/usetero/tero-collector-distro/processor/policyprocessor v0.2.0\n"
        in result.stdout
    )
    assert result.stdout.endswith(
        "    - name: zpages\n"
        "      module: go.opentelemetry.io/collector/extension/zpagesextension v0.115.0\n"
        "      stability:\n"
        "        extension: Beta\n"
    )


def test_version_and_help() -> None:
    # cobra's version flag, its shorthand, and the boolean flag's explicit forms
    for args in (["--version"], ["-v"], ["-v=true"], ["--version=1", "--config", "x.yaml"]):
        version = run_cli(*args)
        assert version.returncode == 0 and version.stdout == "sluice-collector version 0.1.0\n"
    run = run_cli("--version=false", "--dry-run", "--config", "yaml:a: b")
    assert "sluice-collector version" not in run.stdout and run.returncode == 1
    usage = run_cli("--help")
    assert usage.returncode == 0
    for flag in ("--config", "--set", "--dry-run", "validate", "components"):
        assert flag in usage.stdout


def test_the_builtin_default_config_is_valid() -> None:
    result = run_cli("validate")
    assert (result.returncode, result.stdout) == (0, "config is valid\n"), result.stderr


def _telemetry(metrics_level: str, logs_level: str) -> tuple[Any, list[str]]:
    text = _config().replace(
        "    metrics:\n      level: none\n",
        f"    metrics:\n      level: {metrics_level}\n      address: 127.0.0.1:0\n"
        f"    logs:\n      level: {logs_level}\n",
    )
    return cli.load([f"yaml:{text}"], [], Factories.load())


def test_telemetry_levels_are_read_as_upstream_reads_them() -> None:
    """Metrics levels in any case (upstream lowercases them); zap's log
    levels including dpanic, panic and fatal."""
    for metrics_level, logs_level in (
        ("Detailed", "fatal"),
        ("NONE", "DPANIC"),
        ("basic", "panic"),
    ):
        config, problems = _telemetry(metrics_level, logs_level)
        assert problems == [] and config is not None, problems
    config, _ = _telemetry("NONE", "info")
    assert config is not None and config.metrics_endpoints == ()
    [problem] = _telemetry("Verbose", "info")[1]
    assert problem.endswith(': service::telemetry::metrics::level: unknown metrics level "verbose"')


@pytest.fixture
def root_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:], root.level = handlers, level


def _logged_of(text: str, capsys: pytest.CaptureFixture[str], count: int) -> int:
    """Lines the collector's log writes for `count` identical records on `text`'s config."""
    config, problems = cli.load([f"yaml:{text}"], [], Factories.load())
    assert config is not None, problems
    capsys.readouterr()
    service.log_as(config)
    for _ in range(count):
        logging.getLogger("sluice.collector.test").info("same message")
    return len(capsys.readouterr().err.splitlines())


def test_the_collectors_log_is_sampled_as_upstreams(
    capsys: pytest.CaptureFixture[str], root_logging: None
) -> None:
    """Upstream's default: zap's sampler with a 10 s tick, the first 10
    records of a message, then every 100th."""
    assert _logged_of(_config(), capsys, 250) == 10 + 2
    sampling = "    logs:\n      sampling:\n        initial: 3\n        thereafter: 10\n"
    text = _config().replace("  telemetry:\n", "  telemetry:\n" + sampling)
    assert _logged_of(text, capsys, 25) == 3 + 2
    off = text.replace("initial: 3", "enabled: false")
    assert _logged_of(off, capsys, 25) == 25


def test_a_config_may_take_sections_from_files(tmp_path: Path) -> None:
    """As upstream's ``${file:...}``: a section (here exporters, and the
    pipelines with an env reference inside) held in another file."""
    _write(tmp_path, "debug:\n  verbosity: detailed\n", "exporters.yaml")
    _write(tmp_path, "logs:\n  receivers: ${env:RECEIVERS}\n  exporters: [debug]\n", "p.yaml")
    text = _config().replace(
        "exporters:\n  debug:\n", f"exporters: ${{file:{tmp_path}/exporters.yaml}}\n"
    )
    text = text[: text.index("  pipelines:")] + "  pipelines: ${file:${env:BASE}/p.yaml}\n"
    path = _write(tmp_path, text)
    result = run_cli(
        "validate", "--config", str(path), env={"BASE": str(tmp_path), "RECEIVERS": "[otlp]"}
    )
    assert (result.returncode, result.stdout) == (0, "config is valid\n"), result.stderr
    result = run_cli(
        "validate", "--config", str(path), env={"BASE": str(tmp_path), "RECEIVERS": "[x]"}
    )
    assert 'references receiver "x" which is not configured' in result.stderr


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 serving `tmp_path`'s files."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_configs_and_sections_may_come_over_http(tmp_path: Path, served: str) -> None:
    """As upstream's http and https providers: ``--config URL`` and
    ``${http://...}`` are fetched (200 only)."""
    _write(tmp_path, "debug:\n  verbosity: basic\n", "exporters.yaml")
    _write(
        tmp_path,
        _config().replace(
            "exporters:\n  debug:\n", "exporters: ${" + served + "/exporters.yaml}\n"
        ),
    )
    config, problems = cli.load([f"{served}/collector.yaml"], [], Factories.load())
    assert problems == [] and config is not None
    _, problems = cli.load([f"{served}/missing.yaml"], [], Factories.load())
    assert problems == [
        f'--config {served}/missing.yaml: failed to load resource from uri "{served}/missing.yaml". '
        "status code: 404"
    ]


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://exa mple/c.yaml", 'invalid character " " in host name'),
        ("http://a|b/c.yaml", 'invalid character "|" in host name'),
        ("http://127.0.0.1:4x/c.yaml", 'invalid port ":4x" after host'),
        ("http://127.0.0.1/c\t.yaml", "net/url: invalid control character in URL"),
    ],
)
def test_a_url_that_does_not_parse_is_named_as_upstreams_provider_names_it(
    url: str, reason: str
) -> None:
    """As upstream's http(s) providers, which check a URL with Go's
    url.ParseRequestURI before any request: a config problem in Go's words,
    never a traceback (an 'exa mple' host stopped the program with one)."""
    ways = [([url], [], f"--config {url}: ")]
    if "\t" not in url:  # YAML takes no tab there
        ways.append((["yaml:receivers: {}"], ["exporters=${" + url + "}"], "exporters: "))
    for configs, sets, where in ways:
        _, problems = cli.load(configs, sets, Factories.load())
        shown = url.replace("\t", "\\t")  # as Go's %q
        assert len(problems) == 1
        assert problems[0].endswith(f'{where}invalid uri "{shown}": parse "{shown}": {reason}')


@pytest.mark.parametrize("port", ["99999999999999999999", "18446744073709551617"])
def test_a_port_past_any_port_is_a_download_problem_not_a_traceback(port: str) -> None:
    """Go's url.ParseRequestURI takes any digits as a port, and its client
    then fails to dial (``invalid port``); Python's socket raised an
    OverflowError for a port past a C long, which stopped the collector
    with a traceback."""
    url = f"http://127.0.0.1:{port}/c.yaml"
    ways = [([url], [], f"--config {url}: ")]
    ways.append((["yaml:receivers: {}"], ["exporters=${" + url + "}"], "exporters: "))
    for configs, sets, where in ways:
        _, problems = cli.load(configs, sets, Factories.load())
        assert len(problems) == 1
        assert f'{where}unable to download the file via HTTP GET for uri "{url}": ' in problems[0]


def test_a_space_in_a_urls_path_is_escaped_as_gos_client_escapes_it(
    tmp_path: Path, served: str
) -> None:
    """Go's url parser takes a space in the path and its client sends it as
    %20; the request was refused before it was sent."""
    _write(tmp_path, _config(), "my collector.yaml")
    config, problems = cli.load([f"{served}/my collector.yaml"], [], Factories.load())
    assert problems == [] and config is not None


def _loaded(text: str) -> tuple[Any, list[str]]:
    """The config from a file holding `text`, or its problems without the file's name."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory, "collector.yaml")
        path.write_text(text)
        config, problems = cli.load([str(path)], [], Factories.load())
    return config, [p.removeprefix(f"{path}: ") for p in problems]


def _problem(text: str) -> str:
    config, problems = _loaded(text)
    assert config is None and problems
    return problems[0]


@pytest.mark.parametrize(
    ("key", "parsed"),
    [
        ("  debug   /   valid_name  ", "debug/valid_name"),
        ("debug/a/b", "debug/a/b"),
        ("debug/tenant-1.eu_west:x", "debug/tenant-1.eu_west:x"),
        ("debug/ünïcode", "debug/ünïcode"),
    ],
)
def test_component_ids_are_trimmed_and_names_may_hold_a_slash(key: str, parsed: str) -> None:
    """As upstream's ``component.ID``: the id splits at its first ``/``, each
    part is trimmed, and the pipeline's reference parses alike."""
    text = _config().replace("exporters: [debug]", f"exporters: ['{key}']")
    config, problems = _loaded(text.replace("exporters:\n  debug:\n", f"exporters:\n  '{key}':\n"))
    assert problems == [] and config is not None
    [exporter] = config.pipelines[ComponentID("logs")].exporters
    assert str(exporter) == parsed


LONG = "ü" * 520
"""520 characters, 1,040 bytes: upstream counts bytes."""


@pytest.mark.parametrize(
    ("key", "problem"),
    [
        ("debug/a+b", 'in "a+b" id: invalid character(s) in name "a+b"'),
        ("debug/a<b>", 'in "a<b>" id: invalid character(s) in name "a<b>"'),
        ("debug/a\u200bb", 'in "a\u200bb" id: invalid character(s) in name "a\u200bb"'),
        ("debug/\U0001f600", 'in "\U0001f600" id: invalid character(s) in name "\U0001f600"'),
        ("debug/a b", 'in "a b" id: invalid character(s) in name "a b"'),
        ("de bug/a", 'in "de bug/a" id: invalid character(s) in type "de bug"'),
        (
            "debug/" + LONG,
            f'in "{LONG}" id: name "{LONG}" is longer than 1024 characters (1040 characters)',
        ),
        ("debug/ ", 'in "debug/ " id: the part after / should not be empty'),
        (" /a", 'in " /a" id: the part before / should not be empty'),
    ],
)
def test_component_names_refuse_separators_controls_and_symbols(key: str, problem: str) -> None:
    text = _config().replace("exporters:\n  debug:\n", f'exporters:\n  "{key}":\n')
    assert _problem(text) == f"exporters::{key}: {problem}"


def test_ids_equal_once_trimmed_are_a_duplicate_not_a_silent_overwrite() -> None:
    text = _config().replace("exporters:\n  debug:\n", "  ' batch ': {}\nexporters:\n  debug:\n")
    assert _problem(text).endswith('processors: duplicate name " batch " after unmarshaling batch')
    text = _config() + "    ' logs':\n      receivers: [otlp]\n      exporters: [debug]\n"
    assert _problem(text).endswith(
        'service::pipelines: duplicate name " logs" after unmarshaling logs'
    )


def test_a_receiver_exporter_or_extension_listed_twice_is_one() -> None:
    """Upstream's graph keys them by id: data is received and sent once, and
    an extension is started once."""
    text = _config().replace("exporters: [debug]", "exporters: [debug, ' debug']")
    text = text.replace("receivers: [otlp]", "receivers: [otlp, otlp]")
    text = text.replace(
        "service:\n", "extensions:\n  zpages:\nservice:\n  extensions: [zpages, zpages]\n"
    )
    config, problems = _loaded(text)
    assert problems == [] and config is not None
    pipeline = config.pipelines[ComponentID("logs")]
    assert (pipeline.receivers, pipeline.exporters) == (
        (ComponentID("otlp"),),
        (ComponentID("debug"),),
    )
    assert config.extensions == (ComponentID("zpages"),)


def _metrics(section: str) -> tuple[Any, list[str]]:
    return _loaded(_config().replace("    metrics:\n      level: none\n", section))


def test_metrics_readers_as_upstream_reads_them() -> None:
    config, problems = _metrics("    metrics:\n      level: normal\n")
    assert problems == [] and config.metrics_endpoints == ("0.0.0.0:8888",)
    config, problems = _metrics("    metrics:\n      readers: []\n")
    assert problems == [] and config.metrics_endpoints == (), "no readers: no metrics served"
    reader = "      readers:\n        - pull:\n            exporter:\n              prometheus:\n"
    config, problems = _metrics(
        f"    metrics:\n{reader}                host: 127.0.0.1\n                port: 9999\n"
        "                without_units: true\n"
    )
    assert problems == [] and config.metrics_endpoints == ("127.0.0.1:9999",)
    config, problems = _metrics(
        f"    metrics:\n      address: 127.0.0.1:6666\n{reader}                host: 127.0.0.1\n"
        "                port: 8888\n"
    )
    assert problems == [] and config.metrics_endpoints == ("127.0.0.1:8888", "127.0.0.1:6666")
    config, problems = _metrics("    metrics:\n      address: 127.0.0.1:6666\n      readers: []\n")
    assert problems == [] and config.metrics_endpoints == ("127.0.0.1:6666",)
    _, problems = _metrics(f"    metrics:\n{reader}                bogus: 1\n")
    assert problems[0].endswith(
        "service::telemetry::metrics::readers[0]::pull::exporter::prometheus: "
        "'metrics.readers[0].pull.exporter.prometheus' has invalid keys: bogus"
    )
    _, problems = _metrics(
        f"    metrics:\n{reader}                host: localhost\n                port: 99999\n"
    )
    assert problems == [
        "service::telemetry::metrics: address localhost:99999: port 99999 out of range"
    ]
    _, problems = _metrics("    metrics:\n      level: none\n      address: nowhere\n")
    assert 'failing to parse metrics address "nowhere"' in problems[0]


@pytest.mark.parametrize(
    ("address", "problem"),
    [
        (
            "1212:212121:2121",
            'failing to parse metrics address "1212:212121:2121": address 1212:212121:2121: '
            "too many colons in address",
        ),
        (
            "[::1]:x:1",
            'failing to parse metrics address "[::1]:x:1": address [::1]:x:1: too many colons '
            "in address",
        ),
        (
            "[::1:8888",
            "failing to parse metrics address \"[::1:8888\": address [::1:8888: missing ']' in "
            "address",
        ),
        (
            "localhost:http",
            'failing to extract the port from the metrics address "localhost:http": '
            'strconv.Atoi: parsing "http": invalid syntax',
        ),
        (
            "localhost:",
            'failing to extract the port from the metrics address "localhost:": strconv.Atoi: '
            'parsing "": invalid syntax',
        ),
    ],
)
def test_the_metrics_address_is_split_as_upstream_splits_it(address: str, problem: str) -> None:
    """v0.115's ``address`` goes through Go's net.SplitHostPort and
    strconv.Atoi, at any level, with their words."""
    _, problems = _metrics(f"    metrics:\n      level: basic\n      address: '{address}'\n")
    assert problems == [f"service::telemetry::metrics: {problem}"]
    _, problems = _metrics(f"    metrics:\n      level: none\n      address: '{address}'\n")
    assert problems == [f"service::telemetry::metrics: {problem}"]


def test_log_levels_in_any_case_and_empty_is_info() -> None:
    for written, level in (("Info", "info"), ("WaRn", "warn"), ("''", "info"), ("DEBUG", "debug")):
        config, problems = _telemetry("none", written)
        assert problems == [] and config.telemetry.logs.level == level
    assert _telemetry("none", "loud")[1][0].endswith(
        'service::telemetry::logs::level: unrecognized level: "loud"'
    )


def test_telemetry_levels_take_the_number_of_their_go_type() -> None:
    """configtelemetry.Level (int32) and zapcore.Level (int8) are integers
    read from text by UnmarshalText: a YAML number is the level of that
    number (Level(2) is Detailed, zap's 2 is error), cut and wrapped as Go's
    conversion, and one no level has is still a level (zap logs nothing
    below it, metrics beyond detailed are on)."""
    for metrics_level, logs_level, metrics, logs in (
        ("2", "2", "Detailed", "error"),
        ("-1", "-1", "None", "debug"),
        ("0", "0", "Basic", "info"),
        ("1.9", "5", "Normal", "fatal"),
        ("4294967297", "257", "Normal", "warn"),
    ):
        config, problems = _telemetry(metrics_level, logs_level)
        assert problems == [] and config is not None, (metrics_level, problems)
        assert (config.telemetry.metrics.level, config.telemetry.logs.level) == (metrics, logs)
    config, problems = _telemetry("7", "-3")
    assert problems == [] and config.metrics_endpoints == ("127.0.0.1:0",)
    assert config.telemetry.logs.level == "debug", "zap's Level(-3) logs every level"
    config, problems = _telemetry("-1", "9")
    assert problems == [] and config.metrics_endpoints == ()
    assert config.telemetry.logs.level == "fatal", "the nearest Sluice has to logging nothing"


def test_a_telemetry_level_of_the_wrong_type_names_its_go_type() -> None:
    [metrics, logs] = _telemetry("true", "[1]")[1]
    assert metrics.endswith(
        "service::telemetry::metrics::level: 'metrics.level' expected type "
        "'configtelemetry.Level', got unconvertible type 'bool', value: 'true'"
    )
    assert logs.endswith(
        "service::telemetry::logs::level: 'logs.level' expected type 'zapcore.Level', "
        "got unconvertible type '[]interface {}', value: '[1]'"
    )
    text = _config().replace("  telemetry:\n", "  telemetry:\n    traces: {level: {a: 1}}\n")
    assert _problem(text).endswith(
        "service::telemetry::traces::level: 'traces.level' expected type "
        "'configtelemetry.Level', got unconvertible type 'map[string]interface {}', "
        "value: 'map[a:1]'"
    )


def test_an_expanded_telemetry_level_is_read_as_a_number(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """confmap's useExpandValue gives an integer field the YAML value of a
    ``${...}``, and its zero when it expands to nothing."""
    monkeypatch.setenv("LEVEL", "2")
    config, problems = _telemetry("${env:LEVEL}", "${env:LEVEL}")
    assert problems == []
    assert (config.telemetry.metrics.level, config.telemetry.logs.level) == ("Detailed", "error")
    monkeypatch.setenv("LEVEL", "")
    config, problems = _telemetry("${env:LEVEL}", "${env:LEVEL}")
    assert problems == []
    assert (config.telemetry.metrics.level, config.telemetry.logs.level) == ("Basic", "info")


@pytest.mark.parametrize(
    ("section", "problem"),
    [
        (
            "    logs:\n      sampling: {foo: 1}\n",
            "logs::sampling: 'logs.sampling' has invalid keys: foo",
        ),
        ("    logs:\n      sampling: {tick: soon}\n", 'invalid duration "soon"'),
        ("    traces: {foo: 1}\n", "service::telemetry::traces: 'traces' has invalid keys: foo"),
        ("    traces: [1]\n", "service::telemetry::traces: 'traces' expected a map, got 'slice'"),
        (
            "    traces: {level: Verbose}\n",
            'service::telemetry::traces::level: unknown metrics level "verbose"',
        ),
        # service.telemetry is a confmap.Unmarshaler in Go: its keys are
        # named from it, not from the config's root.
        (
            "    resource: {a: {b: 1}}\n",
            "service::telemetry::resource::a: 'resource[a]' expected type",
        ),
        (
            "    logs: {development: 1}\n",
            "service::telemetry::logs::development: 'logs.development' expected type "
            "'%!s(bool=false)'",
        ),
    ],
)
def test_telemetry_sections_refuse_unknown_keys_and_wrong_types(section: str, problem: str) -> None:
    text = _config().replace("  telemetry:\n", "  telemetry:\n" + section)
    assert problem in _problem(text)


def test_an_expanded_resource_attribute_is_its_yaml_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """service::telemetry::resource is a map[string]*string upstream: a
    pointer is not a string kind, so confmap's useExpandValue hands it the
    YAML value of a ``${...}``, not its text; a number from the environment
    is refused as a number written in the file is, text and null pass."""
    monkeypatch.setenv("SLUICE_TEST_ID", "12345")
    monkeypatch.setenv("SLUICE_TEST_NAME", "edge-1")
    monkeypatch.setenv("SLUICE_TEST_NONE", "")
    section = "    resource: {a: '${env:SLUICE_TEST_NAME}', b: '${env:SLUICE_TEST_NONE}'}\n"
    config, problems = _loaded(_config().replace("  telemetry:\n", "  telemetry:\n" + section))
    assert problems == [] and config is not None
    assert config.telemetry.resource == {"a": "edge-1", "b": None}
    section = "    resource: {id: '${env:SLUICE_TEST_ID}'}\n"
    assert _problem(_config().replace("  telemetry:\n", "  telemetry:\n" + section)) == (
        "service::telemetry::resource::id: 'resource[id]' expected type 'string', "
        "got unconvertible type 'int', value: '12345'"
    )


README_CONFIG = """\
receivers:
  otlp:
    protocols:
      http:
processors:
  batch:
    send_batch_sizee: 5
    timeout: ${env:BATCH_TIMEOUT}
  foo:
  policy:
    providers:
      - type: file
exporters:
  debug:
service:
  pipelines:
    logs:
      receivers: [otlp]
      processors: [x, batch]
      exporters: [debug]
"""


def test_the_readme_validate_outputs_are_what_it_prints(tmp_path: Path) -> None:
    """The README's two sample outputs of a config that does not load: the
    problems of a config whose references resolve, then an unset variable,
    which is reported before anything is decoded."""
    readme = (Path(__file__).parent.parent.parent / "README.md").read_text()
    section = readme.split("Running with a config that does not load", 1)[1]
    blocks = [
        "\n".join(line.strip() for line in block.strip().splitlines()) + "\n"
        for block in re.findall(r"```\n(.*?)```", section, re.S)[:2]
    ]
    (tmp_path / "collector.yaml").write_text(README_CONFIG)
    outputs = [
        run_cli("validate", "--config", "collector.yaml", env=env, cwd=tmp_path)
        for env in ({"BATCH_TIMEOUT": "2s"}, {})
    ]
    assert [(o.returncode, o.stderr) for o in outputs] == [(1, block) for block in blocks]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--colour"], "Error: unknown flag: --colour"),
        (["--conf", "x.yaml"], "Error: unknown flag: --conf"),
        (["-x"], "Error: unknown shorthand flag: 'x' in -x"),
        (["--config"], "Error: flag needs an argument: --config"),
        # cobra's check of a root command's arguments: its suggestions (within
        # two edits, or a prefix) and its hint, whatever SilenceUsage says.
        (
            ["start"],
            'Error: unknown command "start" for "sluice-collector"\n'
            "Run 'sluice-collector --help' for usage.",
        ),
        (
            ["--config", "x.yaml", "validat"],
            'Error: unknown command "validat" for "sluice-collector"\n\n'
            "Did you mean this?\n\tvalidate\n\n"
            "Run 'sluice-collector --help' for usage.",
        ),
        (
            ["comp"],
            'Error: unknown command "comp" for "sluice-collector"\n\n'
            "Did you mean this?\n\tcomponents\n\n"
            "Run 'sluice-collector --help' for usage.",
        ),
        (["components", "extra"], "Error: accepts 0 arg(s), received 1"),
        # A subcommand has no version flag (cobra adds it to the root only).
        (["validate", "--version"], "Error: unknown flag: --version"),
        (["components", "-v"], "Error: unknown shorthand flag: 'v' in -v"),
        # components has no flag but --help: the config flags are not its own.
        (["components", "--config", "x.yaml"], "Error: unknown flag: --config"),
        (["--set=a=b", "components"], "Error: unknown flag: --set"),
        (["components", "--feature-gates=+x"], "Error: unknown flag: --feature-gates"),
        (["validate", "a", "b"], "Error: accepts 0 arg(s), received 2"),
        # Arguments count wherever they are among the flags (pflag's interspersed).
        (["validate", "--config", "x.yaml", "extra"], "Error: accepts 0 arg(s), received 1"),
        (
            ["--config", "x.yaml", "validate", "--set=a=b", "extra"],
            "Error: accepts 0 arg(s), received 1",
        ),
        (
            ["--set=key:name"],
            'Error: invalid argument "key:name" for "--set" flag: missing equal sign',
        ),
        (
            ["--dry-run=maybe"],
            'Error: invalid argument "maybe" for "--dry-run" flag: strconv.ParseBool: '
            'parsing "maybe": invalid syntax',
        ),
    ],
)
def test_a_bad_command_line_exits_1_in_cobras_words(args: list[str], message: str) -> None:
    result = run_cli(*args)
    assert result.returncode == 1
    assert result.stderr == message + "\n"
    assert result.stdout == ""


def test_help_is_also_a_command() -> None:
    result = run_cli("help")
    assert result.returncode == 0 and "--config" in result.stdout


@pytest.mark.parametrize(
    ("cut", "problem"),
    [
        ("receivers", "no receiver configuration specified in config"),
        ("exporters", "no exporter configuration specified in config"),
        ("receivers processors exporters", "empty configuration file"),
    ],
)
def test_a_config_without_receivers_exporters_or_any_component_says_so(
    cut: str, problem: str
) -> None:
    """As upstream's Config.Validate, whose first checks these are: also when
    the pipelines name components, which are then not configured either."""
    sections = yaml.safe_load(_config())
    for section in cut.split():
        del sections[section]
    config, problems = _loaded(yaml.safe_dump(sections))
    assert config is None
    assert problems[0] == problem, problems


def test_the_logging_exporter_points_to_debug() -> None:
    """Upstream removed it and answers so for the type ``logging`` (with or
    without a name), instead of listing the valid types."""
    text = _config().replace("exporters:\n  debug:\n", "exporters:\n  debug:\n  logging/x:\n")
    assert _problem(text) == (
        "exporters::logging/x: the logging exporter has been deprecated, use the debug "
        "exporter instead"
    )


@pytest.mark.parametrize(
    ("pipeline", "problem"),
    [
        ("Logs", 'service::pipelines::Logs: in "Logs" id: invalid character(s) in type "Logs"'),
        (
            "logs_2/a",
            'service::pipelines::logs_2/a: in "logs_2/a" id: invalid character(s) in type "logs_2"',
        ),
        (
            "profiles",
            'service::pipelines config validation failed: pipeline "profiles": profiling '
            'signal support is at alpha level, gated under the "service.profilesSupport" '
            "feature gate",
        ),
        (
            "wrongtype/x",
            'service::pipelines config validation failed: pipeline "wrongtype/x": unknown '
            'signal "wrongtype"',
        ),
    ],
)
def test_pipeline_ids_are_read_as_upstreams_pipeline_ids(pipeline: str, problem: str) -> None:
    """A pipeline's signal is 1 to 62 lower-case ASCII letters (not a
    component type's rules), and profiles are behind upstream's gate."""
    assert _problem(_config().replace("    logs:\n", f"    {pipeline}:\n")) == problem


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (
            ("processors:\n  batch:\n    timeout: 1s\n", "processors: [batch]\n"),
            "processors: 'processors' expected a map, got 'slice'",
        ),
        (
            ("service:\n", "extensions: 1\nservice:\n"),
            "extensions: 'extensions' expected a map, got 'int'",
        ),
        (
            ("  pipelines:\n    logs:\n", "  pipelines:\n    - logs:\n"),
            "service::pipelines: 'service.pipelines' expected a map, got 'slice'",
        ),
        # otelcol/internal/configunmarshaler reads each component as a map first.
        (
            ("  debug:\n", "  debug: verbose\n"),
            "exporters::debug: '[debug]' expected a map, got 'string'",
        ),
        (
            ("    metrics:\n      level: none\n", "    - metrics\n"),
            "service::telemetry: 'service.telemetry' expected a map, got 'slice'",
        ),
        (
            ("  pipelines:\n    logs:\n", "  pipelines:\n    logs: 1\n    traces:\n"),
            "service::pipelines::logs: 'service.pipelines[logs]' expected a map, got 'int'",
        ),
        (
            ("      receivers: [otlp]\n", "      receivers: {otlp: {}}\n"),
            "service::pipelines::logs::receivers: 'service.pipelines[logs].receivers': "
            "source data must be an array or slice, got map",
        ),
        # A component id is a struct read from its text (component.ID).
        (
            ("      receivers: [otlp]\n", "      receivers: [otlp, 1]\n"),
            "service::pipelines::logs::receivers[1]: 'service.pipelines[logs].receivers[1]' "
            "expected a map, got 'int'",
        ),
        (
            ("service:\n", "service:\n  extensions: [{nop: {some: config}}]\n"),
            "service::extensions[0]: 'service.extensions[0]' has invalid keys: nop",
        ),
    ],
)
def test_sections_of_the_wrong_kind_are_named_as_mapstructure_names_them(
    edit: tuple[str, str], problem: str
) -> None:
    """mapstructure v2.2.1's words with its name of the key, as upstream's
    otelcol/unmarshaler_test.go and configunmarshaler/configs_test.go."""
    assert problem in _loaded(_config().replace(*edit))[1]
    text = _config().replace("service:\n", "service:\n  extensions: zpages\n")
    assert _problem(text) == (
        "service::extensions: 'service.extensions': source data must be an array or slice, "
        "got string"
    )


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (
            ("      receivers: [otlp]\n", "      receivers: {otlp: {}}\n"),
            "service::pipelines::logs::receivers: 'service.pipelines[logs].receivers': "
            "source data must be an array or slice, got map",
        ),
        (
            ("      exporters: [debug]\n", "      exporters: [debug, [x]]\n"),
            "service::pipelines::logs::exporters[1]: 'service.pipelines[logs].exporters[1]' "
            "expected a map, got 'slice'",
        ),
        (
            ("service:\n", "service:\n  extensions: [{nop: {some: config}}]\n"),
            "service::extensions[0]: 'service.extensions[0]' has invalid keys: nop",
        ),
    ],
)
def test_a_list_of_ids_that_does_not_decode_is_its_one_problem(
    edit: tuple[str, str], problem: str
) -> None:
    """Upstream stops at the decoding error: a list given as a map is not
    also an empty list, and an item that is no id is not an empty id."""
    assert _loaded(_config().replace(*edit))[1] == [problem]
