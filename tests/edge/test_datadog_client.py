"""The official Datadog API client (``datadog_api_client``) talking to Edge's
Datadog intake routes. Each batch is also sent straight to the upstream as
the reference of the client's exact bytes: kept, untouched records must
reach the upstream as those same bytes."""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator
from typing import Any

import pytest
import zstandard
from datadog_api_client import ApiClient, Configuration
from datadog_api_client.v2.api.logs_api import LogsApi
from datadog_api_client.v2.api.metrics_api import MetricsApi
from datadog_api_client.v2.model.content_encoding import ContentEncoding
from datadog_api_client.v2.model.http_log import HTTPLog
from datadog_api_client.v2.model.http_log_item import HTTPLogItem
from datadog_api_client.v2.model.metric_content_encoding import MetricContentEncoding
from datadog_api_client.v2.model.metric_intake_type import MetricIntakeType
from datadog_api_client.v2.model.metric_payload import MetricPayload
from datadog_api_client.v2.model.metric_point import MetricPoint
from datadog_api_client.v2.model.metric_series import MetricSeries

from tests.edge.helpers import EdgeLauncher, EdgeProcess, Recorded, Reply, Upstream, policies

CLIENT_KEY = "client-api-key-0123456789"
ENV_KEY = "env-api-key-9876543210"
OWN_KEY = "request-api-key-5555"
POLICIES = policies(
    {
        "id": "drop-debug",
        "name": "drop debug",
        "log": {"match": [{"log_field": "severity_text", "exact": "debug"}], "keep": "none"},
    },
    {
        "id": "drop-healthcheck",
        "name": "drop healthchecks",
        "log": {"match": [{"log_field": "body", "contains": "healthcheck"}], "keep": "none"},
    },
    {
        "id": "drop-noisy-service",
        "name": "drop noisy",
        "log": {
            "match": [{"resource_attribute": "service.name", "exact": "noisy"}],
            "keep": "none",
        },
    },
    {
        "id": "drop-staging",
        "name": "drop env:staging (a ddtags tag)",
        "log": {"match": [{"log_attribute": "env", "exact": "staging"}], "keep": "none"},
    },
    {
        "id": "redact-card",
        "name": "redact cards",
        "log": {
            "match": [{"log_attribute": "card", "exists": True}],
            "transform": {"redact": [{"log_attribute": "card"}]},
        },
    },
    {
        "id": "drop-dd-metrics",
        "name": "drop dd.drop.*",
        "metric": {"match": [{"metric_field": "name", "starts_with": "dd.drop."}], "keep": False},
    },
)

KEPT_AS_IS = [
    HTTPLogItem(
        message="payment accepted",
        service="checkout",
        hostname="web-1",
        ddsource="python",
        ddtags="env:prod,team:payments",
        status="info",
    ),
    HTTPLogItem(
        message="refund issued: h\u00e9llo \u2713 \U0001f600",
        service="checkout",
        ddtags="env:prod",
        status="warn",
        usr={"id": 5, "name": "Ann"},
        amount=12.5,
    ),
]
DROPPED = [
    HTTPLogItem(message="cache miss", service="checkout", status="debug"),
    HTTPLogItem(message="GET /healthcheck 200", service="lb", status="info"),
    HTTPLogItem(message="chatter", service="noisy", status="info"),
    HTTPLogItem(message="staging thing", service="checkout", ddtags="team:x,env:staging"),
]
REDACTED = HTTPLogItem(message="card used", service="checkout", card="4111-1111-1111-1111")


def client(port: int, compress: bool = True) -> ApiClient:
    configuration = Configuration(host=f"http://127.0.0.1:{port}")
    configuration.api_key["apiKeyAuth"] = CLIENT_KEY
    configuration.return_http_data_only = False
    configuration.enable_retry = False
    configuration.compress = compress
    return ApiClient(configuration)


def submit(port: int, items: list[HTTPLogItem], **kwargs: Any) -> tuple[Any, int, Any]:
    with client(port) as api:
        return LogsApi(api).submit_log(HTTPLog(items), **kwargs)  # type: ignore[no-any-return]


def elements(text: str) -> list[str]:
    """The source text of each element of a JSON array."""
    decoder = json.JSONDecoder()
    assert text.lstrip().startswith("[")
    index = text.index("[") + 1
    out = []
    while True:
        while text[index] in " \t\r\n,":
            index += 1
        if text[index] == "]":
            return out
        _, end = decoder.raw_decode(text, index)
        out.append(text[index:end])
        index = end


