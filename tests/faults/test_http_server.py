"""Edge's HTTP server against hostile and careless clients (issue 12, defects
3 and 4): header, count and URL limits; idle, header and body timeouts; a
connection cap; body budgets that cover chunked bodies and come back on
abort; a 413 the client can read; half-closed connections still answered;
memory that returns to idle after an abusive load."""

from __future__ import annotations

import http.client
import resource
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from tests.edge.helpers import EdgeLauncher, Reply, Upstream, http_request
from tests.faults.hostile import (
    MiB,
    Outcome,
    abort,
    connect,
    http_bytes,
    memory,
    open_idle,
    read_answer,
    send_concurrently,
    send_naively,
    send_until_answered,
    trickle,
    wait_closed,
)
from tests.faults.scripted import ScriptedUpstream


def pieces(data: bytes, size: int = 64 << 10) -> Iterator[bytes]:
    return (data[i : i + size] for i in range(0, len(data), size))


def chunked(data: bytes, size: int = 64 << 10) -> bytes:
    """`data` in Transfer-Encoding: chunked pieces, without the final chunk."""
    return b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces(data, size))


def assert_refused_and_closed(
    sock: socket.socket, outcome: Outcome, status: int, scripted: ScriptedUpstream
) -> None:
    """Edge itself answered `status` with a JSON error, forwarded nothing, and
    closed the connection."""
    forwarded = sum(len(c.received) for c in scripted.connections)
    assert not forwarded, f"Edge forwarded {forwarded} bytes, not answering {status}: {outcome}"
    assert outcome.status == status, f"expected {status}; Edge: {outcome}"
    assert outcome.error, f"a JSON error says why: {outcome}"
    closing = wait_closed(sock, timeout=5)
    assert closing.ended in ("eof", "reset"), f"after the {status}, the connection: {closing}"


# -- limits ------------------------------------------------------------------------


def padded(count: int, size: int) -> list[tuple[str, str]]:
    return [(f"X-Pad-{i}", "p" * size) for i in range(count)]


OVER_LIMITS = {
    "header-size-default": ({}, http_bytes("GET", "/x", headers=padded(10, 7000)), 431),
    "header-size-configured": (
        {"max_header_size": 4096},
        http_bytes("GET", "/x", headers=padded(1, 6000)),
        431,
    ),
    "header-count-default": ({}, http_bytes("GET", "/x", headers=padded(150, 1)), 431),
    "header-count-configured": (
        {"max_header_count": 20},
        http_bytes("GET", "/x", headers=padded(30, 1)),
        431,
    ),
    "url-default": ({}, http_bytes("GET", "/x?" + "u" * 9000), 414),
    "url-configured": ({"max_url_size": 1024}, http_bytes("GET", "/x?" + "u" * 2000), 414),
}


@pytest.mark.parametrize("limit", OVER_LIMITS)
def test_request_over_a_header_or_url_limit_is_refused(
    start_edge: EdgeLauncher, scripted: ScriptedUpstream, limit: str
) -> None:
    """Defect 3 (no header size limit; none on header count or URL either):
    a header block over max_header_size (default 64 KiB) or with more lines
    than max_header_count (default 100) gets 431, a request target longer
    than max_url_size (default 8192) gets 414; then the connection closes.
    Each limit at its default and as configured."""
    config, request, status = OVER_LIMITS[limit]
    edge = start_edge(upstream_url=scripted.url, **config)
    with connect(edge.port) as sock:
        outcome = send_until_answered(sock, pieces(request))
        assert_refused_and_closed(sock, outcome, status, scripted)


