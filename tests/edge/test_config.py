"""Edge's configuration against real processes (EDGE.md section 1): strict keys
with suggestions, the collector's ``${...}`` expansion, the reference's config
forms, and ``sluice-edge validate``."""

from __future__ import annotations

import json
import os
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


def run_edge(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "sluice-edge"), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=cwd,
    )


def logs(*bodies: str) -> bytes:
    return json.dumps(otlp_logs_json(list(bodies))).encode()


def config_file(tmp_path: Path, doc: dict[str, Any]) -> Path:
    path = tmp_path / "config.json"
    write_json(path, doc)
    return path


def valid_plan(tmp_path: Path, doc: dict[str, Any]) -> str:
    """What ``sluice-edge validate`` prints for `doc`, which must be valid."""
    proc = run_edge("validate", str(config_file(tmp_path, doc)))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize(
    ("doc", "line"),
    [
        ({"upstream_url": True}, "upstream_url: expected a URL string, got true"),
        ({"listen_port": None}, "listen_port: expected an integer from 0 to 65535, got null"),
        ({"policy_providers": [[]]}, "policy_providers[0]: expected an object, got []"),
    ],
)
def test_a_value_of_the_wrong_type_is_shown_as_the_json_holds_it(
    tmp_path: Path, doc: dict[str, Any], line: str
) -> None:
    path = config_file(tmp_path, {"upstream_url": "http://127.0.0.1:1", **doc})
    checked = run_edge("validate", str(path))
    assert checked.returncode == 1
    assert f"{path}: {line}" in checked.stderr, checked.stderr


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
        (
            {
                "policy_providers": [
                    {
                        "type": "http",
                        "url": "http://h/v1/policy/sync",
                        "headers": [{"name": "A", "vaule": "b"}],
                    }
                ]
            },
            "policy_providers[0].headers[0].vaule: unknown key (did you mean 'value'?)",
        ),
        ({"service": {"nmae": "x"}}, "service.nmae: unknown key (did you mean 'name'?)"),
        (
            {"service": {"labels": [{"key": "team", "vlue": "a"}]}},
            "service.labels[0].vlue: unknown key (did you mean 'value'?)",
        ),
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


def test_a_key_given_twice_is_an_error_naming_it(tmp_path: Path, upstream: Upstream) -> None:
    # JSON readers keep one of the values silently (here the second port and
    # the second provider path); the collector's YAML refuses a repeated key.
    path = tmp_path / "config.json"
    path.write_text(
        f'{{"upstream_url": "{upstream.url}", "listen_port": 0, "listen_port": 9,'
        ' "policy_providers": [{"type": "file", "path": "a.json", "path": "b.json"}],'
        ' "log_level": "loud"}'
    )
    expected = [
        f"{path}: listen_port: duplicate key (given more than once)",
        f"{path}: policy_providers[0].path: duplicate key (given more than once)",
        f"{path}: log_level: expected one of debug, info, warn, error, got 'loud'",
    ]
    started = run_edge(str(path))
    assert started.returncode == 1
    logged = started.stderr.strip().splitlines()
    assert [line.split('msg="config error: ', 1)[1][:-1] for line in logged] == expected
    checked = run_edge("validate", str(path))
    assert checked.returncode == 1
    assert checked.stderr.splitlines() == [*expected, "sluice-edge: the config does not load"]


def test_a_provider_without_a_type_is_an_error_saying_so(tmp_path: Path) -> None:
    """EDGE.md section 1: one clear line naming the file, the field and the
    problem (a missing type was 'unknown provider type None')."""
    provider = {"id": "local", "path": "policies.json"}
    path = config_file(
        tmp_path, {"upstream_url": "http://127.0.0.1:1", "policy_providers": [provider]}
    )
    proc = run_edge("validate", str(path))
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[0] == (
        f"{path}: policy_providers[0].type: required (file, http or grpc)"
    )


