"""``sluice policy-server``: serves a policy file over the sync protocol.

HTTP ``POST /v1/policy/sync`` (JSON or protobuf) and gRPC
``tero.policy.v1.PolicyService/Sync``. The file is re-read when it changes.
Statuses that clients report are collected (hits summed, errors
de-duplicated) and shown at ``GET /stats``; ``GET /shutdown`` stops the
server. With a token, requests must carry ``Authorization: Bearer <token>``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import ssl
import threading
import time
from collections.abc import Callable
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import json_format
from google.protobuf.message import DecodeError

from sluice.policy.canonical import canonical_policy, served_disabled_because
from sluice.providers.sync import JSON, PROTOBUF, SYNC_METHOD
from sluice.providers.wire import policy_pb2 as pb

log = logging.getLogger(__name__)

SYNC_PATH = "/v1/policy/sync"
RECOMMENDED_INTERVAL_SECS = 30


def sync_service(
    sync: Callable[[pb.SyncRequest, grpc.ServicerContext], pb.SyncResponse],
) -> grpc.GenericRpcHandler:
    """The gRPC ``PolicyService`` with its one unary ``Sync`` method, answered by `sync`."""
    _, service, method = SYNC_METHOD.split("/")
    return grpc.method_handlers_generic_handler(
        service,
        {
            method: grpc.unary_unary_rpc_method_handler(
                sync,
                request_deserializer=pb.SyncRequest.FromString,
                response_serializer=lambda message: message.SerializeToString(),
            )
        },
    )


class PolicyFileSource:
    """The served policy set: the file, canonicalised, re-read on change. A
    file that stops parsing keeps the last good set (and says why)."""

    def __init__(self, path: Path):
        self.path = path
        self._digest = b""
        self._lock = threading.Lock()
        self.response = pb.SyncResponse(sync_type=pb.SYNC_TYPE_FULL)
        self.problem = ""
        self.refresh()

    def refresh(self) -> None:
        try:
            raw = self.path.read_bytes()
        except OSError as problem:
            self._fail(f"cannot read {self.path}: {problem.strerror or problem}")
            return
        digest = hashlib.sha256(raw).digest()
        if digest == self._digest:
            return
        try:
            doc = json.loads(raw)
            policies = [canonical_policy(p) for p in doc["policies"] if isinstance(p, dict)]
            message = json_format.ParseDict(
                {"policies": policies}, pb.SyncResponse(), ignore_unknown_fields=True
            )
        except (ValueError, KeyError, TypeError, json_format.ParseError) as problem:
            self._fail(f"{self.path}: cannot serve: {problem}")
            return
        for policy in doc["policies"]:
            why = served_disabled_because(policy) if isinstance(policy, dict) else ""
            if why:
                log.warning(
                    "%s: policy %s: %s; served disabled",
                    self.path,
                    json.dumps(policy.get("id")),
                    why,
                )
        # The hash covers content, not only ids: an edited policy is a new set.
        message.hash = hashlib.sha256(message.SerializeToString(deterministic=True)).hexdigest()
        message.sync_type = pb.SYNC_TYPE_FULL
        message.recommended_sync_interval_seconds = RECOMMENDED_INTERVAL_SECS
        with self._lock:
            self.response = message
            self._digest = digest
            self.problem = ""
        log.info(
            "serving %d policies from %s (hash %s)",
            len(message.policies),
            self.path,
            message.hash[:12],
        )

    def _fail(self, problem: str) -> None:
        if problem != self.problem:
            log.error("%s; still serving the previous set", problem)
        self.problem = problem

    def current(self) -> Any:
        self.refresh()
        with self._lock:
            response = pb.SyncResponse()
            response.CopyFrom(self.response)
        response.sync_timestamp_unix_nano = time.time_ns()
        return response


class StatusBook:
    """What clients reported: per policy, summed hits and distinct errors."""

    def __init__(self) -> None:
        self._hits: dict[str, int] = {}
        self._errors: dict[str, set[str]] = {}
        self._lock = threading.Lock()

    def record(self, request: Any) -> None:
        with self._lock:
            for status in request.policy_statuses:
                if status.match_hits <= 0 and not status.errors:
                    continue
                self._hits[status.id] = self._hits.get(status.id, 0) + status.match_hits
                self._errors.setdefault(status.id, set()).update(status.errors)

    def document(self) -> dict[str, Any]:
        with self._lock:
            entries = []
            for pid in sorted(self._hits):
                entry: dict[str, Any] = {"policy_id": pid, "hits": self._hits[pid]}
                if self._errors.get(pid):
                    entry["errors"] = sorted(self._errors[pid])
                entries.append(entry)
            return {"policies": entries}


class PolicyServer:
    """The served file, the collected statuses, and the listeners."""

    def __init__(
        self,
        policies: Path,
        token: str = "",
        host: str = "127.0.0.1",
        tls: tuple[Path, Path] | None = None,
    ):
        self.source = PolicyFileSource(policies)
        self.book = StatusBook()
        self.token = token
        self.host = host
        self.tls = tls
        """(certificate chain, private key) PEM files: serve HTTPS and gRPC over TLS."""
        self.stopped = threading.Event()
        self._http: ThreadingHTTPServer | None = None
        self._grpc: grpc.Server | None = None

    def authorized(self, header: str | None) -> bool:
        if not self.token:
            return True
        expected = f"Bearer {self.token}"
        return header is not None and hmac.compare_digest(header.encode(), expected.encode())

    def sync(self, request: Any) -> Any:
        self.book.record(request)
        return self.source.current()

    # -- listeners ------------------------------------------------------------

    def start_http(self, port: int = 0) -> int:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                log.debug("http: " + format, *args)

            def _send(
                self, status: int, body: bytes, content_type: str = JSON, *extra: tuple[str, str]
            ) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                for name, value in extra:
                    self.send_header(name, value)
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def _error(self, status: int, message: str) -> None:
                self._send(status, json.dumps({"error": message}).encode())

            def do_GET(self) -> None:
                if self.path == "/stats":
                    self._send(200, json.dumps(server.book.document()).encode())
                elif self.path == "/shutdown":
                    self._send(200, b'{"status":"stopping"}')
                    server.stopped.set()
                elif self.path == SYNC_PATH:
                    self._not_allowed()
                else:
                    self._error(404, "not found")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                if self.path != SYNC_PATH:
                    self._error(404, "not found")
                    return
                if not server.authorized(self.headers.get("Authorization")):
                    self._error(401, "missing or wrong bearer token")
                    return
                content_type = (self.headers.get("Content-Type") or JSON).split(";")[0].strip()
                request = pb.SyncRequest()
                try:
                    if content_type == PROTOBUF:
                        request.ParseFromString(body)
                    else:
                        json_format.Parse(body or b"{}", request, ignore_unknown_fields=True)
                except (DecodeError, json_format.ParseError, ValueError) as problem:
                    self._error(400, f"bad SyncRequest: {problem}")
                    return
                response = server.sync(request)
                if self.headers.get("Accept") == PROTOBUF:
                    self._send(200, response.SerializeToString(), PROTOBUF)
                else:
                    text = json_format.MessageToJson(
                        response,
                        use_integers_for_enums=True,
                        always_print_fields_with_no_presence=True,
                        indent=None,
                    )
                    self._send(200, text.encode())

            def _not_allowed(self) -> None:
                body = json.dumps({"error": "use POST"}).encode()
                self._send(405, body, JSON, ("Allow", "POST"))

            def __getattr__(self, name: str) -> Any:
                # Every other method (HEAD, OPTIONS, PUT, an unknown one...)
                # is 405, where the base class would answer 501 (POLICY.md 11.2).
                if name.startswith("do_"):
                    return self._not_allowed
                raise AttributeError(name)

        self._http = ThreadingHTTPServer((self.host, port), Handler)
        self._http.daemon_threads = True
        if self.tls is not None:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(*self.tls)
            self._http.socket = context.wrap_socket(self._http.socket, server_side=True)
        threading.Thread(
            target=self._http.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="policy-http",
            daemon=True,
        ).start()
        return int(self._http.server_address[1])

    def start_grpc(self, port: int = 0) -> int:
        server = self

        def sync(request: Any, context: grpc.ServicerContext) -> Any:
            metadata = dict(context.invocation_metadata())
            if not server.authorized(metadata.get("authorization")):
                context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong bearer token")
            return server.sync(request)

        self._grpc = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        self._grpc.add_generic_rpc_handlers((sync_service(sync),))
        address = f"{self.host}:{port}"
        if self.tls is not None:
            chain, key = (path.read_bytes() for path in self.tls)
            credentials = grpc.ssl_server_credentials([(key, chain)])
            bound = self._grpc.add_secure_port(address, credentials)
        else:
            bound = self._grpc.add_insecure_port(address)
        self._grpc.start()
        return int(bound)

    def stop(self) -> None:
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
        if self._grpc is not None:
            self._grpc.stop(grace=0.2).wait()
        self.stopped.set()