def test_request_within_the_header_and_url_limits_is_forwarded(
    start_edge: EdgeLauncher, scripted: ScriptedUpstream
) -> None:
    """Defect 3, the guard on the fix: the limits are not tighter than their
    defaults. An 8000-byte target with 92 header lines, 62 KiB in all, is
    forwarded as it came."""
    edge = start_edge(upstream_url=scripted.url)
    target = "/x?" + "u" * 7997
    with connect(edge.port) as sock:
        sock.sendall(http_bytes("GET", target, headers=padded(90, 600)))
        outcome = read_answer(sock)
    assert outcome.status == 200, outcome
    [forwarded] = scripted.committed()
    assert forwarded.target == target
    assert sum(name.startswith("X-Pad-") for name, _ in forwarded.headers) == 90


def test_22_mib_of_headers_is_refused_with_memory_bounded(
    start_edge: EdgeLauncher, scripted: ScriptedUpstream
) -> None:
    """Defect 3 (43 -> 280 MB RSS, kept after close): one request with a
    22 MiB header is refused with 431 and Edge's peak RSS stays under 64 MiB."""
    edge = start_edge(upstream_url=scripted.url)
    flood = [b"x" * (64 << 10)] * (22 * 16)
    with connect(edge.port) as sock:
        parts = [b"GET /x HTTP/1.1\r\nHost: edge\r\nX-Flood: ", *flood, b"\r\n\r\n"]
        outcome = send_until_answered(sock, parts)
        used = memory(edge.process.pid)
        assert used.peak < 64 * MiB, f"after a 22 MiB header: {used}; Edge: {outcome}"
        assert_refused_and_closed(sock, outcome, 431, scripted)


# -- timeouts ----------------------------------------------------------------------


def test_idle_keep_alive_connections_are_closed_after_idle_timeout(
    start_edge: EdgeLauncher,
) -> None:
    """Defect 4 (nothing times out idle connections): with idle_timeout_secs
    0.5, a connection that never sent a byte and one idle after an answered
    request are both closed by Edge (within 3 s here)."""
    edge = start_edge(idle_timeout_secs=0.5)
    with connect(edge.port) as silent, connect(edge.port) as used:
        used.sendall(http_bytes("GET", "/x"))
        assert read_answer(used).status == 200
        for name, sock in (("never used", silent), ("idle after a request", used)):
            outcome = wait_closed(sock, timeout=3)
            assert outcome.ended in ("eof", "reset"), f"{name}: {outcome}"


def test_idle_timeout_spares_a_request_waiting_on_the_upstream(
    start_edge: EdgeLauncher, upstream: Upstream
) -> None:
    """Defect 4, the guard on the fix: a connection whose request is in
    flight is not idle; an upstream answering after 1.5 s, three times
    idle_timeout_secs, is still relayed."""
    upstream.respond = Reply(200, b'{"slow": true}', delay=1.5)
    edge = start_edge(idle_timeout_secs=0.5)
    with connect(edge.port) as sock:
        sock.sendall(http_bytes("GET", "/x"))
        outcome = read_answer(sock, timeout=10)
    assert (outcome.status, outcome.body) == (200, b'{"slow": true}'), outcome


def test_slowloris_headers_get_408_after_header_timeout(start_edge: EdgeLauncher) -> None:
    """Defect 4 (slowloris): header bytes trickling in at 10 per second never
    complete the header block; with header_timeout_secs 0.5 Edge answers 408
    and closes, although every byte keeps the connection from being idle."""
    edge = start_edge(header_timeout_secs=0.5, idle_timeout_secs=30)
    slow = b"GET /x HTTP/1.1\r\nHost: edge\r\nX-Slow: " + b"s" * 200
    with connect(edge.port) as sock:
        outcome = trickle(sock, slow, interval=0.1, timeout=3)
        assert outcome.status == 408, f"slowloris headers: {outcome}"
        assert wait_closed(sock, timeout=5).ended in ("eof", "reset")


def test_body_shorter_than_content_length_gets_408(start_edge: EdgeLauncher) -> None:
    """Defect 4 (waits forever): Content-Length 1000 and 10 bytes sent; with
    body_timeout_secs 0.5 Edge answers 408 and closes."""
    edge = start_edge(body_timeout_secs=0.5)
    with connect(edge.port) as sock:
        sock.sendall(http_bytes("POST", "/x", headers=[("Content-Length", "1000")]) + b"x" * 10)
        outcome = read_answer(sock, timeout=3)
        assert outcome.status == 408, f"body 990 bytes short: {outcome}"
        assert wait_closed(sock, timeout=5).ended in ("eof", "reset")