def reference(upstream: Upstream, items: list[HTTPLogItem], **kwargs: Any) -> Recorded:
    """The client's own bytes for `items`, sent straight to the upstream."""
    before = len(upstream.received())
    _, status, _ = submit(upstream.port, items, **kwargs)
    assert status == 202
    [got] = upstream.received()[before:]
    return got


@pytest.fixture
def accepting(upstream: Upstream) -> Upstream:
    upstream.respond = Reply(202, b"{}")
    return upstream


@pytest.fixture
def edge(start_edge: EdgeLauncher, accepting: Upstream) -> Iterator[EdgeProcess]:
    yield start_edge(POLICIES, program="sluice-edge-datadog", log_level="debug")


def test_policies_drop_and_keep_records_byte_for_byte(
    edge: EdgeProcess, accepting: Upstream
) -> None:
    items = [DROPPED[0], KEPT_AS_IS[0], DROPPED[1], REDACTED, DROPPED[2], KEPT_AS_IS[1], DROPPED[3]]
    direct = reference(accepting, items, ddtags="source:test")
    sent = elements(direct.decoded().decode())
    assert len(sent) == len(items)
    _, status, _ = submit(edge.port, items, ddtags="source:test")
    assert status == 202
    [got] = accepting.received()[1:]
    assert got.target == direct.target  # /api/v2/logs?ddtags=...
    assert "ddtags=source" in got.query
    assert got.all("DD-API-KEY") == [CLIENT_KEY]
    text = got.decoded().decode()
    forwarded = elements(text)
    assert len(forwarded) == 3
    # Untouched kept records: the very bytes the client sent.
    assert forwarded[0] == sent[1]
    assert forwarded[2] == sent[5]
    assert sent[1] in text and sent[5] in text
    # The transformed record: same JSON, card redacted.
    changed = json.loads(sent[3])
    changed["card"] = "[REDACTED]"
    assert json.loads(forwarded[1]) == changed
    assert json.loads(text) == [json.loads(sent[1]), changed, json.loads(sent[5])]


def test_batch_nothing_dropped_is_forwarded_unchanged(
    edge: EdgeProcess, accepting: Upstream
) -> None:
    direct = reference(accepting, KEPT_AS_IS)
    _, status, _ = submit(edge.port, KEPT_AS_IS)
    assert status == 202
    [got] = accepting.received()[1:]
    assert got.body == direct.body
    assert got.header("Content-Type") == direct.header("Content-Type")


@pytest.mark.parametrize("encoding", [ContentEncoding.GZIP, ContentEncoding.DEFLATE])
def test_compressed_batches_keep_their_encoding(
    edge: EdgeProcess, accepting: Upstream, encoding: ContentEncoding
) -> None:
    items = [KEPT_AS_IS[0], DROPPED[0], KEPT_AS_IS[1]]
    direct = reference(accepting, items, content_encoding=encoding)
    assert direct.header("Content-Encoding") == str(encoding)
    sent = elements(direct.decoded().decode())
    _, status, _ = submit(edge.port, items, content_encoding=encoding)
    assert status == 202
    [got] = accepting.received()[1:]
    assert got.header("Content-Encoding") == str(encoding)
    plain = (
        gzip.decompress(got.body) if encoding == ContentEncoding.GZIP else zlib.decompress(got.body)
    )
    assert elements(plain.decode()) == [sent[0], sent[2]]


def test_everything_dropped_is_202_and_nothing_forwarded(
    edge: EdgeProcess, accepting: Upstream
) -> None:
    data, status, _ = submit(edge.port, DROPPED)
    assert (status, data) == (202, {})
    assert accepting.received() == []
    raw = edge.post(
        "/api/v2/logs", json.dumps([{"message": "healthcheck"}]).encode(), "application/json"
    )
    assert (raw.status, raw.json()) == (202, {})
    assert accepting.received() == []


def test_non_object_records_are_kept_unevaluated(edge: EdgeProcess, accepting: Upstream) -> None:
    body = b'[1, "healthcheck", {"message": "healthcheck"}, null, {"message": "ok"}]'
    assert edge.post("/api/v2/logs", body, "application/json").status == 202
    [got] = accepting.received()
    assert json.loads(got.body) == [1, "healthcheck", None, {"message": "ok"}]
    assert elements(got.body.decode())[-1] == '{"message": "ok"}'