@pytest.mark.parametrize(
    ("provider", "problem"),
    [
        (
            {"type": "http", "url": "https://127.0.0.1:1/v1/policy/sync", "ca_file": "none.pem"},
            "cannot read {folder}/none.pem: No such file or directory",
        ),
        (
            {"type": "grpc", "url": "127.0.0.1:1", "tls": True, "ca_file": "none.pem"},
            "cannot read {folder}/none.pem: No such file or directory",
        ),
        (
            {"type": "http", "url": "https://127.0.0.1:1/v1/policy/sync", "ca_file": "ca.txt"},
            "no certificate found in {folder}/ca.txt (expected PEM: -----BEGIN CERTIFICATE-----)",
        ),
        (
            {"type": "grpc", "url": "grpcs://127.0.0.1:1", "ca_file": "ca.txt"},
            "no certificate found in {folder}/ca.txt (expected PEM: -----BEGIN CERTIFICATE-----)",
        ),
    ],
)
def test_a_ca_file_that_does_not_load_is_a_config_error(
    tmp_path: Path, provider: dict[str, Any], problem: str
) -> None:
    """On start and in validate: one line naming the key and the file (a
    relative path is taken from the config file's folder), no traceback."""
    (tmp_path / "ca.txt").write_text("not a certificate\n")
    path = config_file(
        tmp_path, {"upstream_url": "http://127.0.0.1:1", "policy_providers": [provider]}
    )
    line = f"{path}: policy_providers[0].ca_file: {problem.format(folder=path.parent)}"
    started = run_edge(str(path), cwd=tmp_path)
    assert started.returncode == 1
    [logged] = started.stderr.splitlines()
    assert LOGFMT.match(logged) and " level=error " in logged and line in logged, logged
    checked = run_edge("validate", str(path), cwd=tmp_path)
    assert checked.returncode == 1
    assert checked.stderr.splitlines() == [line, "sluice-edge: the config does not load"]


def test_a_malformed_number_is_a_config_error_naming_its_key(tmp_path: Path) -> None:
    """Numbers as text (as ``${VAR}`` fills them) are ASCII digits: no
    double sign, superscript or other script's digits, underscore, nan or inf."""
    bad = {
        "listen_port": "+-80",
        "workers": "\u00b2",
        "max_body_size": "1_000",
        "max_header_count": "\u0661\u0662",
        "max_connections": "9" * 5000,
        "upstream_timeout_secs": "nan",
        "idle_timeout_secs": "inf",
        "header_timeout_secs": "1e999",
        "body_timeout_secs": "\u0663",
    }
    path = config_file(tmp_path, {"upstream_url": "http://127.0.0.1:1", **bad})
    proc = run_edge("validate", str(path))
    assert proc.returncode == 1
    *lines, last = proc.stderr.splitlines()
    assert last == "sluice-edge: the config does not load"
    assert [line.split(": ")[1] for line in lines] == list(bad)
    for line, value in zip(lines, bad.values(), strict=True):
        assert line.startswith(f"{path}: "), line
        assert line.endswith(f", got {value!r}"), line
    assert "invalid literal" not in proc.stderr


@pytest.mark.parametrize(("value", "shown"), [("NaN", "NaN"), ("1e999", "Infinity")])
@pytest.mark.parametrize(
    ("key", "bounds"), [("poll_interval_secs", "0.01 to 86400"), ("timeout_secs", "0.01 to 3600")]
)
def test_a_provider_number_that_is_not_finite_is_a_config_error(
    tmp_path: Path, key: str, bounds: str, value: str, shown: str
) -> None:
    """JSON's NaN, and 1e999 (infinity), in a provider entry: one line naming
    the key, on start and in validate, instead of a spinning or failing sync loop."""
    path = tmp_path / "config.json"
    path.write_text(
        '{"upstream_url": "http://127.0.0.1:1", "policy_providers": [{"type": "http", '
        f'"url": "http://127.0.0.1:1/v1/policy/sync", "{key}": {value}}}]}}'
    )
    line = f"{path}: policy_providers[0].{key}: expected a number from {bounds}, got {shown}"
    started = run_edge(str(path))
    assert started.returncode == 1
    [logged] = started.stderr.splitlines()
    assert line in logged, logged
    checked = run_edge("validate", str(path))
    assert checked.returncode == 1
    assert checked.stderr.splitlines() == [line, "sluice-edge: the config does not load"]