# -- connections ---------------------------------------------------------------------


def test_connection_cap_keeps_health_answering_when_descriptors_are_scarce(
    start_edge: EdgeLauncher,
) -> None:
    """Defect 4 (24k idle connections exhausted the descriptors and
    /_health failed), scaled down: Edge may open 128 files, 200 idle
    connections arrive, max_connections is 50. /_health still answers 200,
    and another request is served or refused with 503 + Retry-After."""
    edge = start_edge(max_connections=50)
    resource.prlimit(edge.process.pid, resource.RLIMIT_NOFILE, (128, 128))
    idle = open_idle(edge.port, 200)
    try:
        time.sleep(0.3)  # let Edge accept what it will
        try:
            health = http_request(edge.port, "GET", "/_health", timeout=5)
        except OSError as problem:
            pytest.fail(f"/_health with 200 idle connections open: {problem!r}")
        assert health.status == 200, health
        other = http_request(edge.port, "GET", "/x", timeout=5)
        assert other.status == 200 or (other.status == 503 and other.header("Retry-After")), other
    finally:
        for sock in idle:
            sock.close()


# -- body budget and 413 ---------------------------------------------------------------


def test_stalled_bodies_do_not_block_other_clients(
    start_edge: EdgeLauncher, upstream: Upstream
) -> None:
    """Defect 4 (two connections that declare Content-Length 1048576 and send
    nothing hold the 2 MiB body budget; every later large POST hangs): with
    body_timeout_secs 1, a 1 MiB POST from another client still succeeds."""
    edge = start_edge(body_timeout_secs=1)
    declared = http_bytes("POST", "/stall", headers=[("Content-Length", str(MiB))])
    stalled = [connect(edge.port) for _ in range(2)]
    try:
        for sock in stalled:
            sock.sendall(declared)
        time.sleep(0.2)  # their headers are in: the budget is claimed
        with connect(edge.port, timeout=5) as sock:
            error = send_naively(sock, [http_bytes("POST", "/upload", b"u" * MiB)])
            outcome = read_answer(sock, timeout=5)
        outcome.send_error = error
        assert outcome.status == 200, f"1 MiB POST behind two stalled bodies: {outcome}"
        assert [r.path for r in upstream.received()] == ["/upload"]
    finally:
        for sock in stalled:
            sock.close()


def post_100_kb(port: int) -> Outcome:
    """A normal 100 KB POST to /normal on a fresh connection, answered within 5 s."""
    with connect(port, timeout=5) as sock:
        error = send_naively(sock, [http_bytes("POST", "/normal", b"n" * 100_000)])
        outcome = read_answer(sock, timeout=5)
    outcome.send_error = error
    return outcome


def test_stalled_uploads_give_their_memory_to_a_waiting_request(
    start_edge: EdgeLauncher, upstream: Upstream
) -> None:
    """Three clients declare Content-Length 1000000, send 900,000 bytes and
    stall: they hold the whole 2 MiB body budget (one of them past it) until
    their 408 at body_timeout_secs (30 s), and a 100 KB POST from another
    client waited in line that long. A body stalled for a second while
    another request waits for memory is cut off (408), and the POST succeeds
    within 5 s."""
    edge = start_edge()
    declared = http_bytes("POST", "/stall", headers=[("Content-Length", "1000000")])
    stalled = [connect(edge.port) for _ in range(3)]
    try:
        for sock in stalled:
            sock.sendall(declared + b"s" * 900_000)
        time.sleep(0.3)  # let Edge take in what it will
        outcome = post_100_kb(edge.port)
        assert outcome.status == 200, f"100 KB POST behind three stalled uploads: {outcome}"
        assert [r.path for r in upstream.received()] == ["/normal"]
    finally:
        for sock in stalled:
            sock.close()