def test_env_api_key_added_only_when_missing_and_never_logged(
    start_edge: EdgeLauncher, accepting: Upstream
) -> None:
    edge = start_edge(
        POLICIES, program="sluice-edge-datadog", env={"DD_API_KEY": ENV_KEY}, log_level="debug"
    )
    logs = json.dumps([{"message": "kept", "status": "info"}, {"message": "x", "status": "debug"}])
    series = json.dumps({"series": [{"metric": "app.x", "points": [{"timestamp": 1, "value": 1}]}]})
    cases = [
        ("/api/v2/logs", logs.encode()),
        ("/api/v2/logs", b'[{"message": "unchanged"}]'),
        ("/api/v2/logs", b"not json at all"),
        ("/api/v2/series", series.encode()),
    ]
    for path, body in cases:
        accepting.reset()
        accepting.respond = Reply(202, b"{}")
        assert edge.post(path, body, "application/json").status == 202
        [got] = accepting.received()
        assert got.all("DD-API-KEY") == [ENV_KEY], (path, got.headers)
        accepting.reset()
        accepting.respond = Reply(202, b"{}")
        answer = edge.request(
            "POST", path, body, {"Content-Type": "application/json", "dd-api-key": OWN_KEY}
        )
        assert answer.status == 202
        [got] = accepting.received()
        assert got.all("DD-API-KEY") == [OWN_KEY], (path, got.headers)
    # The client's own key wins over the environment's.
    accepting.reset()
    accepting.respond = Reply(202, b"{}")
    _, status, _ = submit(edge.port, KEPT_AS_IS)
    assert status == 202
    assert accepting.received()[0].all("DD-API-KEY") == [CLIENT_KEY]
    assert edge.terminate() == 0
    log = edge.stderr()
    assert "unevaluated" in log  # the fail-open request was logged
    for key in (ENV_KEY, CLIENT_KEY, OWN_KEY):
        assert key not in log


def test_logs_url_and_metrics_url_route_datadog_traffic(
    start_edge: EdgeLauncher, upstream: Upstream
) -> None:
    logs_up, metrics_up = Upstream(), Upstream()
    try:
        logs_up.respond = metrics_up.respond = Reply(202, b"{}")
        edge = start_edge(
            POLICIES,
            program="sluice-edge-datadog",
            logs_url=logs_up.url + "/logs-base",
            metrics_url=metrics_up.url,
        )
        _, status, _ = submit(edge.port, KEPT_AS_IS)
        assert status == 202
        payload = MetricPayload(
            series=[
                MetricSeries(
                    metric="app.kept",
                    type=MetricIntakeType.GAUGE,
                    points=[MetricPoint(timestamp=1_700_000_000, value=1.5)],
                ),
                MetricSeries(
                    metric="dd.drop.me",
                    type=MetricIntakeType.COUNT,
                    points=[MetricPoint(timestamp=1_700_000_000, value=2.0)],
                ),
            ]
        )
        with client(edge.port) as api:
            _, status, _ = MetricsApi(api).submit_metrics(payload)
        assert status == 202
        otlp = b'{"resourceLogs": []}'
        assert edge.post("/v1/logs", otlp, "application/json").status == 200
        assert [r.path for r in logs_up.received()] == ["/logs-base/api/v2/logs"]
        [series] = metrics_up.received()
        assert series.path == "/api/v2/series"
        assert series.all("DD-API-KEY") == [CLIENT_KEY]
        names = [s["metric"] for s in json.loads(series.decoded())["series"]]
        assert names == ["app.kept"]
        assert [r.path for r in upstream.received()] == ["/v1/logs"]
    finally:
        logs_up.stop()
        metrics_up.stop()


def test_series_all_dropped_is_202(edge: EdgeProcess, accepting: Upstream) -> None:
    payload = MetricPayload(
        series=[
            MetricSeries(
                metric="dd.drop.a", points=[MetricPoint(timestamp=1_700_000_000, value=1.0)]
            )
        ]
    )
    with client(edge.port) as api:
        _, status, _ = MetricsApi(api).submit_metrics(payload)
    assert status == 202
    assert accepting.received() == []


