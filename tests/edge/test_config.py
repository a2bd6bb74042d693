"""Edge's configuration against real processes (EDGE.md section 1): strict keys
with suggestions, the collector's ``${...}`` expansion, the reference's config
forms, and ``sluice-edge validate``."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.servers import policy_server
from tests.edge.helpers import (
    BIN,
    EdgeLauncher,
    Reply,
    Upstream,
    drop_logs,
    free_port,
    json_bodies,
    otlp_logs_json,
    policies,
    write_json,
)

DROP_X = policies(drop_logs("drop-x", log_field="body", exact="x"))
LOGFMT = re.compile(r'^time=\S+Z level=(debug|info|warn|error) pid=\d+ logger=\S+ msg=".*"')


def run_edge(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "sluice-edge"), *args], capture_output=True, text=True, timeout=60, env=env
    )


def logs(*bodies: str) -> bytes:
    return json.dumps(otlp_logs_json(list(bodies))).encode()


def config_file(tmp_path: Path, doc: dict[str, Any]) -> Path:
    path = tmp_path / "config.json"
    write_json(path, doc)
    return path


# -- strict keys ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "line"),
    [
        (
            {"policy_provider": []},
            "policy_provider: unknown key (did you mean 'policy_providers'?)",
        ),
        (
            {"policy_providers": [{"type": "file", "id": "p", "pth": "p.json"}]},
            "policy_providers[0].pth: unknown key (did you mean 'path'?)",
        ),
        (
            {
                "policy_providers": [
                    {
                        "type": "http",
                        "url": "http://h/v1/policy/sync",
                        "headers": [{"name": "A", "value": "b", "vaule": "c"}],
                    }
                ]
            },
            "policy_providers[0].headers[0].vaule: unknown key (did you mean 'value'?)",
        ),
        ({"service": {"nmae": "x"}}, "service.nmae: unknown key (did you mean 'name'?)"),
        ({"zzz": 1}, "zzz: unknown key (valid keys: api_url, body_timeout_secs, "),
    ],
)
def test_an_unknown_key_is_an_error_naming_it_and_the_nearest_valid_one(
    tmp_path: Path, upstream: Upstream, doc: dict[str, Any], line: str
) -> None:
    path = config_file(tmp_path, {"upstream_url": upstream.url, **doc})
    proc = run_edge(str(path))
    assert proc.returncode == 1, proc
    [logged] = proc.stderr.strip().splitlines()
    assert LOGFMT.match(logged) and "level=error" in logged, logged
    assert f"{path}: {line}" in logged
    checked = run_edge("validate", str(path))
    assert checked.returncode == 1
    assert f"{path}: {line}" in checked.stderr
    assert checked.stdout == ""


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    path = config_file(
        tmp_path,
        {
            "upstream_url": "ftp://nowhere",
            "listen_port": 70000,
            "log_level": "loud",
            "workers": 0,
            "typo_key": True,
        },
    )
    proc = run_edge("--dry-run", str(path))
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert [line.split(": ")[1] for line in lines[:-1]] == [
        "upstream_url",
        "listen_port",
        "log_level",
        "workers",
        "typo_key",
    ]
    assert lines[-1] == "sluice-edge: the config does not load"


# -- expansion -----------------------------------------------------------------------


def test_the_collectors_expansion_forms(
    start_edge: EdgeLauncher, upstream: Upstream, tmp_path: Path
) -> None:
    """${VAR}, ${env:VAR}, ${env:VAR:-default}, the shell's ${VAR:-default}
    and $$, in the top level and in provider entries; a whole-value reference
    to a number works for a number field."""
    served = tmp_path / "served.json"
    write_json(served, DROP_X)
    with policy_server(served, "--token", "t0ken") as server:
        edge = start_edge(
            None,
            upstream_url="http://127.0.0.1:${env:EDGE_TEST_UP_PORT}/b$${LITERAL}$$",
            max_body_size="${EDGE_TEST_UNSET:-65536}",
            log_level="${env:EDGE_TEST_UNSET:-info}",
            policy_providers=[
                {
                    "type": "http",
                    "id": "remote",
                    "url": "http://127.0.0.1:${EDGE_TEST_POLICY_PORT}/v1/policy/sync",
                    "headers": [
                        {"name": "Authorization", "value": "Bearer ${env:EDGE_TEST_TOKEN}"}
                    ],
                }
            ],
            env={
                "EDGE_TEST_UP_PORT": str(upstream.port),
                "EDGE_TEST_POLICY_PORT": str(server.http_port),
                "EDGE_TEST_TOKEN": "t0ken",
            },
        )
        assert edge.post("/v1/logs", logs("x", "y"), "application/json").status == 200
        [got] = upstream.received()
        assert got.path == "/b${LITERAL}$/v1/logs"
        assert json_bodies(json.loads(got.body)) == ["y"]
        assert edge.post("/v1/logs", b"z" * 70_000, "application/json").status == 413
    assert "t0ken" not in edge.stderr()


def test_an_unset_variable_without_default_stops_edge_naming_it(tmp_path: Path) -> None:
    path = config_file(
        tmp_path,
        {
            "upstream_url": "http://127.0.0.1:1",
            "policy_providers": [
                {
                    "type": "http",
                    "url": "http://127.0.0.1:1/v1/policy/sync",
                    "headers": [{"name": "Authorization", "value": "Bearer ${SLUICE_TEST_NOPE}"}],
                }
            ],
        },
    )
    proc = run_edge(str(path))
    assert proc.returncode == 1
    [line] = proc.stderr.strip().splitlines()
    assert (
        f"{path}: policy_providers[0].headers[0].value: environment variable "
        "SLUICE_TEST_NOPE is not set" in line
    )


# -- the reference's config forms ----------------------------------------------------


def test_reference_config_forms_are_accepted(start_edge: EdgeLauncher, tmp_path: Path) -> None:
    """The list form of resource attributes and labels reaches the policy
    server's sync request; ``err`` and ``warn`` are levels."""
    sync = Upstream()
    sync.respond = Reply(200, json.dumps({"policies": [], "hash": "h1"}).encode())
    try:
        edge = start_edge(
            None,
            listen_port=free_port(),  # no "listening on" line to read it from at level err
            log_level="err",
            service={
                "name": "edge-under-test",
                "resource_attributes": [{"key": "deployment.environment", "value": "dev"}],
                "labels": [{"key": "team", "value": "platform"}],
            },
            policy_providers=[{"type": "http", "id": "remote", "url": sync.url + "/sync"}],
        )
        request = json.loads(sync.wait_for(1)[0].body)
    finally:
        sync.stop()
    metadata = request["clientMetadata"]
    attributes = {a["key"]: a["value"]["stringValue"] for a in metadata["resourceAttributes"]}
    assert attributes["service.name"] == "edge-under-test"
    assert attributes["deployment.environment"] == "dev"
    assert {a["key"]: a["value"]["stringValue"] for a in metadata["labels"]} == {"team": "platform"}
    assert edge.terminate() == 0
    assert "level=info" not in edge.stderr()  # err: errors only
    warned = run_edge("validate", str(edge.config_path))
    assert "log_level error" in warned.stdout


