"""Edge's own log lines against real processes: logfmt by default, JSON with
``log_format: json``, the same format from the first line on, levels printed
as configured, ``SLUICE_LOG_LEVEL`` over the config, and at ``debug`` one
line per request that never carries bodies, keys (in a header, the query or
the path) or queries."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import subprocess
from pathlib import Path

import pytest

from sluice.edge.datadog_intake import loggable_path
from sluice.transport.connections import ConnectionTracker, ServerLimits
from sluice.transport.http_message import Request, Response
from sluice.transport.http_server import HttpServerProtocol
from tests.edge.helpers import (
    BIN,
    EdgeLauncher,
    Upstream,
    drop_logs,
    free_port,
    otlp_logs_json,
    policies,
    write_json,
)

DROP_X = policies(drop_logs("drop-x", log_field="body", exact="x"))
LOGFMT = re.compile(
    r"^time=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z level=(debug|info|warn|error) pid=\d+ "
    r'logger=\S+ msg="(?:[^"\\]|\\.)*"( \w+=\S+)*$'
)


def logs(*bodies: str) -> bytes:
    return json.dumps(otlp_logs_json(list(bodies))).encode()


def test_logfmt_by_default_and_warn_printed_as_warn(
    start_edge: EdgeLauncher, upstream: Upstream
) -> None:
    edge = start_edge(DROP_X)
    assert edge.post("/v1/logs", b"{broken", "application/json").status == 200  # warns
    assert edge.terminate() == 0
    lines = edge.stderr().splitlines()
    assert lines and all(LOGFMT.match(line) for line in lines), lines
    warnings = [line for line in lines if "unevaluated" in line]
    assert len(warnings) == 1 and " level=warn " in warnings[0]
    assert "level=warning" not in edge.stderr()
    assert not any(" level=debug " in line for line in lines)


def test_json_lines_from_the_first_line(start_edge: EdgeLauncher, upstream: Upstream) -> None:
    edge = start_edge(DROP_X, log_format="json")
    assert edge.post("/v1/logs", b"{broken", "application/json").status == 200
    assert edge.terminate() == 0
    records = [json.loads(line) for line in edge.stderr().splitlines()]
    assert any(r["msg"].startswith("sluice-edge listening on") for r in records)
    for record in records:
        assert set(record) >= {"time", "level", "pid", "logger", "msg"}, record
    assert [r["level"] for r in records if "unevaluated" in r["msg"]] == ["warn"]


def test_config_errors_are_log_lines_too(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    write_json(path, {"upstream_url": "http://127.0.0.1:1", "log_format": "json", "bogus": 1})
    proc = subprocess.run(
        [str(BIN / "sluice-edge"), str(path)], capture_output=True, text=True, timeout=30
    )
    assert proc.returncode == 1
    [line] = proc.stderr.splitlines()
    assert LOGFMT.match(line) and " level=error " in line  # the config never said json


def test_the_environment_overrides_the_configured_level(
    start_edge: EdgeLauncher, upstream: Upstream
) -> None:
    quiet = start_edge(
        DROP_X, listen_port=free_port(), log_level="debug", env={"SLUICE_LOG_LEVEL": "warn"}
    )
    assert quiet.post("/v1/logs", logs("x", "y"), "application/json").status == 200
    assert quiet.terminate() == 0
    assert " level=info " not in quiet.stderr() and " level=debug " not in quiet.stderr()
    loud = start_edge(DROP_X, log_level="error", env={"SLUICE_LOG_LEVEL": "DEBUG"})
    assert loud.post("/v1/logs", logs("x", "y"), "application/json").status == 200
    assert " level=debug " in loud.stderr()
    bad = subprocess.run(
        [str(BIN / "sluice-edge"), str(loud.config_path)],
        capture_output=True,
        text=True,
        timeout=30,
        env={"SLUICE_LOG_LEVEL": "loud", "PATH": "/usr/bin:/bin"},
    )
    assert bad.returncode == 1
    assert "SLUICE_LOG_LEVEL: expected one of debug, info, warn, error, got 'loud'" in bad.stderr


def test_debug_logs_one_line_per_request_without_secrets(
    start_edge: EdgeLauncher, upstream: Upstream
) -> None:
    edge = start_edge(DROP_X, log_level="debug", env={"DD_API_KEY": "env-key-secret-0"})
    secret_body = "body-secret-1"
    assert (
        edge.post(
            "/v1/logs?api_key=query-secret-2",
            logs("x", secret_body, "y"),
            "application/json",
            DD_API_KEY="header-secret-3",
            Authorization="Bearer header-secret-4",
        ).status
        == 200
    )
    assert edge.post("/v1/logs", logs("x"), "application/json").status == 200
    assert edge.request("GET", "/passthrough?token=query-secret-5").status == 200
    # The Agent sends its key in the query of its validate call.
    assert edge.request("GET", "/api/v1/validate?api_key=query-secret-6").status == 200
    # The Agent's legacy logs intake puts the key in the path.
    assert edge.post("/v1/input/path-secret-7", b"[]", "application/json").status == 200
    assert edge.terminate() == 0
    text = edge.stderr()
    for secret in (f"secret-{n}" for n in range(8)):
        assert secret not in text
    lines = [line for line in text.splitlines() if 'msg="POST /v1/logs"' in line]
    assert len(lines) == 2
    fields = [dict(re.findall(r" (\w+)=([^\s\"]+)", line.split(" msg=", 1)[1])) for line in lines]
    assert fields[0] | {"duration_ms": ""} == {
        "route": "/v1/logs",
        "status": "200",
        "records_in": "3",
        "records_out": "2",
        "upstream_status": "200",
        "duration_ms": "",
    }
    assert float(fields[0]["duration_ms"]) > 0
    # Every record dropped: answered locally, no upstream status.
    assert (fields[1]["records_in"], fields[1]["records_out"]) == ("1", "0")
    assert "upstream_status" not in fields[1]
    [passthrough] = [line for line in text.splitlines() if 'msg="GET /passthrough"' in line]
    assert " route=passthrough " in passthrough and " upstream_status=200 " in passthrough
    [validate] = [line for line in text.splitlines() if 'msg="GET /api/v1/validate"' in line]
    assert " route=datadog_api " in validate
    [legacy] = [line for line in text.splitlines() if 'msg="POST /v1/input/***"' in line]
    assert " route=datadog_logs_legacy " in legacy


def test_a_failed_request_is_logged_without_the_key_in_its_path(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The server's line for a request whose handler raised shows the path as
    Edge's other lines do."""

    async def failing(request: Request) -> Response:
        raise RuntimeError("a bug")

    async def exchange() -> bytes:
        tracker = ConnectionTracker()
        server = await asyncio.get_running_loop().create_server(
            lambda: HttpServerProtocol(failing, ServerLimits(), tracker, loggable_path),
            "127.0.0.1",
            0,
        )
        port = server.sockets[0].getsockname()[1]
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(
            b"POST /v1/input/path-secret HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
            b"Connection: close\r\n\r\n[]"
        )
        answer = await reader.read()
        writer.close()
        server.close()
        return answer

    with caplog.at_level(logging.ERROR, logger="sluice.transport.http_server"):
        answer = asyncio.run(exchange())
    assert answer.startswith(b"HTTP/1.1 500 "), answer
    [failed] = [r.getMessage() for r in caplog.records if "handler failed" in r.getMessage()]
    assert failed == "handler failed for POST /v1/input/***"
