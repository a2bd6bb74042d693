"""The console script: eval, check and demo, run as real processes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.harness import sluice_command


def sluice(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*sluice_command(), *args], capture_output=True, text=True, timeout=60, cwd=cwd
    )


def write(path: Path, value: Any) -> Path:
    path.write_text(value if isinstance(value, str) else json.dumps(value))
    return path


GOOD = {
    "id": "drop-debug",
    "name": "d",
    "log": {"match": [{"log_field": "severity_text", "exact": "DEBUG"}], "keep": "none"},
}
BAD = {
    "id": "bad-regex",
    "name": "b",
    "log": {"match": [{"log_field": "body", "regex": "(["}], "keep": "none"},
}


def test_check_reports_every_error_with_its_policy_id(tmp_path: Path) -> None:
    policies = write(tmp_path / "p.json", {"policies": [GOOD, BAD]})
    proc = sluice("check", str(policies))
    assert proc.returncode == 1
    assert f'{policies}: bad-regex: log: match[0]: invalid regex "(["' in proc.stdout
    assert "1 valid, 1 error(s)" in proc.stdout


def test_check_passes_a_clean_file(tmp_path: Path) -> None:
    proc = sluice("check", str(write(tmp_path / "p.json", {"policies": [GOOD]})))
    assert proc.returncode == 0, proc.stdout
    assert "1 valid, 0 error(s)" in proc.stdout


def test_eval_skips_a_bad_policy_and_applies_the_rest(tmp_path: Path) -> None:
    policies = write(tmp_path / "p.json", {"policies": [BAD, GOOD]})
    doc = {
        "resourceLogs": [
            {
                "scopeLogs": [
                    {
                        "logRecords": [
                            {"severityText": "DEBUG", "body": {"stringValue": "x"}},
                            {"severityText": "INFO", "body": {"stringValue": "(["}},
                        ]
                    }
                ]
            }
        ]
    }
    source = write(tmp_path / "in.json", doc)
    out, stats = tmp_path / "out.json", tmp_path / "stats.json"
    proc = sluice(
        "eval",
        "--policies",
        str(policies),
        "--input",
        str(source),
        "--output",
        str(out),
        "--stats",
        str(stats),
        "--signal",
        "log",
    )
    assert proc.returncode == 0, proc.stderr
    assert "bad-regex" in proc.stderr and "skipped" in proc.stderr
    records = json.loads(out.read_text())["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    assert [r["severityText"] for r in records] == ["INFO"]
    assert json.loads(stats.read_text()) == {"policies": [{"policy_id": "drop-debug", "hits": 1}]}


def test_eval_names_the_file_when_policies_are_not_json(tmp_path: Path) -> None:
    policies = write(tmp_path / "p.json", "{not json")
    source = write(tmp_path / "in.json", {"resourceLogs": []})
    proc = sluice(
        "eval",
        "--policies",
        str(policies),
        "--input",
        str(source),
        "--output",
        str(tmp_path / "o.json"),
    )
    assert proc.returncode == 1
    assert str(policies) in proc.stderr and "not valid JSON" in proc.stderr


def test_eval_names_a_missing_input(tmp_path: Path) -> None:
    policies = write(tmp_path / "p.json", {"policies": [GOOD]})
    proc = sluice(
        "eval",
        "--policies",
        str(policies),
        "--input",
        str(tmp_path / "nope.json"),
        "--output",
        str(tmp_path / "o.json"),
    )
    assert proc.returncode == 1 and "nope.json" in proc.stderr


def test_demo_runs_the_bundled_example(tmp_path: Path) -> None:
    proc = sluice("demo", "--output-dir", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "drop-health-checks" in proc.stdout
    logs = json.loads((tmp_path / "logs.json").read_text())
    bodies = [
        r["body"]["stringValue"]
        for rl in logs["resourceLogs"]
        for sl in rl["scopeLogs"]
        for r in sl["logRecords"]
    ]
    assert bodies and not any("/healthz" in b for b in bodies)
    assert any("4111-****-****-" in b for b in bodies)
    assert not any("4111-1111-1111" in b for b in bodies)


EXAMPLES = Path(__file__).parent.parent.parent / "examples" / "providers"
BUNDLED = Path(__file__).parent.parent.parent / "src" / "sluice" / "examples"


def _example_config(tmp_path: Path, name: str, server: Any) -> Path:
    """A shipped example config pointed at the test's server ports; relative
    paths keep working because the copy sits at the same depth."""
    text = (EXAMPLES / name).read_text()
    text = text.replace("127.0.0.1:8181", f"127.0.0.1:{server.http_port}")
    text = text.replace("127.0.0.1:8182", f"127.0.0.1:{server.grpc_port}")
    folder = tmp_path / "examples" / "providers"
    folder.mkdir(parents=True)
    (tmp_path / "src" / "sluice").mkdir(parents=True)
    (tmp_path / "src" / "sluice" / "examples").symlink_to(BUNDLED)
    target = folder / name
    target.write_text(text)
    return target


def _run_with_key(key: str, *args: str) -> subprocess.CompletedProcess[str]:
    import os

    env = {**os.environ, "SERVICE_API_KEY": key}
    return subprocess.run(
        [*sluice_command(), *args], capture_output=True, text=True, timeout=60, env=env
    )


def test_eval_config_with_the_http_provider_example(tmp_path: Path) -> None:
    from tests.conformance.servers import policy_server

    with policy_server(BUNDLED / "policies.json", "--token", "dev-secret") as server:
        config = _example_config(tmp_path, "http.json", server)
        out = tmp_path / "out.json"
        proc = _run_with_key(
            "dev-secret",
            "eval",
            "--config",
            str(config),
            "--input",
            str(BUNDLED / "logs.json"),
            "--output",
            str(out),
        )
        assert proc.returncode == 0, proc.stderr
        reported = {e["policy_id"]: e["hits"] for e in server.get("/stats")["policies"]}
    assert reported["drop-health-checks"] > 0
    bodies = json.dumps(json.loads(out.read_text()))
    assert "/healthz" not in bodies


def test_eval_config_fails_naming_the_provider_when_the_token_is_wrong(tmp_path: Path) -> None:
    from tests.conformance.servers import policy_server

    with policy_server(BUNDLED / "policies.json", "--token", "dev-secret") as server:
        config = _example_config(tmp_path, "grpc.json", server)
        proc = _run_with_key(
            "wrong",
            "eval",
            "--config",
            str(config),
            "--input",
            str(BUNDLED / "traces.json"),
            "--output",
            str(tmp_path / "o.json"),
        )
    assert proc.returncode == 1
    assert "control-plane" in proc.stderr and "UNAUTHENTICATED" in proc.stderr
    assert not (tmp_path / "o.json").exists()


def test_shipped_provider_examples_are_valid(monkeypatch: pytest.MonkeyPatch) -> None:
    from sluice.providers import parse_providers

    monkeypatch.setenv("SERVICE_API_KEY", "k")  # their headers need it, as in the README

    for path in sorted(EXAMPLES.glob("*.json")):
        configs = parse_providers(
            json.loads(path.read_text())["policy_providers"], str(path), path.parent
        )
        assert configs, path
        for config in configs:
            if config.type == "file":
                assert Path(config.path).is_file(), config.path


def test_eval_writes_a_lone_surrogate_back_as_its_escape(tmp_path: Path) -> None:
    """A ``\\ud800`` escape in the input is a lone surrogate once parsed; a
    transform makes the record be written back, which used to crash."""
    source = tmp_path / "in.json"
    source.write_text(
        '{"resourceLogs":[{"resource":{},"scopeLogs":[{"logRecords":'
        '[{"body":{"stringValue":"a\\ud800b"}}]}]}]}'
    )
    add = {"log_attribute": "x", "value": "y"}
    policy = {
        "id": "tag",
        "name": "tag",
        "log": {
            "match": [{"log_field": "body", "contains": "a"}],
            "keep": "all",
            "transform": {"add": [add]},
        },
    }
    policies = write(tmp_path / "p.json", {"policies": [policy]})
    out = tmp_path / "out.json"
    done = sluice("eval", "--policies", str(policies), "--input", str(source), "--output", str(out))
    assert done.returncode == 0, done.stderr
    assert b'"a\\ud800b"' in out.read_bytes()
    [record] = json.loads(out.read_bytes())["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    assert record["attributes"] == [{"key": "x", "value": {"stringValue": "y"}}]


@pytest.mark.parametrize(
    "encode",
    [
        lambda text: b"\xef\xbb\xbf" + text.encode(),  # UTF-8 with a byte order mark
        lambda text: text.encode("utf-16"),
        lambda text: text.encode("utf-32-le"),
        # a surrogate written as UTF-8 bytes, which Edge reads as the lone surrogate
        lambda text: text.replace("\\ud800", "\ud800").encode("utf-8", "surrogatepass"),
    ],
    ids=["utf8-bom", "utf16", "utf32", "utf8-surrogate"],
)
def test_eval_reads_every_input_edge_reads(tmp_path: Path, encode: Any) -> None:
    """The input is read as Edge reads a JSON body (``jsonbody`` and then the
    standard library on the bytes, which detects UTF-16 and UTF-32 and takes a
    byte order mark), so what Edge filters ``sluice eval`` filters too."""
    text = json.dumps(
        {
            "resourceLogs": [
                {
                    "scopeLogs": [
                        {
                            "logRecords": [
                                {"severityText": "DEBUG", "body": {"stringValue": "a"}},
                                {"severityText": "INFO", "body": {"stringValue": "\ud800"}},
                            ]
                        }
                    ]
                }
            ]
        }
    )
    source = tmp_path / "in.json"
    source.write_bytes(encode(text))
    policies = write(tmp_path / "p.json", {"policies": [GOOD]})
    out = tmp_path / "out.json"
    done = sluice("eval", "--policies", str(policies), "--input", str(source), "--output", str(out))
    assert done.returncode == 0, done.stderr
    records = json.loads(out.read_bytes())["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    assert records == [{"severityText": "INFO", "body": {"stringValue": "\ud800"}}]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"resourceLogs":[{"x":' + "1" * 5000 + "}]}", "an integer has too many digits"),
        ('{"resourceLogs":' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
    ],
    ids=["long-integer", "deep"],
)
def test_eval_refuses_what_edge_refuses_naming_the_input(
    tmp_path: Path, text: str, problem: str
) -> None:
    source = write(tmp_path / "in.json", text)
    policies = write(tmp_path / "p.json", {"policies": [GOOD]})
    out = tmp_path / "out.json"
    done = sluice("eval", "--policies", str(policies), "--input", str(source), "--output", str(out))
    assert done.returncode == 1
    assert done.stderr.startswith(f"sluice: error: {source}: ") and problem in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("which", ["--output", "--stats"])
def test_eval_names_an_output_it_cannot_write(tmp_path: Path, which: str) -> None:
    source = write(tmp_path / "in.json", {"resourceLogs": []})
    policies = write(tmp_path / "p.json", {"policies": [GOOD]})
    paths = {"--output": str(tmp_path / "out.json"), "--stats": str(tmp_path / "stats.json")}
    paths[which] = str(tmp_path / "missing" / "file.json")
    done = sluice(
        "eval",
        "--policies",
        str(policies),
        "--input",
        str(source),
        *(item for pair in paths.items() for item in pair),
    )
    assert done.returncode == 1
    assert done.stderr.startswith(f"sluice: error: {paths[which]}: cannot write: ")
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("option", "url", "problem"),
    [
        (
            "--grpc",
            "grpc://127.0.0.1",
            "a port is required (only http:// and https:// URLs have a default: 80, 443)",
        ),
        (
            "--grpc",
            "dns:///h:4317",
            "expected host:port, or a grpc://, grpcs://, http:// or https:// URL with a host "
            "and port",
        ),
        (
            "--grpc",
            "127.0.0.1:1/sync",
            "a gRPC provider's url has no path (the sync call is "
            "/tero.policy.v1.PolicyService/Sync on the server)",
        ),
        ("--server", "ftp://h/v1/policy/sync", "expected an http:// or https:// URL"),
        ("--server", "http://h:0/v1/policy/sync", "port 0 cannot be connected to (1-65535)"),
    ],
)
def test_eval_checks_a_server_url_at_start_as_a_provider_url(
    tmp_path: Path, option: str, url: str, problem: str
) -> None:
    """With the words a config file's provider ``url`` gets, before any sync
    or input is read; these failed only at the sync (grpc://h dialled port 443)."""
    proc = sluice("eval", option, url, "--input", str(tmp_path / "nope.json"), "--output", "o.json")
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1] == f"sluice: error: {option}: {problem}, got {url!r}"


