"""The benchmark's workload: synthetic OTLP log records and the policy sets run over them.

Records: seeded OTLP JSON log batches (:data:`RECORDS_PER_BATCH` records each) mixing
"Datadog-like" records (app-log bodies, attributes service/hostname/ddsource/status/env) and
"OTLP" records (attributes service.name, http.*, k8s.pod.name; resource attributes
k8s.namespace.name, service.name). :func:`make_dataset` keeps them serialized, as pickled
decoded JSON and as protobuf wire bytes, so that fresh copies can be made outside the timer.

Policies: authoring-JSON policy sets drawn from a vocabulary much larger than the one the
records use. A few "live" policies (:func:`live_catalog`) target what the records contain;
the rest (:func:`dead_policy`, built from a :class:`DeadVocabulary`) target other services,
endpoints and phrases, so most records match no policy at every size.
"""

from __future__ import annotations

import json
import math
import pickle
import random
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from bench import JsonObj
from sluice.telemetry.otlp_raw import LeanLogsRequest

RECORDS_PER_RESOURCE = 125
RESOURCES_PER_BATCH = 8
RECORDS_PER_BATCH = RECORDS_PER_RESOURCE * RESOURCES_PER_BATCH


# ---------------------------------------------------------------------------------------------
# Vocabulary. Records use a small part of it; policies draw from all of it.


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


NOUNS = _words(
    "account address alert allocation archive asset audit balance basket batch beacon billing "
    "blob booking bucket budget bundle campaign card carrier catalog category channel charge "
    "claim client cluster comment config consent contact contract coupon credential currency "
    "customer dashboard dataset delivery deployment device discount dispatch document domain "
    "draft entitlement export feature folder forecast fulfillment gateway grant group import "
    "incident index inventory invoice issue journal label ledger license listing location "
    "manifest media member merchant message metric mailbox note notification offer order "
    "organization package partner payment payout permission pipeline playlist portfolio "
    "preference price product profile project promotion quota quote rating receipt "
    "recommendation refund region release report repository reservation review reward role "
    "rule schedule schema score segment seller session settlement shipment signal sku "
    "snapshot space stock subscription supplier survey template tenant ticket token topic "
    "transaction transfer trip upload user vault vehicle vendor voucher wallet warehouse "
    "webhook widget workflow workspace zone appointment benefit calendar certificate "
    "classroom course diagnosis enrollment exam facility fixture flight gift guest hotel "
    "insurance itinerary kitchen loyalty menu mortgage patient pharmacy prescription "
    "property recipe rental restaurant room seat shift stadium timesheet tournament "
    "vaccine venue visit warranty"
)
RECORD_NOUNS = _words(
    "order cart payment user product inventory shipment invoice session coupon review address"
)
RECORD_SERVICES: dict[str, str] = {
    "checkout": "java",
    "cart-api": "go",
    "payment-svc": "java",
    "catalog": "python",
    "inventory-worker": "go",
    "shipping": "python",
    "auth": "go",
    "search-api": "java",
    "notifier": "python",
    "recommender": "python",
    "frontend": "nginx",
    "user-profile": "go",
}
"""Services the records come from, with their Datadog ``ddsource``."""
KUBE_SERVICES = ("coredns", "ingress-nginx", "metrics-server")
RECORD_NAMESPACES = ("shop", "payments", "platform", "storefront")
KUBE_NAMESPACES = ("kube-system", "kube-ingress")
SERVICE_PREFIXES = _words("legacy core edge internal batch realtime partner mobile admin public")
SERVICE_SUFFIXES = _words("api svc worker gateway sync consumer scheduler proxy service indexer")
RECORD_EXCEPTIONS = (
    "java.lang.IllegalStateException",
    "java.util.concurrent.TimeoutException",
    "org.postgresql.util.PSQLException",
    "java.net.SocketTimeoutException",
    "java.lang.NullPointerException",
)
ERROR_TEMPLATES = (
    "connection reset by peer while calling {svc}",
    "deadline exceeded after {n}ms waiting for {svc}",
    "timeout after {n}ms calling {svc}",
    "failed to acquire lock on {noun}/{id}",
    "{noun} pool exhausted (max={small})",
    "circuit breaker open for {svc}",
    "unexpected EOF while reading {noun} response from {svc}",
    "retry budget exhausted for {svc}",
    'duplicate key value violates unique constraint "{nouns}_pkey"',
    "could not serialize access to {nouns} due to concurrent update",
    "upstream {svc} returned 503 Service Unavailable",
    "TLS handshake with {svc} failed: certificate has expired",
    "rate limit exceeded for tenant t-{id} on {nouns}",
    "out of memory: cannot allocate {n} bytes for {noun} cache",
)
USER_AGENTS = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Mobile",
    "okhttp/4.12.0",
    "python-requests/2.32.3",
    "Go-http-client/2.0",
)
QUEUES = ("emails", "exports", "webhooks", "reindex", "thumbnails", "settlements")
METHODS = ("GET", "GET", "GET", "POST", "PUT", "DELETE")
BASE_TIME_NS = 1_763_700_000 * 10**9


