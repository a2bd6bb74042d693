"""Client metadata through a running ``sluice-collector``: OTLP receivers
with ``include_metadata`` and ``basicauth``, fed by the OpenTelemetry SDK's
HTTP and gRPC log exporters with a tenant header; ``attributes`` reads the
client (``from_context``), ``batch`` batches each tenant apart, and a
second ``attributes`` after it sees only the batched keys, as upstream."""

from __future__ import annotations

import base64
import time
from pathlib import Path
from typing import Any

from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GrpcLogs
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as HttpLogs
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import LogExporter, SimpleLogRecordProcessor

from tests.collector.components.attribute_data import shown
from tests.collector.helpers import CollectorProcess, free_ports
from tests.edge.helpers import Upstream

BOB = "bob", "builder-9Kp"
BOB_APR1 = "$apr1$Yq3xT1aZ$4KooMs.9nS19JOF6NLLiO0"
"""``openssl passwd -apr1 -salt Yq3xT1aZ builder-9Kp``."""
AUTHORIZATION = "Basic " + base64.b64encode(":".join(BOB).encode()).decode()
BATCH_TIMEOUT = "2s"
"""Long enough for every record to be sent while the first batch waits."""


def _config(ports: dict[str, int], sink: Upstream) -> dict[str, Any]:
    auth = {"authenticator": "basicauth"}

    def endpoint(name: str) -> str:
        return f"127.0.0.1:{ports[name]}"

    return {
        "extensions": {"basicauth": {"htpasswd": {"inline": f"bob:{BOB_APR1}"}}},
        "receivers": {
            "otlp": {
                "protocols": {
                    "grpc": {"endpoint": endpoint("grpc"), "auth": auth, "include_metadata": True},
                    "http": {"endpoint": endpoint("http"), "auth": auth, "include_metadata": True},
                }
            },
            "otlp/plain": {"protocols": {"http": {"endpoint": endpoint("plain"), "auth": auth}}},
        },
        "processors": {
            "attributes/client": {
                "actions": [
                    {"key": "tenant", "from_context": "metadata.x-tenant", "action": "insert"},
                    {"key": "user", "from_context": "auth.username", "action": "insert"},
                    {"key": "peer", "from_context": "client.address", "action": "insert"},
                    {"key": "host", "from_context": "metadata.host", "action": "insert"},
                ]
            },
            "batch": {
                "timeout": BATCH_TIMEOUT,
                "send_batch_size": 1000,
                "metadata_keys": ["X-Tenant"],
            },
            "attributes/batched": {
                "actions": [
                    {"key": "batched", "from_context": "x-tenant", "action": "insert"},
                    {"key": "user_after", "from_context": "auth.username", "action": "insert"},
                    {"key": "host_after", "from_context": "metadata.host", "action": "insert"},
                ]
            },
        },
        "exporters": {"otlphttp": {"endpoint": sink.url}},
        "service": {
            "extensions": ["basicauth"],
            "telemetry": {"metrics": {"level": "none"}},
            "pipelines": {
                "logs": {
                    "receivers": ["otlp", "otlp/plain"],
                    "processors": ["attributes/client", "batch", "attributes/batched"],
                    "exporters": ["otlphttp"],
                }
            },
        },
    }


def _emit(exporter: LogExporter, *bodies: str) -> None:
    provider = LoggerProvider()
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    logger = provider.get_logger("e2e")
    for body in bodies:
        logger.emit(body=body)
    provider.shutdown()


def _headers(tenant: str) -> dict[str, str]:
    return {"x-tenant": tenant, "authorization": AUTHORIZATION}


def test_tenants_are_read_from_the_client_and_batched_apart(
    tmp_path: Path, upstream: Upstream
) -> None:
    ports = dict(zip(("grpc", "http", "plain"), free_ports(3), strict=True))
    collector = CollectorProcess(tmp_path, _config(ports, upstream)).wait_ready()
    try:
        http_url = f"http://127.0.0.1:{ports['http']}/v1/logs"
        _emit(HttpLogs(endpoint=http_url, headers=_headers("acme")), "acme 1", "acme 2")
        grpc_endpoint = f"127.0.0.1:{ports['grpc']}"
        _emit(GrpcLogs(endpoint=grpc_endpoint, insecure=True, headers=_headers("globex")), "g 1")
        _emit(GrpcLogs(endpoint=grpc_endpoint, insecure=True, headers=_headers("acme")), "acme 3")
        plain_url = f"http://127.0.0.1:{ports['plain']}/v1/logs"
        _emit(HttpLogs(endpoint=plain_url, headers=_headers("initech")), "no metadata")
        requests = [
            ExportLogsServiceRequest.FromString(record.decoded())
            for record in upstream.wait_for(3, timeout=15, path_prefix="/v1/logs")
        ]
        time.sleep(0.3)  # nothing more arrives: no batch was cut in two
        assert len(upstream.received("/v1/logs")) == 3
    finally:
        assert collector.terminate() == 0, collector.stderr()

    sent = {
        tuple(
            record.body.string_value
            for resource in request.resource_logs
            for scope in resource.scope_logs
            for record in scope.log_records
        ): [
            dict(shown(record.attributes))
            for resource in request.resource_logs
            for scope in resource.scope_logs
            for record in scope.log_records
        ]
        for request in requests
    }
    assert sorted(sent) == [("acme 1", "acme 2", "acme 3"), ("g 1",), ("no metadata",)]

    def client(tenant: str | None, host: str | None) -> dict[str, str]:
        found = {"user": "Str(bob)", "peer": "Str(127.0.0.1)"}
        if tenant is not None:
            found |= {"tenant": f"Str({tenant})", "batched": f"Str({tenant})"}
        if host is not None:
            found["host"] = f"Str({host})"
        return found

    http_host = f"127.0.0.1:{ports['http']}"
    acme = sent["acme 1", "acme 2", "acme 3"]
    assert acme[:2] == [client("acme", http_host)] * 2
    # No host from gRPC: grpcio does not give the server a call's authority.
    assert acme[2] == client("acme", None)
    assert sent["g 1",] == [client("globex", None)]
    # Without include_metadata only the address and authentication are known.
    assert sent["no metadata",] == [client(None, None)]