@pytest.mark.parametrize(
    ("option", "url", "extra", "problem"),
    [
        (
            "--grpc",
            "127.0.0.1:1",
            ["--header", "X!Y: v"],
            "--header: a gRPC metadata key holds only letters, digits and -_., got 'X!Y'",
        ),
        (
            "--grpc",
            "127.0.0.1:1",
            ["--header", "X-Key: caf\u00e9"],
            "--header 'X-Key': a gRPC metadata value is printable ASCII (or name the key "
            "'...-bin')",
        ),
        (
            "--server",
            "http://127.0.0.1:1/v1/policy/sync",
            ["--header", "X Y: v"],
            "--header: expected a header name (letters, digits and !#$%&'*+-.^_`|~), got 'X Y'",
        ),
        (
            "--server",
            "http://127.0.0.1:1/v1/policy/sync",
            ["--timeout", "0"],
            "--timeout: expected a number from 0.01 to 3600, got 0.0",
        ),
        (
            "--grpc",
            "127.0.0.1:1",
            ["--timeout", "nan"],
            "--timeout: expected a number from 0.01 to 3600, got NaN",
        ),
        (
            "--server",
            "http://127.0.0.1:1/v1/policy/sync",
            ["--header", "Authorization: Bearer ${env:SLUICE_TEST_UNSET_TOKEN}"],
            "--header: environment variable SLUICE_TEST_UNSET_TOKEN is not set"
            " (give a default with ${env:SLUICE_TEST_UNSET_TOKEN:-default})",
        ),
    ],
)
def test_eval_checks_sync_headers_and_timeout_at_start_as_a_provider_s(
    tmp_path: Path, option: str, url: str, extra: list[str], problem: str
) -> None:
    """A provider's rules for ``headers`` and ``timeout_secs``; these failed
    every sync (gRPC: 'Invalid metadata'), a timeout of 0 or NaN at once."""
    proc = sluice(
        "eval", option, url, *extra, "--input", str(tmp_path / "in.json"), "--output", "o.json"
    )
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1] == f"sluice: error: {problem}"
