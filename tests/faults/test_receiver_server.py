"""The transport fault battery against the collector's OTLP/HTTP receiver,
which stands on Edge's HTTP server: the same deadlines, body budget,
readable too-large answers and half-close handling, through ``sluice-collector``'s own
config keys (``read_header_timeout``, ``read_timeout``,
``max_request_body_size``); the request head's limit is Go's net/http's."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from tests.collector.helpers import CollectorProcess, free_ports
from tests.edge.helpers import Upstream
from tests.faults.hostile import (
    MiB,
    connect,
    http_bytes,
    read_answer,
    send_naively,
    trickle,
    wait_closed,
)
from tests.faults.test_http_server import chunked, padded, pieces

Start = Callable[..., int]
PROTOBUF = [("Content-Type", "application/x-protobuf")]


@pytest.fixture
def start_receiver(tmp_path: Path, upstream: Upstream) -> Iterator[Start]:
    """``start_receiver(**http_settings)``: a collector whose OTLP/HTTP
    receiver has `http_settings`, exporting logs to `upstream`; its port."""
    collectors: list[CollectorProcess] = []

    def start(**http: Any) -> int:
        port, metrics = free_ports(2)
        config = {
            "receivers": {
                "otlp": {"protocols": {"http": {"endpoint": f"127.0.0.1:{port}", **http}}}
            },
            "exporters": {"otlphttp": {"endpoint": upstream.url, "compression": "none"}},
            "service": {
                "telemetry": {"metrics": {"address": f"127.0.0.1:{metrics}"}},
                "pipelines": {"logs": {"receivers": ["otlp"], "exporters": ["otlphttp"]}},
            },
        }
        collector = CollectorProcess(tmp_path / f"c{len(collectors)}", config).wait_ready()
        collectors.append(collector)
        return port

    yield start
    for collector in collectors:
        assert collector.terminate() == 0, collector.stderr()


def one_log(body: str = "hello") -> bytes:
    request = ExportLogsServiceRequest()
    request.resource_logs.add().scope_logs.add().log_records.add().body.string_value = body
    return bytes(request.SerializeToString())


OVER_EDGE_S_LIMITS = {
    "header-size": ("/v1/logs", padded(10, 7000)),
    "header-count": ("/v1/logs", padded(150, 1)),
    "url": ("/v1/logs?" + "u" * 9000, []),
}


@pytest.mark.parametrize("limit", OVER_EDGE_S_LIMITS)
def test_requests_over_edge_s_default_header_and_url_limits_are_served(
    start_receiver: Start, limit: str
) -> None:
    """Upstream's receiver is Go's net/http server without MaxHeaderBytes:
    only a head over 1 MiB is refused, so Edge's tighter defaults (64 KiB
    of headers, 100 of them, an 8 KiB target) do not apply."""
    target, headers = OVER_EDGE_S_LIMITS[limit]
    with connect(start_receiver()) as sock:
        sock.sendall(http_bytes("POST", target, one_log(), [*PROTOBUF, *headers]))
        outcome = read_answer(sock, timeout=5)
        assert outcome.status == 200, outcome


def test_a_head_over_go_s_1_mib_is_refused(start_receiver: Start, upstream: Upstream) -> None:
    request = http_bytes(
        "POST", "/v1/logs", headers=[(f"X-Pad-{i}", "p" * 10_000) for i in range(110)]
    )
    with connect(start_receiver()) as sock:
        sock.sendall(request)
        outcome = read_answer(sock, timeout=5)
        assert outcome.status == 431, outcome
        assert wait_closed(sock, timeout=5).ended in ("eof", "reset")
    assert upstream.received() == []


def test_slowloris_headers_are_cut_off_after_read_header_timeout(start_receiver: Start) -> None:
    """Go's server closes a connection whose head did not arrive in time
    without answering (a read that timed out is a client gone to it)."""
    port = start_receiver(read_header_timeout="500ms")
    slow = b"POST /v1/logs HTTP/1.1\r\nHost: c\r\nX-Slow: " + b"s" * 200
    with connect(port) as sock:
        outcome = trickle(sock, slow, interval=0.1, timeout=3)
        assert (outcome.data, outcome.ended) == (b"", "eof"), outcome
        assert outcome.elapsed < 2, outcome


def test_a_body_shorter_than_content_length_gets_400_after_read_timeout(
    start_receiver: Start,
) -> None:
    """Go's handler reads the body, the read times out, and the receiver
    answers its own 400 with the read's error, then closes."""
    port = start_receiver(read_timeout="500ms")
    with connect(port) as sock:
        head = http_bytes("POST", "/v1/logs", headers=[*PROTOBUF, ("Content-Length", "1000")])
        sock.sendall(head + b"x" * 10)
        outcome = read_answer(sock, timeout=3)
        assert outcome.status == 400, outcome
        assert b"i/o timeout" in outcome.data, outcome
        assert outcome.ended == "eof", outcome


def test_stalled_bodies_do_not_block_other_senders(
    start_receiver: Start, upstream: Upstream
) -> None:
    port = start_receiver(read_timeout="1s", max_request_body_size=4 * MiB)
    declared = http_bytes("POST", "/v1/logs", headers=[*PROTOBUF, ("Content-Length", str(MiB))])
    stalled = [connect(port) for _ in range(2)]
    try:
        for sock in stalled:
            sock.sendall(declared)
        time.sleep(0.2)
        with connect(port, timeout=5) as sock:
            send_naively(sock, [http_bytes("POST", "/v1/logs", one_log("x" * MiB), PROTOBUF)])
            outcome = read_answer(sock, timeout=5)
        assert outcome.status == 200, outcome
        assert len(upstream.wait_for(1, timeout=5)) == 1
    finally:
        for sock in stalled:
            sock.close()


@pytest.mark.parametrize("framing", ["content-length", "chunked"])
def test_too_large_answer_reaches_a_sender_that_keeps_sending(
    start_receiver: Start, framing: str
) -> None:
    port = start_receiver(max_request_body_size=MiB)
    body = b"b" * 5_000_000
    if framing == "chunked":
        request = http_bytes(
            "POST", "/v1/logs", headers=[*PROTOBUF, ("Transfer-Encoding", "chunked")]
        )
        request += chunked(body) + b"0\r\n\r\n"
    else:
        request = http_bytes("POST", "/v1/logs", body, PROTOBUF)
    with connect(port) as sock:
        error = send_naively(sock, pieces(request))
        outcome = read_answer(sock, timeout=5)
    # Upstream's answer to a body past the limit: 400 with a Status.
    assert error is None and outcome.status == 400, outcome
    assert outcome.data.endswith(b"http: request body too large"), outcome


def test_a_half_closed_sender_still_gets_its_answer(
    start_receiver: Start, upstream: Upstream
) -> None:
    with connect(start_receiver()) as sock:
        sock.sendall(http_bytes("POST", "/v1/logs", one_log(), PROTOBUF))
        sock.shutdown(socket.SHUT_WR)
        outcome = read_answer(sock, timeout=5)
    assert outcome.status == 200, outcome
    assert len(upstream.wait_for(1, timeout=5)) == 1