def test_transforms_on_a_ddtags_tag_edit_the_tag(
    start_edge: EdgeLauncher, accepting: Upstream
) -> None:
    """A tag read by name (EDGE.md section 3) is edited where it is, in
    ``ddtags``: a redacted tag no longer carries its value anywhere."""
    edge = start_edge(
        policies(
            {
                "id": "tags",
                "name": "edit tags",
                "log": {
                    "match": [{"log_attribute": "env", "exists": True}],
                    "transform": {
                        "remove": [{"log_attribute": "secret"}],
                        "redact": [
                            {"log_attribute": "token"},
                            {"log_attribute": "user", "regex": "[0-9]+", "replacement": "N"},
                        ],
                        "rename": [
                            {"from_log_attribute": "team", "to": "squad"},
                            {"from_log_attribute": "region", "to": "zone"},
                        ],
                        "add": [
                            {"log_attribute": "version", "value": "2", "upsert": True},
                            {"log_attribute": "env", "value": "kept"},
                        ],
                    },
                },
            }
        ),
        program="sluice-edge-datadog",
    )
    items = [
        HTTPLogItem(
            message="m",
            service="checkout",
            ddtags="env:prod,token:abc123,secret:s3,user:ann42,team:x,secret:s4,"
            "region:eu,zone:b,version:1,bare",
        ),
        HTTPLogItem(message="own key", token="t", ddtags="env:prod,token:tag-value"),
    ]
    _, status, _ = submit(edge.port, items)
    assert status == 202
    [got] = accepting.received()
    first, second = json.loads(got.decoded())
    assert first == {
        "message": "m",
        "service": "checkout",
        "ddtags": "env:prod,token:[REDACTED],user:annN,squad:x,region:eu,zone:b,version:2,bare",
    }
    # A record key of that name is what the selector reads and edits; a name
    # that is neither a key nor a tag is added as a key.
    assert second == {
        "message": "own key",
        "token": "[REDACTED]",
        "ddtags": "env:prod,token:tag-value",
        "version": "2",
    }


def test_transforms_on_a_path_read_from_a_dotted_key_edit_that_key(
    start_edge: EdgeLauncher, accepting: Upstream
) -> None:
    """A path that reads the dotted literal key ``usr.id`` (EDGE.md section 3)
    is edited there, not created as nested objects beside it."""
    edge = start_edge(
        policies(
            {
                "id": "paths",
                "name": "edit paths",
                "log": {
                    "match": [{"log_attribute": ["usr", "id"], "exists": True}],
                    "transform": {
                        "remove": [{"log_attribute": ["net", "ip"]}],
                        "redact": [{"log_attribute": ["usr", "id"]}],
                        "rename": [{"from_log_attribute": ["usr", "email"], "to": "mail"}],
                    },
                },
            }
        ),
        program="sluice-edge-datadog",
    )
    body = [
        {"message": "a", "usr.id": 5, "net.ip": "10.0.0.1", "usr.email": "a@b.c"},
        {"message": "b", "usr": {"id": 6, "email": "d@e.f"}, "net": {"ip": "10.0.0.2"}},
    ]
    answer = edge.post("/api/v2/logs", json.dumps(body).encode(), "application/json")
    assert answer.status == 202
    [got] = accepting.received()
    assert json.loads(got.body) == [
        {"message": "a", "usr.id": "[REDACTED]", "mail": "a@b.c"},
        {"message": "b", "usr": {"id": "[REDACTED]", "mail": "d@e.f"}, "net": {}},
    ]


def test_an_empty_message_or_status_reads_the_next_key(
    edge: EdgeProcess, accepting: Upstream
) -> None:
    """An empty string is absent for a field (POLICY.md 2.1), so body and
    severity read the next key (EDGE.md section 3: ``message``, if absent
    ``msg``, then ``log``; ``status``, else ``level``)."""
    body = [
        {"message": "", "msg": "GET /healthcheck 200"},
        {"message": "", "log": "GET /healthcheck 200"},
        {"status": "", "level": "debug", "message": "cache miss"},
        {"message": "", "msg": "kept", "status": "", "level": "info"},
    ]
    answer = edge.post("/api/v2/logs", json.dumps(body).encode(), "application/json")
    assert answer.status == 202
    [got] = accepting.received()
    assert json.loads(got.body) == body[3:]


def test_zstd1_series_are_filtered_and_keep_their_encoding(
    edge: EdgeProcess, accepting: Upstream
) -> None:
    """The client's ``MetricContentEncoding.ZSTD1`` sends ``Content-Encoding:
    zstd1`` (a zstd frame), which the series intake accepts: it is filtered
    like ``zstd``, and what is kept goes on in the same encoding."""
    payload = MetricPayload(
        series=[
            MetricSeries(
                metric="app.kept", points=[MetricPoint(timestamp=1_700_000_000, value=1.5)]
            ),
            MetricSeries(
                metric="dd.drop.me", points=[MetricPoint(timestamp=1_700_000_000, value=2.0)]
            ),
        ]
    )
    with client(edge.port) as api:
        _, status, _ = MetricsApi(api).submit_metrics(
            payload, content_encoding=MetricContentEncoding.ZSTD1
        )
    assert status == 202
    [got] = accepting.received()
    assert got.header("Content-Encoding") == "zstd1"
    plain = zstandard.ZstdDecompressor().decompressobj().decompress(got.body)
    assert [s["metric"] for s in json.loads(plain)["series"]] == ["app.kept"]


