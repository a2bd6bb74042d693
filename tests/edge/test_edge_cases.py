"""Edge over raw HTTP: encodings, limits, fail-open, proxying, headers,
upstream failures, keep-alive and pipelining, malformed requests, and the
local /_health and /_metrics routes (EDGE.md section 2)."""

from __future__ import annotations

import gzip
import http.client
import json
import socket
import threading
import time
import zlib
from collections.abc import Iterator
from typing import Any

import pytest
import zstandard

from tests.edge.helpers import (
    EdgeLauncher,
    EdgeProcess,
    Prometheus,
    Recorded,
    Reply,
    Upstream,
    compress,
    decompress,
    drop_logs,
    free_port,
    json_bodies,
    otlp_logs_json,
    otlp_logs_proto,
    otlp_metrics_json,
    otlp_traces_proto,
    policies,
    proto_bodies,
    raw_exchange,
    read_responses,
)

MAX_BODY = 2048
TIMEOUT = 1.0
POLICIES = policies(
    drop_logs("drop-logs", log_field="body", contains="drop-me"),
    {
        "id": "drop-metrics",
        "name": "drop-metrics",
        "metric": {"match": [{"metric_field": "name", "starts_with": "drop."}], "keep": False},
    },
    {
        "id": "drop-spans",
        "name": "drop-spans",
        "trace": {
            "match": [{"trace_field": "name", "exact": "drop-span"}],
            "keep": {"percentage": 0},
        },
    },
)
MEDIA = {"json": "application/json", "protobuf": "application/x-protobuf"}


