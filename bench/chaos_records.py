"""The records of the chaos benchmark and their wire forms.

Every record carries a unique id (attribute or key ``chaos_id``) so that the
upstream can say which records it committed. A known share is DEBUG, which
:data:`POLICIES` drops, so the clients know which ids must never arrive; some
carry a card number that a redact transform masks, and WARN records get an
attribute added, so that the filtered path decodes, edits and re-encodes.
"""

from __future__ import annotations

import gzip
import json
import random
from dataclasses import dataclass
from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

ID_KEY = "chaos_id"
TAG_KEY = "chaos_tagged"
CARD = "4111111111111111"
LEVELS = ["DEBUG", "INFO", "INFO", "INFO", "WARN", "ERROR"]

POLICIES: list[dict[str, Any]] = [
    {
        "id": "drop-debug",
        "name": "drop-debug",
        "log": {
            "match": [{"log_field": "severity_text", "exact": "debug", "case_insensitive": True}],
            "keep": "none",
        },
    },
    {
        "id": "mask-cards",
        "name": "mask-cards",
        "log": {
            "match": [{"log_field": "body", "contains": "card="}],
            "keep": "all",
            "transform": {
                "redact": [
                    {"log_field": "body", "regex": "card=\\d{12}", "replacement": "card=****"}
                ]
            },
        },
    },
    {
        "id": "tag-warnings",
        "name": "tag-warnings",
        "log": {
            "match": [{"log_field": "severity_text", "exact": "warn", "case_insensitive": True}],
            "keep": "all",
            "transform": {"add": [{"log_attribute": TAG_KEY, "value": "yes"}]},
        },
    },
]


@dataclass(frozen=True, slots=True)
class Record:
    """One log record as a client made it."""

    id: int
    level: str
    message: str

    @property
    def dropped(self) -> bool:
        """The policies drop it by design."""
        return self.level == "DEBUG"


def make_record(rng: random.Random, record_id: int) -> Record:
    level = rng.choice(LEVELS)
    if rng.random() < 0.2:
        message = f"payment {record_id} accepted card={CARD} amount={rng.randint(1, 999)}"
    else:
        message = f"request {record_id} done path=/api/orders/{rng.randint(1, 99999)} status=200"
    return Record(record_id, level, message)


def otlp_proto(records: list[Record], service: str) -> bytes:
    request = ExportLogsServiceRequest()
    resource = request.resource_logs.add()
    resource.resource.attributes.add(key="service.name").value.string_value = service
    scope = resource.scope_logs.add()
    scope.scope.name = "chaos"
    for record in records:
        log = scope.log_records.add()
        log.time_unix_nano = 1_763_726_400_000_000_000 + record.id
        log.severity_text = record.level
        log.body.string_value = record.message
        log.attributes.add(key=ID_KEY).value.string_value = str(record.id)
    return bytes(request.SerializeToString())


def otlp_json(records: list[Record], service: str) -> bytes:
    log_records = [
        {
            "timeUnixNano": str(1_763_726_400_000_000_000 + record.id),
            "severityText": record.level,
            "body": {"stringValue": record.message},
            "attributes": [{"key": ID_KEY, "value": {"stringValue": str(record.id)}}],
        }
        for record in records
    ]
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]}
    document = {
        "resourceLogs": [
            {
                "resource": resource,
                "scopeLogs": [{"scope": {"name": "chaos"}, "logRecords": log_records}],
            }
        ]
    }
    return json.dumps(document).encode()


def datadog(records: list[Record], service: str) -> bytes:
    return json.dumps(
        [
            {
                "message": record.message,
                "status": record.level.lower(),
                "service": service,
                "hostname": "chaos-host",
                "ddsource": "python",
                ID_KEY: str(record.id),
            }
            for record in records
        ]
    ).encode()


@dataclass(frozen=True, slots=True)
class Arrived:
    """One record as the upstream decoded it."""

    id: int
    level: str
    message: str
    tagged: bool

    @property
    def transform_missed(self) -> bool:
        """A transform should have changed this record and did not."""
        return CARD in self.message or (self.level.upper() == "WARN" and not self.tagged)


def _decompress(encoding: str, body: bytes) -> bytes:
    """The clients send gzip or nothing, and Edge answers in kind; every gzip
    member is read, so trailing data cannot hide."""
    encoding = encoding.strip().lower()
    if encoding == "gzip":
        return gzip.decompress(body)
    if encoding in ("", "identity"):
        return body
    raise ValueError(f"Content-Encoding {encoding!r}: no client sent that")


def _attribute(attributes: list[dict[str, Any]], key: str) -> str | None:
    for attribute in attributes:
        if attribute.get("key") == key:
            return str(attribute.get("value", {}).get("stringValue"))
    return None


def read_records(path: str, content_type: str, encoding: str, body: bytes) -> list[Arrived]:
    """The records of a forwarded request; raises ValueError (or a decoder's
    error) on a body that is not what a client sent, re-encoded."""
    data = _decompress(encoding, body)
    if path.startswith("/api/v2/logs"):
        return [
            Arrived(
                int(r[ID_KEY]), str(r.get("status", "")), str(r.get("message", "")), TAG_KEY in r
            )
            for r in json.loads(data)
        ]
    if "protobuf" in content_type:
        request = ExportLogsServiceRequest()
        request.ParseFromString(data)
        out = []
        for resource in request.resource_logs:
            for scope in resource.scope_logs:
                for log in scope.log_records:
                    values = {kv.key: kv.value.string_value for kv in log.attributes}
                    out.append(
                        Arrived(
                            int(values[ID_KEY]),
                            log.severity_text,
                            log.body.string_value,
                            TAG_KEY in values,
                        )
                    )
        return out
    document = json.loads(data)
    return [
        Arrived(
            int(_attribute(log.get("attributes", []), ID_KEY) or ""),
            str(log.get("severityText", "")),
            str(log.get("body", {}).get("stringValue", "")),
            _attribute(log.get("attributes", []), TAG_KEY) is not None,
        )
        for resource in document.get("resourceLogs", [])
        for scope in resource.get("scopeLogs", [])
        for log in scope.get("logRecords", [])
    ]
