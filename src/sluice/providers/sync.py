"""The tero.policy.v1 sync protocol, client side: building a ``SyncRequest``
and reading the ``SyncResponse`` into policies. The transports that carry
them are ``http_transport`` and ``grpc_transport``."""

from __future__ import annotations

import json
import socket
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format

from sluice.gcpause import collection_paused
from sluice.policy import LoadReport, PolicyCounts, PolicyDocumentError, load_document
from sluice.policy.cache import CompileCache
from sluice.providers.wire import policy_pb2 as pb

SYNC_METHOD = "/tero.policy.v1.PolicyService/Sync"
JSON = "application/json"
PROTOBUF = "application/x-protobuf"
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
MAX_INTERVAL_SECS = 86400.0
"""A server's recommended interval is kept within [MIN, MAX] (a day, as the
configured ``poll_interval_secs``): a huge or infinite one would overflow the
poll's wait."""


def _interval(value: object) -> float | None:
    """A server's recommended sync interval, bounded; None when it gave none."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        return None
    return min(max(float(value), MIN_INTERVAL_SECS), MAX_INTERVAL_SECS)


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
    hash, the server's suggested interval (None when not given) and its
    ``sync_timestamp_unix_nano`` (0 when not given)."""

    report: LoadReport
    hash: str
    interval_secs: float | None
    timestamp_nanos: int = 0


def read_response(response: Any, cache: CompileCache | None = None) -> SyncResult:
    """Turn a SyncResponse message into policies (via the proto3 JSON mapping
    with every field written out, so proto defaults like ``keep: false`` stay).
    With a `cache`, policies parsed before are taken from it."""
    return _read_message(response, cache, None)


def _read_message(
    response: Any, cache: CompileCache | None, written: Sequence[Mapping[str, Any]] | None
) -> SyncResult:
    """:func:`read_response`; `written`: the policies as a JSON response
    wrote them, whose ``enabled`` and metric ``keep`` stand (see
    :func:`read_json_response`)."""
    if response.error_message:
        raise SyncError(f"server error: {response.error_message}")
    with collection_paused():  # 10,000 policies are 200,000 objects
        doc = json_format.MessageToDict(
            response, use_integers_for_enums=True, always_print_fields_with_no_presence=True
        )
        policies = doc.get("policies", [])
        if written is not None:
            for policy, raw in zip(policies, written, strict=True):
                policy["enabled"] = raw.get("enabled", True)
                metric = raw.get("metric")
                if isinstance(metric, Mapping) and "metric" in policy:
                    if "keep" in metric:
                        policy["metric"]["keep"] = metric["keep"]
                    else:
                        del policy["metric"]["keep"]
        report = load_document({"policies": policies}, cache)
    return SyncResult(
        report,
        response.hash,
        _interval(response.recommended_sync_interval_seconds),
        response.sync_timestamp_unix_nano,
    )


def read_json_response(body: bytes | bytearray, cache: CompileCache | None = None) -> SyncResult:
    """A JSON SyncResponse: exact proto3 JSON when it parses as such, else read
    tolerantly (either policy dialect) so that hand-written servers work too.

    Either way ``enabled`` and a metric ``keep`` are read as written, where
    proto3 would read absent and null as false: a policy without ``enabled``
    is enabled (POLICY.md section 0), and ``"enabled": null``, a metric
    ``keep`` missing or null are errors of that policy, as in a policy file
    (binary protobuf cannot tell false from absent: there the wire's value
    stands).
    Keys that neither dialect knows are reported, not dropped
    (:func:`unknown_fields`). Errors chain nothing: a JSONDecodeError holds
    the whole body."""
    try:
        doc = json.loads(body)
    except (ValueError, UnicodeDecodeError) as problem:
        failure = f"response is not JSON: {problem}"
    else:
        failure = "" if isinstance(doc, dict) else "response is not a JSON object"
    if failure:
        raise SyncError(failure)
    if not _RESPONSE_KEYS.intersection(doc):
        raise SyncError("response has none of the SyncResponse fields")
    error = doc.get("errorMessage") or doc.get("error_message")
    if error:
        raise SyncError(f"server error: {error}")
    message = pb.SyncResponse()
    try:
        json_format.ParseDict(doc, message)
    except (json_format.ParseError, TypeError, ValueError):
        exact = False  # not proto3 JSON: read outside this handler, so nothing chains
    else:
        exact = True
    if not exact:
        return _read_tolerantly(doc, cache)
    return _read_message(message, cache, doc.get("policies") or [])