def test_numbers_as_text_still_count(tmp_path: Path) -> None:
    plan = valid_plan(
        tmp_path,
        {
            "upstream_url": "http://127.0.0.1:1",
            "listen_port": " +8081 ",
            "workers": "2",
            "upstream_timeout_secs": ".5",
            "idle_timeout_secs": "1.5e1",
        },
    )
    assert "would listen on 127.0.0.1:8081 (2 workers," in plan


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[" * 100_000, "nested too deeply"),
        ('{"service": ' + "[" * 900 + "]" * 900 + "}", "nested too deeply"),
        ('{"listen_port": ' + "1" * 5000 + "}", "not valid JSON: an integer has too many digits"),
    ],
)
def test_a_document_json_cannot_read_is_a_config_error(
    tmp_path: Path, text: str, problem: str
) -> None:
    path = tmp_path / "config.json"
    path.write_text(text)
    started = run_edge(str(path))
    assert started.returncode == 1
    [logged] = started.stderr.splitlines()
    assert f"{path}: {problem}" in logged
    checked = run_edge("validate", str(path))
    assert checked.returncode == 1
    assert checked.stderr.splitlines() == [
        f"{path}: {problem}",
        "sluice-edge: the config does not load",
    ]


def test_addresses_and_upstream_urls_must_have_a_hosts_form(tmp_path: Path) -> None:
    """What used to pass validate and fail at start (or send a broken request
    line): an address that is no IP address or host name, a URL with a space."""
    bad = {
        "listen_address": ("no such host!", "expected an IP address or a host name"),
        "upstream_url": ("http://exa mple.com", "spaces and control characters are not allowed"),
        "logs_url": ("http://10.0.0.256", "'10.0.0.256' is not an IP address or a host name"),
        "metrics_url": ("http://[zzz]/", "'zzz' does not appear to be an IPv4 or IPv6 address"),
        "api_url": ("https://-x-.example.com", "'-x-.example.com' is not an IP address or a host"),
    }
    path = config_file(tmp_path, {key: value for key, (value, _) in bad.items()})
    checked = run_edge("validate", str(path))
    assert checked.returncode == 1
    *lines, last = checked.stderr.splitlines()
    assert last == "sluice-edge: the config does not load"
    assert len(lines) == len(bad)
    for line, (key, (value, problem)) in zip(lines, bad.items(), strict=True):
        assert line.startswith(f"{path}: {key}: {problem}"), line
        assert line.endswith(f"got {value!r}"), line
    started = run_edge(str(path))
    assert started.returncode == 1
    logged = started.stderr.splitlines()
    assert len(logged) == len(lines)
    for line, problem in zip(logged, lines, strict=True):
        assert " level=error " in line and problem in line, line


def test_a_grpc_provider_url_without_a_port_is_a_config_error(tmp_path: Path) -> None:
    """gRPC would dial port 443, where a plaintext grpc:// server seldom is;
    only http(s):// URLs have a default port (README, Policy providers)."""
    providers = [{"type": "grpc", "url": "grpc://127.0.0.1"}]
    path = config_file(tmp_path, {"upstream_url": "http://h:1", "policy_providers": providers})
    checked = run_edge("validate", str(path))
    assert checked.returncode == 1
    assert checked.stderr.splitlines() == [
        f"{path}: policy_providers[0].url: a port is required (only http:// and https:// "
        "URLs have a default: 80, 443), got 'grpc://127.0.0.1'",
        "sluice-edge: the config does not load",
    ]


