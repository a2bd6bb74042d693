"""Shared pieces of the provider tests: policy documents, OTLP log batches,
waiting for a condition, a free-but-refusing local port and a self-signed
certificate."""

from __future__ import annotations

import datetime
import ipaddress
import json
import os
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from sluice.policy import BatchOutcome, PolicySnapshot, Signal
from sluice.telemetry.otlp_json import json_view


def drop(policy_id: str, body: str, *, regex: bool = False) -> dict[str, Any]:
    """A log policy dropping records whose body is `body` (or matches a regex)."""
    match = {"log_field": "body", "regex" if regex else "exact": body}
    return {"id": policy_id, "name": policy_id, "log": {"match": [match], "keep": "none"}}


def document(*policies: dict[str, Any]) -> dict[str, Any]:
    return {"policies": list(policies)}


def write_policies(path: Path, *policies: dict[str, Any]) -> None:
    """Replace the file atomically (a reader sees the old or the new content)."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(document(*policies)), encoding="utf-8")
    os.replace(temporary, path)


def logs(*bodies: str, resources: int = 1, scopes: int = 1) -> dict[str, Any]:
    """An OTLP JSON logs request; every scope of every resource holds `bodies`."""
    return {
        "resourceLogs": [
            {
                "resource": {"attributes": [{"key": "r", "value": {"intValue": str(r)}}]},
                "scopeLogs": [
                    {
                        "scope": {"name": f"scope-{s}"},
                        "logRecords": [{"body": {"stringValue": b}} for b in bodies],
                    }
                    for s in range(scopes)
                ],
            }
            for r in range(resources)
        ]
    }


def bodies(doc: dict[str, Any]) -> list[str]:
    """Every remaining record body of a logs request, in order."""
    return [
        record["body"]["stringValue"]
        for resource in doc.get("resourceLogs", [])
        for scope in resource.get("scopeLogs", [])
        for record in scope.get("logRecords", [])
    ]


def evaluate(snapshot: PolicySnapshot, doc: dict[str, Any]) -> BatchOutcome:
    return snapshot.evaluate(Signal.LOG, json_view(Signal.LOG), doc)


def surviving(snapshot: PolicySnapshot, *sent: str) -> list[str]:
    """The bodies left after evaluating one record per body in `sent`."""
    doc = logs(*sent)
    evaluate(snapshot, doc)
    return bodies(doc)


def wait_until(
    condition: Callable[[], bool], what: str, timeout: float = 10.0, interval: float = 0.02
) -> None:
    """Poll until `condition` holds; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


@contextmanager
def refusing_port() -> Iterator[int]:
    """A 127.0.0.1 port that is bound by us but not listening: connections are refused."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])
    finally:
        sock.close()


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for localhost and 127.0.0.1 (its own CA) and its key,
    written as ``cert.pem`` and ``key.pem`` in `folder`."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path