@pytest.fixture(scope="module")
def shared_upstream() -> Iterator[Upstream]:
    server = Upstream()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def shared_edge(
    shared_upstream: Upstream, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[EdgeProcess]:
    """One Edge for most tests: max_body_size 2048, upstream timeout 1 s."""
    launcher = EdgeLauncher(tmp_path_factory.mktemp("shared-edge"), shared_upstream)
    edge = launcher(POLICIES, max_body_size=MAX_BODY, upstream_timeout_secs=TIMEOUT)
    yield edge
    assert edge.terminate() == 0, edge.stderr()


@pytest.fixture
def edge(shared_edge: EdgeProcess, shared_upstream: Upstream) -> EdgeProcess:
    shared_upstream.reset()
    assert shared_edge.process.poll() is None, shared_edge.stderr()
    return shared_edge


@pytest.fixture
def up(shared_upstream: Upstream) -> Upstream:
    return shared_upstream


def logs_payload(media: str, bodies: list[str]) -> bytes:
    if media == "json":
        return json.dumps(otlp_logs_json(bodies)).encode()
    return otlp_logs_proto(bodies)


def logs_of(media: str, data: bytes) -> list[str]:
    return json_bodies(json.loads(data)) if media == "json" else proto_bodies(data)


def assert_json_error(answer: Any, status: int) -> None:
    assert answer.status == status, answer
    assert (answer.header("Content-Type") or "").startswith("application/json"), answer
    assert isinstance(answer.json().get("error"), str), answer


def raw_post(path: str, body: bytes, *headers: str) -> bytes:
    head = [f"POST {path} HTTP/1.1", "Host: edge", f"Content-Length: {len(body)}", *headers]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def first_answer(data: bytes) -> tuple[int, bytes]:
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 "), data
    return int(head.split(b" ")[1]), body


# -- Content-Encoding ------------------------------------------------------------------


@pytest.mark.parametrize("media", ["json", "protobuf"])
@pytest.mark.parametrize("encoding", ["gzip", "deflate", "zstd"])
def test_modified_body_is_forwarded_reencoded_with_its_encoding(
    edge: EdgeProcess, up: Upstream, encoding: str, media: str
) -> None:
    body = compress(encoding, logs_payload(media, ["keep-1", "drop-me", "keep-2"]))
    answer = edge.post("/v1/logs", body, MEDIA[media], Content_Encoding=encoding)
    assert answer.status == 200, answer
    [got] = up.received()
    assert got.header("Content-Encoding") == encoding
    assert got.header("Content-Type") == MEDIA[media]
    assert logs_of(media, decompress(encoding, got.body)) == ["keep-1", "keep-2"]
    assert int(got.header("Content-Length") or -1) == len(got.body)


@pytest.mark.parametrize("media", ["json", "protobuf"])
@pytest.mark.parametrize("encoding", ["", "gzip", "deflate", "zstd"])
def test_unmodified_body_is_forwarded_byte_for_byte(
    edge: EdgeProcess, up: Upstream, encoding: str, media: str
) -> None:
    body = compress(encoding, logs_payload(media, ["keep-1", "keep-2"]))
    headers = {"Content-Encoding": encoding} if encoding else {}
    answer = edge.request("POST", "/v1/logs", body, {"Content-Type": MEDIA[media], **headers})
    assert answer.status == 200, answer
    [got] = up.received()
    assert got.body == body
    assert got.header("Content-Encoding") == (encoding or None)


def test_content_type_parameters_are_understood(edge: EdgeProcess, up: Upstream) -> None:
    body = logs_payload("json", ["keep", "drop-me"])
    answer = edge.post("/v1/logs", body, "application/json; charset=utf-8")
    assert answer.status == 200
    [got] = up.received()
    assert json_bodies(json.loads(got.body)) == ["keep"]


# -- size limits -------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/v1/logs", "/api/v2/logs", "/somewhere/else"])
def test_body_over_max_body_size_is_413_and_not_forwarded(
    edge: EdgeProcess, up: Upstream, path: str
) -> None:
    body = b"x" * (MAX_BODY + 1)
    answer = raw_exchange(edge.port, raw_post(path, body, "Content-Type: application/json"))
    status, text = first_answer(answer)
    assert status == 413, answer
    assert "error" in json.loads(text)
    assert up.received() == []
    assert edge.health()["status"] == "ok"


def test_body_of_exactly_max_body_size_is_accepted(edge: EdgeProcess, up: Upstream) -> None:
    body = b"y" * MAX_BODY
    answer = edge.request("POST", "/exactly", body)
    assert answer.status == 200
    [got] = up.received()
    assert got.body == body


def test_chunked_upload_over_max_body_size_is_413(edge: EdgeProcess, up: Upstream) -> None:
    chunk = b"z" * 1500
    data = (
        b"POST /v1/logs HTTP/1.1\r\nHost: edge\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
        + b"%x\r\n%s\r\n" % (len(chunk), chunk) * 2
        + b"0\r\n\r\n"
    )
    status, _ = first_answer(raw_exchange(edge.port, data))
    assert status == 413
    assert up.received() == []


def test_small_chunked_upload_is_filtered_and_forwarded(edge: EdgeProcess, up: Upstream) -> None:
    body = logs_payload("json", ["keep", "drop-me"])
    half = len(body) // 2
    data = (
        b"POST /v1/logs HTTP/1.1\r\nHost: edge\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        + b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in (body[:half], body[half:]))
        + b"0\r\n\r\n"
    )
    status, _ = first_answer(raw_exchange(edge.port, data))
    assert status == 200
    [got] = up.received()
    assert json_bodies(json.loads(got.body)) == ["keep"]
    assert got.header("Transfer-Encoding") is None


def _zstd_unsized(data: bytes) -> bytes:
    compressor = zstandard.ZstdCompressor().compressobj()
    return compressor.compress(data) + compressor.flush()


@pytest.mark.parametrize(
    "encoding,bomb",
    [
        ("gzip", gzip.compress(b"\0" * 200_000)),
        ("deflate", zlib.compress(b"\0" * 200_000)),
        ("zstd", zstandard.ZstdCompressor().compress(b"\0" * 200_000)),
        ("zstd", _zstd_unsized(b"\0" * 200_000)),
    ],
    ids=["gzip", "deflate", "zstd", "zstd-no-size"],
)
def test_compression_bomb_is_413(
    edge: EdgeProcess, up: Upstream, encoding: str, bomb: bytes
) -> None:
    assert len(bomb) < MAX_BODY
    answer = edge.post("/v1/logs", bomb, "application/json", Content_Encoding=encoding)
    assert_json_error(answer, 413)
    assert up.received() == []


def _flip(frame: bytes) -> bytes:
    """Corrupt a frame's payload (not its header)."""
    middle = len(frame) // 2
    return frame[:middle] + bytes([frame[middle] ^ 0xFF]) + frame[middle + 1 :]


@pytest.mark.parametrize(
    "encoding,body",
    [
        ("gzip", b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03garbage-garbage"),
        ("gzip", gzip.compress(b'{"resourceLogs": []}')[:-6]),
        ("gzip", b"not gzip at all"),
        ("zstd", zstandard.ZstdCompressor().compress(b"hello zstd " * 20)[:-5]),
        ("zstd", _flip(zstandard.ZstdCompressor(write_checksum=True).compress(b"hello " * 20))),
        ("zstd", b"not zstd at all"),
        ("deflate", b"\x78\x9cgarbage"),
    ],
    ids=[
        "gzip-garbage",
        "gzip-truncated",
        "gzip-no-magic",
        "zstd-truncated",
        "zstd-flipped",
        "zstd-no-magic",
        "deflate",
    ],
)
@pytest.mark.parametrize("path", ["/v1/logs", "/api/v2/logs"])
def test_corrupt_compressed_body_is_400(
    edge: EdgeProcess, up: Upstream, encoding: str, body: bytes, path: str
) -> None:
    answer = edge.post(path, body, "application/json", Content_Encoding=encoding)
    assert_json_error(answer, 400)
    assert up.received() == []


def test_passthrough_routes_do_not_decode_bodies(edge: EdgeProcess, up: Upstream) -> None:
    body = b"\x1f\x8b\x08\x00 not really gzip"
    answer = edge.post("/v1/other", body, "application/json", Content_Encoding="gzip")
    assert answer.status == 200
    [got] = up.received()
    assert got.body == body
    assert got.header("Content-Encoding") == "gzip"


# -- fail open -----------------------------------------------------------------------------

UPSTREAM_SAYS = Reply(400, b'{"upstream":"decides"}', headers=[("X-Upstream", "yes")])


@pytest.mark.parametrize(
    "content_type,body,encoding",
    [
        ("application/json", b'{"resourceLogs": [ this is not json', ""),
        ("application/json", b'["valid json", "not OTLP", "drop-me"]', ""),
        ("application/json", b'{"resourceLogs": "drop-me"}', ""),
        ("application/json", b"\xff\xfe not utf-8 drop-me", ""),
        ("application/x-protobuf", b"\x0a\x05abc", ""),
        ("application/x-protobuf", b"\xff\xff\xff\xff drop-me", ""),
        ("application/json", gzip.compress(b'{"resourceLogs": [ broken drop-me'), "gzip"),
        ("text/plain", json.dumps(otlp_logs_json(["drop-me", "x"])).encode(), ""),
        ("application/xml", b"<logs><log>drop-me</log></logs>", ""),
        ("application/json", json.dumps(otlp_logs_json(["drop-me", "x"])).encode(), "br"),
    ],
    ids=[
        "garbage-json",
        "json-not-otlp",
        "json-wrong-shape",
        "json-not-utf8",
        "truncated-protobuf",
        "garbage-protobuf",
        "gzip-garbage-json",
        "text-plain",
        "xml",
        "unknown-encoding",
    ],
)
def test_unreadable_bodies_fail_open_unchanged(
    edge: EdgeProcess, up: Upstream, content_type: str, body: bytes, encoding: str
) -> None:
    up.respond = UPSTREAM_SAYS
    headers = {"Content-Type": content_type}
    if encoding:
        headers["Content-Encoding"] = encoding
    answer = edge.request("POST", "/v1/logs", body, headers)
    assert answer.status == 400
    assert answer.body == b'{"upstream":"decides"}'
    assert answer.header("X-Upstream") == "yes"
    [got] = up.received()
    assert got.body == body
    assert got.header("Content-Type") == content_type
    assert got.header("Content-Encoding") == (encoding or None)


DEEP = 50_000
"""Nesting past what Python's JSON parser recurses into (valid JSON, 100 kB)."""


def test_json_nested_too_deep_fails_open_unchanged(
    start_edge: EdgeLauncher, upstream: Upstream
) -> None:
    edge = start_edge(POLICIES, max_body_size=1 << 20)
    nested = b"[" * DEEP + b"]" * DEEP
    for path, body in [
        ("/v1/logs", b'{"resourceLogs": ' + nested + b"}"),
        ("/v1/traces", b'{"resourceSpans": [' + nested + b"]}"),
        ("/api/v2/logs", b'[{"message": "drop-me", "a": ' + nested + b"}]"),
        ("/api/v2/series", b'{"series": ' + nested + b"}"),
    ]:
        upstream.reset()
        upstream.respond = UPSTREAM_SAYS
        answer = edge.post(path, body, "application/json")
        assert (answer.status, answer.body) == (400, b'{"upstream":"decides"}'), path
        [got] = upstream.received()
        assert got.body == body, path
    assert edge.terminate() == 0
    assert "Traceback" not in edge.stderr()


def _otlp_log_with(value: str) -> bytes:
    """An OTLP JSON log request: a dropped record, then a kept one with an
    attribute ``n`` whose doubleValue is the JSON text `value`."""
    kept = (
        '{"body": {"stringValue": "kept"}, "attributes": '
        f'[{{"key": "n", "value": {{"doubleValue": {value}}}}}]}}'
    )
    records = f'[{{"body": {{"stringValue": "drop-me"}}}}, {kept}]'
    return f'{{"resourceLogs": [{{"scopeLogs": [{{"logRecords": {records}}}]}}]}}'.encode()


@pytest.mark.parametrize(
    "path,body",
    [
        ("/v1/logs", _otlp_log_with("1e400")),
        ("/v1/logs", _otlp_log_with("-1e400")),
        ("/v1/logs", _otlp_log_with("NaN")),
        (
            "/api/v2/series",
            b'{"series": [{"metric": "drop.x"}, '
            b'{"metric": "kept", "points": [{"timestamp": 1, "value": 1e400}]}]}',
        ),
        ("/api/v1/series", b'{"series": [{"metric": "drop.x"}, {"metric": "kept", "n": NaN}]}'),
        ("/api/v1/series", b'{"series": [{"metric": "kept", "points": [[1, -Infinity]]}]}'),
    ],
)
def test_a_number_json_cannot_carry_fails_open_unchanged(
    edge: EdgeProcess, up: Upstream, path: str, body: bytes
) -> None:
    """NaN, Infinity, or a number past the double range (1e400): written
    back it would be the word ``Infinity`` (or ``NaN``), which no JSON reader
    takes, so the upstream would refuse every kept record with it. A body
    Edge would have to write back is forwarded unchanged instead (EDGE.md
    section 2: never lose data; fail open) and the upstream decides."""
    up.respond = UPSTREAM_SAYS
    answer = edge.post(path, body, "application/json")
    assert (answer.status, answer.body) == (400, b'{"upstream":"decides"}')
    [got] = up.received()
    assert got.body == body
    assert "Traceback" not in edge.stderr()


def test_a_datadog_log_with_a_number_json_cannot_carry_is_kept_as_it_came(
    edge: EdgeProcess, up: Upstream
) -> None:
    """Kept Datadog logs no transform touched go on as their own text, so
    such a number in one does not stop the others from being filtered."""
    kept = b'{"message": "kept", "n": 1e400, "m": NaN}'
    answer = edge.post(
        "/api/v2/logs", b'[{"message": "drop-me"}, ' + kept + b"]", "application/json"
    )
    assert answer.status == 200
    [got] = up.received()
    assert got.body == b"[" + kept + b"]"


def test_missing_content_type_fails_open(edge: EdgeProcess, up: Upstream) -> None:
    body = json.dumps(otlp_logs_json(["drop-me"])).encode()
    answer = edge.request("POST", "/v1/logs", body)
    assert answer.status == 200
    [got] = up.received()
    assert got.body == body


# -- proxying everything else -----------------------------------------------------------------


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE", "PATCH", "POST", "OPTIONS"])
def test_other_paths_and_methods_are_proxied_unchanged(
    edge: EdgeProcess, up: Upstream, method: str
) -> None:
    up.respond = Reply(
        201, b"upstream body " + method.encode(), [("X-Upstream", "1")], "text/plain"
    )
    body = None if method in ("GET", "OPTIONS") else b"\x00binary body \xff" + method.encode()
    target = "/foo/bar?x=1&y=a%20b&z=%2F"
    answer = edge.request(method, target, body, {"X-Client": "c"})
    assert answer.status == 201
    assert answer.body == b"upstream body " + method.encode()
    assert answer.header("Content-Type") == "text/plain"
    assert answer.header("X-Upstream") == "1"
    [got] = up.received()
    assert (got.method, got.target) == (method, target)
    assert got.body == (body or b"")
    assert got.header("X-Client") == "c"


@pytest.mark.parametrize("status", [404, 500, 503, 429])
def test_upstream_error_statuses_are_relayed(edge: EdgeProcess, up: Upstream, status: int) -> None:
    up.respond = Reply(status, b'{"upstream": %d}' % status, [("Retry-After", "7")])
    for path, body in [("/nope", b"x"), ("/v1/logs", logs_payload("json", ["keep", "drop-me"]))]:
        answer = edge.post(path, body, "application/json")
        assert answer.status == status
        assert answer.json() == {"upstream": status}
        assert answer.header("Retry-After") == "7"


@pytest.mark.parametrize(
    ("status", "reason"),
    [
        (501, b"Not Implemented"),
        (507, b"Insufficient Storage"),
        (422, b"Unprocessable Content"),
        (413, b"Content Too Large"),
    ],
)
def test_a_relayed_status_has_its_standard_reason_phrase(
    edge: EdgeProcess, up: Upstream, status: int, reason: bytes
) -> None:
    """Not ``HTTP/1.1 501 Status``."""
    up.respond = Reply(status, b"{}")
    raw = raw_exchange(edge.port, b"GET /x HTTP/1.1\r\nHost: edge\r\nConnection: close\r\n\r\n")
    assert raw.split(b"\r\n", 1)[0] == b"HTTP/1.1 %d %s" % (status, reason)


@pytest.mark.parametrize("status", [204, 304])
def test_a_relayed_bodiless_answer_has_no_content_length(
    edge: EdgeProcess, up: Upstream, status: int
) -> None:
    """A 204 carries no Content-Length (RFC 9110 8.6) and neither answer has
    content (6.4.1): the next answer on the connection is read intact."""
    up.respond = Reply(status, b"")
    data = (
        b"GET /x HTTP/1.1\r\nHost: e\r\n\r\n"
        b"GET /_health HTTP/1.1\r\nHost: e\r\nConnection: close\r\n\r\n"
    )
    raw = raw_exchange(edge.port, data, timeout=5)
    head, _, rest = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 %d " % status), raw
    assert b"content-length" not in head.lower(), raw
    assert rest.startswith(b"HTTP/1.1 200 "), raw


def test_get_on_an_otlp_path_is_proxied(edge: EdgeProcess, up: Upstream) -> None:
    up.respond = Reply(405, b"no")
    answer = edge.request("GET", "/v1/logs?x=1")
    assert answer.status == 405
    [got] = up.received()
    assert (got.method, got.target) == ("GET", "/v1/logs?x=1")


def test_filtered_route_keeps_the_query(edge: EdgeProcess, up: Upstream) -> None:
    answer = edge.post(
        "/v1/logs?tenant=a&b=%20", logs_payload("json", ["k", "drop-me"]), MEDIA["json"]
    )
    assert answer.status == 200
    [got] = up.received()
    assert got.target == "/v1/logs?tenant=a&b=%20"
    assert json_bodies(json.loads(got.body)) == ["k"]


def test_an_empty_query_is_forwarded_with_its_question_mark(
    edge: EdgeProcess, up: Upstream
) -> None:
    """EDGE.md: the upstream URL is the path and ``?query`` verbatim, so a
    target ending in ``?`` keeps it (filtered and proxied routes alike)."""
    payload = logs_payload("json", ["k", "drop-me"])
    assert edge.post("/v1/logs?", payload, MEDIA["json"]).status == 200
    assert edge.request("GET", "/other?").status == 200
    assert edge.request("GET", "/plain").status == 200
    assert [got.target for got in up.received()] == ["/v1/logs?", "/other?", "/plain"]


def test_absolute_form_target_is_routed_and_forwarded_as_its_path(
    edge: EdgeProcess, up: Upstream
) -> None:
    """RFC 9112 3.2.2: a server accepts ``POST http://host/v1/logs?q`` as it
    does ``POST /v1/logs?q``: the route is filtered and the path forwarded."""
    body = logs_payload("json", ["k", "drop-me"])
    target = f"http://127.0.0.1:{edge.port}/v1/logs?q=1"
    data = raw_post(target, body, "Content-Type: application/json", "Connection: close")
    assert first_answer(raw_exchange(edge.port, data, timeout=5))[0] == 200
    [got] = up.received()
    assert (got.target, json_bodies(json.loads(got.body))) == ("/v1/logs?q=1", ["k"])


def test_upstream_base_path_is_prefixed(start_edge: EdgeLauncher, upstream: Upstream) -> None:
    edge = start_edge(POLICIES, upstream_url=upstream.url + "/base/path")
    assert (
        edge.post("/v1/logs?q=1", logs_payload("json", ["k", "drop-me"]), MEDIA["json"]).status
        == 200
    )
    assert edge.request("GET", "/other?x=y").status == 200
    assert [r.target for r in upstream.received()] == [
        "/base/path/v1/logs?q=1",
        "/base/path/other?x=y",
    ]


def test_chunked_upstream_answer_is_relayed_whole(edge: EdgeProcess, up: Upstream) -> None:
    up.respond = Reply(200, b"0123456789" * 50, chunked=True)
    answer = edge.request("GET", "/chunked")
    assert answer.status == 200
    assert answer.body == b"0123456789" * 50
    assert answer.header("Transfer-Encoding") is None


def test_head_is_proxied(edge: EdgeProcess, up: Upstream) -> None:
    """A HEAD answer has headers only (its Content-Length describes a GET)."""
    up.respond = Reply(200, b"hello", [("X-Upstream", "1")], "text/plain")
    started = time.monotonic()
    answer = edge.request("HEAD", "/thing?x=1")
    assert answer.status == 200, answer
    assert answer.header("X-Upstream") == "1"
    assert time.monotonic() - started < TIMEOUT
    [got] = up.received()
    assert (got.method, got.target) == ("HEAD", "/thing?x=1")


def test_head_answer_keeps_the_upstream_content_length(edge: EdgeProcess, up: Upstream) -> None:
    """A relayed answer to HEAD announces the upstream's Content-Length (what a
    GET would carry, RFC 9110 9.3.2), and still carries no body: the next
    answer on the connection is read intact."""
    up.respond = Reply(200, b"hello world", content_type="text/plain")
    client = http.client.HTTPConnection("127.0.0.1", edge.port, timeout=10)
    try:
        client.request("HEAD", "/thing")
        head = client.getresponse()
        assert (head.status, head.getheader("Content-Length"), head.read()) == (200, "11", b"")
        client.request("GET", "/thing")
        assert client.getresponse().read() == b"hello world"
    finally:
        client.close()


def test_head_health_has_no_body_on_a_kept_alive_connection(edge: EdgeProcess) -> None:
    """A HEAD answer carries no body (RFC 9110 9.3.2); bytes after its header
    block would be read as the next answer on a kept-alive connection."""
    data = (
        b"HEAD /_health HTTP/1.1\r\nHost: e\r\n\r\n"
        b"GET /_health HTTP/1.1\r\nHost: e\r\nConnection: close\r\n\r\n"
    )
    raw = raw_exchange(edge.port, data, timeout=5)
    head, _, rest = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 "), raw
    assert rest.startswith(b"HTTP/1.1 200 "), raw


# -- headers ---------------------------------------------------------------------------------


def test_hop_by_hop_dropped_host_rewritten_custom_headers_kept(
    edge: EdgeProcess, up: Upstream
) -> None:
    headers = [
        ("Host", "client.example:1234"),
        ("Connection", "keep-alive"),
        ("Keep-Alive", "timeout=5"),
        ("TE", "trailers"),
        ("Upgrade", "h2c"),
        ("Proxy-Authorization", "Basic cHJveHk6cHJveHk="),
        ("Proxy-Connection", "keep-alive"),
        ("Authorization", "Bearer secret-token"),
        ("DD-API-KEY", "dd-key-123"),
        ("X-Multi", "one"),
        ("X-Multi", "two"),
        ("Content-Type", "application/json"),
    ]
    for path in ("/custom", "/v1/logs", "/api/v2/logs"):
        up.reset()
        body = b"[]" if path == "/api/v2/logs" else logs_payload("json", ["k", "drop-me"])
        assert edge.request("POST", path, body, headers).status == 200
        [got] = up.received()
        assert got.all("Connection") == []
        assert got.all("Keep-Alive") == []
        assert got.all("TE") == []
        assert got.all("Upgrade") == []
        assert got.all("Proxy-Authorization") == []
        assert got.all("Proxy-Connection") == []
        assert got.all("Host") == [f"127.0.0.1:{up.port}"]
        assert got.all("Authorization") == ["Bearer secret-token"]
        assert got.all("DD-API-KEY") == ["dd-key-123"]
        assert got.all("X-Multi") == ["one", "two"]
        assert got.all("Content-Length") == [str(len(got.body))]


def test_every_proxy_star_header_is_dropped(edge: EdgeProcess, up: Upstream) -> None:
    """EDGE.md: hop-by-hop request headers include ``Proxy-*``."""
    assert edge.request("GET", "/p", None, {"Proxy-Custom": "x", "Proxy-Foo": "y"}).status == 200
    [got] = up.received()
    assert got.all("Proxy-Custom") == [] and got.all("Proxy-Foo") == []


def test_headers_named_in_connection_are_not_relayed_either_way(
    edge: EdgeProcess, up: Upstream
) -> None:
    """RFC 9110 7.6.1: a header the Connection header names is hop-by-hop,
    whichever way the message goes."""
    headers = [("Connection", "close, X-Secret"), ("X-Secret", "s"), ("X-Kept", "k")]
    for path in ("/custom", "/v1/logs"):
        up.reset()
        up.respond = Reply(200, b"ok", [("Connection", "X-Hop"), ("X-Hop", "h"), ("X-Up", "u")])
        answer = edge.request("POST", path, logs_payload("json", ["k"]), headers)
        assert (answer.status, answer.header("X-Hop"), answer.header("X-Up")) == (200, None, "u")
        [got] = up.received()
        assert (got.all("X-Secret"), got.all("X-Kept")) == ([], ["k"])


def test_a_request_asking_for_an_upgrade_is_served_whole_as_http_1_1(
    edge: EdgeProcess, up: Upstream
) -> None:
    """Upgrade is hop-by-hop (EDGE.md section 2) and a server may ignore it
    (RFC 9110 7.8): a POST asking for h2c, as curl --http2 asks, is
    forwarded with its whole body, and the connection serves on."""
    upgrade = ("Connection: Upgrade, HTTP2-Settings", "Upgrade: h2c", "HTTP2-Settings: AAMAAABk")
    body = logs_payload("json", ["k", "drop-me"])
    with socket.create_connection(("127.0.0.1", edge.port), timeout=10) as sock:
        sock.sendall(
            raw_post("/custom", b"first body", *upgrade)
            + raw_post("/v1/logs", body, "Content-Type: application/json", *upgrade)
        )
        answers = read_responses(sock, 2)
    assert [a.status for a in answers] == [200, 200], answers
    custom, logs = up.received()
    assert (custom.target, custom.body) == ("/custom", b"first body")
    assert (logs.target, logs_of("json", logs.body)) == ("/v1/logs", ["k"])
    for got in (custom, logs):
        assert got.all("Upgrade") == [] and got.all("HTTP2-Settings") == []


def test_upstream_hop_by_hop_response_headers_not_relayed(edge: EdgeProcess, up: Upstream) -> None:
    up.respond = Reply(
        200, b"ok", [("Keep-Alive", "timeout=99"), ("X-Upstream", "a"), ("Set-Cookie", "s=1")]
    )
    answer = edge.request("GET", "/resp")
    assert answer.header("Keep-Alive") is None
    assert answer.header("X-Upstream") == "a"
    assert answer.header("Set-Cookie") == "s=1"
    assert answer.header("Content-Length") == "2"


def _answers(raw: bytes) -> list[tuple[int, bytes]]:
    """(status, body) of every response in a raw byte stream, interim ones included."""
    answers = []
    while raw:
        head, _, raw = raw.partition(b"\r\n\r\n")
        status = int(head.split(b" ")[1])
        length = next(
            (
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")[1:]
                if line.lower().startswith(b"content-length:")
            ),
            0,
        )
        answers.append((status, raw[:length]))
        raw = raw[length:]
    return answers


def test_expect_100_continue_gets_the_final_answer(
    start_edge: EdgeLauncher, upstream: Upstream
) -> None:
    """A client that sends ``Expect: 100-continue`` (curl does for larger
    bodies) must end up with the upstream's final answer, not an interim 1xx."""
    edge = start_edge(POLICIES)
    upstream.respond = Reply(202, b"final", content_type="text/plain")
    data = raw_post("/expect", b"abc", "Expect: 100-continue", "Connection: close")
    answers = _answers(raw_exchange(edge.port, data, timeout=5))
    assert [a for a in answers if a[0] >= 200] == [(202, b"final")], answers
    assert [r.body for r in upstream.received()] == [b"abc"]


def test_expect_100_continue_does_not_shift_answers_to_the_next_request(
    start_edge: EdgeLauncher, upstream: Upstream
) -> None:
    """Whatever Edge does with the upstream's interim ``100 Continue``, the
    next request (from any client) must get its own answer, not the
    previous request's late final answer."""
    edge = start_edge(POLICIES, upstream_timeout_secs=5)
    upstream.respond = lambda r: Reply(
        200, r.target.encode(), delay=0.5 if r.target == "/expect" else 0
    )
    data = raw_post("/expect", b"abc", "Expect: 100-continue", "Connection: close")
    raw_exchange(edge.port, data, timeout=5)
    answer = edge.request("GET", "/next")
    assert (answer.status, answer.body) == (200, b"/next")


# -- upstream failures -----------------------------------------------------------------------


def test_upstream_down_is_502(start_edge: EdgeLauncher) -> None:
    edge = start_edge(POLICIES, upstream_url=f"http://127.0.0.1:{free_port()}")
    for method, path, body in [
        ("POST", "/v1/logs", logs_payload("protobuf", ["k", "drop-me"])),
        ("POST", "/v1/logs", logs_payload("protobuf", ["k"])),
        ("POST", "/api/v2/logs", b'[{"message":"hi"}]'),
        ("GET", "/anything?x=1", None),
    ]:
        answer = edge.request(method, path, body, {"Content-Type": "application/x-protobuf"})
        assert_json_error(answer, 502)
    # Everything dropped needs no upstream: still a success.
    answer = edge.post("/v1/logs", logs_payload("json", ["drop-me"]), MEDIA["json"])
    assert (answer.status, answer.body) == (200, b"{}")


def test_slow_upstream_is_504_then_the_next_request_gets_its_own_answer(
    edge: EdgeProcess, up: Upstream
) -> None:
    up.respond = Reply(200, b"too late", delay=TIMEOUT + 1.5)
    started = time.monotonic()
    answer = edge.post("/v1/logs", logs_payload("json", ["k", "drop-me"]), MEDIA["json"])
    took = time.monotonic() - started
    assert_json_error(answer, 504)
    assert TIMEOUT * 0.8 <= took < TIMEOUT + 1.2
    assert len(up.received("/v1/logs")) == 1  # never replayed
    up.respond = lambda r: Reply(200, r.target.encode())
    for i in range(3):
        answer = edge.request("GET", f"/after/{i}")
        assert (answer.status, answer.body) == (200, f"/after/{i}".encode())


def test_upstream_closing_without_answer_is_502(edge: EdgeProcess, up: Upstream) -> None:
    up.respond = Reply(close=True)
    answer = edge.request("POST", "/closing", b"payload")
    assert_json_error(answer, 502)
    up.respond = Reply(200, b"back")
    assert edge.request("GET", "/again").body == b"back"


def test_upstream_cutting_a_response_short_is_502_without_replay(
    edge: EdgeProcess, up: Upstream
) -> None:
    up.respond = Reply(200, b"partial", truncate=True)
    answer = edge.request("POST", "/cut", b"payload")
    assert_json_error(answer, 502)
    assert [r.target for r in up.received()] == ["/cut"]


def test_reused_connection_closed_after_reading_the_request_goes_once_more_on_a_fresh_one(
    start_edge: EdgeLauncher, upstream: Upstream
) -> None:
    """The upstream answers the first request on each connection and closes
    any connection on its second request after reading it, without
    answering. From Edge that close looks like an idle close crossing the
    request on the wire, so the request goes once more, on a fresh connection
    (EDGE.md 2), where it is answered: the upstream gets it twice (the
    duplicate README's Delivery guarantees name)."""
    seen: set[Any] = set()

    def respond(record: Recorded) -> Reply:
        if record.client in seen:
            return Reply(close=True)
        seen.add(record.client)
        return Reply(200, record.target.encode())

    upstream.respond = respond
    edge = start_edge(POLICIES)
    answers = [edge.request("POST", f"/r{i}", b"body") for i in range(3)]
    assert [(a.status, a.body) for a in answers] == [(200, b"/r0"), (200, b"/r1"), (200, b"/r2")]
    assert [r.target for r in upstream.received()] == ["/r0", "/r1", "/r1", "/r2", "/r2"]


def test_many_concurrent_requests_are_served_concurrently(edge: EdgeProcess, up: Upstream) -> None:
    up.respond = lambda r: Reply(200, r.target.encode(), delay=0.4)
    answers: dict[int, Any] = {}

    def call(i: int) -> None:
        answers[i] = edge.request("GET", f"/c/{i}")

    threads = [threading.Thread(target=call, args=(i,)) for i in range(32)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    took = time.monotonic() - started
    assert {i: (a.status, a.body) for i, a in answers.items()} == {
        i: (200, f"/c/{i}".encode()) for i in range(32)
    }
    assert took < 3.0, f"32 requests to a 0.4 s upstream took {took:.1f} s"


def test_body_memory_budget_is_not_leaked(start_edge: EdgeLauncher, upstream: Upstream) -> None:
    """Edge counts request body bytes against a memory budget (2 MiB; a 9 MiB
    body goes over it while nothing else is being handled). A small request
    that arrives whole while the budget is exhausted is served at once; when
    the budget frees up it must not stay counted, or a later large body waits
    for memory nobody will release (here: until the small request's idle
    keep-alive connection closes)."""
    edge = start_edge(None, max_body_size=16 << 20, upstream_timeout_secs=10)
    upstream.respond = lambda r: Reply(200, r.target.encode(), delay=1.0 if r.target == "/a" else 0)
    results: dict[str, Any] = {}
    big = threading.Thread(
        target=lambda: results.setdefault("a", edge.request("POST", "/a", b"a" * (9 << 20)))
    )
    big.start()
    upstream.wait_for(1, path_prefix="/a")  # 9 MiB held while the upstream thinks
    small = http.client.HTTPConnection("127.0.0.1", edge.port, timeout=10)
    try:
        small.request("POST", "/b", b"b" * 1024)
        response = small.getresponse()
        assert (response.status, response.read()) == (200, b"/b")
        big.join(15)
        assert results["a"].status == 200
        # Nothing in flight now; the small connection stays open and idle.
        started = time.monotonic()
        try:
            answer = edge.request("POST", "/c", b"c" * (8 << 20), timeout=5)
        except TimeoutError:
            pytest.fail(f"an 8 MiB body on an idle Edge waited {time.monotonic() - started:.1f} s")
        assert (answer.status, answer.body) == (200, b"/c")
    finally:
        small.close()


def test_large_upstream_answer_is_relayed(edge: EdgeProcess, up: Upstream) -> None:
    """max_body_size limits what clients send, not what the upstream answers."""
    body = bytes(range(256)) * 1000
    up.respond = Reply(200, body, content_type="application/octet-stream")
    answer = edge.request("GET", "/big")
    assert answer.body == body


@pytest.mark.parametrize("chunked", [False, True])
def test_upstream_answer_over_max_response_size_is_502_never_a_partial_relay(
    start_edge: EdgeLauncher, upstream: Upstream, chunked: bool
) -> None:
    edge = start_edge(None, max_response_size=1024)
    upstream.respond = Reply(200, b"a" * 1024, chunked=chunked)
    assert edge.request("GET", "/fits").body == b"a" * 1024
    upstream.respond = Reply(200, b"a" * 1025, chunked=chunked)
    answer = edge.request("GET", "/too-big")
    assert answer.status == 502
    assert answer.json() == {"error": "upstream response larger than 1024 bytes"}
    upstream.respond = Reply(200, b"small")
    assert edge.request("GET", "/after").body == b"small"
    metrics = Prometheus.parse(edge.metrics())
    assert metrics.get("sluice_edge_upstream_errors_total", kind="failed") == 1


def test_http_1_0_request_is_answered_and_closed(edge: EdgeProcess, up: Upstream) -> None:
    up.respond = Reply(200, b"old")
    started = time.monotonic()
    raw = raw_exchange(edge.port, b"GET /old HTTP/1.0\r\n\r\n", timeout=5)
    assert time.monotonic() - started < 3, "Edge kept an HTTP/1.0 connection open"
    status, body = first_answer(raw)
    assert (status, body) == (200, b"old")


def test_protobuf_unknown_fields_survive_reencoding(edge: EdgeProcess, up: Upstream) -> None:
    """A newer sender's fields this build does not know must not be lost when
    the batch is re-encoded (a record was dropped)."""
    from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord

    def field(number: int, payload: bytes) -> bytes:
        length, size = b"", len(payload)
        while True:
            length += bytes([(size & 0x7F) | (0x80 if size > 0x7F else 0)])
            size >>= 7
            if not size:
                break
        return bytes([(number << 3) | 2]) + length + payload

    unknown = b"\xb8\x3e\x07"  # field 999, varint 7
    kept = LogRecord()
    kept.body.string_value = "keep"
    dropped = LogRecord()
    dropped.body.string_value = "drop-me"
    scope = field(2, kept.SerializeToString() + unknown) + field(2, dropped.SerializeToString())
    body = field(1, field(2, scope))
    assert edge.post("/v1/logs", body, MEDIA["protobuf"]).status == 200
    [got] = up.received()
    assert proto_bodies(got.body) == ["keep"]
    assert unknown in got.body


def test_a_broken_protobuf_log_record_is_forwarded_as_it_came(
    start_edge: EdgeLauncher, upstream: Upstream
) -> None:
    """A record that is not a LogRecord costs only itself: it goes upstream byte
    for byte and is counted malformed, while the other records are filtered."""
    from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord

    from sluice.telemetry.otlp_raw import LeanLogsRequest

    edge = start_edge(POLICIES)
    records = []
    for text in ("keep", "drop-me", "keep too"):
        record = LogRecord()
        record.body.string_value = text
        records.append(record.SerializeToString())
    broken = records[1][:-2]  # the body claims two bytes more than follow
    request = LeanLogsRequest()
    request.resource_logs.add().scope_logs.add().log_records.extend([*records, broken])
    assert edge.post("/v1/logs", request.SerializeToString(), MEDIA["protobuf"]).status == 200
    [got] = upstream.received()
    forwarded = LeanLogsRequest.FromString(got.body)
    assert list(forwarded.resource_logs[0].scope_logs[0].log_records) == [
        records[0],
        records[2],
        broken,
    ]
    results = Prometheus.parse(edge.metrics()).results("logs")
    assert (results["malformed"], results["dropped"]) == (1, 1)


def test_upstream_closing_idle_keep_alive_connections_is_harmless(
    edge: EdgeProcess, up: Upstream
) -> None:
    """Each answer is followed by the upstream closing the connection; the
    next request must go out once, on a fresh connection, and succeed."""
    up.respond = Reply(200, b"ok", [("Connection", "close")])
    for i in range(4):
        answer = edge.request("POST", f"/n{i}", b"body")
        assert (answer.status, answer.body) == (200, b"ok")
        time.sleep(0.05)
    assert [r.target for r in up.received()] == [f"/n{i}" for i in range(4)]


# -- every record dropped --------------------------------------------------------------------


@pytest.mark.parametrize("encoding", ["", "gzip"])
def test_all_dropped_protobuf_gets_empty_protobuf_answer(
    edge: EdgeProcess, up: Upstream, encoding: str
) -> None:
    body = compress(encoding, logs_payload("protobuf", ["drop-me 1", "drop-me 2"]))
    headers = {"Content-Type": MEDIA["protobuf"]}
    if encoding:
        headers["Content-Encoding"] = encoding
    answer = edge.request("POST", "/v1/logs", body, headers)
    assert answer.status == 200
    assert answer.body == b""
    assert answer.header("Content-Type") == "application/x-protobuf"
    assert answer.header("Content-Length") == "0"
    assert up.received() == []


def test_all_dropped_json_gets_empty_json_answer(edge: EdgeProcess, up: Upstream) -> None:
    answer = edge.post("/v1/logs", logs_payload("json", ["drop-me"] * 3), MEDIA["json"])
    assert (answer.status, answer.body) == (200, b"{}")
    assert answer.header("Content-Type") == "application/json"
    metrics = json.dumps(otlp_metrics_json(["drop.a", "drop.b"])).encode()
    answer = edge.post("/v1/metrics", metrics, MEDIA["json"])
    assert (answer.status, answer.body) == (200, b"{}")
    traces = otlp_traces_proto(["drop-span", "drop-span"])
    answer = edge.post("/v1/traces", traces, MEDIA["protobuf"])
    assert (answer.status, answer.body) == (200, b"")
    assert up.received() == []


def test_metrics_and_traces_partially_dropped(edge: EdgeProcess, up: Upstream) -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    metrics = json.dumps(otlp_metrics_json(["drop.a", "keep.b", "drop.c"])).encode()
    assert edge.post("/v1/metrics", metrics, MEDIA["json"]).status == 200
    traces = otlp_traces_proto(["drop-span", "keep-span"])
    assert edge.post("/v1/traces", traces, MEDIA["protobuf"]).status == 200
    got_metrics, got_traces = up.received()
    names = [
        m["name"]
        for rm in json.loads(got_metrics.body)["resourceMetrics"]
        for sm in rm["scopeMetrics"]
        for m in sm["metrics"]
    ]
    assert names == ["keep.b"]
    request = ExportTraceServiceRequest()
    request.ParseFromString(got_traces.body)
    assert [s.name for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans] == [
        "keep-span"
    ]


# -- connections -----------------------------------------------------------------------------


def test_keep_alive_serves_many_requests_on_one_connection(edge: EdgeProcess, up: Upstream) -> None:
    up.respond = lambda r: Reply(200, r.target.encode())
    conn = http.client.HTTPConnection("127.0.0.1", edge.port, timeout=10)
    try:
        sock = None
        for i in range(6):
            if i % 3 == 0:
                conn.request("GET", f"/ka/{i}")
                expected = (200, f"/ka/{i}".encode())
            elif i % 3 == 1:
                conn.request(
                    "POST",
                    "/v1/logs",
                    logs_payload("json", ["drop-me"]),
                    {"Content-Type": MEDIA["json"]},
                )
                expected = (200, b"{}")
            else:
                conn.request("GET", "/_health")
                expected = (200, None)
            response = conn.getresponse()
            body = response.read()
            assert response.status == expected[0]
            assert expected[1] is None or body == expected[1]
            assert response.getheader("Connection") != "close"
            sock = sock or conn.sock
            assert conn.sock is sock  # the same connection throughout
    finally:
        conn.close()


def test_pipelined_requests_are_answered_in_order(edge: EdgeProcess, up: Upstream) -> None:
    up.respond = lambda r: Reply(200, r.target.encode(), delay=0.3 if "slow" in r.target else 0)
    dropped = logs_payload("json", ["drop-me"])
    kept = logs_payload("json", ["keep", "drop-me"])
    data = (
        b"GET /slow HTTP/1.1\r\nHost: e\r\n\r\n"
        + raw_post("/v1/logs", dropped, "Content-Type: application/json")
        + b"GET /_health HTTP/1.1\r\nHost: e\r\n\r\n"
        + raw_post("/v1/logs?third", kept, "Content-Type: application/json")
        + b"GET /fast HTTP/1.1\r\nHost: e\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", edge.port), timeout=10) as sock:
        sock.sendall(data)
        answers = read_responses(sock, 5)
    assert [a.status for a in answers] == [200] * 5
    assert answers[0].body == b"/slow"
    assert answers[1].body == b"{}"
    assert answers[2].json()["status"] == "ok"
    assert answers[3].body == b"/v1/logs?third"
    assert answers[4].body == b"/fast"


def test_a_long_pipelined_burst_is_answered_completely_in_order(
    edge: EdgeProcess, up: Upstream
) -> None:
    up.respond = lambda r: Reply(200, r.target.encode())
    dropped = logs_payload("json", ["drop-me"])
    requests = []
    expected = []
    for i in range(60):
        if i % 4 == 3:
            requests.append(raw_post(f"/v1/logs?n={i}", dropped, "Content-Type: application/json"))
            expected.append(b"{}")
        else:
            requests.append(f"GET /burst/{i} HTTP/1.1\r\nHost: e\r\n\r\n".encode())
            expected.append(f"/burst/{i}".encode())
    with socket.create_connection(("127.0.0.1", edge.port), timeout=10) as sock:
        sock.sendall(b"".join(requests))
        answers = read_responses(sock, len(requests))
    assert [a.body for a in answers] == expected


def test_pipelined_request_before_a_malformed_one_is_answered_first(
    edge: EdgeProcess, up: Upstream
) -> None:
    """Answers go out in request order: the good request's answer, then the 400."""
    up.respond = lambda r: Reply(200, r.target.encode(), delay=0.2)
    data = b"GET /first HTTP/1.1\r\nHost: e\r\n\r\nNOT HTTP AT ALL\r\n\r\n"
    raw = raw_exchange(edge.port, data, timeout=5)
    assert raw.startswith(b"HTTP/1.1 200 "), raw
    assert b"/first" in raw
    assert b"HTTP/1.1 400 " in raw


@pytest.mark.parametrize(
    "data",
    [
        b"GARBAGE\r\n\r\n",
        b"GET /x HTTP/9.9 extra\r\n\r\n",
        b"GET /x HTTP/1.1\r\nBad Header Without Colon\r\n\r\n",
        b"POST /x HTTP/1.1\r\nContent-Length: abc\r\n\r\n",
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
    ],
    ids=["garbage", "bad-version", "bad-header", "bad-length", "tls-hello"],
)
def test_malformed_request_is_400_and_edge_keeps_serving(
    edge: EdgeProcess, up: Upstream, data: bytes
) -> None:
    raw = raw_exchange(edge.port, data, timeout=5)
    status, body = first_answer(raw)
    assert status == 400
    assert "error" in json.loads(body)
    assert edge.health()["status"] == "ok"
    assert up.received() == []


def test_client_disconnecting_mid_request_is_harmless(edge: EdgeProcess, up: Upstream) -> None:
    with socket.create_connection(("127.0.0.1", edge.port), timeout=5) as sock:
        sock.sendall(b"POST /v1/logs HTTP/1.1\r\nHost: e\r\nContent-Length: 500\r\n\r\npartial")
    up.respond = Reply(200, b"slow", delay=0.3)
    with socket.create_connection(("127.0.0.1", edge.port), timeout=5) as sock:
        sock.sendall(b"GET /gone HTTP/1.1\r\nHost: e\r\n\r\n")
    time.sleep(0.5)
    assert edge.health()["status"] == "ok"
    assert [r.target for r in up.received()] == ["/gone"]


# -- local routes -------------------------------------------------------------------------------


def test_health_is_local(edge: EdgeProcess, up: Upstream) -> None:
    answer = edge.request("GET", "/_health")
    assert answer.status == 200
    assert answer.header("Content-Type") == "application/json"
    health = answer.json()
    assert health["status"] == "ok"
    assert health["policies"] == {"logs": 1, "metrics": 1, "traces": 1}
    [provider] = health["providers"]
    assert (provider["id"], provider["type"], provider["loaded"]) == ("local", "file", True)
    assert up.received() == []


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE"])
def test_local_routes_are_never_proxied_whatever_the_method(
    edge: EdgeProcess, up: Upstream, method: str
) -> None:
    """EDGE.md section 2: /_health is "answered locally, never proxied", as
    /_ready, /_policies and /_metrics are: another method is refused there."""
    for path in ("/_health", "/_ready", "/_policies", "/_metrics"):
        answer = edge.request(method, path, b"{}", {"Content-Type": "application/json"})
        assert_json_error(answer, 405)
        assert answer.header("Allow") == "GET, HEAD", answer
    assert up.received() == []


def test_metrics_count_dropped_records(start_edge: EdgeLauncher, upstream: Upstream) -> None:
    edge = start_edge(POLICIES)
    before = Prometheus.parse(edge.metrics())
    assert before.results("logs")["dropped"] == 0
    for i in range(3):
        bodies = ["drop-me"] * (i + 1) + ["keep"]
        assert (
            edge.post("/v1/logs", logs_payload("protobuf", bodies), MEDIA["protobuf"]).status == 200
        )
    assert edge.post("/v1/logs", logs_payload("json", ["drop-me"] * 4), MEDIA["json"]).status == 200
    metrics = json.dumps(otlp_metrics_json(["drop.a", "keep"])).encode()
    assert edge.post("/v1/metrics", metrics, MEDIA["json"]).status == 200
    answer = edge.request("GET", "/_metrics")
    assert answer.status == 200
    assert (answer.header("Content-Type") or "").startswith("text/plain")
    after = Prometheus.parse(answer.body.decode())
    dropped = [after.results(kind)["dropped"] for kind in ("logs", "metrics", "traces")]
    assert dropped == [10, 1, 0]
    assert len(upstream.received()) == 4
