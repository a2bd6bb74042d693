"""Edge benchmark: wrk against sluice-edge forwarding to nginx, all on 127.0.0.1.

Scenarios (50 connections, 10 s each, one Edge worker):
  (a) small Datadog log requests (1 record, ~500 bytes) with a 9-rule policy set;
  (b) 1 MiB OTLP protobuf log requests (~1,000 records) with the same rules;
  (d) Datadog Agent series flushes: protobuf ``/api/v2/series``, zstd, 2,000
      series, with 4 metric rules added to the set;
  (c) each request kind with no policies (passthrough).
Reports requests/s, records/s, p50/p99 latency, Edge's CPU time per request and
its peak RSS, plus the RSS with 1,000 policies loaded (idle, and under load).
Each scenario runs ``--rounds`` times (default 3), the rounds interleaved so
that a slow period of the shared host hits every scenario alike; the table
gives the median round (by requests/s) and the best.

Needs Debian's ``wrk`` and ``nginx`` (``apt-get install wrk nginx-light``).
Run from the repository root: ``.venv/bin/python bench/edge.py [--seconds 10]``.
``--edge NAME=PATH`` (repeatable) compares builds in one run, their rounds
interleaved too: e.g. ``--edge before=../old/.venv/bin/sluice-edge --edge
now=.venv/bin/sluice-edge``; the 1,000-policy figures are for the last one.
``--only a,b`` runs some of the scenarios (a build older than (d) forwards
Agent series unevaluated, with a warning per request).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

if not __package__:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import zstandard
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from bench.workload import DeadVocabulary, make_dataset, make_policies, policy_document
from sluice.telemetry.wire.agent_payload_pb2 import MetricPayload

EDGE = Path(sys.executable).parent / "sluice-edge"
PROTOBUF = "application/x-protobuf"
CONNECTIONS = 50

RULES: list[dict[str, Any]] = [
    {
        "id": "drop-debug",
        "log": {
            "match": [{"log_field": "severity_text", "exact": "debug", "case_insensitive": True}],
            "keep": "none",
        },
    },
    {
        "id": "drop-health",
        "log": {"match": [{"log_field": "body", "regex": "GET /(healthz|readyz)"}], "keep": "none"},
    },
    {
        "id": "drop-chatty",
        "log": {"match": [{"log_attribute": "service", "exact": "chatty-batch"}], "keep": "none"},
    },
    {
        "id": "keep-errors",
        "log": {"match": [{"log_field": "severity_text", "exact": "error"}], "keep": "all"},
    },
    {
        "id": "keep-payments",
        "log": {"match": [{"log_attribute": "service", "starts_with": "payments"}], "keep": "all"},
    },
    {
        "id": "sample-web-info",
        "log": {
            "match": [
                {"log_field": "severity_text", "exact": "info"},
                {"log_attribute": "service", "exact": "web"},
            ],
            "keep": "50%",
            "sample_key": {"log_attribute": "trace"},
        },
    },
    {
        "id": "limit-retries",
        "log": {
            "match": [{"log_field": "body", "contains": "retrying", "case_insensitive": True}],
            "keep": "100/s",
        },
    },
    {
        "id": "redact-email",
        "log": {
            "match": [{"log_field": "body", "regex": "[a-z]+@[a-z]+\\.com"}],
            "keep": "all",
            "transform": {
                "redact": [
                    {"log_field": "body", "regex": "[a-z]+@[a-z]+\\.com", "replacement": "<email>"}
                ]
            },
        },
    },
    {
        "id": "tag-canary",
        "log": {
            "match": [{"log_attribute": "version", "ends_with": "-rc"}],
            "keep": "all",
            "transform": {"add": [{"log_attribute": "canary", "value": "true"}]},
        },
    },
]
METRIC_RULES: list[dict[str, Any]] = [
    {
        "id": "drop-debug-metrics",
        "metric": {"match": [{"metric_field": "name", "starts_with": "app.debug."}], "keep": False},
    },
    {
        "id": "drop-staging-metrics",
        "metric": {"match": [{"datapoint_attribute": "env", "exact": "staging"}], "keep": False},
    },
    {
        "id": "drop-gc-metrics",
        "metric": {
            "match": [{"metric_field": "name", "regex": "^(jvm|go)\\.gc\\."}],
            "keep": False,
        },
    },
    {
        "id": "keep-system",
        "metric": {"match": [{"metric_field": "name", "starts_with": "system."}], "keep": True},
    },
]
METRIC_NAMES = [
    "system.cpu.user",
    "system.mem.used",
    "system.disk.in_use",
    "app.requests.count",
    "app.request.latency.avg",
    "app.debug.cache_hits",
    "jvm.gc.pause",
    "go.gc.duration",
    "kubernetes.cpu.usage.total",
    "app.queue.depth",
]
SERVICES = ["orders", "web", "payments-api", "chatty-batch", "search", "auth"]
LEVELS = ["info", "info", "info", "warn", "error", "debug"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _message(rng: random.Random) -> str:
    user = f"{rng.choice(['ann', 'bob', 'eve'])}@{rng.choice(['corp', 'mail'])}.com"
    kind = rng.random()
    if kind < 0.05:
        return f"GET /healthz 200 {rng.randint(1, 9)}ms"
    if kind < 0.1:
        return f"Retrying request to inventory (attempt {rng.randint(1, 5)}/5)"
    if kind < 0.15:
        return f"password reset requested for {user}"
    return (
        f"request completed path=/api/v1/orders/{rng.randint(1000, 99999)} method=POST "
        f"status=201 duration_ms={rng.randint(1, 900)} user=u-{rng.randint(1, 9999)} "
        f"region=eu-west-1 note=lorem ipsum dolor sit amet consectetur adipiscing elit"
    )


def datadog_body(rng: random.Random) -> bytes:
    """One Datadog log record, about 500 bytes."""
    record = {
        "message": _message(rng),
        "status": rng.choice(LEVELS),
        "service": rng.choice(SERVICES),
        "hostname": f"ip-10-0-{rng.randint(0, 9)}-{rng.randint(1, 254)}",
        "ddsource": "python",
        "ddtags": f"env:prod,version:1.{rng.randint(0, 9)}.{rng.randint(0, 9)}",
        "trace": f"{rng.getrandbits(64):016x}",
        "timestamp": 1763726400000 + rng.randint(0, 10**6),
        "logger": {"name": "app.requests", "thread_name": "worker-3"},
    }
    return json.dumps([record]).encode()


def otlp_body(rng: random.Random, size: int = 1 << 20) -> tuple[bytes, int]:
    """An OTLP protobuf ExportLogsServiceRequest of about `size` bytes."""
    request = ExportLogsServiceRequest()
    records = 0
    while request.ByteSize() < size - 2048:
        resource = request.resource_logs.add()
        service = rng.choice(SERVICES)
        kv = resource.resource.attributes.add(key="service.name")
        kv.value.string_value = service
        scope = resource.scope_logs.add()
        scope.scope.name = "app"
        for _ in range(100):
            record = scope.log_records.add()
            record.time_unix_nano = 1763726400000000000 + rng.randint(0, 10**9)
            record.severity_text = rng.choice(LEVELS)
            record.body.string_value = _message(rng) + " " + "x" * rng.randint(300, 500)
            for key, value in (
                ("service", service),
                ("version", f"1.{rng.randint(0, 9)}.0"),
                ("trace", f"{rng.getrandbits(64):016x}"),
                ("env", "prod"),
            ):
                attribute = record.attributes.add(key=key)
                attribute.value.string_value = value
            record.trace_id = rng.getrandbits(128).to_bytes(16, "big")
            record.span_id = rng.getrandbits(64).to_bytes(8, "big")
            records += 1
    return request.SerializeToString(), records


def agent_series_body(rng: random.Random, count: int = 2000) -> tuple[bytes, int]:
    """An Agent flush: a zstd ``MetricPayload`` of `count` series of one point,
    with the tags and resources the Agent attaches."""
    payload = MetricPayload()
    for n in range(count):
        series = payload.series.add(
            metric=f"{rng.choice(METRIC_NAMES)}.{n % 50}",
            type=rng.choice([MetricPayload.GAUGE, MetricPayload.COUNT, MetricPayload.RATE]),
            tags=[
                f"env:{'staging' if rng.random() < 0.1 else 'prod'}",
                f"service:{rng.choice(SERVICES)}",
                f"version:1.{rng.randint(0, 9)}.{rng.randint(0, 9)}",
                f"kube_namespace:{rng.choice(['default', 'payments', 'search'])}",
                f"pod_name:{rng.choice(SERVICES)}-{rng.getrandbits(32):08x}",
            ],
            source_type_name="System",
            interval=10,
        )
        series.resources.add(type="host", name=f"ip-10-0-{rng.randint(0, 9)}-{rng.randint(1, 254)}")
        series.points.add(timestamp=1763726400 + rng.randint(0, 10), value=rng.random() * 100)
        series.metadata.origin.origin_product = 10
    return zstandard.ZstdCompressor(level=3).compress(payload.SerializeToString()), count


def start_nginx(folder: Path, port: int) -> subprocess.Popen[bytes]:
    config = folder / "nginx.conf"
    config.write_text(f"""
