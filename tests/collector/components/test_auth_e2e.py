"""``basicauth`` and ``bearertokenauth`` end to end: one ``sluice-collector``
whose OTLP receivers require credentials (htpasswd entries, a token file)
and whose ``otlphttp`` and ``otlp`` exporters sign with them (TLS for gRPC,
as upstream requires), fed by the OpenTelemetry SDK's exporters and raw HTTP
with right, wrong and missing credentials. Record by record, only what came
with the right credentials reaches the sinks, which record the headers they
got; token files are re-read without a restart; no secret ever reaches the
collector's log (at debug level)."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bcrypt
import pytest
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GrpcLogs
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as HttpLogs
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from tests.collector.components.grpc_sink import GrpcSink
from tests.collector.helpers import CollectorProcess, free_ports
from tests.collector.test_e2e import _bodies, _emit_logs
from tests.edge.helpers import Upstream, http_request

ALICE = ("alice", "wonderland-7Qx")
"""A bcrypt entry of the htpasswd file."""
BOB = ("bob", "builder-9Kp")
BOB_APR1 = "$apr1$Yq3xT1aZ$4KooMs.9nS19JOF6NLLiO0"
"""Bob's inline entry: ``openssl passwd -apr1 -salt Yq3xT1aZ builder-9Kp``."""
SERVER_TOKENS = ("srv-token-one-4Fh", "srv-token-two-8Jd")
EXPORTER_CREDENTIALS = ("exporter", "exp-pass-2Wz")
EXPORTER_TOKENS = ("out-token-one-6Tn", "out-token-two-3Rm")
WRONG = ("wrong-pass-5Lb", "wrong-token-1Vc")
SECRETS = (ALICE[1], BOB[1], *SERVER_TOKENS, EXPORTER_CREDENTIALS[1], *EXPORTER_TOKENS, *WRONG)