def _title(word: str) -> str:
    return word[:1].upper() + word[1:]


def _pkg(service: str) -> str:
    return service.replace("-", "")


def _plural(noun: str) -> str:
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "o", "u"):
        return noun[:-1] + "ies"
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    return noun + "s"


# ---------------------------------------------------------------------------------------------
# Records


class RecordFactory:
    """Builds seeded OTLP JSON log batches of two record shapes."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.clock = BASE_TIME_NS
        rng = self.rng
        self.pods = {
            svc: [
                f"{svc}-{rng.getrandbits(36):09x}-{''.join(rng.choices('bcdfghjklmnpqrstvwxz2456789', k=5))}"
                for _ in range(3)
            ]
            for svc in (*RECORD_SERVICES, *KUBE_SERVICES)
        }
        self.hosts = [
            f"ip-10-{rng.randrange(256)}-{rng.randrange(256)}-{rng.randrange(256)}.ec2.internal"
            for _ in range(24)
        ]

    def batch(self) -> JsonObj:
        """One export request of :data:`RECORDS_PER_BATCH` records."""
        return {"resourceLogs": [self._resource(slot) for slot in range(RESOURCES_PER_BATCH)]}

    def _resource(self, slot: int) -> JsonObj:
        rng = self.rng
        datadog = slot % 2 == 1
        if rng.random() < 0.03:
            namespace, service = rng.choice(KUBE_NAMESPACES), rng.choice(KUBE_SERVICES)
        else:
            namespace, service = rng.choice(RECORD_NAMESPACES), rng.choice(list(RECORD_SERVICES))
        env = "prod" if rng.random() < 0.85 else "staging"
        host = rng.choice(self.hosts)
        if datadog:
            res_attrs = [_kv("k8s.namespace.name", namespace), _kv("host.name", host)]
            scope = {"name": "datadog.logs", "version": "7.52.0"}
        else:
            res_attrs = [_kv("k8s.namespace.name", namespace), _kv("service.name", service)]
            scope = {"name": f"com.acme.{_pkg(service)}", "version": "1.4.2"}
        records = [self._record(service, datadog, env, host) for _ in range(RECORDS_PER_RESOURCE)]
        return {
            "resource": {"attributes": res_attrs},
            "scopeLogs": [{"scope": scope, "logRecords": records}],
        }

    def _record(self, service: str, datadog: bool, env: str, host: str) -> JsonObj:
        rng = self.rng
        self.clock += rng.randrange(1_000_000, 50_000_000)
        roll = rng.random()
        http: tuple[str, str, int] | None = None
        if roll < 0.02:
            severity = "INFO"
            body, http = self._health(datadog)
        elif roll < 0.07:
            severity = "ERROR"
            body = self._error_body(service, datadog)
        else:
            sev_roll = rng.random()
            severity = "DEBUG" if sev_roll < 0.035 else "WARN" if sev_roll < 0.09 else "INFO"
            body, http = self._dd_body(service) if datadog else self._otlp_body(service)
        pod = rng.choice(self.pods[service])
        if datadog:
            attrs = [
                _kv("service", service),
                _kv("hostname", host),
                _kv("ddsource", RECORD_SERVICES.get(service, "kubernetes")),
                _kv("status", severity.lower()),
                _kv("env", env),
            ]
        else:
            attrs = [_kv("service.name", service), _kv("k8s.pod.name", pod)]
            if http is not None:
                method, route, status = http
                attrs += [
                    _kv("http.method", method),
                    _kv("http.route", route),
                    {"key": "http.status_code", "value": {"intValue": str(status)}},
                ]
        if rng.random() < 0.01:
            attrs.append(_kv("debug.payload", f"dump-{rng.getrandbits(32):08x}"))
        return {
            "timeUnixNano": str(self.clock),
            "severityNumber": SEVERITY_NUMBERS[severity],
            "severityText": severity,
            "body": {"stringValue": body},
            "attributes": attrs,
            "traceId": f"{rng.getrandbits(128):032x}",
            "spanId": f"{rng.getrandbits(64):016x}",
        }

    # -- bodies --------------------------------------------------------------------------

    def _stamp(self) -> tuple[str, str]:
        seconds, nanos = divmod(self.clock, 10**9)
        now = time.gmtime(seconds)
        iso = time.strftime("%Y-%m-%dT%H:%M:%S", now) + f".{nanos // 10**6:03d}Z"
        return iso, time.strftime("%d/%b/%Y:%H:%M:%S +0000", now)

    def _route(self) -> tuple[str, str]:
        """(concrete path, route template) of a records' endpoint."""
        rng = self.rng
        nouns = _plural(rng.choice(RECORD_NOUNS))
        version = rng.choice((1, 1, 2))
        ident = rng.randrange(1000, 999_999)
        shape = rng.randrange(3)
        if shape == 0:
            return f"/api/v{version}/{nouns}/{ident}", f"/api/v{version}/{nouns}/{{id}}"
        if shape == 1:
            return (
                f"/api/v{version}/{nouns}/{ident}/items",
                f"/api/v{version}/{nouns}/{{id}}/items",
            )
        return f"/api/v{version}/{nouns}?page={rng.randrange(1, 40)}", f"/api/v{version}/{nouns}"

    def _health(self, datadog: bool) -> tuple[str, tuple[str, str, int]]:
        rng = self.rng
        path = rng.choice(("/healthz", "/healthz", "/readyz", "/livez"))
        iso, clf = self._stamp()
        if datadog:
            ip = f"10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(256)}"
            body = (
                f'{ip} - - [{clf}] "GET {path} HTTP/1.1" 200 2 "-" "kube-probe/1.29" '
                f"rt=0.000 uct=0.000 uht=0.000 urt=0.000 request_id={rng.getrandbits(64):016x}"
            )
        else:
            body = (
                f"GET {path} -> 200 in 0ms (bytes_in=0 bytes_out=2 probe=kube-probe/1.29 ts={iso} "
                f"request_id={rng.getrandbits(64):016x} client=10.{rng.randrange(256)}.0.1 "
                f"checks=db,cache,queue)"
            )
        return body, ("GET", path, 200)

    def _error_phrase(self) -> str:
        rng = self.rng
        noun = rng.choice(RECORD_NOUNS)
        return rng.choice(ERROR_TEMPLATES).format(
            svc=rng.choice(list(RECORD_SERVICES)),
            noun=noun,
            nouns=_plural(noun),
            n=rng.choice((250, 500, 1000, 3000, 5000, 30000)),
            id=rng.randrange(1000, 999_999),
            small=rng.choice((10, 20, 50, 100)),
        )

    def _error_body(self, service: str, datadog: bool) -> str:
        rng = self.rng
        phrase = self._error_phrase()
        noun = rng.choice(RECORD_NOUNS)
        iso, _ = self._stamp()
        if datadog and rng.random() < 0.6:
            cls = _title(noun)
            return (
                f"{rng.choice(RECORD_EXCEPTIONS)}: {phrase}\n"
                f"\tat com.acme.{_pkg(service)}.{cls}Handler.handle({cls}Handler.java:"
                f"{rng.randrange(40, 400)})\n"
                f"\tat com.acme.common.web.Dispatcher.dispatch(Dispatcher.java:{rng.randrange(80, 200)})"
            )
        if datadog:
            return (
                f'{{"level":"error","ts":"{iso}","caller":"{noun}/handler.go:{rng.randrange(20, 300)}",'
                f'"msg":"{phrase}","{noun}_id":"{rng.getrandbits(32):08x}",'
                f'"attempt":{rng.randrange(1, 4)}}}'
            )
        path, _ = self._route()
        return (
            f"request {rng.choice(METHODS)} {path} failed: {phrase}; attempt={rng.randrange(1, 6)}/5 "
            f"request_id={rng.getrandbits(64):016x} user=u-{rng.randrange(10_000, 99_999)} "
            f"tenant=t-{rng.randrange(100, 999)} pod={rng.choice(self.pods[service])}"
        )

    def _dd_body(self, service: str) -> tuple[str, None]:
        rng = self.rng
        iso, clf = self._stamp()
        noun = rng.choice(RECORD_NOUNS)
        kind = rng.randrange(4) if RECORD_SERVICES.get(service) != "nginx" else 0
        if kind == 0:
            path, _ = self._route()
            ip = f"{rng.randrange(1, 224)}.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(256)}"
            status = rng.choice((200, 200, 200, 201, 204, 304, 404, 500))
            return (
                f'{ip} - - [{clf}] "{rng.choice(METHODS)} {path} HTTP/1.1" {status} '
                f'{rng.randrange(100, 90_000)} "-" "{rng.choice(USER_AGENTS)}" '
                f"rt={rng.random() / 4:.3f} uct=0.001 urt={rng.random() / 4:.3f}"
            ), None
        if kind == 1:
            slow = rng.random() < 0.03
            duration = rng.uniform(1000, 9000) if slow else rng.uniform(0.05, 90)
            return (
                f"duration: {duration:.3f} ms  statement: SELECT o.id, o.status, o.total, "
                f"o.updated_at FROM {_plural(noun)} o WHERE o.customer_id = {rng.randrange(1000, 999_999)} "
                f"AND o.created_at > '{iso[:10]}' ORDER BY o.created_at DESC LIMIT "
                f"{rng.choice((20, 50, 100))}"
            ), None
        if kind == 2:
            return (
                f"{iso[:10]} {iso[11:23]} INFO [pool-{rng.randrange(1, 9)}-thread-{rng.randrange(1, 33)}] "
                f"c.a.{_pkg(service)}.{_title(noun)}Service - {noun} {rng.randrange(1000, 999_999)} "
                f"updated: {rng.randrange(1, 12)} items, total={rng.uniform(5, 900):.2f} USD, "
                f"user=u-{rng.randrange(10_000, 99_999)}, session={rng.getrandbits(64):016x}, "
                f"took={rng.randrange(1, 400)}ms"
            ), None
        return (
            f'{{"level":"info","ts":"{iso}","caller":"worker/pool.go:{rng.randrange(20, 300)}",'
            f'"msg":"job completed","job_id":"{rng.getrandbits(32):08x}",'
            f'"queue":"{rng.choice(QUEUES)}","attempt":1,"duration_ms":{rng.randrange(2, 5000)},'
            f'"{noun}_count":{rng.randrange(1, 500)}}}'
        ), None

    def _otlp_body(self, service: str) -> tuple[str, tuple[str, str, int] | None]:
        rng = self.rng
        iso, _ = self._stamp()
        noun = rng.choice(RECORD_NOUNS)
        kind = rng.randrange(4)
        if kind == 0:
            path, route = self._route()
            method = rng.choice(METHODS)
            status = rng.choice((200, 200, 200, 201, 204, 400, 404, 500))
            body = (
                f"{method} {path} -> {status} in {rng.randrange(1, 900)}ms "
                f"(bytes_in={rng.randrange(0, 4000)} bytes_out={rng.randrange(100, 90_000)} "
                f"user=u-{rng.randrange(10_000, 99_999)} tenant=t-{rng.randrange(100, 999)} "
                f"request_id={rng.getrandbits(64):016x} client={rng.randrange(1, 224)}.{rng.randrange(256)}"
                f".{rng.randrange(256)}.{rng.randrange(256)} ua={rng.choice(USER_AGENTS)[:24]!r} "
                f"proto=HTTP/1.1 tls=TLSv1.3)"
            )
            return body, (method, route, status)
        if kind == 1:
            return (
                f"cache miss for key {noun}:{rng.randrange(1000, 999_999)}:v{rng.randrange(1, 9)}; "
                f"loading from primary (shard={rng.randrange(16)}, replica={rng.randrange(3)}, "
                f"latency_ms={rng.randrange(1, 80)}) ttl={rng.choice((60, 300, 3600))}s "
                f"region={rng.choice(('us-east-1', 'eu-west-1', 'ap-south-1'))} "
                f"value_bytes={rng.randrange(200, 90_000)} hit_ratio_1m={rng.random():.3f} "
                f"evictions_1m={rng.randrange(0, 400)} backend=redis-{rng.randrange(6)}"
            ), None
        if kind == 2:
            return (
                f"job {rng.choice(QUEUES)}/{rng.getrandbits(32):08x} finished: processed "
                f"{rng.randrange(1, 5000)} {_plural(noun)} in {rng.randrange(5, 60_000)}ms, "
                f"{rng.randrange(0, 5)} failed, {rng.randrange(0, 20)} skipped; next run at {iso} "
                f"(worker={rng.choice(self.pods[service])}, queue_depth={rng.randrange(0, 900)})"
            ), None
        path, route = self._route()
        method = rng.choice(METHODS)
        status = rng.choice((200, 200, 201, 404, 503))
        target = rng.choice(list(RECORD_SERVICES))
        body = (
            f"outbound call to {target} {method} {path} status={status} "
            f"duration_ms={rng.randrange(1, 2000)} retries=0 pool={noun}-pool "
            f"conns_in_use={rng.randrange(1, 64)}/64 started={iso} tls=true "
            f"request_id={rng.getrandbits(64):016x} peer=10.{rng.randrange(256)}.{rng.randrange(256)}.7:8443"
        )
        return body, (method, route, status)