worker_processes 1;
pid {folder}/nginx.pid;
error_log {folder}/nginx-error.log warn;
daemon off;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  client_body_buffer_size 4m;
  client_max_body_size 16m;
  keepalive_requests 10000000;
  client_body_temp_path {folder};
  server {{ listen 127.0.0.1:{port}; location / {{ return 202 '{{}}'; }} }}
}}
""")
    process = subprocess.Popen(["nginx", "-c", str(config)])
    _wait_port(port)
    return process


def _wait_port(port: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise SystemExit(f"nothing listening on port {port}")


class EdgeProcess:
    def __init__(
        self,
        folder: Path,
        policies: list[dict[str, Any]],
        upstream: int,
        max_body: int,
        program: Path = EDGE,
    ):
        self.port = _free_port()
        (folder / "policies.json").write_text(json.dumps({"policies": policies}))
        config = {
            "listen_port": self.port,
            "upstream_url": f"http://127.0.0.1:{upstream}",
            "log_level": "warn",
            "max_body_size": max_body,
            "policy_providers": [{"type": "file", "id": "bench", "path": "policies.json"}],
        }
        (folder / "edge.json").write_text(json.dumps(config))
        env = {**os.environ, "SLUICE_CACHE_DIR": str(folder / "cache")}
        self.process = subprocess.Popen([str(program), str(folder / "edge.json")], env=env)
        _wait_port(self.port)
        expected = len(policies)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            health = json.loads(
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/_health", timeout=5).read()
            )
            if sum(health["policies"].values()) >= expected:
                break
            time.sleep(0.1)

    def cpu_seconds(self) -> float:
        """User + system CPU time the Edge process has used so far."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss(self) -> tuple[float, float]:
        """(current, peak) resident set in MiB."""
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        values = {k: int(v.split()[0]) for k, v in re.findall(r"(VmRSS|VmHWM):\s+(.+)", status)}
        return values["VmRSS"] / 1024, values["VmHWM"] / 1024

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=30)


