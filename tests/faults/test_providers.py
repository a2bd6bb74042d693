"""A policy server that misbehaves at the socket level, against the real
``sluice-edge``: a stalled or oversized sync is a failed sync that shows in
``/_health`` within a few deadlines, the last good policies stay
active, and SIGTERM is not held up by the provider."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

from tests.edge.helpers import (
    EdgeLauncher,
    Upstream,
    drop_logs,
    json_bodies,
    otlp_logs_json,
    policies,
    write_json,
)
from tests.faults.scripted import (
    Close,
    Pause,
    Received,
    ScriptedUpstream,
    Send,
    Step,
    StreamBody,
)
from tests.providers.helpers import wait_until

TIMEOUT_SECS = 0.5
DROP_X: dict[str, Any] = {
    "id": "drop-x",
    "name": "drop-x",
    "log": {"match": [{"logField": "LOG_FIELD_BODY", "exact": "x"}], "keep": "none"},
}


def sync_response(policy: dict[str, Any]) -> bytes:
    """A whole HTTP answer to a sync: a JSON SyncResponse holding `policy`."""
    body = json.dumps({"hash": "h1", "policies": [policy]}).encode()
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body)
    )


GOOD_RESPONSE = sync_response({**DROP_X, "enabled": True})
STREAMED_LIMIT = 32 << 20
"""An oversized answer stops here, so that a client without a cap fails too
instead of reading for minutes."""
HEAD_END = GOOD_RESPONSE.index(b"\r\n\r\n") + 4


def trickle() -> list[Step]:
    """A valid answer, one byte at a time, each well within the deadline
    (half of it), so that only a deadline on the whole sync can end it: the
    answer would take about 50 s."""
    steps: list[Step] = []
    for i in range(len(GOOD_RESPONSE)):
        steps += (Send(GOOD_RESPONSE[i : i + 1]), Pause(TIMEOUT_SECS / 2))
    return steps


def hang_after_headers() -> list[Step]:
    return [Send(GOOD_RESPONSE[:HEAD_END]), Pause(3600)]


def declared_400_mb() -> list[Step]:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 400000000\r\n\r\n"
    return [Send(head), StreamBody(STREAMED_LIMIT)]


def chunked_without_end() -> list[Step]:
    head = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    chunk = Send(b"10000\r\n" + b" " * 65536 + b"\r\n")
    return [Send(head), *[chunk] * (STREAMED_LIMIT // 65536)]


class ScriptedPolicyServer(ScriptedUpstream):
    """A policy server (the fault suite's scripted HTTP server): every sync
    opens a connection; the first gets `first`, every later one `fault`."""

    def __init__(self, fault: Callable[[], Sequence[Step]], first: bytes = GOOD_RESPONSE) -> None:
        def script(sync: Received) -> Sequence[Step]:
            return [Send(first), Close()] if sync.connection == 0 else fault()

        super().__init__(script)
        self.url += "/v1/policy/sync"


FAULTS: dict[str, tuple[Callable[[], Sequence[Step]], dict[str, Any], str]] = {
    "trickle": (trickle, {}, f"timed out after {TIMEOUT_SECS:g} s"),
    "hang-after-headers": (hang_after_headers, {}, f"timed out after {TIMEOUT_SECS:g} s"),
    "content-length-400-mb": (
        declared_400_mb,
        {"max_response_bytes": 65536},
        "larger than max_response_bytes (65536 bytes)",
    ),
    "chunked-without-end": (
        chunked_without_end,
        {"max_response_bytes": 65536},
        "larger than max_response_bytes (65536 bytes)",
    ),
}
"""The server's misbehaviour, extra provider settings, and what the error says."""


@pytest.fixture(params=list(FAULTS))
def fault(
    request: pytest.FixtureRequest,
) -> Iterator[tuple[ScriptedPolicyServer, dict[str, Any], str]]:
    """A server misbehaving as ``FAULTS[name]``, the provider settings, and
    what the error says. The server stops before Edge does."""
    behaviour, extra, mentions = FAULTS[request.param]
    server = ScriptedPolicyServer(behaviour)
    yield server, extra, mentions
    server.stop()


def test_a_misbehaving_policy_server_is_a_failed_sync_that_does_not_hold_shutdown(
    start_edge: EdgeLauncher,
    upstream: Upstream,
    fault: tuple[ScriptedPolicyServer, dict[str, Any], str],
) -> None:
    policy_server, extra, mentions = fault
    edge = start_edge(
        None,
        policy_providers=[
            {
                "type": "http",
                "id": "remote",
                "url": policy_server.url,
                "poll_interval_secs": 0.2,
                "timeout_secs": TIMEOUT_SECS,
                **extra,
            }
        ],
    )
    wait_until(
        lambda: mentions in edge.health()["providers"][0]["last_error"],
        f"/_health to show {mentions!r}",
        timeout=20 * TIMEOUT_SECS,
    )
    assert mentions in edge.stderr()

    assert edge.health()["providers"][0]["loaded"] is True  # the last good set stays
    assert edge.health()["policies"]["logs"] == 1
    body = json.dumps(otlp_logs_json(["x", "y"])).encode()
    assert edge.post("/v1/logs", body, "application/json").status == 200
    assert json_bodies(json.loads(upstream.received()[-1].body)) == ["y"]

    # SIGTERM while the provider is stuck: exit 0 within its deadline or so (no
    # drain is needed, nothing is in flight). Edge used to stay alive for as
    # long as the server kept trickling.
    assert edge.terminate(timeout=20 * TIMEOUT_SECS) == 0, edge.stderr()[-3000:]


def test_a_synced_policy_without_enabled_applies(
    start_edge: EdgeLauncher, upstream: Upstream
) -> None:
    """Defect 10: proto3 JSON reads an absent ``enabled`` as false, so a server
    that leaves it out silently replaced the provider's set with 0 active
    policies. POLICY.md section 0: missing means true."""
    answer = sync_response(DROP_X)
    server = ScriptedPolicyServer(lambda: [Send(answer), Close()], first=answer)
    try:
        edge = start_edge(
            None,
            policy_providers=[{"type": "http", "url": server.url, "poll_interval_secs": 60}],
        )
        assert edge.health()["policies"]["logs"] == 1
        body = json.dumps(otlp_logs_json(["x", "y"])).encode()
        assert edge.post("/v1/logs", body, "application/json").status == 200
        assert json_bodies(json.loads(upstream.received()[-1].body)) == ["y"]
    finally:
        server.stop()


def test_restoring_a_policy_file_clears_its_error(
    start_edge: EdgeLauncher, upstream: Upstream
) -> None:
    """Defect 10: after a broken edit, restoring the content already applied
    (same hash, nothing to recompile) left the stale error in /_health."""
    good = policies(drop_logs("drop-x", log_field="body", exact="x"))
    edge = start_edge(good)
    write_json(edge.policy_path, {"policies": "broken"})
    wait_until(
        lambda: bool(edge.health()["providers"][0]["last_error"]), "/_health to show the error"
    )
    write_json(edge.policy_path, good)
    wait_until(
        lambda: not edge.health()["providers"][0]["last_error"],
        "the error to clear once the file is restored",
    )
    assert edge.health()["policies"]["logs"] == 1
