"""The tero.policy.v1 sync protocol, client side: building a ``SyncRequest``,
sending it over HTTP (JSON or protobuf) or gRPC, and reading the
``SyncResponse`` into policies."""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import urllib.error
import urllib.request
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError

from sluice.policy import LoadReport, PolicyCounts, PolicyDocumentError, load_document
from sluice.providers.wire import policy_pb2 as pb

SYNC_METHOD = "/tero.policy.v1.PolicyService/Sync"
JSON = "application/json"
PROTOBUF = "application/x-protobuf"
_PROTOBUF_TYPES = (PROTOBUF, "application/protobuf")
_RESPONSE_KEYS = frozenset(
    {
        "policies",
        "hash",
        "syncTimestampUnixNano",
        "sync_timestamp_unix_nano",
        "recommendedSyncIntervalSeconds",
        "recommended_sync_interval_seconds",
        "syncType",
        "sync_type",
        "errorMessage",
        "error_message",
    }
)
MIN_INTERVAL_SECS = 1.0
"""A server cannot make a client poll more often than this."""
ALL_STAGES = (
    pb.POLICY_STAGE_LOG_FILTER,
    pb.POLICY_STAGE_LOG_TRANSFORM,
    pb.POLICY_STAGE_METRIC_FILTER,
    pb.POLICY_STAGE_TRACE_SAMPLING,
)


class SyncError(Exception):
    """A sync that failed: transport error, bad status, garbage, or an
    ``error_message`` from the server. The message says which."""


@dataclass(frozen=True)
class ClientIdentity:
    """Who is syncing: sent as ``client_metadata``."""

    service_name: str = "sluice"
    service_namespace: str = ""
    service_version: str = ""
    instance_id: str = ""
    resource_attributes: tuple[tuple[str, str], ...] = ()
    labels: tuple[tuple[str, str], ...] = ()


def _key_values(target: Any, pairs: Iterable[tuple[str, str]]) -> None:
    for key, value in pairs:
        kv = target.add(key=key)
        kv.value.string_value = value


def build_request(
    identity: ClientIdentity,
    *,
    full_sync: bool,
    last_hash: str,
    last_sync_nanos: int,
    counts: Mapping[str, PolicyCounts],
    errors: Mapping[str, Sequence[str]],
) -> Any:
    """A SyncRequest carrying per-policy counts (since the last successful
    report) and the compile errors of every policy that has some."""
    request = pb.SyncRequest(
        full_sync=full_sync,
        last_successful_hash=last_hash,
        last_sync_timestamp_unix_nano=last_sync_nanos,
    )
    meta = request.client_metadata
    meta.supported_policy_stages.extend(ALL_STAGES)
    resource = [
        ("service.name", identity.service_name),
        ("service.namespace", identity.service_namespace),
        ("service.version", identity.service_version),
        ("service.instance.id", identity.instance_id or socket.gethostname()),
        *identity.resource_attributes,
    ]
    _key_values(meta.resource_attributes, resource)
    _key_values(meta.labels, identity.labels)
    for policy_id in sorted(set(counts) | set(errors)):
        status = request.policy_statuses.add(id=policy_id)
        count = counts.get(policy_id)
        if count is not None:
            status.match_hits = count.hits
            status.match_misses = count.misses
            for stage, (hits, misses) in zip(
                (status.remove, status.redact, status.rename, status.add),
                count.transform,
                strict=True,
            ):
                if hits or misses:
                    stage.hits = hits
                    stage.misses = misses
        status.errors.extend(errors.get(policy_id, ()))
    return request


@dataclass(frozen=True)
class SyncResult:
    """A successful sync: the policies (parsed, with their errors), the set's
    hash and the server's suggested interval (None when not given)."""

    report: LoadReport
    hash: str
    interval_secs: float | None


def read_response(response: Any) -> SyncResult:
    """Turn a SyncResponse message into policies (via the proto3 JSON mapping
    with every field written out, so proto defaults like ``keep: false`` stay)."""
    if response.error_message:
        raise SyncError(f"server error: {response.error_message}")
    doc = json_format.MessageToDict(
        response, use_integers_for_enums=True, always_print_fields_with_no_presence=True
    )
    report = load_document({"policies": doc.get("policies", [])})
    interval = response.recommended_sync_interval_seconds or None
    return SyncResult(
        report, response.hash, max(float(interval), MIN_INTERVAL_SECS) if interval else None
    )