def test_a_body_without_memory_is_refused_with_503_not_queued(
    start_edge: EdgeLauncher, upstream: Upstream
) -> None:
    """Two 1 MiB POSTs wait on a slow upstream (6 s), holding the whole 2 MiB
    body budget. A 100 KB POST cannot get memory: it is refused within 5 s
    with 503 and Retry-After, which senders retry, instead of waiting for
    memory while its sender's timeout runs."""
    upstream.respond = lambda record: Reply(delay=6 if record.path == "/slow" else 0)
    edge = start_edge()
    slow = [
        threading.Thread(target=http_request, args=(edge.port, "POST", "/slow", b"s" * MiB))
        for _ in range(2)
    ]
    for thread in slow:
        thread.start()
    assert len(upstream.wait_for(2, path_prefix="/slow")) == 2
    expecting: list[bytes] = []
    expect = threading.Thread(target=lambda: expecting.append(_expect_continue(edge.port)))
    expect.start()
    outcome = post_100_kb(edge.port)
    expect.join(30)
    for thread in slow:
        thread.join(30)
    assert outcome.status == 503 and b"Retry-After: 1" in outcome.data, outcome
    # A sender that asked before sending its body is not told to send it
    # while there is no memory for it: its first answer is the 503.
    assert expecting and expecting[0].startswith(b"HTTP/1.1 503"), expecting
    assert [r.path for r in upstream.received()] == ["/slow"] * 2