SEVERITY_NUMBERS = {"DEBUG": 5, "INFO": 9, "WARN": 13, "ERROR": 17}


def _kv(key: str, value: str) -> JsonObj:
    return {"key": key, "value": {"stringValue": value}}


def _fill_attributes(target: Any, attributes: list[JsonObj]) -> None:
    for kv in attributes:
        entry = target.add(key=kv["key"])
        value = kv["value"]
        if "stringValue" in value:
            entry.value.string_value = value["stringValue"]
        else:
            entry.value.int_value = int(value["intValue"])


def to_proto(doc: JsonObj) -> ExportLogsServiceRequest:
    """The protobuf form of one generated OTLP JSON batch (same content; ids as bytes)."""
    request = ExportLogsServiceRequest()
    for rl in doc["resourceLogs"]:
        proto_rl = request.resource_logs.add()
        _fill_attributes(proto_rl.resource.attributes, rl["resource"]["attributes"])
        for sl in rl["scopeLogs"]:
            proto_sl = proto_rl.scope_logs.add()
            proto_sl.scope.name = sl["scope"]["name"]
            proto_sl.scope.version = sl["scope"]["version"]
            for rec in sl["logRecords"]:
                lr = proto_sl.log_records.add()
                lr.time_unix_nano = int(rec["timeUnixNano"])
                lr.severity_number = rec["severityNumber"]
                lr.severity_text = rec["severityText"]
                lr.body.string_value = rec["body"]["stringValue"]
                _fill_attributes(lr.attributes, rec["attributes"])
                lr.trace_id = bytes.fromhex(rec["traceId"])
                lr.span_id = bytes.fromhex(rec["spanId"])
    return request