# -- validate ------------------------------------------------------------------------


def test_validate_loads_every_provider_and_prints_the_plan(tmp_path: Path) -> None:
    write_json(
        tmp_path / "policies.json",
        policies(
            drop_logs("drop-x", log_field="body", exact="x"),
            drop_logs("broken", log_field="body", regex="([bad"),
            {"id": "off", "name": "off", "enabled": False, "log": {"match": [], "keep": "none"}},
        ),
    )
    served = tmp_path / "served.json"
    write_json(served, policies(drop_logs("remote-drop", log_field="body", exact="r")))
    with policy_server(served) as server:
        path = config_file(
            tmp_path,
            {
                "upstream_url": "http://collector:4318",
                "logs_url": "https://logs.example.com",
                "metrics_url": "https://api.datadoghq.eu",
                "listen_address": "0.0.0.0",
                "listen_port": 9999,
                "policy_providers": [
                    {"type": "file", "id": "baseline", "path": "policies.json"},
                    {"type": "http", "id": "control-plane", "url": server.sync_url},
                ],
            },
        )
        proc = run_edge("validate", str(path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    out = proc.stdout
    assert out.startswith(f"{path}: config is valid\n")
    assert "would listen on 0.0.0.0:9999 (1 worker" in out
    assert "/api/v2/logs (Datadog logs, filtered) -> https://logs.example.com" in out
    assert "/api/beta/sketches (Datadog metrics, filtered) -> https://api.datadoghq.eu" in out
    assert "(Datadog API, proxied unchanged) -> https://app.datadoghq.eu" in out
    assert "any other path (proxied unchanged) -> http://collector:4318" in out
    assert "baseline (file " in out and "control-plane (http http://127.0.0.1:" in out
    assert "1 active policies (1 logs, 0 metrics, 0 traces), 1 disabled, 1 with errors" in out
    assert "broken: log: match[0]: invalid regex" in out
    assert "1 active policies (1 logs, 0 metrics, 0 traces), 0 disabled, 0 with errors" in out


def test_validate_fails_when_a_provider_cannot_load(tmp_path: Path) -> None:
    served = tmp_path / "served.json"
    write_json(served, DROP_X)
    with policy_server(served, "--token", "right") as server:
        path = config_file(
            tmp_path,
            {
                "upstream_url": "http://127.0.0.1:1",
                "policy_providers": [
                    {"type": "file", "id": "missing", "path": "nowhere.json"},
                    {
                        "type": "http",
                        "id": "remote",
                        "url": server.sync_url,
                        "headers": [{"name": "Authorization", "value": "Bearer wrong"}],
                    },
                ],
            },
        )
        proc = run_edge("--dry-run", str(path))
    assert proc.returncode == 1
    assert proc.stdout.startswith(f"{path}: config is valid\n")
    assert "cannot load: cannot read" in proc.stdout
    failures = proc.stderr.strip().splitlines()
    assert failures[0].startswith(f"{path}: policy provider missing: cannot read")
    assert failures[1].startswith(f"{path}: policy provider remote: ") and "401" in failures[1]
