"""How the receiver says no: gRPC status codes, the HTTP status each maps to
(upstream's table), and the ``google.rpc.Status`` body OTLP/HTTP errors carry
in the request's format."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from sluice.collector import rpc_status
from sluice.collector.gotext import go_json
from sluice.collector.rpc_status import encode_status

PROTOBUF = "application/x-protobuf"
JSON = "application/json"


class Code(enum.IntEnum):
    """``google.rpc.Code``."""

    OK = 0
    CANCELLED = 1
    UNKNOWN = 2
    INVALID_ARGUMENT = 3
    DEADLINE_EXCEEDED = 4
    NOT_FOUND = 5
    ALREADY_EXISTS = 6
    PERMISSION_DENIED = 7
    RESOURCE_EXHAUSTED = 8
    FAILED_PRECONDITION = 9
    ABORTED = 10
    OUT_OF_RANGE = 11
    UNIMPLEMENTED = 12
    INTERNAL = 13
    UNAVAILABLE = 14
    DATA_LOSS = 15
    UNAUTHENTICATED = 16


_RETRYABLE = frozenset(
    {
        Code.CANCELLED,
        Code.DEADLINE_EXCEEDED,
        Code.ABORTED,
        Code.OUT_OF_RANGE,
        Code.UNAVAILABLE,
        Code.DATA_LOSS,
    }
)
_HTTP_BY_CODE = {
    Code.RESOURCE_EXHAUSTED: 429,
    Code.INVALID_ARGUMENT: 400,
    Code.UNAUTHENTICATED: 401,
    Code.PERMISSION_DENIED: 403,
    Code.UNIMPLEMENTED: 404,
}


@dataclass(frozen=True)
class Refusal:
    """Data not accepted: the status to answer with."""

    code: Code
    message: str
    retry_after: float | None = None
    """Seconds the sender should wait before retrying (HTTP ``Retry-After``)."""

    @property
    def http_status(self) -> int:
        """The OTLP/HTTP status for the code: retryable codes 503, resource
        exhausted 429, the client's faults 4xx, anything else 500."""
        if self.code in _RETRYABLE:
            return 503
        return _HTTP_BY_CODE.get(self.code, 500)


def code_for_http(status: int) -> Code:
    """The status code an HTTP-level error is reported with (upstream's table)."""
    return Code(rpc_status.code_for_http(status))


def status_body(media: str, code: Code, message: str) -> bytes:
    """A ``google.rpc.Status`` (no details) as protobuf or compact JSON, zero
    fields left out as both encodings do; JSON text escaped as upstream's
    jsonpb writes it (Go's ``encoding/json``: ``<`` is ``\\u003c``)."""
    if media == JSON:
        document: dict[str, object] = {}
        if code:
            document["code"] = int(code)
        if message:
            document["message"] = message
        return go_json(document)
    # A message may hold text that is not valid UTF-8 (a lone surrogate from
    # a request): replaced, as the protobuf runtime only takes valid text.
    return encode_status(int(code), message.encode("utf-8", "replace").decode("utf-8"))
