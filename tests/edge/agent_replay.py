"""The Datadog Agent's calls, rebuilt byte for byte the way Agent 7 makes them.

What the Agent sends and how (datadog-agent 7.6x, read from its sources):

* API key validation: ``GET /api/v1/validate?api_key=KEY`` with only a
  ``User-Agent`` header (``forwarder_health.go``);
* the logs pipeline's connectivity check at start-up: ``POST /api/v2/logs``
  with the body ``{}`` (``pkg/logs/client/http/destination.go``);
* host metadata ``POST /intake/`` and inventories ``POST /api/v1/metadata``:
  JSON, compressed (``serializer.go``: the JSON headers with compression);
* series ``POST /api/v2/series``: an ``agent-payload`` ``MetricPayload``,
  ``Content-Type: application/x-protobuf``, ``DD-Agent-Payload`` (the schema
  version), compressed; with ``use_v2_api.series: false``, ``POST
  /api/v1/series`` in JSON instead;
* sketches ``POST /api/beta/sketches``: a protobuf ``SketchPayload``, compressed;
* check runs ``POST /api/v1/check_run``: a JSON array, compressed;
* logs ``POST /api/v2/logs``: a JSON array of ``message``, ``status``,
  ``timestamp``, ``hostname``, ``service``, ``ddsource``, ``ddtags``
  records (``pkg/logs/processor/json.go``), compressed, with ``DD-PROTOCOL:
  agent-json``, ``DD-EVP-ORIGIN: agent`` and the timestamp headers.

The forwarder adds ``DD-Api-Key``, ``DD-Agent-Version`` and ``User-Agent:
datadog-agent/<version>`` to every infrastructure call. Compression is zstd
(``serializer_compressor_kind`` and ``logs_config.compression_kind`` default
to it); older Agents used zlib, sent as ``Content-Encoding: deflate``, and
gzip for logs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sluice.telemetry.wire.agent_payload_pb2 import MetricPayload, SketchPayload
from tests.edge.helpers import compress

AGENT_VERSION = "7.64.3"
PAYLOAD_VERSION = "5.0.136"
HOST = "web-1"
NOW = 1_763_726_400
USER_AGENT = f"datadog-agent/{AGENT_VERSION}"

LOGS, METRICS, API = "logs", "metrics", "api"
"""The families: where the Agent sends a call when it talks to Datadog itself."""


@dataclass
class AgentCall:
    """One request as the Agent makes it."""

    name: str
    family: str
    method: str
    target: str
    headers: list[tuple[str, str]]
    body: bytes | None

    @property
    def path(self) -> str:
        return self.target.partition("?")[0]


def _infra_headers(api_key: str) -> list[tuple[str, str]]:
    return [
        ("DD-Api-Key", api_key),
        ("DD-Agent-Version", AGENT_VERSION),
        ("User-Agent", USER_AGENT),
    ]


def _json_call(
    name: str, family: str, path: str, document: Any, api_key: str, encoding: str
) -> AgentCall:
    headers = [*_infra_headers(api_key), ("Content-Type", "application/json")]
    headers.append(("Content-Encoding", encoding))
    return AgentCall(
        name, family, "POST", path, headers, compress(encoding, json.dumps(document).encode())
    )


def _protobuf_call(name: str, path: str, message: Any, api_key: str, encoding: str) -> AgentCall:
    headers = [
        *_infra_headers(api_key),
        ("Content-Type", "application/x-protobuf"),
        ("DD-Agent-Payload", PAYLOAD_VERSION),
        ("Content-Encoding", encoding),
    ]
    body = compress(encoding, message.SerializeToString())
    return AgentCall(name, METRICS, "POST", path, headers, body)


def series_payload(series: list[dict[str, Any]]) -> MetricPayload:
    """A MetricPayload; each dict: metric, type (1 count, 2 rate, 3 gauge),
    tags, optional host, unit, points [(timestamp, value)]."""
    payload = MetricPayload()
    for spec in series:
        item = payload.series.add(
            metric=spec["metric"],
            type=spec.get("type", MetricPayload.GAUGE),
            tags=spec.get("tags", []),
            unit=spec.get("unit", ""),
            source_type_name=spec.get("source", ""),
            interval=spec.get("interval", 0),
        )
        item.resources.add(type="host", name=spec.get("host", HOST))
        for timestamp, value in spec.get("points", [(NOW, 1.0)]):
            item.points.add(timestamp=timestamp, value=value)
        item.metadata.origin.origin_product = 10
    return payload


def sketch_payload(sketches: list[dict[str, Any]]) -> SketchPayload:
    """A SketchPayload; each dict: metric, tags, optional host."""
    payload = SketchPayload()
    for spec in sketches:
        sketch = payload.sketches.add(
            metric=spec["metric"], host=spec.get("host", HOST), tags=spec.get("tags", [])
        )
        sketch.dogsketches.add(
            ts=NOW, cnt=3, min=0.5, max=9.0, avg=4.0, sum=12.0, k=[1, 340, 1372], n=[1, 1, 1]
        )
    payload.metadata.agent_version = AGENT_VERSION
    return payload


SERIES = [
    {"metric": "datadog.agent.running", "tags": ["version:7.64.3"], "source": "System"},
    {"metric": "system.cpu.user", "tags": ["env:prod"], "unit": "percent", "interval": 15},
    {"metric": "app.debug.calls", "type": MetricPayload.COUNT, "tags": ["env:prod"]},
    {"metric": "app.requests", "type": MetricPayload.RATE, "tags": ["env:staging"]},
    {"metric": "app.queue.depth", "tags": ["env:prod", "team:core"], "points": [(NOW, 4.0)]},
]
SKETCHES = [
    {"metric": "app.request.latency", "tags": ["env:prod"]},
    {"metric": "app.debug.latency", "tags": ["env:prod"]},
]
LOG_RECORDS = [
    ("payment accepted", "info", "checkout"),
    ("cache miss", "debug", "checkout"),
    ("GET /healthz 200", "info", "lb"),
    ("refund issued", "warn", "checkout"),
]


def log_records() -> list[dict[str, Any]]:
    return [
        {
            "message": message,
            "status": status,
            "timestamp": NOW * 1000 + n,
            "hostname": HOST,
            "service": service,
            "ddsource": "python",
            "ddtags": "env:prod,filename:app.log",
        }
        for n, (message, status, service) in enumerate(LOG_RECORDS)
    ]


def logs_call(api_key: str, records: list[dict[str, Any]], encoding: str = "zstd") -> AgentCall:
    headers = [
        ("DD-API-KEY", api_key),
        ("Content-Type", "application/json"),
        ("User-Agent", USER_AGENT),
        ("Content-Encoding", encoding),
        ("DD-PROTOCOL", "agent-json"),
        ("DD-EVP-ORIGIN", "agent"),
        ("DD-EVP-ORIGIN-VERSION", AGENT_VERSION),
        ("dd-message-timestamp", str(NOW * 1000)),
        ("dd-current-timestamp", str(NOW * 1000 + 5)),
    ]
    body = compress(encoding, json.dumps(records).encode())
    return AgentCall("logs", LOGS, "POST", "/api/v2/logs", headers, body)


def agent_calls(api_key: str, encoding: str = "zstd") -> list[AgentCall]:
    """The Agent's calls in the order it makes them after start-up: key
    validation, the logs connectivity check, metadata, the first flush of
    series (v2 and, for Agents set to the v1 API, v1), sketches and check
    runs, then a batch of logs."""
    validate = AgentCall(
        "validate",
        API,
        "GET",
        f"/api/v1/validate?api_key={api_key}",
        [("User-Agent", USER_AGENT)],
        None,
    )
    connectivity = AgentCall(
        "logs connectivity check",
        LOGS,
        "POST",
        "/api/v2/logs",
        [
            ("DD-API-KEY", api_key),
            ("Content-Type", "application/json"),
            ("User-Agent", USER_AGENT),
            ("DD-PROTOCOL", "agent-json"),
            ("DD-EVP-ORIGIN", "agent"),
            ("DD-EVP-ORIGIN-VERSION", AGENT_VERSION),
            ("dd-message-timestamp", "0"),
            ("dd-current-timestamp", str(NOW * 1000)),
        ],
        b"{}",
    )
    host_metadata = {
        "os": "linux",
        "agentVersion": AGENT_VERSION,
        "internalHostname": HOST,
        "uuid": "8e1f0c6a-0000-4000-8000-000000000001",
        "systemStats": {"cpuCores": 2, "machine": "amd64", "platform": "linux"},
        "meta": {"hostname": HOST, "host_aliases": [], "timezones": ["UTC"]},
        "host-tags": {"system": ["env:prod"]},
    }
    inventory = {
        "hostname": HOST,
        "timestamp": NOW * 10**9,
        "uuid": host_metadata["uuid"],
        "agent_metadata": {"agent_version": AGENT_VERSION, "flavor": "agent"},
    }
    v1_series = {
        "series": [
            {
                "metric": "app.v1.kept",
                "points": [[NOW, 2.0]],
                "tags": ["env:prod"],
                "host": HOST,
                "type": "gauge",
                "interval": 10,
                "source_type_name": "System",
            },
            {
                "metric": "app.debug.v1",
                "points": [[NOW, 1.0]],
                "tags": ["env:prod"],
                "host": HOST,
                "type": "count",
                "interval": 10,
            },
        ]
    }
    check_runs = [
        {
            "check": "datadog.agent.up",
            "host_name": HOST,
            "timestamp": NOW,
            "status": 0,
            "message": "",
            "tags": None,
        }
    ]
    return [
        validate,
        connectivity,
        _json_call("host metadata", API, "/intake/", host_metadata, api_key, encoding),
        _json_call("inventory", API, "/api/v1/metadata", inventory, api_key, encoding),
        _protobuf_call("series v2", "/api/v2/series", series_payload(SERIES), api_key, encoding),
        _json_call("series v1", METRICS, "/api/v1/series", v1_series, api_key, encoding),
        _protobuf_call(
            "sketches", "/api/beta/sketches", sketch_payload(SKETCHES), api_key, encoding
        ),
        _json_call("check runs", METRICS, "/api/v1/check_run", check_runs, api_key, encoding),
        logs_call(api_key, log_records(), encoding),
    ]