@dataclass
class Dataset:
    """The benchmark's batches, kept serialized so that fresh copies can be made outside
    the timed regions: decoded OTLP JSON as pickles (the fastest deep copy), protobuf as
    the wire bytes of an ``ExportLogsServiceRequest``."""

    json_pickles: list[bytes]
    proto_blobs: list[bytes]
    corpus: str
    """Lowercase JSON text of the first batches: what "no record contains it" is checked on."""

    @property
    def batches(self) -> int:
        return len(self.json_pickles)

    @property
    def records(self) -> int:
        return self.batches * RECORDS_PER_BATCH

    def json_batch(self, index: int) -> JsonObj:
        decoded: JsonObj = pickle.loads(self.json_pickles[index % self.batches])
        return decoded

    def proto_batch(self, index: int) -> ExportLogsServiceRequest:
        request = ExportLogsServiceRequest()
        request.ParseFromString(self.proto_blobs[index % self.batches])
        return request

    def lean_batch(self, index: int) -> LeanLogsRequest:
        """The batch as Edge and the collector decode OTLP protobuf logs: each log
        record kept as its wire bytes."""
        request = LeanLogsRequest()
        request.ParseFromString(self.proto_blobs[index % self.batches])
        return request


def make_dataset(seed: int, batches: int) -> Dataset:
    factory = RecordFactory(seed)
    pickles, blobs, texts = [], [], []
    for index in range(batches):
        doc = factory.batch()
        pickles.append(pickle.dumps(doc, protocol=pickle.HIGHEST_PROTOCOL))
        blobs.append(to_proto(doc).SerializeToString())
        if index < 4:
            texts.append(json.dumps(doc).lower())
    return Dataset(pickles, blobs, "\n".join(texts))


