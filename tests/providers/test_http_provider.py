"""The HTTP provider against a real ``sluice policy-server`` process, and
against a real HTTP server scripted to misbehave."""

from __future__ import annotations

import gc
import http.client
import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httptools
import pytest
from google.protobuf import json_format

from sluice.providers.config import ProviderConfig, parse_provider
from sluice.providers.http_transport import HttpSyncTransport
from sluice.providers.registry import PolicyRegistry
from sluice.providers.remote import RemoteProvider
from sluice.providers.sync import JSON, PROTOBUF, ClientIdentity, SyncError, build_request
from sluice.providers.wire import policy_pb2 as pb
from tests.conformance.servers import policy_server
from tests.providers.conftest import TOKEN, Served
from tests.providers.helpers import (
    drop,
    evaluate,
    logs,
    refusing_port,
    surviving,
    wait_until,
    write_policies,
)


def http_provider(
    url: str,
    *,
    token: str | None = TOKEN,
    encoding: str = "json",
    interval: float = 60.0,
    timeout: float = 5.0,
    registry: PolicyRegistry | None = None,
) -> RemoteProvider:
    headers = (("Authorization", f"Bearer {token}"),) if token is not None else ()
    config = ProviderConfig(
        type="http",
        id="control-plane",
        url=url,
        headers=headers,
        encoding=encoding,  # type: ignore[arg-type]
        poll_interval_secs=interval,
        timeout_secs=timeout,
    )
    return RemoteProvider(config, registry or PolicyRegistry())


# -- against the real policy server ---------------------------------------------


@pytest.mark.parametrize("token", [None, "wrong", "s3cre"], ids=["none", "wrong", "prefix"])
def test_a_missing_or_wrong_bearer_is_rejected(served: Served, token: str | None) -> None:
    provider = http_provider(served.server.sync_url, token=token)
    assert provider.sync() is False
    assert "HTTP 401" in provider.last_error
    assert "bearer token" in provider.last_error
    assert not provider.loaded.is_set()
    assert provider.registry.generation == 0
    assert provider.registry.snapshot.policies == ()
    assert provider.last_hash == ""