def test_a_single_log_object_is_one_record(edge: EdgeProcess, accepting: Upstream) -> None:
    """The intake also takes one log as a bare object (Datadog's "simple JSON
    message"): it is that one record, filtered like an array's, and goes on
    as an object."""
    dropped = b'{"message": "GET /healthcheck 200", "service": "lb"}'
    answer = edge.post("/api/v2/logs", dropped, "application/json")
    assert (answer.status, answer.json()) == (202, {})
    assert accepting.received() == []
    kept = b'{"message": "payment accepted",  "ddtags": "env:prod"}'
    assert edge.post("/api/v2/logs", kept, "application/json").status == 202
    [got] = accepting.received()
    assert got.body == kept
    edited = {"message": "card used", "card": "4111-1111-1111-1111", "n": 1}
    body = gzip.compress(json.dumps(edited).encode())
    answer = edge.request(
        "POST",
        "/api/v2/logs",
        body,
        {"Content-Type": "application/json", "Content-Encoding": "gzip"},
    )
    assert answer.status == 202
    got = accepting.received()[-1]
    assert json.loads(got.decoded()) == {**edited, "card": "[REDACTED]"}
    staging = b'{"message": "x", "ddtags": "team:x,env:staging"}'
    assert edge.post("/api/v2/logs", staging, "application/json").status == 202
    assert len(accepting.received()) == 2


@pytest.mark.parametrize(
    "body",
    [
        b'[{"message": "card used", "card": "4111-1111-1111-1111", "n": 1e400}]',
        b'{"message": "card used", "card": "4111-1111-1111-1111", "n": -1e400}',
        b'[{"message": "card used", "card": "4111", "n": NaN}, {"message": "x", "status": "debug"}]',
    ],
)
def test_an_edited_log_with_a_number_json_cannot_carry_is_forwarded_unchanged(
    edge: EdgeProcess, accepting: Upstream, body: bytes
) -> None:
    """A transform edits the log, so it must be written back, and its number
    (read as infinity or NaN) would go out as ``Infinity``/``NaN``, which the
    intake cannot read: the batch is forwarded unchanged (fail open) rather
    than refused whole upstream."""
    answer = edge.post("/api/v2/logs", body, "application/json")
    assert answer.status == 202
    [got] = accepting.received()
    assert got.body == body
    assert "unevaluated" in edge.stderr()


@pytest.mark.parametrize(
    "path,body,content_type",
    [
        ("/api/v2/logs", b'[{"message": "GET /healthcheck 200"}]', "text/plain"),
        ("/api/v2/logs", b'{"message": "GET /healthcheck 200"}', "application/logplex-1"),
        ("/api/v2/logs", b'[{"message": "GET /healthcheck 200"}]', "application/x-protobuf"),
        ("/api/v2/series", b'{"series": [{"metric": "dd.drop.x", "points": []}]}', "text/plain"),
        ("/api/v1/series", b'{"series": [{"metric": "dd.drop.x", "points": []}]}', "text/csv"),
    ],
)
def test_a_content_type_the_route_does_not_read_is_forwarded_unchanged(
    edge: EdgeProcess, accepting: Upstream, path: str, body: bytes, content_type: str
) -> None:
    """EDGE.md section 2, bad input: an unknown content type on a filtered
    route fails open (the intake reads text/plain or logplex lines as raw
    messages, not as a JSON array), whatever the body looks like."""
    answer = edge.post(path, body, content_type)
    assert answer.status == 202
    [got] = accepting.received()
    assert (got.body, got.header("Content-Type")) == (body, content_type)
    assert "unevaluated" in edge.stderr()


def test_a_datadog_request_without_content_type_is_read_as_json(
    edge: EdgeProcess, accepting: Upstream
) -> None:
    """The Agent always names its media type; a request naming none is read
    as JSON (as the reference does), so its records are still filtered."""
    dropped = json.dumps([{"message": "GET /healthcheck 200"}]).encode()
    answer = edge.request("POST", "/api/v2/logs", dropped)
    assert (answer.status, answer.json()) == (202, {})
    assert accepting.received() == []
