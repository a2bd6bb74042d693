"""A ``periodic`` reader of ``service::telemetry::metrics::readers``: the
collector's own metrics (:mod:`sluice.collector.metricdata`) pushed every
``interval`` ms, and once more when the service shuts down, as upstream's
SDK periodic reader does.

Its exporter sends OTLP/HTTP protobuf (a POST through the pooled HTTP
client, :mod:`sluice.transport.http_client`), OTLP/gRPC (the ``Export``
method on a ``grpc.aio`` channel), or prints the collection as JSON on
stdout (``console``). A push that fails or outlasts ``timeout`` is logged
(``failed to upload metrics: ...``) and the collector goes on; the next
push carries the cumulative values again. Unlike upstream's OTLP exporters,
a push is not retried within its interval.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import gzip
import json
import logging
import os
import sys
import threading
from datetime import UTC, datetime
from http import HTTPStatus
from typing import Any, Protocol

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from prometheus_client import CollectorRegistry

from sluice.collector.gotext import go_client_reason, go_header_problem
from sluice.collector.metricdata import MetricsView
from sluice.collector.metricreaders import (
    GRPC_PROTOBUF,
    OtlpMetric,
    PeriodicReader,
    endpoint_url,
    url_parts,
)
from sluice.collector.rpc_status import status_error_text
from sluice.gostrconv import quoted
from sluice.transport.header_rules import valid_metadata_key, valid_metadata_value
from sluice.transport.http_client import UpstreamError, UpstreamPool

log = logging.getLogger("sluice.collector.telemetry")

METRICS_PATH = "/v1/metrics"
DEFAULT_HTTP_ENDPOINT = "https://localhost:4318"
DEFAULT_GRPC_ENDPOINT = "https://localhost:4317"
"""Where upstream's OTLP exporters send without an ``endpoint`` (over TLS)."""
EXPORT_METHOD = "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"
UPLOAD_FAILED = "failed to upload metrics: "


class Exporter(Protocol):
    failure: str
    """What this exporter's errors begin with (upstream's OTLP exporters
    wrap theirs in ``failed to upload metrics: ``, the console one does not)."""

    async def export(self, request: ExportMetricsServiceRequest) -> None:
        """Send one collection; raises an Exception whose text says why it failed."""

    async def close(self) -> None: ...


class OtlpHttpExporter:
    """POSTs each collection to ``<endpoint>`` (its path, or ``/v1/metrics``
    when it has none), as upstream's ``otlpmetrichttp``."""

    failure = UPLOAD_FAILED

    def __init__(self, config: OtlpMetric, agent: str, push_secs: float):
        """`push_secs`: the reader's limit per push, which is the limit per
        request too when `config` sets none."""
        url = endpoint_url(config.endpoint) if config.endpoint else DEFAULT_HTTP_ENDPOINT
        origin, path = url_parts(url)
        self.path = path or METRICS_PATH
        self.url = origin + self.path
        self.pool = UpstreamPool(origin, config.timeout_secs or push_secs)
        self.gzip = config.compression == "gzip"
        headers = {"Content-Type": "application/x-protobuf", "User-Agent": agent}
        if self.gzip:
            headers["Content-Encoding"] = "gzip"
        headers.update(config.headers)
        self.refused = next(filter(None, (go_header_problem(*h) for h in headers.items())), None)
        """Why Go's HTTP client refuses every request with these headers."""
        self.headers = b"".join(
            b"%s: %s\r\n" % (name.encode(), value.encode()) for name, value in headers.items()
        )

    async def export(self, request: ExportMetricsServiceRequest) -> None:
        if self.refused is not None:
            raise RuntimeError(f"Post {json.dumps(self.url)}: {self.refused}")
        body = request.SerializeToString()
        if self.gzip:
            body = gzip.compress(body)
        try:
            answer = await self.pool.request("POST", self.path, None, self.headers, body)
        except UpstreamError as failed:
            reason = go_client_reason(self.pool.host, failed)
            raise RuntimeError(f"Post {json.dumps(self.url)}: {reason}") from None
        if not 200 <= answer.status < 300:
            try:
                phrase = HTTPStatus(answer.status).phrase
            except ValueError:
                phrase = ""
            raise RuntimeError(
                f"failed to send metrics to {self.url}: {answer.status} {phrase}".rstrip()
            )

    async def close(self) -> None:
        self.pool.close()


INTERNAL = 13
"""The gRPC status of a call grpc-go refuses to make."""


def _metadata_problem(pair: tuple[str, str]) -> str | None:
    """grpc-go's error for a call with the (lowercased) metadata `pair`
    (its ``internal/metadata.ValidatePair``), or None."""
    key, value = pair
    if not key:
        return "there is an empty key in the header"
    if not valid_metadata_key(key):
        return f"header key {quoted(key)} contains illegal characters not in [0-9a-z-_.]"
    if not valid_metadata_value(key, value):
        return f"header key {quoted(key)} contains value with non-printable ASCII characters"
    return None


