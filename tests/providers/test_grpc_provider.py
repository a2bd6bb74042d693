"""The gRPC provider against a real ``sluice policy-server`` process, and
against a real gRPC server scripted to misbehave."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest

from sluice.providers.config import ProviderConfig, parse_provider
from sluice.providers.grpc_transport import GrpcSyncTransport
from sluice.providers.registry import PolicyRegistry
from sluice.providers.remote import RemoteProvider
from sluice.providers.server import sync_service
from sluice.providers.wire import policy_pb2 as pb
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


def grpc_provider(
    target: str, *, token: str | None = TOKEN, timeout: float = 5.0, interval: float = 60.0
) -> RemoteProvider:
    headers = (("Authorization", f"Bearer {token}"),) if token is not None else ()
    config = ProviderConfig(
        type="grpc",
        id="control-plane",
        url=target,
        headers=headers,
        timeout_secs=timeout,
        poll_interval_secs=interval,
    )
    return RemoteProvider(config, PolicyRegistry())


@pytest.fixture
def closing() -> Iterator[list[RemoteProvider]]:
    """Providers whose channels are closed after the test."""
    providers: list[RemoteProvider] = []
    yield providers
    for provider in providers:
        provider.transport.close()


# -- against the real policy server ---------------------------------------------


@pytest.mark.parametrize("token", [None, "wrong"], ids=["none", "wrong"])
def test_a_missing_or_wrong_token_is_unauthenticated(
    served: Served, closing: list[RemoteProvider], token: str | None
) -> None:
    provider = grpc_provider(served.server.grpc_target, token=token)
    closing.append(provider)
    assert provider.sync() is False
    assert "UNAUTHENTICATED" in provider.last_error
    assert "bearer token" in provider.last_error
    assert provider.registry.generation == 0
    assert provider.registry.snapshot.policies == ()
    assert not provider.loaded.is_set()


def test_the_authorization_metadata_is_accepted(
    served: Served, closing: list[RemoteProvider], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SERVICE_API_KEY", TOKEN)
    config = parse_provider(
        {
            "type": "grpc",
            "id": "control-plane",
            "url": f"grpc://{served.server.grpc_target}",
            "headers": [{"name": "Authorization", "value": "Bearer ${SERVICE_API_KEY}"}],
        },
        "config.json: policy_providers[0]",
        0,
    )
    provider = RemoteProvider(config, PolicyRegistry())
    closing.append(provider)
    assert provider.sync() is True, provider.last_error
    assert provider.last_error == ""
    assert provider.loaded.is_set()
    assert [p.id for p in provider.registry.owned_by("control-plane")] == ["drop-x"]
    assert surviving(provider.registry.snapshot, "x", "y") == ["y"]
    assert provider.recommended_interval == 30.0


def test_a_bin_metadata_value_goes_as_its_bytes(
    served: Served, closing: list[RemoteProvider]
) -> None:
    """grpcio takes only bytes for a ``-bin`` key: a text value failed every sync."""
    config = parse_provider(
        {
            "type": "grpc",
            "url": served.server.grpc_target,
            "headers": [
                {"name": "Authorization", "value": f"Bearer {TOKEN}"},
                {"name": "X-Tenant-Bin", "value": "équipe"},
            ],
        },
        "config.json: policy_providers[0]",
        0,
    )
    provider = RemoteProvider(config, PolicyRegistry())
    closing.append(provider)
    assert provider.sync() is True, provider.last_error
    assert [p.id for p in provider.registry.owned_by(provider.config.id)] == ["drop-x"]


@pytest.mark.parametrize("scheme", ["http://", "grpc://", ""])
def test_an_http_url_is_a_plaintext_target(
    served: Served, closing: list[RemoteProvider], scheme: str
) -> None:
    """``http://host:port`` is the form the Rust client (policy-rs) takes: it
    was accepted at load and then failed every sync ("Misformatted domain
    name"), gRPC reading the scheme as part of the host."""
    config = parse_provider(
        {
            "type": "grpc",
            "url": f"{scheme}{served.server.grpc_target}",
            "headers": [{"name": "Authorization", "value": f"Bearer {TOKEN}"}],
        },
        "config.json: policy_providers[0]",
        0,
    )
    provider = RemoteProvider(config, PolicyRegistry())
    closing.append(provider)
    assert provider.sync() is True, provider.last_error
    assert surviving(provider.registry.snapshot, "x", "y") == ["y"]


def test_a_policy_update_is_picked_up(served: Served, closing: list[RemoteProvider]) -> None:
    provider = grpc_provider(served.server.grpc_target)
    closing.append(provider)
    registry = provider.registry
    assert provider.sync()
    snapshot = registry.snapshot
    assert provider.sync()
    assert registry.snapshot is snapshot  # same hash: not recompiled

    write_policies(served.path, drop("drop-y", "y"))
    assert provider.sync(), provider.last_error
    assert registry.generation == 2
    assert [p.id for p in registry.snapshot.policies] == ["drop-y"]
    assert surviving(registry.snapshot, "x", "y") == ["x"]


def test_hits_are_reported(served: Served, closing: list[RemoteProvider]) -> None:
    provider = grpc_provider(served.server.grpc_target)
    closing.append(provider)
    assert provider.sync()
    assert evaluate(provider.registry.snapshot, logs("x", "y", "x", scopes=3)).dropped == 6
    assert provider.sync()
    assert served.hits() == {"drop-x": 6}
    assert provider.sync()
    assert served.hits() == {"drop-x": 6}


def test_failures_never_show_credentials(closing: list[RemoteProvider]) -> None:
    with refusing_port() as port:
        provider = grpc_provider(f"grpc://user:secretpw@127.0.0.1:{port}", timeout=1.0)
        closing.append(provider)
        assert provider.sync() is False
    assert "***@127.0.0.1" in provider.last_error
    assert "secretpw" not in provider.last_error


def test_counts_survive_an_unreachable_server(
    served: Served, closing: list[RemoteProvider]
) -> None:
    provider = grpc_provider(served.server.grpc_target, timeout=2.0)
    closing.append(provider)
    assert provider.sync()
    evaluate(provider.registry.snapshot, logs("x", "x"))
    live = provider.transport
    with refusing_port() as port:
        dead = GrpcSyncTransport(f"127.0.0.1:{port}", provider.config.headers, timeout=2.0)
        provider.transport = dead
        try:
            assert provider.sync() is False
        finally:
            dead.close()
    assert "UNAVAILABLE" in provider.last_error
    assert surviving(provider.registry.snapshot, "x") == []
    provider.transport = live
    assert provider.sync(), provider.last_error
    assert served.hits() == {"drop-x": 3}


def test_the_channel_reconnects_at_least_once_a_poll_interval(
    closing: list[RemoteProvider],
) -> None:
    """EDGE.md section 4: backoff on failure is at most one poll interval.
    gRPC's channel has a backoff of its own (1 s, growing to 120 s), and a
    call made while it waits fails without trying the server, so the
    channel's is capped at the interval too. A server that accepts and
    closes every connection counts the channel's attempts: with gRPC's
    backoff, 3 in 3 s (at 0, 1 and 2.6 s); capped at 0.3 s, about 10."""
    attempts: list[float] = []
    listener = socket.create_server(("127.0.0.1", 0))

    def accept_and_close() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            attempts.append(time.monotonic())
            connection.close()

    threading.Thread(target=accept_and_close, daemon=True).start()
    try:
        port = listener.getsockname()[1]
        provider = grpc_provider(f"127.0.0.1:{port}", timeout=0.2, interval=0.3)
        closing.append(provider)
        until = time.monotonic() + 3.0
        while time.monotonic() < until:
            assert provider.sync() is False
            time.sleep(0.1)
    finally:
        listener.close()
    assert len(attempts) >= 6, attempts


def test_stop_sends_a_last_sync(served: Served) -> None:
    provider = grpc_provider(served.server.grpc_target)
    provider.start()
    try:
        wait_until(provider.loaded.is_set, "the first sync of the polling thread")
        evaluate(provider.registry.snapshot, logs("x"))
    finally:
        provider.stop()
    assert served.hits() == {"drop-x": 1}


# -- against a scripted, misbehaving gRPC server ------------------------------------

Behaviour = Callable[[Any, grpc.ServicerContext], Any]


class ScriptedGrpc:
    """A real grpc server on 127.0.0.1 whose Sync runs queued behaviours (the
    last one repeats), recording every request and its metadata."""

    def __init__(self) -> None:
        self.behaviours: list[Behaviour] = []
        self.requests: list[tuple[Any, dict[str, str]]] = []
        self.release = threading.Event()
        self._lock = threading.Lock()

        def sync(request: Any, context: grpc.ServicerContext) -> Any:
            with self._lock:
                self.requests.append((request, dict(context.invocation_metadata())))
                behaviour = (
                    self.behaviours.pop(0) if len(self.behaviours) > 1 else self.behaviours[0]
                )
            return behaviour(request, context)

        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        self.server.add_generic_rpc_handlers((sync_service(sync),))
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def script(self, *behaviours: Behaviour) -> None:
        with self._lock:
            self.behaviours = list(behaviours)

    def close(self) -> None:
        self.release.set()
        self.server.stop(grace=0).wait(10)


@pytest.fixture
def scripted() -> Iterator[ScriptedGrpc]:
    server = ScriptedGrpc()
    yield server
    server.close()


def respond(policy_id: str, body: str, hash: str) -> Behaviour:
    policy = pb.Policy(
        id=policy_id,
        name=policy_id,
        enabled=True,
        log=pb.LogTarget(
            match=[pb.LogMatcher(log_field=pb.LOG_FIELD_BODY, exact=body)], keep="none"
        ),
    )
    return lambda request, context: pb.SyncResponse(
        policies=[policy], hash=hash, sync_type=pb.SYNC_TYPE_FULL
    )


def error_message(request: Any, context: grpc.ServicerContext) -> Any:
    return pb.SyncResponse(error_message="boom", hash="h-error")


def internal(request: Any, context: grpc.ServicerContext) -> Any:
    context.abort(grpc.StatusCode.INTERNAL, "database on fire")


def unimplemented(request: Any, context: grpc.ServicerContext) -> Any:
    context.abort(grpc.StatusCode.UNIMPLEMENTED, "no such method here")


def make_slow(scripted: ScriptedGrpc) -> Behaviour:
    def slow(request: Any, context: grpc.ServicerContext) -> Any:
        scripted.release.wait(5.0)
        return pb.SyncResponse(hash="h-slow")

    return slow


def test_grpc_failures_keep_the_previous_set(
    scripted: ScriptedGrpc, closing: list[RemoteProvider]
) -> None:
    provider = grpc_provider(scripted.target, token="t0k", timeout=0.3, interval=8.0)
    closing.append(provider)
    registry = provider.registry
    scripted.script(respond("drop-x", "x", "h1"))
    assert provider.sync(), provider.last_error
    snapshot = registry.snapshot
    assert scripted.requests[0][1]["authorization"] == "Bearer t0k"

    failures = [
        (error_message, "server error: boom"),
        (internal, "INTERNAL"),
        (unimplemented, "UNIMPLEMENTED"),
        (make_slow(scripted), "DEADLINE_EXCEEDED"),
    ]
    for attempt, (behaviour, mentions) in enumerate(failures, start=1):
        scripted.script(behaviour)
        ok = provider.sync()
        assert ok is False, mentions
        assert mentions in provider.last_error
        assert provider.next_delay(ok) <= 8.0
        assert provider.failures == attempt
        assert registry.snapshot is snapshot
        assert provider.last_hash == "h1"
        assert surviving(registry.snapshot, "x", "y") == ["y"]

    scripted.script(respond("drop-y", "y", "h2"))
    ok = provider.sync()
    assert ok, provider.last_error
    assert provider.next_delay(ok) == 8.0
    assert provider.failures == 0
    assert surviving(registry.snapshot, "x", "y") == ["x"]
    sent = {s.id: s.match_hits for s in scripted.requests[-1][0].policy_statuses}
    assert sent == {"drop-x": len(failures)}  # every failed attempt's hits, carried once more


def test_a_response_over_max_response_bytes_is_refused(
    scripted: ScriptedGrpc, closing: list[RemoteProvider]
) -> None:
    config = ProviderConfig(
        type="grpc", id="control-plane", url=scripted.target, max_response_bytes=4096
    )
    provider = RemoteProvider(config, PolicyRegistry())
    closing.append(provider)
    scripted.script(respond("drop-x", "x", "h1"))
    assert provider.sync(), provider.last_error
    snapshot = provider.registry.snapshot

    scripted.script(respond("drop-y", "y" * 5000, "h2"))
    assert provider.sync() is False
    assert "larger than max_response_bytes (4096 bytes)" in provider.last_error
    assert provider.registry.snapshot is snapshot
    assert surviving(provider.registry.snapshot, "x", "y") == ["y"]