def test_the_bearer_comes_from_service_api_key(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SERVICE_API_KEY", TOKEN)
    config = parse_provider(
        {
            "type": "http",
            "id": "control-plane",
            "url": served.server.sync_url,
            "headers": [{"name": "Authorization", "value": "Bearer ${SERVICE_API_KEY}"}],
        },
        "config.json: policy_providers[0]",
        0,
    )
    registry = PolicyRegistry()
    provider = RemoteProvider(config, registry)
    assert provider.sync() is True, provider.last_error
    assert provider.last_error == ""
    assert provider.loaded.is_set()
    assert registry.generation == 1
    assert [p.id for p in registry.owned_by("control-plane")] == ["drop-x"]
    assert surviving(registry.snapshot, "x", "y") == ["y"]
    assert len(provider.last_hash) == 64
    assert provider.recommended_interval == 30.0
    assert provider.interval == 30.0


@pytest.mark.parametrize("encoding", ["json", "protobuf"])
def test_a_changed_server_file_is_applied_on_the_next_sync(served: Served, encoding: str) -> None:
    provider = http_provider(served.server.sync_url, encoding=encoding)
    registry = provider.registry
    assert provider.sync(), provider.last_error
    first_hash = provider.last_hash
    assert surviving(registry.snapshot, "x", "y", "z") == ["y", "z"]

    write_policies(served.path, drop("drop-y", "y"), drop("drop-z", "z"))
    assert provider.sync(), provider.last_error
    assert registry.generation == 2
    assert provider.last_hash != first_hash
    assert sorted(p.id for p in registry.snapshot.policies) == ["drop-y", "drop-z"]
    assert surviving(registry.snapshot, "x", "y", "z") == ["x"]


def test_an_edited_policy_with_the_same_id_is_applied(served: Served) -> None:
    provider = http_provider(served.server.sync_url)
    assert provider.sync(), provider.last_error
    assert surviving(provider.registry.snapshot, "x", "y") == ["y"]
    write_policies(served.path, drop("drop-x", "y"))  # same id, new match
    assert provider.sync(), provider.last_error
    assert surviving(provider.registry.snapshot, "x", "y") == ["x"]


def test_an_unchanged_hash_is_not_recompiled(served: Served) -> None:
    provider = http_provider(served.server.sync_url)
    registry = provider.registry
    assert provider.sync()
    snapshot, last_hash = registry.snapshot, provider.last_hash
    for _ in range(3):
        assert provider.sync()
    assert provider.sync(full_sync=True)
    assert registry.generation == 1
    assert registry.snapshot is snapshot
    assert provider.last_hash == last_hash


def test_a_broken_server_file_keeps_the_served_set(served: Served) -> None:
    provider = http_provider(served.server.sync_url)
    assert provider.sync()
    served.path.write_text('{"policies": [', encoding="utf-8")
    assert provider.sync(), provider.last_error
    assert provider.registry.generation == 1
    assert surviving(provider.registry.snapshot, "x", "y") == ["y"]


@pytest.mark.parametrize("encoding", ["json", "protobuf"])
def test_hits_are_reported_to_the_server(served: Served, encoding: str) -> None:
    write_policies(served.path, drop("drop-x", "x"), drop("drop-y", "y"))
    provider = http_provider(served.server.sync_url, encoding=encoding)
    assert provider.sync(), provider.last_error
    doc = logs("x", "y", "x", "z", resources=2, scopes=2)
    outcome = evaluate(provider.registry.snapshot, doc)
    assert outcome.dropped == 12
    assert served.hits() == {}

    assert provider.sync(), provider.last_error
    assert served.hits() == {"drop-x": 8, "drop-y": 4}
    assert provider.sync()  # already reported: nothing is sent twice
    assert served.hits() == {"drop-x": 8, "drop-y": 4}
    assert provider.registry.runtime.stats.pending() == {}


def test_compile_errors_are_reported_to_the_server(served: Served) -> None:
    broken = drop("bad-regex", "([bad", regex=True)
    write_policies(served.path, drop("drop-x", "x"), broken)
    provider = http_provider(served.server.sync_url)
    assert provider.sync()
    assert [p.id for p in provider.registry.snapshot.policies] == ["bad-regex", "drop-x"]
    assert list(provider.registry.snapshot.errors) == ["bad-regex"]
    assert surviving(provider.registry.snapshot, "x", "([bad") == ["([bad"]
    assert provider.sync()
    stats = served.server.get("/stats")["policies"]
    assert [(e["policy_id"], e["hits"]) for e in stats] == [("bad-regex", 0), ("drop-x", 1)]
    assert len(stats[0]["errors"]) == 1
    assert "regex" in stats[0]["errors"][0]


def test_counts_survive_a_failed_sync(served: Served) -> None:
    provider = http_provider(served.server.sync_url, timeout=2.0)
    registry = provider.registry
    assert provider.sync()
    evaluate(registry.snapshot, logs("x", "x", "x", "y"))
    live = provider.transport
    with refusing_port() as port:
        provider.transport = HttpSyncTransport(
            f"http://127.0.0.1:{port}/v1/policy/sync", provider.config.headers, timeout=2.0
        )
        assert provider.sync() is False
    assert "cannot reach" in provider.last_error
    assert registry.runtime.stats.pending()["drop-x"].hits == 3
    assert surviving(registry.snapshot, "x", "y") == ["y"]  # one more hit, still active
    assert served.hits() == {}

    provider.transport = live
    assert provider.sync(), provider.last_error
    assert provider.last_error == ""
    assert served.hits() == {"drop-x": 4}
    assert provider.sync()
    assert served.hits() == {"drop-x": 4}
    assert registry.runtime.stats.totals()["drop-x"].hits == 4


def test_failures_never_show_credentials_or_the_query(served: Served) -> None:
    """What a sync error says goes to the log and /_health."""
    with refusing_port() as port:
        provider = http_provider(
            f"http://user:secretpw@127.0.0.1:{port}/v1/policy/sync?token=secret2", timeout=2.0
        )
        assert provider.sync() is False
    assert f"cannot reach http://***@127.0.0.1:{port}/v1/policy/sync?***: " in provider.last_error
    refused = http_provider(served.server.sync_url + "?token=secret3")
    assert refused.sync() is False
    assert f"from {served.server.sync_url}?***: " in refused.last_error
    assert "secret" not in provider.last_error + refused.last_error


def test_counts_survive_a_server_restart(tmp_path: Path) -> None:
    path = tmp_path / "served.json"
    write_policies(path, drop("drop-x", "x"))
    with policy_server(path, "--token", TOKEN) as first:
        provider = http_provider(first.sync_url, timeout=2.0)
        assert provider.sync()
        evaluate(provider.registry.snapshot, logs("x", "x"))
        port = first.http_port
    assert provider.sync() is False  # the server is gone
    assert "cannot reach" in provider.last_error
    evaluate(provider.registry.snapshot, logs("x"))
    with policy_server(path, "--token", TOKEN, "--http-port", str(port)) as second:
        assert provider.sync(), provider.last_error
        collected = {e["policy_id"]: e["hits"] for e in second.get("/stats")["policies"]}
        assert collected == {"drop-x": 3}


def test_stop_sends_a_last_sync_with_the_counts(served: Served) -> None:
    provider = http_provider(served.server.sync_url, interval=60.0)
    provider.start()
    try:
        wait_until(provider.loaded.is_set, "the first sync of the polling thread")
        evaluate(provider.registry.snapshot, logs("x", "x", "y"))
        assert served.hits() == {}
    finally:
        provider.stop()
    assert served.hits() == {"drop-x": 2}


# -- against a scripted, misbehaving server ---------------------------------------


@dataclass
class Reply:
    """One scripted answer. `message` (a SyncResponse) is encoded the way the
    client asked; otherwise `body` is sent as is. `raw` replaces the whole
    HTTP response with bytes; `declared` lies about Content-Length."""

    status: int = 200
    body: bytes = b""
    content_type: str = JSON
    message: Any = None
    delay: float = 0.0
    raw: bytes | None = None
    declared: int | None = None


def wire_drop(policy_id: str, body: str) -> Any:
    return pb.Policy(
        id=policy_id,
        name=policy_id,
        enabled=True,
        log=pb.LogTarget(
            match=[pb.LogMatcher(log_field=pb.LOG_FIELD_BODY, exact=body)], keep="none"
        ),
    )


def good(*drops: tuple[str, str], hash: str, interval: int = 0) -> Reply:
    message = pb.SyncResponse(
        policies=[wire_drop(pid, body) for pid, body in drops],
        hash=hash,
        sync_type=pb.SYNC_TYPE_FULL,
        recommended_sync_interval_seconds=interval,
    )
    return Reply(message=message)


class ScriptedServer:
    """A real ThreadingHTTPServer on 127.0.0.1 answering sync requests with
    queued replies (the last reply repeats), recording every request."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[Any] = []
        self.release = threading.Event()
        self._lock = threading.Lock()
        scripted = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                request = pb.SyncRequest()
                if self.headers.get("Content-Type") == PROTOBUF:
                    request.ParseFromString(body)
                else:
                    json_format.Parse(body, request)
                reply = scripted.record(request)
                if reply.delay:
                    scripted.release.wait(reply.delay)
                self.close_connection = True
                if reply.raw is not None:
                    self.wfile.write(reply.raw)
                    return
                payload, content_type = reply.body, reply.content_type
                if reply.message is not None:
                    if self.headers.get("Accept") == PROTOBUF:
                        payload, content_type = reply.message.SerializeToString(), PROTOBUF
                    else:
                        payload = json_format.MessageToJson(reply.message).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", content_type)
                length = reply.declared if reply.declared is not None else len(payload)
                self.send_header("Content-Length", str(length))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.handle_error = lambda request, address: None  # type: ignore[method-assign]
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1/policy/sync"

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self.replies = list(replies)

    def record(self, request: Any) -> Reply:
        with self._lock:
            self.requests.append(request)
            return self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=10)


@pytest.fixture
def scripted() -> Iterator[ScriptedServer]:
    server = ScriptedServer()
    yield server
    server.close()


def hits_in(request: Any) -> dict[str, int]:
    return {s.id: s.match_hits for s in request.policy_statuses if s.match_hits}


FAILURES = {
    "status-500": (Reply(status=500, body=b'{"error": "internal"}'), "HTTP 500"),
    "status-503-empty": (Reply(status=503), "HTTP 503"),
    "garbage-json": (Reply(body=b"\x00\x9f<html>not json"), "not JSON"),
    "json-array": (Reply(body=b"[1, 2, 3]"), "not a JSON object"),
    "garbage-protobuf": (
        Reply(body=b"\xff\xff\xff\xff\x0f garbage", content_type=PROTOBUF),
        "not a SyncResponse",
    ),
    "error-message-json": (Reply(body=b'{"errorMessage": "boom"}'), "server error: boom"),
    "error-message-with-policies": (
        Reply(
            message=pb.SyncResponse(
                policies=[wire_drop("drop-z", "z")], hash="h-err", error_message="boom"
            )
        ),
        "server error: boom",
    ),
    "slow": (Reply(delay=5.0, message=pb.SyncResponse(hash="h-slow")), "timed out"),
}


@pytest.mark.parametrize("encoding", ["json", "protobuf"])
@pytest.mark.parametrize("failure", list(FAILURES))
def test_a_failed_sync_keeps_the_previous_set(
    scripted: ScriptedServer, failure: str, encoding: str
) -> None:
    reply, mentions = FAILURES[failure]
    provider = http_provider(scripted.url, encoding=encoding, timeout=0.3, interval=8.0)
    registry = provider.registry
    scripted.script(good(("drop-x", "x"), hash="h1"))
    assert provider.sync(), provider.last_error
    snapshot = registry.snapshot
    evaluate(snapshot, logs("x", "x"))

    scripted.script(reply)
    assert provider.sync() is False
    assert mentions in provider.last_error
    assert registry.snapshot is snapshot
    assert registry.generation == 1
    assert provider.last_hash == "h1"
    assert surviving(registry.snapshot, "x", "y", "z") == ["y", "z"]
    assert hits_in(scripted.requests[-1]) == {"drop-x": 2}

    scripted.script(good(("drop-y", "y"), hash="h2"))
    assert provider.sync(), provider.last_error
    assert provider.last_error == ""
    assert registry.generation == 2
    assert surviving(registry.snapshot, "x", "y", "z") == ["x", "z"]
    assert hits_in(scripted.requests[-1]) == {"drop-x": 3}  # carried again, not lost
    assert provider.sync()
    assert hits_in(scripted.requests[-1]) == {"drop-y": 1}  # drop-x is not sent twice


BROKEN_HTTP = {
    "truncated-body": Reply(body=b'{"policies": [', declared=1000),
    "truncated-protobuf": Reply(body=b"\x0a\x02", content_type=PROTOBUF, declared=100),
    "not-http": Reply(raw=b"SSH-2.0-OpenSSH_9.2\r\n\r\n"),
}


@pytest.mark.parametrize("broken", list(BROKEN_HTTP))
def test_a_broken_http_response_is_a_failed_sync(scripted: ScriptedServer, broken: str) -> None:
    """sync() must not raise: a response cut short or a peer that does not
    speak HTTP is a failed sync like any other."""
    provider = http_provider(scripted.url, timeout=2.0)
    scripted.script(good(("drop-x", "x"), hash="h1"))
    assert provider.sync()
    scripted.script(BROKEN_HTTP[broken])
    assert provider.sync() is False
    assert scripted.url in provider.last_error
    assert surviving(provider.registry.snapshot, "x", "y") == ["y"]


def test_backoff_grows_but_never_exceeds_the_poll_interval(scripted: ScriptedServer) -> None:
    provider = http_provider(scripted.url, timeout=0.3, interval=8.0)
    scripted.script(good(("drop-x", "x"), hash="h1"))
    assert provider.sync()
    assert provider.next_delay(True) == 8.0
    snapshot = provider.registry.snapshot

    kinds = list(FAILURES.values())
    delays = []
    for attempt in range(1, 9):
        scripted.script(kinds[attempt % len(kinds)][0])
        ok = provider.sync()
        assert ok is False
        delays.append(provider.next_delay(ok))
        assert provider.failures == attempt
        assert provider.registry.snapshot is snapshot
    assert all(0 < d <= 8.0 for d in delays), delays
    # Until the cap, each attempt's range [b/2, b] starts where the previous ended,
    # so jitter never undoes the doubling; from the 4th on the range is [4, 8].
    assert delays[:4] == sorted(delays[:4]), delays
    assert delays[0] <= 1.0
    assert min(delays[3:]) >= 4.0 >= max(delays[:3]), delays

    scripted.script(good(("drop-x", "x"), hash="h1"))
    ok = provider.sync()
    assert ok is True
    assert provider.next_delay(ok) == 8.0
    assert provider.failures == 0
    assert provider.registry.snapshot is snapshot  # same hash: nothing recompiled


def test_the_recommended_interval_caps_the_backoff(scripted: ScriptedServer) -> None:
    provider = http_provider(scripted.url, interval=60.0)
    scripted.script(good(("drop-x", "x"), hash="h1", interval=2))
    assert provider.sync()
    assert provider.interval == 2.0
    scripted.script(Reply(status=500))
    delays = []
    for _ in range(6):
        assert provider.sync() is False
        delays.append(provider.next_delay(False))
    assert all(d <= 2.0 for d in delays), delays
    assert provider.interval == 2.0


def test_the_polling_thread_recovers_by_itself(scripted: ScriptedServer) -> None:
    scripted.script(
        Reply(status=500),
        Reply(body=b"garbage"),
        Reply(body=b'{"errorMessage": "warming up"}'),
        good(("drop-x", "x"), hash="h1"),
    )
    provider = http_provider(scripted.url, interval=0.1, timeout=2.0)
    provider.start()
    try:
        wait_until(provider.loaded.is_set, "the provider to recover")
        assert surviving(provider.registry.snapshot, "x", "y") == ["y"]
        wait_until(lambda: provider.failures == 0, "the failure count to reset")
        assert provider.last_error == ""
        assert len(scripted.requests) >= 4
        assert scripted.requests[0].full_sync is True
        evaluate(provider.registry.snapshot, logs("x", "x"))
    finally:
        provider.stop()
    final = scripted.requests[-1]
    assert final.full_sync is True
    # every sync after recovery succeeded, so each hit was carried exactly once
    assert sum(hits_in(r).get("drop-x", 0) for r in scripted.requests) == 3


def test_requests_carry_the_client_identity_and_hash(scripted: ScriptedServer) -> None:
    scripted.script(good(("drop-x", "x"), hash="h1"))
    provider = http_provider(scripted.url, token="t0k")
    assert provider.sync()
    assert provider.sync()
    first, second = scripted.requests
    assert (first.full_sync, first.last_successful_hash) == (True, "")
    assert (second.full_sync, second.last_successful_hash) == (False, "h1")
    assert second.last_sync_timestamp_unix_nano > 0
    resource = {kv.key: kv.value.string_value for kv in first.client_metadata.resource_attributes}
    assert resource["service.name"] == "sluice"
    assert resource["service.instance.id"] != ""
    assert pb.POLICY_STAGE_LOG_FILTER in first.client_metadata.supported_policy_stages
    assert json.loads(json_format.MessageToJson(first))["fullSync"] is True


@pytest.mark.parametrize("encoding", ["json", "protobuf"])
def test_the_last_sync_timestamp_is_the_servers(scripted: ScriptedServer, encoding: str) -> None:
    """POLICY.md 11.1: like ``last_successful_hash``, the request's
    ``last_sync_timestamp_unix_nano`` hands back what the last successful
    response said (its ``sync_timestamp_unix_nano``), on the server's clock;
    a failed sync leaves it as it was."""
    reply = good(("drop-x", "x"), hash="h1")
    reply.message.sync_timestamp_unix_nano = 1_700_000_000_123_456_789
    scripted.script(reply)
    provider = http_provider(scripted.url, encoding=encoding)
    assert provider.sync(), provider.last_error
    scripted.script(Reply(status=500))
    assert provider.sync() is False
    assert provider.sync() is False
    first, second, third = scripted.requests
    assert first.last_sync_timestamp_unix_nano == 0
    assert second.last_sync_timestamp_unix_nano == 1_700_000_000_123_456_789
    assert third.last_sync_timestamp_unix_nano == 1_700_000_000_123_456_789


def _raw_answer(framing: bytes, body: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + framing + b"\r\n" + body


SYNCED_X = json_format.MessageToJson(good(("drop-x", "x"), hash="h1").message).encode()
FRAMINGS = {
    "chunked": _raw_answer(
        b"Transfer-Encoding: chunked\r\n",
        b"%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n"
        % (10, SYNCED_X[:10], len(SYNCED_X) - 10, SYNCED_X[10:]),
    ),
    "until-close": _raw_answer(b"", SYNCED_X),
    "after-100-continue": b"HTTP/1.1 100 Continue\r\n\r\n"
    + _raw_answer(b"Content-Length: %d\r\n" % len(SYNCED_X), SYNCED_X),
}


@pytest.mark.parametrize("framing", list(FRAMINGS))
def test_every_response_framing_is_read(scripted: ScriptedServer, framing: str) -> None:
    provider = http_provider(scripted.url, timeout=2.0)
    scripted.script(Reply(raw=FRAMINGS[framing]))
    assert provider.sync(), provider.last_error
    assert provider.last_hash == "h1"
    assert surviving(provider.registry.snapshot, "x", "y") == ["y"]


def test_a_policy_without_enabled_applies(scripted: ScriptedServer) -> None:
    """A hand-written server leaving ``enabled`` out: the policy is enabled
    (POLICY.md section 0), where it used to leave the provider 0 policies."""
    policy = {"id": "drop-x", "name": "drop-x", "log": {"match": [{"logField": 1, "exact": "x"}]}}
    policy["log"]["keep"] = "none"
    scripted.script(Reply(body=json.dumps({"hash": "h1", "policies": [policy]}).encode()))
    provider = http_provider(scripted.url)
    assert provider.sync(), provider.last_error
    assert surviving(provider.registry.snapshot, "x", "y") == ["y"]


def held_connections(error: BaseException) -> list[str]:
    """What an exception keeps alive that belongs to a connection: chained
    exceptions, and exceptions or open sockets among the local variables of
    the frames it was raised through (the first frame is the catcher's)."""
    held = [repr(e) for e in (error.__context__, error.__cause__) if e is not None]
    frame = error.__traceback__.tb_next if error.__traceback__ else None
    while frame is not None:
        for name, value in frame.tb_frame.f_locals.items():
            open_socket = isinstance(value, socket.socket) and value.fileno() != -1
            if open_socket or isinstance(value, BaseException | http.client.HTTPResponse):
                held.append(f"{frame.tb_frame.f_code.co_name}: {name}={value!r}")
        frame = frame.tb_next
    return held


@pytest.mark.parametrize(
    "reply",
    [Reply(status=500, body=b"x" * 300), Reply(body=b"not json " * 100), BROKEN_HTTP["not-http"]],
    ids=["status-500", "garbage", "not-http"],
)
def test_a_sync_error_holds_nothing_of_its_connection(
    scripted: ScriptedServer, reply: Reply
) -> None:
    """A SyncError used to chain urllib's error, whose open response (and
    socket) stayed alive with every traceback logged or kept."""
    transport = HttpSyncTransport(scripted.url, timeout=2.0)
    request = build_request(
        ClientIdentity(), full_sync=True, last_hash="", last_sync_nanos=0, counts={}, errors={}
    )
    scripted.script(reply)
    for _ in range(2):
        with pytest.raises(SyncError) as caught:
            transport.sync(request)
        assert held_connections(caught.value) == []


def test_no_response_outlives_its_sync(scripted: ScriptedServer) -> None:
    """The parser and the response it fills refer to each other; left as a
    cycle, each refused body (up to max_response_bytes) waited for the next
    garbage collection, and an idle Edge polling a server that streams
    400 MB grew to 268 MB."""
    provider = http_provider(scripted.url, timeout=2.0)
    provider.transport = HttpSyncTransport(scripted.url, timeout=2.0, max_response_bytes=4096)
    gc.collect()
    gc.disable()
    try:
        scripted.script(good(("drop-x", "x"), hash="h1"))
        assert provider.sync(), provider.last_error
        scripted.script(Reply(body=b" " * 10000))
        assert provider.sync() is False
        assert "larger than max_response_bytes (4096 bytes)" in provider.last_error
        assert not [o for o in gc.get_objects() if isinstance(o, httptools.HttpResponseParser)]
    finally:
        gc.enable()