def read_json_response(body: bytes) -> SyncResult:
    """A JSON SyncResponse: exact proto3 JSON when it parses as such, else read
    tolerantly (either policy dialect) so that hand-written servers work too."""
    try:
        doc = json.loads(body)
    except (ValueError, UnicodeDecodeError) as problem:
        raise SyncError(f"response is not JSON: {problem}") from None
    if not isinstance(doc, dict):
        raise SyncError("response is not a JSON object")
    if not _RESPONSE_KEYS.intersection(doc):
        raise SyncError("response has none of the SyncResponse fields")
    try:
        message = json_format.ParseDict(doc, pb.SyncResponse(), ignore_unknown_fields=True)
    except (json_format.ParseError, TypeError, ValueError):
        message = None
    if message is not None:
        return read_response(message)
    if doc.get("errorMessage") or doc.get("error_message"):
        raise SyncError(f"server error: {doc.get('errorMessage') or doc.get('error_message')}")
    try:
        report = load_document(doc)
    except PolicyDocumentError as problem:
        raise SyncError(f"response has no policies: {problem}") from None
    interval = doc.get("recommendedSyncIntervalSeconds") or doc.get(
        "recommended_sync_interval_seconds"
    )
    return SyncResult(
        report,
        str(doc.get("hash", "")),
        max(float(interval), MIN_INTERVAL_SECS)
        if isinstance(interval, int | float) and interval > 0
        else None,
    )


class SyncTransport(ABC):
    """Sends one SyncRequest and returns the parsed result."""

    @abstractmethod
    def sync(self, request: Any) -> SyncResult: ...

    def close(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Release connections (optional)."""


class HttpSyncTransport(SyncTransport):
    """``POST`` to the sync URL, JSON by default or binary protobuf."""

    def __init__(
        self,
        url: str,
        headers: Sequence[tuple[str, str]] = (),
        encoding: str = "json",
        timeout: float = 10.0,
        ca_file: str = "",
    ) -> None:
        self.url = url
        self.headers = list(headers)
        self.encoding = encoding
        self.timeout = timeout
        self._context = ssl.create_default_context(cafile=ca_file) if ca_file else None

    def sync(self, request: Any) -> SyncResult:
        if self.encoding == "protobuf":
            body, content_type = request.SerializeToString(), PROTOBUF
        else:
            body = json_format.MessageToJson(request, indent=None).encode()
            content_type = JSON
        http_request = urllib.request.Request(self.url, data=body, method="POST")
        http_request.add_header("Content-Type", content_type)
        http_request.add_header("Accept", content_type)
        for name, value in self.headers:
            http_request.add_header(name, value)
        try:
            with urllib.request.urlopen(
                http_request, timeout=self.timeout, context=self._context
            ) as response:
                payload = response.read()
                received = response.headers.get("Content-Type", content_type)
        except urllib.error.HTTPError as problem:
            detail = problem.read(200).decode("utf-8", "replace").strip()
            raise SyncError(f"HTTP {problem.code} from {self.url}: {detail}") from None
        except (urllib.error.URLError, OSError) as problem:
            reason = getattr(problem, "reason", problem)
            raise SyncError(f"cannot reach {self.url}: {reason}") from None
        except http.client.HTTPException as problem:
            raise SyncError(
                f"bad HTTP response from {self.url}: {type(problem).__name__} {problem}"
            ) from None
        media = received.split(";")[0].strip().lower()
        if media in _PROTOBUF_TYPES:
            message = pb.SyncResponse()
            try:
                message.ParseFromString(payload)
            except DecodeError as problem:
                raise SyncError(f"response is not a SyncResponse: {problem}") from None
            return read_response(message)
        return read_json_response(payload)


class GrpcSyncTransport(SyncTransport):
    """The unary ``tero.policy.v1.PolicyService/Sync`` call; headers go as metadata.
    (grpc is imported here, not at module load: it costs ~20 MiB of RSS, which a
    sidecar without gRPC providers should not pay.)"""

    def __init__(
        self,
        target: str,
        headers: Sequence[tuple[str, str]] = (),
        tls: bool = False,
        ca_file: str = "",
        timeout: float = 10.0,
    ) -> None:
        import grpc

        self._grpc = grpc
        for scheme in ("grpcs://", "grpc://"):
            if target.startswith(scheme):
                tls = tls or scheme == "grpcs://"
                target = target[len(scheme) :]
        self.target = target
        self.metadata = tuple((name.lower(), value) for name, value in headers)
        self.timeout = timeout
        if tls:
            roots = open(ca_file, "rb").read() if ca_file else None  # noqa: SIM115
            self._channel = grpc.secure_channel(target, grpc.ssl_channel_credentials(roots))
        else:
            self._channel = grpc.insecure_channel(target)
        self._call = self._channel.unary_unary(
            SYNC_METHOD,
            request_serializer=lambda message: message.SerializeToString(),
            response_deserializer=pb.SyncResponse.FromString,
        )

    def sync(self, request: Any) -> SyncResult:
        try:
            response = self._call(request, timeout=self.timeout, metadata=self.metadata)
        except self._grpc.RpcError as problem:
            code = problem.code() if hasattr(problem, "code") else "?"
            details = problem.details() if hasattr(problem, "details") else str(problem)
            raise SyncError(f"gRPC {code} from {self.target}: {details}") from None
        return read_response(response)

    def close(self) -> None:
        self._channel.close()