def test_every_problem_of_the_provider_list_is_reported(tmp_path: Path) -> None:
    """As every other key's (the README: every problem on its own line); the
    list's first problem alone was reported, hiding the others."""
    providers = [
        {"type": "grpc", "url": "dns:///h:4317", "poll_interval_secs": 0},
        {"type": "file", "pth": "p.json"},
        {"type": "http", "url": "http://h/v1/policy/sync", "encoding": "xml"},
    ]
    path = config_file(tmp_path, {"upstream_url": "http://h:0", "policy_providers": providers})
    checked = run_edge("validate", str(path))
    assert checked.returncode == 1
    assert checked.stderr.splitlines() == [
        f"{path}: upstream_url: port 0 cannot be connected to (1-65535), got 'http://h:0'",
        f"{path}: policy_providers[0].url: expected host:port, or a grpc://, grpcs://, http:// "
        "or https:// URL with a host and port, got 'dns:///h:4317'",
        f"{path}: policy_providers[0].poll_interval_secs: expected a number from 0.01 to 86400, "
        "got 0",
        f"{path}: policy_providers[1].pth: unknown key (did you mean 'path'?)",
        f"{path}: policy_providers[2].encoding: expected 'json' or 'protobuf', got 'xml'",
        "sluice-edge: the config does not load",
    ]


def test_an_upstream_url_with_port_0_is_refused(tmp_path: Path) -> None:
    """No server listens on port 0: such a config passed validate, and every
    request forwarded there then failed."""
    urls = {
        "upstream_url": "http://127.0.0.1:0",
        "logs_url": "https://h:0/prefix",
        "metrics_url": "http://[::1]:00",
        "api_url": "https://h:0",
    }
    path = config_file(tmp_path, urls)
    checked = run_edge("validate", str(path))
    assert checked.returncode == 1
    assert checked.stderr.splitlines() == [
        *(
            f"{path}: {key}: port 0 cannot be connected to (1-65535), got {url!r}"
            for key, url in urls.items()
        ),
        "sluice-edge: the config does not load",
    ]


def test_host_names_and_ip_addresses_pass(tmp_path: Path) -> None:
    plan = valid_plan(
        tmp_path,
        {
            "listen_address": "::",
            "upstream_url": "http://[::1]:4318/prefix",
            "logs_url": "https://http-intake.logs.datadoghq.eu",
            "metrics_url": "http://metrics_relay.internal:8080",
            "api_url": "http://10.0.0.1",
        },
    )
    assert "would listen on :::8080" in plan
    plan = valid_plan(tmp_path, {"listen_address": "localhost", "upstream_url": "http://h"})
    assert "would listen on localhost:8080" in plan


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        ({"url": "http://127.0.0.1:1/v1/policy/sync"}, "url: not a key of file providers"),
        ({"headers": [{"name": "A", "value": "b"}]}, "headers: not a key of file providers"),
        ({"encoding": "protobuf"}, "encoding: not a key of file providers"),
        ({"tls": True}, "tls: not a key of file providers"),
        ({"id": ""}, "id: expected a non-empty string, got ''"),
    ],
)
def test_validate_refuses_what_a_file_provider_would_ignore(
    tmp_path: Path, extra: dict[str, Any], problem: str
) -> None:
    write_json(tmp_path / "policies.json", DROP_X)
    path = config_file(
        tmp_path,
        {
            "upstream_url": "http://127.0.0.1:1",
            "policy_providers": [{"type": "file", "path": "policies.json", **extra}],
        },
    )
    checked = run_edge("validate", str(path))
    assert checked.returncode == 1, checked.stdout
    [line, last] = checked.stderr.splitlines()
    assert line.startswith(f"{path}: policy_providers[0].{problem}"), line
    assert last == "sluice-edge: the config does not load"
    started = run_edge(str(path))
    assert started.returncode == 1
    [logged] = started.stderr.splitlines()
    assert line in logged


