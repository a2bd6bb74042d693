"""``sluice-collector`` as a user runs it: validate, --dry-run, components,
--version, --help, and every kind of config error with its documented
message and exit code 1 (nothing started)."""

from __future__ import annotations

import functools
import http.server
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from sluice.collector import cli
from sluice.collector.factories import Factories
from tests.collector.helpers import free_port, run_cli


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


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            ("timeout: 1s", "timeout: 1s\n    send_batch_sizee: 10"),
            "processors::batch: has invalid keys: send_batch_sizee",
        ),
        (
            ("timeout: 1s", "send_batch_size: lots"),
            "processors::batch::send_batch_size: expected type 'int', got unconvertible "
            "type 'string', value: 'lots'",
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


def test_a_default_from_the_environment_applies(tmp_path: Path) -> None:
    path = _write(tmp_path, _config().replace("timeout: 1s", "timeout: ${env:SLUICE_UNSET:-2s}"))
    assert run_cli("validate", "--config", str(path)).returncode == 0


def test_every_problem_is_reported_not_just_the_first(tmp_path: Path) -> None:
    text = _config().replace("timeout: 1s", "timeout: 1x\n    send_batch_size: many")
    result = run_cli("validate", "--config", str(_write(tmp_path, text)))
    assert result.returncode == 1
    assert "timeout: time: invalid duration" in result.stderr
    assert "send_batch_size: expected type 'int'" in result.stderr


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
    assert f"{broken}: processors::batch::timeout: time: invalid duration" in result.stderr
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


def test_unreadable_and_malformed_config_files(tmp_path: Path) -> None:
    missing = run_cli("validate", "--config", str(tmp_path / "nope.yaml"))
    assert missing.returncode == 1
    assert "nope.yaml: cannot read" in missing.stderr
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


def test_version_and_help() -> None:
    version = run_cli("--version")
    assert version.returncode == 0 and "sluice-collector version" in version.stdout
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
    assert config is not None and config.metrics_endpoint is None
    [problem] = _telemetry("verbose", "info")[1]
    assert problem.endswith(': service::telemetry::metrics::level: unknown metrics level "verbose"')


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
