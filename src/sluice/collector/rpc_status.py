"""The ``google.rpc.Status`` of OTLP errors, both ways: the receiver writes
it (the body of an OTLP/HTTP error), the exporters read what a server
answered (that body, or a gRPC error's ``grpc-status-details-bin`` trailer)
and the ``google.rpc.RetryInfo`` detail in it.

The messages are declared here, wire-compatible with googleapis' (which
only a dev dependency installs), in a private descriptor pool so they never
clash with those when both are loaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError

RETRY_INFO_TYPE = "type.googleapis.com/google.rpc.RetryInfo"
_CODE_BY_HTTP = {400: 3, 401: 16, 403: 7, 404: 12, 429: 8, 502: 14, 503: 14, 504: 14}


def code_for_http(status: int) -> int:
    """The ``google.rpc.Code`` upstream gives an HTTP status (its
    ``NewStatusFromMsgAndHTTPCode``): 400 INVALID_ARGUMENT, 401
    UNAUTHENTICATED, 403 PERMISSION_DENIED, 404 UNIMPLEMENTED, 429
    RESOURCE_EXHAUSTED, 502/503/504 UNAVAILABLE, anything else UNKNOWN (2)."""
    return _CODE_BY_HTTP.get(status, 2)


_GO_CODE_NAMES = (
    "OK",
    "Canceled",
    "Unknown",
    "InvalidArgument",
    "DeadlineExceeded",
    "NotFound",
    "AlreadyExists",
    "PermissionDenied",
    "ResourceExhausted",
    "FailedPrecondition",
    "Aborted",
    "OutOfRange",
    "Unimplemented",
    "Internal",
    "Unavailable",
    "DataLoss",
    "Unauthenticated",
)


def status_error_text(code: int, message: str) -> str:
    """How grpc-go writes a status error (``status.Error(code, message)``):
    ``rpc error: code = <Go's name of the code> desc = <message>``."""
    name = _GO_CODE_NAMES[code] if 0 <= code < len(_GO_CODE_NAMES) else f"Code({code})"
    return f"rpc error: code = {name} desc = {message}"


def _message_classes() -> dict[str, Any]:
    proto = descriptor_pb2.FileDescriptorProto(
        name="sluice/rpc_status.proto", package="sluice.rpc", syntax="proto3"
    )
    f = descriptor_pb2.FieldDescriptorProto
    optional, repeated = f.LABEL_OPTIONAL, f.LABEL_REPEATED

    def message(name: str, *fields: tuple[str, int, int, int, str]) -> None:
        described = proto.message_type.add(name=name)
        for field_name, number, kind, label, type_name in fields:
            added = described.field.add(name=field_name, number=number, type=kind, label=label)
            if type_name:
                added.type_name = type_name

    message(
        "Status",
        ("code", 1, f.TYPE_INT32, optional, ""),
        ("message", 2, f.TYPE_STRING, optional, ""),
        ("details", 3, f.TYPE_MESSAGE, repeated, ".sluice.rpc.Any"),
    )
    message(
        "Any",
        ("type_url", 1, f.TYPE_STRING, optional, ""),
        ("value", 2, f.TYPE_BYTES, optional, ""),
    )
    message(
        "Duration",
        ("seconds", 1, f.TYPE_INT64, optional, ""),
        ("nanos", 2, f.TYPE_INT32, optional, ""),
    )
    message("RetryInfo", ("retry_delay", 1, f.TYPE_MESSAGE, optional, ".sluice.rpc.Duration"))
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return {
        name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"sluice.rpc.{name}"))
        for name in ("Status", "RetryInfo")
    }


_CLASSES = _message_classes()
StatusMessage = _CLASSES["Status"]
RetryInfoMessage = _CLASSES["RetryInfo"]


@dataclass(frozen=True)
class RpcStatus:
    code: int
    message: str
    detail_types: tuple[str, ...]
    retry_delay: float | None
    """RetryInfo's delay in seconds when the status carries a RetryInfo (0
    when it names none), else None."""


def parse_status(wire: bytes) -> RpcStatus | None:
    """The status in `wire`, or None when it is not one."""
    status = StatusMessage()
    try:
        status.ParseFromString(wire)
    except DecodeError:
        return None
    delay = None
    for detail in status.details:
        # The first RetryInfo counts, as upstream's getRetryInfo takes it.
        if detail.type_url == RETRY_INFO_TYPE and delay is None:
            info = RetryInfoMessage()
            try:
                info.ParseFromString(detail.value)
            except DecodeError:
                continue
            # A RetryInfo naming no delay still says "retry" (upstream's
            # exporter then waits its own backoff): 0.
            delay = max(0.0, info.retry_delay.seconds + info.retry_delay.nanos / 1e9)
    types = tuple(detail.type_url for detail in status.details)
    return RpcStatus(status.code, status.message, types, delay)


def encode_status(code: int, message: str, retry_delay: float | None = None) -> bytes:
    """A status (with a RetryInfo detail when `retry_delay` is given), as a
    server writes it."""
    status = StatusMessage(code=code, message=message)
    if retry_delay is not None:
        info = RetryInfoMessage()
        info.retry_delay.seconds = int(retry_delay)
        info.retry_delay.nanos = round((retry_delay - int(retry_delay)) * 1e9)
        status.details.add(type_url=RETRY_INFO_TYPE, value=info.SerializeToString())
    return bytes(status.SerializeToString())