class OtlpGrpcExporter:
    """Calls ``MetricsService/Export``, as upstream's ``otlpmetricgrpc``:
    over TLS for an ``https://`` endpoint (``certificate`` the CA file),
    plain otherwise."""

    failure = UPLOAD_FAILED

    def __init__(self, config: OtlpMetric, agent: str):
        import grpc

        self._grpc = grpc
        url = endpoint_url(config.endpoint) if config.endpoint else DEFAULT_GRPC_ENDPOINT
        target = url_parts(url)[0].partition("://")[2]
        options = [("grpc.primary_user_agent", agent)]
        compression = grpc.Compression.Gzip if config.compression == "gzip" else None
        if url.startswith("https:"):
            roots = None
            if config.certificate:
                with open(config.certificate, "rb") as file:
                    roots = file.read()
            credentials = grpc.ssl_channel_credentials(roots)
            self.channel = grpc.aio.secure_channel(target, credentials, options, compression)
        else:
            self.channel = grpc.aio.insecure_channel(target, options, compression)
        self.call = self.channel.unary_unary(
            EXPORT_METHOD, response_deserializer=ExportMetricsServiceResponse.FromString
        )
        metadata = [(name.lower(), value) for name, value in config.headers.items()]
        self.refused = next(filter(None, map(_metadata_problem, metadata)), None)
        """Why grpc-go refuses every call with this metadata."""
        self.metadata = tuple(
            (key, value.encode() if key.endswith("-bin") else value) for key, value in metadata
        )
        self.timeout = config.timeout_secs

    async def export(self, request: ExportMetricsServiceRequest) -> None:
        if self.refused is not None:
            raise RuntimeError(status_error_text(INTERNAL, self.refused))
        try:
            await self.call(
                request.SerializeToString(), timeout=self.timeout, metadata=self.metadata
            )
        except self._grpc.aio.AioRpcError as failed:
            code = failed.code().value[0]
            raise RuntimeError(status_error_text(code, failed.details() or "")) from None

    async def close(self) -> None:
        await self.channel.close()


class ConsoleExporter:
    """Prints each collection on stdout as indented JSON, in the shape of
    upstream's ``stdoutmetric`` (the SDK's ``metricdata`` structures).

    As upstream's, which writes from the SDK reader's own goroutine, a
    stdout nobody reads stops the pushes and nothing else: each collection
    is written by a thread of its own, one at a time (a push waits for the
    previous write, within the reader's ``timeout``), so the event loop
    never blocks on the pipe and at most one collection is held."""

    failure = ""

    def __init__(self) -> None:
        self._writing: asyncio.Future[None] | None = None
        """The write in progress (or last done)."""

    async def export(self, request: ExportMetricsServiceRequest) -> None:
        text = "".join(
            json.dumps(console_json(resource_metrics), indent=2) + "\n"
            for resource_metrics in request.resource_metrics
        )
        if self._writing is not None:
            # a timeout cancels the waits, never the write itself
            await asyncio.wait({self._writing})
        loop = asyncio.get_running_loop()
        self._writing = written = loop.create_future()
        written.add_done_callback(lambda done: done.exception())  # seen, if nobody waits
        writer = threading.Thread(
            target=_write_stdout, args=(text.encode(), loop, written), daemon=True
        )
        writer.start()
        await asyncio.shield(written)

    async def close(self) -> None:
        return None


def _write_stdout(data: bytes, loop: asyncio.AbstractEventLoop, written: Any) -> None:
    """Write `data` to stdout (its file descriptor: no lock of Python's is
    held while the write blocks, so the interpreter can still exit), then
    settle `written` on `loop`."""
    problem: BaseException | None = None
    stdout = sys.stdout
    try:
        if stdout is None:  # Python's when fd 1 was closed at start: Go's write fails so
            raise OSError(errno.EBADF, os.strerror(errno.EBADF))
        try:
            fd = stdout.fileno()
        except (AttributeError, OSError, ValueError):  # not a file (replaced in-process)
            stdout.write(data.decode())
            stdout.flush()
        else:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
    except OSError as failed:
        problem = RuntimeError(f"write /dev/stdout: {(failed.strerror or str(failed)).lower()}")
    except Exception as failed:  # settled all the same: a push never waits on it for nothing
        problem = failed

    def settle() -> None:
        if not written.done():
            if problem is None:
                written.set_result(None)
            else:
                written.set_exception(problem)

    with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
        loop.call_soon_threadsafe(settle)


def make_exporter(config: PeriodicReader, agent: str) -> tuple[Exporter, str]:
    """The exporter a valid reader's config names (console first, as
    upstream), and its temporality preference."""
    if config.exporter.console is not None:
        return ConsoleExporter(), "cumulative"
    otlp = config.exporter.otlp
    assert otlp is not None  # checked when the service started (reader_problem)
    preference = otlp.temporality_preference or "cumulative"
    if otlp.protocol == GRPC_PROTOBUF:
        return OtlpGrpcExporter(otlp, agent), preference
    return OtlpHttpExporter(otlp, agent, config.timeout_secs), preference