def wrk(
    port: int, path: str, body_file: Path, content_type: str, seconds: int, encoding: str = ""
) -> dict[str, float]:
    """Run wrk; `body_file` holds one body, or (``.jsonl``) one body per line, rotated."""
    script = body_file.with_suffix(".lua")
    script.write_text(
        f'local bodies = {{}}\nlocal f = io.open("{body_file}", "rb")\n'
        + (
            "for line in f:lines() do bodies[#bodies + 1] = line end\n"
            if body_file.suffix == ".jsonl"
            else 'bodies[1] = f:read("*all")\n'
        )
        + "f:close()\nlocal requests, i = {}, 0\n"
        # wrk.format called while the script loads has no Host to add yet,
        # and an HTTP/1.1 request without one is refused (as Go's servers do).
        + f'local headers = {{["Host"] = "127.0.0.1:{port}", ["Content-Type"] = "{content_type}",'
        + ' ["DD-API-KEY"] = "bench"}\n'
        + (f'headers["Content-Encoding"] = "{encoding}"\n' if encoding else "")
        + "for k, body in ipairs(bodies) do\n"
        + f'  requests[k] = wrk.format("POST", "{path}", headers, body)\nend\n'
        + "request = function()\n  i = i % #requests + 1\n  return requests[i]\nend\n"
    )
    out = subprocess.run(
        [
            "wrk",
            "-t2",
            f"-c{CONNECTIONS}",
            f"-d{seconds}s",
            "--latency",
            "-s",
            str(script),
            f"http://127.0.0.1:{port}{path}",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]

    def latency(pct: str) -> float:
        value, unit = re.search(rf"{pct}%\s+([\d.]+)(us|ms|s)", out).groups()  # type: ignore[union-attr]
        return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]

    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {
        "rps": rate,
        "p50": latency("50"),
        "p99": latency("99"),
        "non2xx": float(errors.group(1)) if errors else 0.0,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=10, help="per scenario and round")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved runs per scenario")
    parser.add_argument(
        "--edge",
        action="append",
        metavar="NAME=PATH",
        help="a sluice-edge build to measure (repeatable; default: this .venv's)",
    )
    parser.add_argument(
        "--only",
        default="a,b,d",
        help="scenarios to run, comma-separated (default a,b,d; each with rules and passthrough)",
    )
    args = parser.parse_args()
    only = set(args.only.split(","))
    if not only or not only <= {"a", "b", "d"}:
        raise SystemExit(f"--only: expected some of a, b, d; got {args.only!r}")
    builds = [
        (name, Path(path))
        for name, _, path in (item.partition("=") for item in args.edge or [f"={EDGE}"])
    ]
    for tool in ("wrk", "nginx"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} not found: apt-get install wrk nginx-light")
    rng = random.Random(20251121)
    rules = [{"name": r["id"], **r} for r in RULES + METRIC_RULES]
    runs: dict[str, list[dict[str, float]]] = {}
    labels: dict[str, tuple[str, int]] = {}
    peaks: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="sluice-edge-bench-") as tmp:
        folder = Path(tmp)
        small, (big, big_records) = folder / "small.jsonl", otlp_body(rng)
        bodies = [datadog_body(rng) for _ in range(200)]
        small.write_bytes(b"\n".join(bodies))
        small_size = sum(map(len, bodies)) // len(bodies)
        (folder / "big.pb").write_bytes(big)
        flush, flush_series = agent_series_body(rng)
        (folder / "series.zst").write_bytes(flush)
        upstream_port = _free_port()
        nginx = start_nginx(folder, upstream_port)

        scenarios = {
            "a": ("/api/v2/logs", small, "application/json", ""),
            "b": ("/v1/logs", folder / "big.pb", PROTOBUF, ""),
            "d": ("/api/v2/series", folder / "series.zst", PROTOBUF, "zstd"),
        }
        names = {
            "a": (f"(a) Datadog 1 record, ~{small_size} B", 1),
            "b": (f"(b) OTLP protobuf {len(big) / 2**20:.2f} MiB", big_records),
            "d": (f"(d) Agent series v2 protobuf zstd {len(flush) / 1024:.0f} KiB", flush_series),
        }

        def measure(edge: EdgeProcess, key: str, scenario: str) -> None:
            path, body, kind, encoding = scenarios[scenario]
            before, started = edge.cpu_seconds(), time.monotonic()
            result = wrk(edge.port, path, body, kind, args.seconds, encoding)
            busy = edge.cpu_seconds() - before
            result["cpu_us"] = busy / (result["rps"] * (time.monotonic() - started)) * 1e6
            runs.setdefault(key, []).append(result)

        try:
            for _ in range(args.rounds):
                for build, program in builds:
                    for label, policies in (("rules", rules), ("passthrough", [])):
                        edge = EdgeProcess(folder, policies, upstream_port, 4 << 20, program)
                        tag = f"{build}: {label}" if build else label
                        try:
                            for scenario in sorted(only):
                                name, records = names[scenario]
                                key = f"{name}, {tag}"
                                labels[key] = (tag, records)
                                measure(edge, key, scenario)
                            peaks[tag] = max(peaks.get(tag, 0.0), edge.rss()[1])
                        finally:
                            edge.stop()
            data = make_dataset(20251121, 2)
            thousand = policy_document(
                make_policies(1000, 20251121, DeadVocabulary.build(data.corpus))
            )["policies"]
            edge = EdgeProcess(folder, thousand + rules, upstream_port, 4 << 20, builds[-1][1])
            try:
                idle = edge.rss()[0]
                for scenario in sorted(only):
                    measure(edge, f"1000 ({scenario})", scenario)
                peak_1000 = edge.rss()[1]
            finally:
                edge.stop()
        finally:
            nginx.terminate()
            nginx.wait(timeout=10)
    print(
        f"{args.rounds} rounds of {args.seconds} s; the median round by requests/s, "
        "then the best round's requests/s\n"
    )
    print(
        "| scenario | requests/s | records/s | p50 ms | p99 ms | Edge CPU us/request "
        "| non-2xx | best requests/s | Edge peak RSS MiB |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for key, (label, records) in labels.items():
        ordered = sorted(runs[key], key=lambda r: r["rps"])
        median, best = ordered[len(ordered) // 2], ordered[-1]
        non2xx = sum(r["non2xx"] for r in ordered)
        print(
            f"| {key} | {median['rps']:,.0f} | {median['rps'] * records:,.0f} | "
            f"{median['p50']:.2f} | {median['p99']:.2f} | {median['cpu_us']:,.0f} | "
            f"{non2xx:.0f} | {best['rps']:,.0f} | {peaks[label]:.1f} |"
        )
    loaded = [
        f"({scenario}) {runs[f'1000 ({scenario})'][0]['rps'] * names[scenario][1]:,.0f} "
        f"records/s, p99 {runs[f'1000 ({scenario})'][0]['p99']:.2f} ms"
        for scenario in sorted(only)
    ]
    print(
        f"\n{len(thousand) + len(rules):,} policies loaded (one round): idle RSS {idle:.1f} MiB; "
        + "; ".join(loaded)
        + f"; peak RSS over all {peak_1000:.1f} MiB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