def _read_tolerantly(doc: Mapping[str, Any], cache: CompileCache | None) -> SyncResult:
    try:
        report = load_document(doc, cache)
    except PolicyDocumentError as problem:
        failure = f"response has no policies: {problem}"
    else:
        failure = ""
    if failure:
        raise SyncError(failure)
    _report_unknown_fields(doc, report)
    interval = doc.get("recommendedSyncIntervalSeconds") or doc.get(
        "recommended_sync_interval_seconds"
    )
    timestamp = doc.get("syncTimestampUnixNano") or doc.get("sync_timestamp_unix_nano")
    return SyncResult(report, str(doc.get("hash", "")), _interval(interval), _nanos(timestamp))


def _nanos(value: object) -> int:
    """A fixed64 timestamp as proto JSON writes it (a string or a number); 0
    when it is none."""
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 1 << 64:
        return 0
    return value


_UNREAD_FIELDS = {
    "tero.policy.v1.Policy": frozenset({"extensions"}),
    "tero.policy.v1.SyncResponse": frozenset({"extension_configs", "extensionConfigs"}),
}
"""Protocol fields this wire copy leaves out because nothing here uses them."""
_AUTHORING_FIELDS = {"tero.policy.v1.LogTarget": frozenset({"sample_rate", "sampleRate"})}
"""Keys of the authoring dialect outside the protocol that the policy parser reads."""


def unknown_fields(value: Any, descriptor: Any, at: tuple[str, ...] = ()) -> Iterator[str]:
    """Where `value` (proto-JSON of the message `descriptor`) has a key that
    neither the protocol nor the authoring dialect knows, as a message like
    ``log: match[0]: unknown field "negat"``. A mistyped key is otherwise just
    missing, so the policy would run with a different meaning."""
    if not isinstance(value, Mapping):
        return
    fields = {f.name: f for f in descriptor.fields}
    fields.update({f.json_name: f for f in descriptor.fields})
    allowed = _UNREAD_FIELDS.get(descriptor.full_name, frozenset()) | _AUTHORING_FIELDS.get(
        descriptor.full_name, frozenset()
    )
    for key, item in value.items():
        field = fields.get(key)
        if field is None:
            if key not in allowed:
                yield ": ".join((*at, f"unknown field {json.dumps(key)}"))
        elif field.message_type is not None:
            if isinstance(item, list):
                for i, element in enumerate(item):
                    yield from unknown_fields(element, field.message_type, (*at, f"{key}[{i}]"))
            else:
                yield from unknown_fields(item, field.message_type, (*at, key))


def _report_unknown_fields(doc: Mapping[str, Any], report: LoadReport) -> None:
    """Unknown keys are reported as warnings (logged with the policy's id) and
    the policy still applies: a newer control plane's fields must not switch a
    fleet's policies off. The protocol's JSON is written by servers, not by
    hand, so a key mistyped there is far rarer than a field added later."""
    descriptor = pb.SyncResponse.DESCRIPTOR
    raw_policies = doc.get("policies")
    top = {key: value for key, value in doc.items() if key != "policies"}
    report.warnings.extend(
        f"sync response: {problem}; ignored" for problem in unknown_fields(top, descriptor)
    )
    for raw in raw_policies if isinstance(raw_policies, list) else ():
        if isinstance(raw, Mapping):
            name = json.dumps(raw.get("id"))
            report.warnings.extend(
                f"policy {name}: {problem}; ignored"
                for problem in unknown_fields(raw, pb.Policy.DESCRIPTOR)
            )


class SyncTransport(ABC):
    """Sends one SyncRequest and returns the parsed result."""

    cache: CompileCache | None = None
    """Where the policies of a response are parsed through (set by the provider)."""

    @abstractmethod
    def sync(self, request: Any, timeout: float | None = None) -> SyncResult:
        """One sync, all of it within `timeout` seconds (None: the configured
        timeout). Raises SyncError."""

    def close(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Release connections (optional)."""
