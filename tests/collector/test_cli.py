"""``sluice-collector`` as a user runs it: validate, --dry-run, components,
--version, --help, and every kind of config error with its documented
message and exit code 1 (nothing started)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
import yaml

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