# ---------------------------------------------------------------------------------------------
# Policies


def body(op: str, text: str, ci: bool = False, negate: bool = False) -> JsonObj:
    """A body matcher in the authoring dialect."""
    return _flags({"log_field": "body", op: text}, ci, negate)


def attr(key: str, op: str, value: str | bool, ci: bool = False) -> JsonObj:
    return _flags({"log_attribute": key, op: value}, ci, False)


def res(key: str, op: str, value: str | bool) -> JsonObj:
    return {"resource_attribute": key, op: value}


def severity(value: str) -> JsonObj:
    return {"log_field": "severity_text", "exact": value}


def _flags(matcher: JsonObj, ci: bool, negate: bool) -> JsonObj:
    if ci:
        matcher["case_insensitive"] = True
    if negate:
        matcher["negate"] = True
    return matcher


class Draft(NamedTuple):
    """A policy before it gets an id: its kind (for the mix report), matchers and keep."""

    kind: str
    match: list[JsonObj]
    keep: str


def _keep(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.5:
        return "none"
    if roll < 0.85:
        return "all"
    return f"{rng.choice((1, 5, 10, 50, 100, 1000))}/{rng.choice(('s', 's', 'm'))}"


def live_catalog(rng: random.Random) -> list[Draft]:
    """Policies that target what the records contain. The first four are the classic ones
    (every set has them); the rest come in a seeded order."""
    rest: list[Draft] = []

    def add(kind: str, keep: str, *match: JsonObj) -> None:
        rest.append(Draft(kind, list(match), keep))

    add("attribute", "none", attr("http.route", "exact", "/healthz"))
    add("attribute", "none", attr("debug.payload", "exists", True))
    add("regex", "all", body("regex", r"duration: \d{4,}\.\d+ ms"))
    add("ci", "100/s", body("regex", r"deadline exceeded after \d+ms", ci=True))
    add("ci", "none", body("contains", "SERVICE UNAVAILABLE", ci=True))
    add("ci", "all", body("regex", r"out of memory: cannot allocate \d+ bytes", ci=True))
    add("literal", "all", body("contains", "certificate has expired"))
    add("literal", "none", body("ends_with", '"attempt":3}'))
    services = list(RECORD_SERVICES)
    for svc in services:
        add("attribute", "none", severity("DEBUG"), attr("service", "exact", svc))
        add("attribute", "none", severity("DEBUG"), attr("service.name", "exact", svc))
        add("attribute", "all", attr("status", "exact", "error"), attr("service", "exact", svc))
        add("literal", "all", body("contains", f"circuit breaker open for {svc}"))
        add("literal", "5/s", body("contains", f"retry budget exhausted for {svc}"))
    for noun in RECORD_NOUNS:
        add("literal", "all", body("contains", f"failed to acquire lock on {noun}/"))
        add("literal", "none", body("contains", f'unique constraint "{_plural(noun)}_pkey"'))
        add("regex", "none", body("regex", rf"\b{noun}s? pool exhausted"))
    for exc in RECORD_EXCEPTIONS:
        add("literal", "all", body("starts_with", f"{exc}:"))
    for a, b in zip(services, services[1:] + services[:1], strict=True):
        add("regex", "none", body("regex", rf"timeout after \d+ms calling ({a}|{b})"))
    for namespace in RECORD_NAMESPACES:
        add(
            "literal",
            "all",
            res("k8s.namespace.name", "exact", namespace),
            body("contains", "timeout after"),
        )
    rng.shuffle(rest)
    storefront_debug = [severity("DEBUG"), res("k8s.namespace.name", "exact", "storefront")]
    first = [
        Draft("regex", [body("regex", "GET /(healthz|readyz|livez)")], "none"),
        Draft("attribute", [res("k8s.namespace.name", "starts_with", "kube-")], "none"),
        Draft("attribute", storefront_debug, "none"),
        Draft("ci", [body("contains", "Connection Reset By Peer", ci=True)], "10/s"),
    ]
    return first + rest


def live_count(size: int) -> int:
    """How many live policies a set of `size` has: grows like sqrt(size), at least four."""
    return min(size, max(4, round(1.25 * math.sqrt(size))))


@dataclass
class DeadVocabulary:
    """Words and names no record contains: policies built from them never match."""

    nouns: list[str]

    @classmethod
    def build(cls, corpus: str) -> DeadVocabulary:
        nouns = [
            n
            for n in NOUNS
            if n not in RECORD_NOUNS and not re.fullmatch("[a-f]+", n) and n not in corpus
        ]
        return cls(nouns)

    def noun(self, rng: random.Random) -> str:
        return rng.choice(self.nouns)

    def service(self, rng: random.Random) -> str:
        core = f"{self.noun(rng)}-{rng.choice(SERVICE_SUFFIXES)}"
        return f"{rng.choice(SERVICE_PREFIXES)}-{core}" if rng.random() < 0.5 else core


def _dead_regex(rng: random.Random, v: DeadVocabulary) -> str:
    n, s = v.noun, v.service
    pick = rng.randrange(12)
    if pick == 0:
        return rf"^(GET|POST|PUT|DELETE) /api/v\d+/{_plural(n(rng))}(/\d+)?"
    if pick == 1:
        return rf"timeout after \d+ms calling {s(rng)}"
    if pick == 2:
        return rf"({n(rng)}|{n(rng)}|{n(rng)}) pool exhausted"
    if pick == 3:
        return rf"failed to acquire lock on {n(rng)}/\d+"
    if pick == 4:
        return rf"{_title(n(rng))}(Handler|Service|Controller)\.\w+\("
    if pick == 5:
        return rf'"{n(rng)}_id":\s*"[0-9a-f]{{8}}"'
    if pick == 6:
        return rf"SELECT .* FROM {_plural(n(rng))} \w+ WHERE"
    if pick == 7:
        return rf"\b{n(rng)}[-_]?(sync|import|export) (failed|aborted)\b"
    if pick == 8:
        return rf"status=5\d\d .*{n(rng)}"
    if pick == 9:
        return rf"deadline exceeded after \d+ms waiting for ({s(rng)}|{s(rng)})"
    if pick == 10:
        return rf"cache (miss|hit) for key {n(rng)}:\d+"
    return rf"upstream {s(rng)} returned [45]\d\d"


def _dead_literal(rng: random.Random, v: DeadVocabulary) -> JsonObj:
    n, s = v.noun, v.service
    pick = rng.randrange(12)
    if pick == 0:
        return body("contains", f"circuit breaker open for {s(rng)}")
    if pick == 1:
        return body("contains", f"{n(rng)} pool exhausted")
    if pick == 2:
        return body("contains", f"GET /api/v{rng.randrange(1, 4)}/{_plural(n(rng))}")
    if pick == 3:
        return body("contains", f"retry budget exhausted for {s(rng)}")
    if pick == 4:
        return body("contains", f'violates unique constraint "{_plural(n(rng))}_pkey"')
    if pick == 5:
        return body("starts_with", f"com.acme.{n(rng)}.{_title(n(rng))}Exception:")
    if pick == 6:
        return body("starts_with", f"job {n(rng)}/")
    if pick == 7:
        return body("starts_with", f"cache miss for key {n(rng)}:")
    if pick == 8:
        return body("ends_with", f"(worker={s(rng)}-0)")
    if pick == 9:
        return body("ends_with", f" in {n(rng)} worker")
    if pick == 10:
        return body("exact", f"{n(rng)} cache warmed")
    return body("exact", f"shutting down {s(rng)}")


def _dead_caseless(rng: random.Random, v: DeadVocabulary) -> JsonObj:
    n, s = v.noun, v.service
    pick = rng.randrange(6)
    if pick == 0:
        return body("contains", f"{n(rng).upper()} QUOTA EXCEEDED", ci=True)
    if pick == 1:
        return body("contains", f"Connection Refused By {s(rng).title()}", ci=True)
    if pick == 2:
        return body("regex", rf"{n(rng)}\s+not\s+found", ci=True)
    if pick == 3:
        return body("regex", rf"error (reading|writing) {n(rng)}", ci=True)
    if pick == 4:
        return body("starts_with", f"WARN {_title(n(rng))}", ci=True)
    return attr("service", "exact", s(rng).upper(), ci=True)


def _dead_attribute(rng: random.Random, v: DeadVocabulary) -> JsonObj:
    n, s = v.noun, v.service
    pick = rng.randrange(12)
    if pick == 0:
        return attr("service.name", "exact", s(rng))
    if pick == 1:
        return attr("service", "exact", s(rng))
    if pick == 2:
        return res("service.name", "exact", s(rng))
    if pick == 3:
        return res("k8s.namespace.name", "exact", f"team-{n(rng)}")
    if pick == 4:
        return res("k8s.namespace.name", "starts_with", f"{n(rng)}-")
    if pick == 5:
        return attr("k8s.pod.name", "starts_with", f"{s(rng)}-")
    if pick == 6:
        return attr("http.route", "starts_with", f"/api/v{rng.randrange(1, 4)}/{_plural(n(rng))}")
    if pick == 7:
        return attr("http.route", "exact", f"/api/v{rng.randrange(1, 4)}/{_plural(n(rng))}/{{id}}")
    if pick == 8:
        return attr("hostname", "starts_with", f"{n(rng)}-")
    if pick == 9:
        return attr("ddsource", "exact", n(rng))
    if pick == 10:
        return attr(
            f"{n(rng)}.{rng.choice(('batch_id', 'tenant', 'shard', 'trace'))}", "exists", True
        )
    return attr("env", "exact", f"{n(rng)}-sandbox")


def _extra(rng: random.Random) -> JsonObj:
    """A second or third condition; may well be true, the first one never is."""
    pick = rng.randrange(6)
    if pick == 0:
        return severity(rng.choice(("DEBUG", "INFO", "WARN", "ERROR")))
    if pick == 1:
        return attr("env", "exact", "prod")
    if pick == 2:
        return res("k8s.namespace.name", "exact", rng.choice(RECORD_NAMESPACES))
    if pick == 3:
        return attr("http.route", "exists", True)
    if pick == 4:
        return body("contains", "healthz", negate=True)
    return attr("service.name", "exact", rng.choice(list(RECORD_SERVICES)))


def dead_policy(rng: random.Random, vocabulary: DeadVocabulary) -> Draft:
    """A policy with the benchmark's mix: 35% body regex, 25% body literal, 15% caseless,
    25% attribute; 20% get one extra condition and 5% two."""
    roll = rng.random()
    if roll < 0.35:
        kind, first = "regex", body("regex", _dead_regex(rng, vocabulary))
    elif roll < 0.60:
        kind, first = "literal", _dead_literal(rng, vocabulary)
    elif roll < 0.75:
        kind, first = "ci", _dead_caseless(rng, vocabulary)
    else:
        kind, first = "attribute", _dead_attribute(rng, vocabulary)
    match = [first]
    roll = rng.random()
    if roll < 0.25:
        match.append(_extra(rng))
    if roll < 0.05:
        match.append(_extra(rng))
    return Draft(kind, match, _keep(rng))


def make_policies(size: int, seed: int, vocabulary: DeadVocabulary) -> list[Draft]:
    """`size` drafts in seeded order: the set's live policies and dead ones."""
    catalog = live_catalog(random.Random(seed))
    rng = random.Random(f"{seed}/{size}")
    drafts = catalog[: live_count(size)]
    drafts += [dead_policy(rng, vocabulary) for _ in range(size - len(drafts))]
    rng.shuffle(drafts)
    return drafts


def policy_document(drafts: Sequence[Draft], deterministic: bool = False) -> JsonObj:
    """The authoring-JSON document; `deterministic` turns rate limits into ``none``."""
    policies = []
    for index, draft in enumerate(drafts):
        keep = draft.keep
        if deterministic and keep not in ("all", "none"):
            keep = "none"
        policies.append(
            {
                "id": f"p{index:05d}",
                "name": f"{draft.kind} policy {index}",
                "log": {"match": draft.match, "keep": keep},
            }
        )
    return {"policies": policies}


def mix_of(drafts: Sequence[Draft]) -> dict[str, float]:
    """Shares of the policy kinds, of multi-matcher policies and of keep kinds."""
    total = len(drafts)
    shares = {
        k: sum(d.kind == k for d in drafts) / total for k in ("regex", "literal", "ci", "attribute")
    }
    shares["and"] = sum(len(d.match) > 1 for d in drafts) / total
    shares["keep_none"] = sum(d.keep == "none" for d in drafts) / total
    shares["keep_all"] = sum(d.keep == "all" for d in drafts) / total
    shares["keep_rate"] = 1 - shares["keep_none"] - shares["keep_all"]
    return shares