class PeriodicMetricReader:
    """Pushes `registry`'s metrics under `resource` between :meth:`start` and
    :meth:`shutdown`."""

    def __init__(
        self,
        config: PeriodicReader,
        registry: CollectorRegistry,
        resource: dict[str, str],
        agent: str,
    ):
        self.config = config
        self.exporter, preference = make_exporter(config, agent)
        self.view = MetricsView(registry, resource, preference)
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        """Push on a ticker, as the SDK's reader (a Go ``time.Ticker``):
        every ``interval`` from the start, however long a push takes; the
        ticks a push outlasts make one push as soon as it ends (a ticker's
        channel holds one tick), and the pushes then keep to the ticks."""
        loop = asyncio.get_running_loop()
        interval = self.config.interval_secs
        tick = loop.time() + interval
        while True:
            await asyncio.sleep(tick - loop.time())
            error = await self.push()
            if error is not None:
                log.error("%s", error)
            now = loop.time()
            if tick + interval <= now:  # missed: the held tick, at once
                tick += interval * ((now - tick) // interval)
                continue
            tick += interval

    async def push(self, timeout: float | None = None) -> str | None:
        """Collect and export once, within the reader's ``timeout`` (or
        `timeout` seconds when shorter); the error, or None."""
        limit = (
            self.config.timeout_secs if timeout is None else min(timeout, self.config.timeout_secs)
        )
        try:
            async with asyncio.timeout(limit):
                await self.exporter.export(self.view.collect())
        except TimeoutError:
            return f"{self.exporter.failure}context deadline exceeded"
        except Exception as failed:
            return f"{self.exporter.failure}{failed}"
        return None

    async def shutdown(self, timeout: float | None = None) -> str | None:
        """Stop pushing, push a last time (within `timeout` seconds, what is
        left of the service's shutdown) and close the exporter; the last
        push's error (not logged: as the SDK reader's Shutdown, it is
        returned), or None."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        try:
            return await self.push(timeout)
        finally:
            await self.exporter.close()


def _go_time(ns: int) -> str:
    """A timestamp as Go's ``time.Time`` marshals to JSON (RFC 3339, nanoseconds)."""
    moment = datetime.fromtimestamp(ns // 1_000_000_000, UTC)
    fraction = f"{ns % 1_000_000_000:09d}".rstrip("0")
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + (f".{fraction}" if fraction else "") + "Z"


def _attributes_json(attributes: Any) -> list[dict[str, Any]]:
    return [
        {"Key": kv.key, "Value": {"Type": "STRING", "Value": kv.value.string_value}}
        for kv in sorted(attributes, key=lambda kv: kv.key)
    ]


def _point_json(point: Any) -> dict[str, Any]:
    value = point.as_int if point.WhichOneof("value") == "as_int" else point.as_double
    return {
        "Attributes": _attributes_json(point.attributes),
        "StartTime": _go_time(point.start_time_unix_nano),
        "Time": _go_time(point.time_unix_nano),
        "Value": value,
        "Exemplars": None,
    }


def _data_json(metric: Any) -> dict[str, Any]:
    kind = metric.WhichOneof("data")
    if kind == "gauge":
        return {"DataPoints": [_point_json(p) for p in metric.gauge.data_points]}
    if kind == "sum":
        return {
            "DataPoints": [_point_json(p) for p in metric.sum.data_points],
            "Temporality": _temporality(metric.sum.aggregation_temporality),
            "IsMonotonic": metric.sum.is_monotonic,
        }
    points = [
        {
            "Attributes": _attributes_json(p.attributes),
            "StartTime": _go_time(p.start_time_unix_nano),
            "Time": _go_time(p.time_unix_nano),
            "Count": p.count,
            "Bounds": list(p.explicit_bounds),
            "BucketCounts": list(p.bucket_counts),
            "Min": {},
            "Max": {},
            "Sum": p.sum,
            "Exemplars": None,
        }
        for p in metric.histogram.data_points
    ]
    return {
        "DataPoints": points,
        "Temporality": _temporality(metric.histogram.aggregation_temporality),
    }


def _temporality(otlp: int) -> str:
    """The SDK's name of an OTLP aggregation temporality."""
    return "DeltaTemporality" if otlp == 1 else "CumulativeTemporality"


def console_json(resource_metrics: Any) -> dict[str, Any]:
    """One collection as upstream's console exporter prints it."""
    return {
        "Resource": _attributes_json(resource_metrics.resource.attributes),
        "ScopeMetrics": [
            {
                "Scope": {"Name": scope.scope.name, "Version": "", "SchemaURL": ""},
                "Metrics": [
                    {
                        "Name": m.name,
                        "Description": m.description,
                        "Unit": m.unit,
                        "Data": _data_json(m),
                    }
                    for m in scope.metrics
                ],
            }
            for scope in resource_metrics.scope_metrics
        ],
    }