def _expect_continue(port: int) -> bytes:
    """Headers of a 100 KB POST with ``Expect: 100-continue``; the first
    answer Edge gives before the body is sent."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(
            b"POST /expect HTTP/1.1\r\nHost: edge\r\nContent-Length: 102400\r\n"
            b"Expect: 100-continue\r\n\r\n"
        )
        return sock.recv(4096)


def test_chunked_bodies_count_against_the_body_budget(start_edge: EdgeLauncher) -> None:
    """Defect 4 (chunked bodies bypass the budget): 40 connections each send
    960 KiB of a chunked body and stall. Like Content-Length bodies, they
    are held within the 2 MiB budget (reading paused beyond it), so Edge
    grows by far less than their 37.5 MiB."""
    edge = start_edge(body_timeout_secs=30)
    assert http_request(edge.port, "POST", "/warm", b"w" * MiB).status == 200
    before = memory(edge.process.pid)
    head = http_bytes("POST", "/upload", headers=[("Transfer-Encoding", "chunked")])
    uploads = [connect(edge.port) for _ in range(40)]
    try:
        send_concurrently([(sock, head + chunked(b"c" * (960 << 10))) for sock in uploads])
        time.sleep(0.3)  # let Edge take in what it will
        after = memory(edge.process.pid)
    finally:
        for sock in uploads:
            sock.close()
    grown = (after.rss - before.rss) / MiB
    assert grown < 16, f"40 stalled chunked uploads grew Edge by {grown:.1f} MiB: {after}"


@pytest.mark.parametrize("framing", ["content-length", "chunked"])
def test_413_reaches_a_client_that_keeps_sending(start_edge: EdgeLauncher, framing: str) -> None:
    """Defect 4 (over-limit 413s arrive as connection resets, so clients
    retry the same body): a raw client sends a whole 5 MB body
    (Content-Length 5000000, or chunked; max_body_size 1 MiB) before reading.
    Edge answers 413 and reads the rest (or half-closes) before closing, so
    the sending is not cut by a reset and the 413 is read."""
    edge = start_edge()
    body = b"b" * 5_000_000
    if framing == "chunked":
        request = http_bytes("POST", "/big", headers=[("Transfer-Encoding", "chunked")])
        request += chunked(body) + b"0\r\n\r\n"
    else:
        request = http_bytes("POST", "/big", body)
    with connect(edge.port) as sock:
        error = send_naively(sock, pieces(request))
        outcome = read_answer(sock, timeout=5)
    outcome.send_error = error
    assert error is None and outcome.status == 413, f"5 MB {framing} body: {outcome}"


def test_413_reaches_http_client(start_edge: EdgeLauncher) -> None:
    """Defect 4: the same with http.client, which sends the whole body before
    reading the response: neither sending nor reading fails, the status is 413."""
    edge = start_edge()
    connection = http.client.HTTPConnection("127.0.0.1", edge.port, timeout=5)
    try:
        connection.request("POST", "/big", body=b"b" * 5_000_000)
        status = connection.getresponse().status
    except (OSError, http.client.HTTPException) as problem:
        pytest.fail(f"http.client posting 5 MB got {problem!r}, not the 413")
    finally:
        connection.close()
    assert status == 413, status


def abort_half_uploads(port: int, clients: int) -> None:
    """`clients` connections each declare a 1 MiB body, send half of it at
    once, then are killed (RST)."""
    declared = http_bytes("POST", "/upload", headers=[("Content-Length", str(MiB))])
    uploads = [connect(port) for _ in range(clients)]
    try:
        send_concurrently([(sock, declared + b"h" * (MiB // 2)) for sock in uploads], 0.2)
    finally:
        for sock in uploads:
            abort(sock)


def test_aborted_uploads_give_their_budget_back(
    start_edge: EdgeLauncher, upstream: Upstream
) -> None:
    """Defect 4: after 50 aborted half-uploads, a 1 MiB POST succeeds at once
    (within 5 s): the aborted ones released their reservations."""
    edge = start_edge()
    abort_half_uploads(edge.port, 50)
    with connect(edge.port, timeout=5) as sock:
        error = send_naively(sock, [http_bytes("POST", "/after", b"a" * MiB)])
        outcome = read_answer(sock, timeout=5)
    outcome.send_error = error
    assert outcome.status == 200, f"1 MiB POST after 50 aborted uploads: {outcome}"


def test_memory_returns_to_idle_after_aborted_uploads(start_edge: EdgeLauncher) -> None:
    """Defect 3 (50 clients aborting half-sent 1 MiB bodies for 20 s drove
    RSS to 3.8 GB, and it stayed): rounds of 50 such clients for 3 s (10
    rounds at least), then RSS is back within 15 MiB of idle within 10 s."""
    edge = start_edge()
    assert http_request(edge.port, "POST", "/warm", b"w" * MiB).status == 200
    idle = memory(edge.process.pid)
    rounds = 0
    ends = time.monotonic() + 3
    while rounds < 10 or time.monotonic() < ends:
        abort_half_uploads(edge.port, 50)
        rounds += 1
    loaded = memory(edge.process.pid)
    settled = time.monotonic() + 10
    while (now := memory(edge.process.pid)).rss > idle.rss + 15 * MiB:
        if time.monotonic() > settled:
            pytest.fail(
                f"{rounds} rounds of 50 aborted uploads: idle {idle}, "
                f"right after {loaded}, 10 s later {now}"
            )
        time.sleep(0.2)


# -- half-close --------------------------------------------------------------------


def test_half_closed_client_still_gets_its_answer(
    start_edge: EdgeLauncher, upstream: Upstream
) -> None:
    """Defect 4 (a client that half-closes after a full request gets no
    answer, although the upstream received the request): shutdown(SHUT_WR)
    after the request; the 200 still arrives, the upstream saw it once."""
    edge = start_edge()
    with connect(edge.port) as sock:
        sock.sendall(http_bytes("POST", "/v1/logs", b'{"resourceLogs": []}'))
        sock.shutdown(socket.SHUT_WR)
        outcome = read_answer(sock, timeout=5)
    assert outcome.status == 200, f"half-closed after a whole request: {outcome}"
    assert len(upstream.wait_for(1, timeout=1)) == 1, upstream.received()