def basic(username: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()


@dataclass
class Running:
    collector: CollectorProcess
    ports: dict[str, int]
    http_sink: Upstream
    grpc_basic: GrpcSink
    grpc_bearer: GrpcSink
    server_token: Path
    exporter_token: Path

    def no_secret_logged(self) -> None:
        log = self.collector.stderr()
        assert "level=debug" in log  # the refusals are logged, at debug level
        for secret in SECRETS:
            assert secret not in log
            assert base64.b64encode(secret.encode()).decode()[:12] not in log


def collector_config(
    tmp: Path, ports: dict[str, int], http_sink: Upstream, sinks: dict[str, GrpcSink]
) -> dict[str, Any]:
    htpasswd = tmp / ".htpasswd"
    hashed = bcrypt.hashpw(ALICE[1].encode(), bcrypt.gensalt(6)).decode()
    htpasswd.write_text(f"# users\nalice:{hashed}\n")

    def receiver(name: str, authenticator: str) -> dict[str, Any]:
        auth = {"authenticator": authenticator}
        return {
            "protocols": {
                "grpc": {"endpoint": f"127.0.0.1:{ports[name + '-grpc']}", "auth": auth},
                "http": {"endpoint": f"127.0.0.1:{ports[name + '-http']}", "auth": auth},
            }
        }

    def exporters(name: str, authenticator: str) -> dict[str, Any]:
        sink = sinks[name]
        return {
            f"otlphttp/{name}": {
                "endpoint": f"{http_sink.url}/{name}",
                "auth": {"authenticator": authenticator},
                "retry_on_failure": {"enabled": False},
            },
            f"otlp/{name}": {
                "endpoint": f"localhost:{sink.port}",
                "tls": {"ca_file": str(sink.ca_file)},
                "auth": {"authenticator": authenticator},
                "retry_on_failure": {"enabled": False},
            },
        }

    return {
        "extensions": {
            "basicauth/server": {
                "htpasswd": {"file": str(htpasswd), "inline": f"{BOB[0]}:{BOB_APR1}\n"}
            },
            "basicauth/client": {
                "client_auth": {
                    "username": EXPORTER_CREDENTIALS[0],
                    "password": EXPORTER_CREDENTIALS[1],
                }
            },
            "bearertokenauth/server": {"filename": str(tmp / "server.token")},
            "bearertokenauth/client": {"filename": str(tmp / "exporter.token")},
        },
        "receivers": {
            "otlp/basic": receiver("basic", "basicauth/server"),
            "otlp/bearer": receiver("bearer", "bearertokenauth/server"),
        },
        "exporters": {
            **exporters("basic", "basicauth/client"),
            **exporters("bearer", "bearertokenauth/client"),
        },
        "service": {
            "telemetry": {
                "logs": {"level": "debug"},
                "metrics": {"address": f"127.0.0.1:{ports['metrics']}"},
            },
            "extensions": [
                "basicauth/server",
                "basicauth/client",
                "bearertokenauth/server",
                "bearertokenauth/client",
            ],
            "pipelines": {
                f"logs/{name}": {
                    "receivers": [f"otlp/{name}"],
                    "exporters": [f"otlphttp/{name}", f"otlp/{name}"],
                }
                for name in ("basic", "bearer")
            },
        },
    }


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    tmp = tmp_path_factory.mktemp("auth")
    names = ("basic-grpc", "basic-http", "bearer-grpc", "bearer-http", "metrics")
    ports = dict(zip(names, free_ports(len(names)), strict=True))
    (tmp / "server.token").write_text(SERVER_TOKENS[0] + "\n")
    (tmp / "exporter.token").write_text(EXPORTER_TOKENS[0] + "\n")
    http_sink = Upstream()
    (tmp / "basic").mkdir()
    (tmp / "bearer").mkdir()
    with (
        GrpcSink(cert_folder=tmp / "basic") as grpc_basic,
        GrpcSink(cert_folder=tmp / "bearer") as grpc_bearer,
    ):
        sinks = {"basic": grpc_basic, "bearer": grpc_bearer}
        config = collector_config(tmp, ports, http_sink, sinks)
        collector = CollectorProcess(tmp, config).wait_ready()
        try:
            yield Running(
                collector,
                ports,
                http_sink,
                grpc_basic,
                grpc_bearer,
                tmp / "server.token",
                tmp / "exporter.token",
            )
        finally:
            code = collector.terminate()
            http_sink.stop()
        assert code == 0, collector.stderr()


# -- sending and seeing what arrived ---------------------------------------------------------


def send(running: Running, receiver: str, transport: str, body: str, auth: str | None) -> None:
    """One log record through the SDK's exporter (the SDK logs and gives up
    on a refusal: 401 and UNAUTHENTICATED are not retryable)."""
    port = running.ports[f"{receiver}-{transport}"]
    if transport == "http":
        headers = {"Authorization": auth} if auth else {}
        exporter: Any = HttpLogs(endpoint=f"http://127.0.0.1:{port}/v1/logs", headers=headers)
    else:
        metadata = (("authorization", auth),) if auth else ()
        exporter = GrpcLogs(endpoint=f"127.0.0.1:{port}", insecure=True, headers=metadata)
    _emit_logs(exporter, [body])


def raw_post(running: Running, receiver: str, body: str, headers: dict[str, str]) -> Any:
    document = {
        "resourceLogs": [{"scopeLogs": [{"logRecords": [{"body": {"stringValue": body}}]}]}]
    }
    return http_request(
        running.ports[f"{receiver}-http"],
        "POST",
        "/v1/logs",
        json.dumps(document).encode(),
        {"Content-Type": "application/json", **headers},
        timeout=10,
    )


def arrived(running: Running, name: str, prefix: str) -> tuple[list[str], list[str]]:
    """Bodies starting with `prefix` at (the HTTP sink, the gRPC sink) of `name`."""
    http = [
        body
        for request in running.http_sink.received(f"/{name}/v1/logs")
        for body in _bodies([ExportLogsServiceRequest.FromString(request.decoded())])
    ]
    sink = running.grpc_basic if name == "basic" else running.grpc_bearer
    grpc = _bodies([ExportLogsServiceRequest.FromString(call.body) for call in sink.calls])
    return (
        sorted(b for b in http if b.startswith(prefix)),
        sorted(b for b in grpc if b.startswith(prefix)),
    )


def wait_until(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "not in time"
        time.sleep(0.02)


def expect_at_sinks(running: Running, name: str, prefix: str, expected: list[str]) -> None:
    """Exactly `expected` arrives at both sinks (refused records were answered
    401 before the pipeline: nothing more can come later)."""
    wanted = (sorted(expected), sorted(expected))
    wait_until(lambda: arrived(running, name, prefix) == wanted)
    time.sleep(0.2)
    assert arrived(running, name, prefix) == wanted


# -- the tests -------------------------------------------------------------------------------


def test_basicauth_lets_only_htpasswd_users_in(running: Running) -> None:
    cases = {
        "alice": basic(*ALICE),
        "bob": basic(*BOB),
        "wrong": basic(ALICE[0], WRONG[0]),
        "unknown": basic("mallory", ALICE[1]),
        "bearer": f"Bearer {SERVER_TOKENS[0]}",
        "missing": None,
    }
    for transport in ("http", "grpc"):
        for case, auth in cases.items():
            send(running, "basic", transport, f"basic-sdk-{transport}-{case}", auth)
    expect_at_sinks(
        running,
        "basic",
        "basic-sdk-",
        [f"basic-sdk-{t}-{user}" for t in ("http", "grpc") for user in ("alice", "bob")],
    )
    running.no_secret_logged()


def test_bearertokenauth_lets_only_the_token_in(running: Running) -> None:
    cases = {
        "right": f"Bearer {SERVER_TOKENS[0]}",
        "wrong": f"Bearer {WRONG[1]}",
        "no-scheme": SERVER_TOKENS[0],
        "basic": basic(*ALICE),
        "missing": None,
    }
    for transport in ("http", "grpc"):
        for case, auth in cases.items():
            send(running, "bearer", transport, f"bearer-sdk-{transport}-{case}", auth)
    expect_at_sinks(
        running, "bearer", "bearer-sdk-", ["bearer-sdk-grpc-right", "bearer-sdk-http-right"]
    )
    running.no_secret_logged()


def test_refusals_are_upstreams_401(running: Running) -> None:
    # v0.115's confighttp authInterceptor: Go's http.Error with the status
    # text, whatever the authenticator's reason
    refusals = [
        ("basic", None),
        ("basic", basic(ALICE[0], WRONG[0])),
        ("basic", f"Bearer {WRONG[1]}"),
        ("bearer", None),
        ("bearer", f"Bearer {WRONG[1]}"),
    ]
    for receiver, auth in refusals:
        answer = raw_post(running, receiver, "raw-refused", {"Authorization": auth} if auth else {})
        assert (answer.status, answer.header("Content-Type")) == (401, "text/plain; charset=utf-8")
        assert answer.body == b"Unauthorized\n"
    assert (
        raw_post(running, "basic", "raw-basic-ok", {"Authorization": basic(*ALICE)}).status == 200
    )
    ok = raw_post(
        running, "bearer", "raw-bearer-ok", {"Authorization": f"Bearer {SERVER_TOKENS[0]}"}
    )
    assert ok.status == 200
    expect_at_sinks(running, "basic", "raw-", ["raw-basic-ok"])
    expect_at_sinks(running, "bearer", "raw-", ["raw-bearer-ok"])
    running.no_secret_logged()


def test_exporters_sign_what_they_send(running: Running) -> None:
    send(running, "basic", "http", "signed-basic", basic(*ALICE))
    expect_at_sinks(running, "basic", "signed-", ["signed-basic"])
    exporter_basic = basic(*EXPORTER_CREDENTIALS)
    assert {r.header("Authorization") for r in running.http_sink.received("/basic/")} == {
        exporter_basic
    }
    assert {c.metadata["authorization"] for c in running.grpc_basic.calls} == {exporter_basic}
    send(running, "bearer", "grpc", "signed-bearer", f"Bearer {SERVER_TOKENS[0]}")
    expect_at_sinks(running, "bearer", "signed-", ["signed-bearer"])
    signed = {r.header("Authorization") for r in running.http_sink.received("/bearer/")}
    signed |= {c.metadata["authorization"] for c in running.grpc_bearer.calls}
    assert signed <= {f"Bearer {token}" for token in EXPORTER_TOKENS}
    assert f"Bearer {EXPORTER_TOKENS[0]}" in signed
    running.no_secret_logged()


def test_token_files_are_read_again_without_a_restart(running: Running) -> None:
    old, new = (f"Bearer {token}" for token in SERVER_TOKENS)
    running.server_token.write_text(SERVER_TOKENS[1] + "\n")
    running.exporter_token.write_text(EXPORTER_TOKENS[1] + "\n")
    wait_until(
        lambda: raw_post(running, "bearer", "rotated-probe", {"Authorization": new}).status == 200
    )
    assert raw_post(running, "bearer", "rotated-old", {"Authorization": old}).status == 401
    send(running, "bearer", "grpc", "rotated-new", new)
    wait_until(lambda: "rotated-new" in arrived(running, "bearer", "rotated-new")[1])
    last_http = running.http_sink.received("/bearer/")[-1]
    last_grpc = running.grpc_bearer.calls[-1]
    assert last_http.header("Authorization") == f"Bearer {EXPORTER_TOKENS[1]}"
    assert last_grpc.metadata["authorization"] == f"Bearer {EXPORTER_TOKENS[1]}"
    assert "credentials file" in running.collector.stderr()
    running.no_secret_logged()