@pytest.mark.parametrize(
    ("key", "url", "problem"),
    [
        (
            "upstream_url",
            "http://user:secretpw@127.0.0.1:1/p?x=1",
            "credentials in the URL would not be sent",
        ),
        ("logs_url", "https://secretpw@logs.example.com", "credentials in the URL would not be"),
        ("metrics_url", "http://127.0.0.1:1/p?api_key=secretpw", "a query or fragment would not"),
    ],
)
def test_credentials_or_a_query_in_an_upstream_url_are_refused_unshown(
    tmp_path: Path, key: str, url: str, problem: str
) -> None:
    """Edge would drop them silently (each request goes with its own headers
    and query), and the start-up line printed the password."""
    path = config_file(tmp_path, {"upstream_url": "http://127.0.0.1:1", key: url})
    checked = run_edge("validate", str(path))
    assert checked.returncode == 1
    [line, _] = checked.stderr.splitlines()
    assert line.startswith(f"{path}: {key}: {problem}"), line
    started = run_edge(str(path))
    assert started.returncode == 1
    assert problem in started.stderr
    assert "secretpw" not in checked.stdout + checked.stderr + started.stderr
    assert "127.0.0.1:1/p?***" in line or "***@" in line


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


def test_provider_numbers_and_flags_from_the_environment(tmp_path: Path) -> None:
    """A provider's number and boolean fields filled by a whole-value
    ``${VAR}`` (text once expanded) count as their value, as Edge's own fields
    do; text that is not a number is still an error naming the key."""
    write_json(tmp_path / "policies.json", DROP_X)
    served = tmp_path / "served.json"
    write_json(served, DROP_X)
    env = {"POLL": "0.5", "TIMEOUT": "5", "BYTES": "65536", "TLS": "false"}
    with policy_server(served) as server:
        doc = {
            "upstream_url": "http://127.0.0.1:1",
            "policy_providers": [
                {"type": "file", "path": "policies.json", "poll_interval_secs": "${POLL}"},
                {
                    "type": "http",
                    "url": server.sync_url,
                    "poll_interval_secs": "${env:POLL}",
                    "timeout_secs": "${TIMEOUT}",
                    "max_response_bytes": "${BYTES}",
                },
                {
                    "type": "grpc",
                    "url": f"127.0.0.1:{server.grpc_port}",
                    "tls": "${TLS}",
                    "timeout_secs": "${TIMEOUT}",
                },
            ],
        }
        proc = run_edge("validate", str(config_file(tmp_path, doc)), env={**os.environ, **env})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("1 active policies (1 logs") == 3, proc.stdout
    doc["policy_providers"][0]["poll_interval_secs"] = "often"
    proc = run_edge("validate", str(config_file(tmp_path, doc)), env={**os.environ, **env})
    assert proc.returncode == 1
    assert "policy_providers[0].poll_interval_secs: expected a number" in proc.stderr


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


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["config.json", "extra"], "unrecognized arguments: extra"),
        (["validate", "config.json", "extra"], "unrecognized arguments: extra"),
        (["validate"], "validate needs the config file: validate CONFIG.json"),
        (["--dry-run", "validate"], "validate needs the config file: validate CONFIG.json"),
    ],
)
def test_wrong_arguments_are_a_usage_error(tmp_path: Path, args: list[str], problem: str) -> None:
    """Not ``invalid choice: 'config.json'``, nor an attempt to read a file
    named ``validate``."""
    config_file(tmp_path, {"upstream_url": "http://127.0.0.1:1"})
    proc = run_edge(*args, cwd=tmp_path)
    assert proc.returncode == 2
    usage, error = proc.stderr.splitlines()
    assert usage == "usage: sluice-edge [validate] CONFIG.json [--dry-run]"
    assert error == f"sluice-edge: error: {problem}"


def test_validate_and_the_config_may_come_in_any_order_with_dry_run(tmp_path: Path) -> None:
    config_file(tmp_path, {"upstream_url": "http://127.0.0.1:1"})
    for args in (["validate", "--dry-run", "config.json"], ["config.json", "--dry-run"]):
        proc = run_edge(*args, cwd=tmp_path)
        assert (proc.returncode, proc.stderr) == (0, ""), args
        assert proc.stdout.startswith("config.json: config is valid\n")


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
