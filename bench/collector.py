"""Collector benchmark: 1 MiB OTLP protobuf log requests (~1,600 records) into
``sluice-collector`` over HTTP (wrk) and over gRPC (a Python load generator in
its own process), exported with otlphttp to nginx, all on 127.0.0.1.

Pipelines, one collector process each:
  policy:  otlp -> memory_limiter -> policy (1,000 policies + 9 rules) -> batch -> otlphttp
  filter:  otlp -> memory_limiter -> filter (1,000 or 10 IsMatch(body, ...) conditions)
           -> batch -> otlphttp
  none:    otlp -> otlphttp (no processors)
The filter's conditions are the body patterns of the same 1,000 generated
policies (regex, exact, contains, prefix, suffix, caseless; negated matchers
left out), topped up from the next generated set when they hold fewer than
1,000 distinct ones; the 10 are the first ten of them.
Reports records/s, p50/p99 latency, the collector's CPU time per record and
its peak RSS, median of ``--rounds`` interleaved rounds.

Needs Debian's ``wrk`` and ``nginx`` (``apt-get install wrk nginx-light``).
Run from the repository root: ``.venv/bin/python bench/collector.py [--seconds 10]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if not __package__:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import yaml

from bench.edge import PROTOBUF, RULES, _free_port, _wait_port, otlp_body, start_nginx, wrk
from bench.workload import DeadVocabulary, make_dataset, make_policies, policy_document
from sluice.policy.model import MatchOp
from sluice.policy.patterns import PatternSpec

COLLECTOR = Path(sys.executable).parent / "sluice-collector"
MEMORY_LIMIT_MIB = 1024
"""High enough never to refuse here: the peak RSS is the collector's own."""
GRPC_STREAMS = 8
EXPORT = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"


SCENARIOS: dict[str, list[str]] = {
    "policy pipeline": ["memory_limiter", "policy", "batch"],
    "filter, 1,000 conditions": ["memory_limiter", "filter/thousand", "batch"],
    "filter, 10 conditions": ["memory_limiter", "filter/ten", "batch"],
    "no processors": [],
}
_OPS = {
    "regex": MatchOp.REGEX,
    "exact": MatchOp.EXACT,
    "contains": MatchOp.CONTAINS,
    "starts_with": MatchOp.STARTS_WITH,
    "ends_with": MatchOp.ENDS_WITH,
}


def body_conditions(count: int, seed: int, vocabulary: DeadVocabulary) -> list[str]:
    """``IsMatch(body, ...)`` conditions from the body matchers of the
    generated policies (1,000 first, then larger sets), as RE2 patterns."""
    patterns: list[str] = []
    size = 1000
    while len(patterns) < count:
        for draft in make_policies(size, seed, vocabulary):
            for matcher in draft.match:
                op = next((k for k in _OPS if k in matcher), None)
                if matcher.get("log_field") != "body" or matcher.get("negate") or op is None:
                    continue
                spec = PatternSpec(_OPS[op], matcher[op], bool(matcher.get("case_insensitive")))
                pattern = ("(?i)" if spec.case_insensitive else "") + spec.re2_pattern()
                if pattern not in patterns:
                    patterns.append(pattern)
        size *= 2
    quoted = (p.replace("\\", "\\\\").replace('"', '\\"') for p in patterns[:count])
    return [f'IsMatch(body, "{p}")' for p in quoted]


def collector_config(
    folder: Path, chain: list[str], sink: int, conditions: list[str]
) -> tuple[dict[str, Any], int, int]:
    grpc_port, http_port = _free_port(), _free_port()
    config = {
        "receivers": {
            "otlp": {
                "protocols": {
                    "grpc": {"endpoint": f"127.0.0.1:{grpc_port}", "max_recv_msg_size_mib": 16},
                    "http": {"endpoint": f"127.0.0.1:{http_port}"},
                }
            }
        },
        "processors": {
            "memory_limiter": {"check_interval": "1s", "limit_mib": MEMORY_LIMIT_MIB},
            "policy": {
                "providers": [
                    {"type": "file", "id": "bench", "path": str(folder / "policies.json")}
                ]
            },
            "batch": {},
            "filter/thousand": {"logs": {"log_record": conditions}},
            "filter/ten": {"logs": {"log_record": conditions[:10]}},
        },
        "exporters": {"otlphttp": {"endpoint": f"http://127.0.0.1:{sink}"}},
        "service": {
            "telemetry": {"metrics": {"level": "none"}},
            "pipelines": {
                "logs": {"receivers": ["otlp"], "processors": chain, "exporters": ["otlphttp"]}
            },
        },
    }
    return config, grpc_port, http_port


class Collector:
    def __init__(self, folder: Path, chain: list[str], sink: int, conditions: list[str]):
        config, self.grpc_port, self.http_port = collector_config(folder, chain, sink, conditions)
        name = "-".join(chain).replace("/", "_") or "none"
        path = folder / f"{name}.yaml"
        path.write_text(yaml.safe_dump(config))
        env = {**os.environ, "SLUICE_CACHE_DIR": str(folder / "cache")}
        self.log = folder / f"{name}.log"
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [str(COLLECTOR), "--config", str(path)], env=env, stderr=log
            )
        deadline = time.monotonic() + 60
        while "Everything is ready" not in self.log.read_text():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"collector did not start: {self.log.read_text()}")
            time.sleep(0.05)
        _wait_port(self.http_port)
        if "policy" in chain:
            time.sleep(2.0)  # the policy file provider's first load and compile

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def peak_rss(self) -> float:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(re.search(r"VmHWM:\s+(\d+)", status).group(1)) / 1024  # type: ignore[union-attr]

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=60)


def grpc_load(port: int, body_file: Path, seconds: int) -> dict[str, float]:
    """The gRPC load generator, in its own process (this file with --grpc-client)."""
    out = subprocess.run(
        [sys.executable, __file__, "--grpc-client", str(port), str(body_file), str(seconds)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    result: dict[str, float] = json.loads(out)
    return result


def _grpc_client(port: int, body_file: Path, seconds: int) -> None:
    import threading

    import grpc

    body = body_file.read_bytes()
    channel = grpc.insecure_channel(
        f"127.0.0.1:{port}", options=[("grpc.max_send_message_length", 64 << 20)]
    )
    export = channel.unary_unary(
        EXPORT, request_serializer=lambda b: b, response_deserializer=lambda b: b
    )
    latencies: list[float] = []
    failures = [0]
    deadline = time.monotonic() + seconds

    def stream() -> None:
        while time.monotonic() < deadline:
            started = time.monotonic()
            try:
                export(body, timeout=30)
                latencies.append(time.monotonic() - started)
            except grpc.RpcError:
                failures[0] += 1

    started = time.monotonic()
    threads = [threading.Thread(target=stream) for _ in range(GRPC_STREAMS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    latencies.sort()
    print(
        json.dumps(
            {
                "rps": len(latencies) / elapsed,
                "p50": latencies[len(latencies) // 2] * 1000 if latencies else 0.0,
                "p99": latencies[int(len(latencies) * 0.99)] * 1000 if latencies else 0.0,
                "non2xx": float(failures[0]),
            }
        )
    )


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--grpc-client":
        _grpc_client(int(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=10, help="per scenario and round")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved runs per scenario")
    args = parser.parse_args()
    for tool in ("wrk", "nginx"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} not found: apt-get install wrk nginx-light")
    rng = random.Random(20261124)
    body, records = otlp_body(rng)
    data = make_dataset(20251121, 2)
    vocabulary = DeadVocabulary.build(data.corpus)
    thousand = policy_document(make_policies(1000, 20251121, vocabulary))
    conditions = body_conditions(1000, 20251121, vocabulary)
    rules = [{"name": r["id"], **r} for r in RULES]
    runs: dict[str, list[dict[str, float]]] = {}
    peaks: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="sluice-collector-bench-") as tmp:
        folder = Path(tmp)
        (folder / "policies.json").write_text(
            json.dumps({"policies": thousand["policies"] + rules})
        )
        body_file = folder / "big.pb"
        body_file.write_bytes(body)
        sink = _free_port()
        nginx = start_nginx(folder, sink)
        try:
            for _ in range(args.rounds):
                for label, chain in SCENARIOS.items():
                    for transport in ("http", "grpc"):
                        collector = Collector(folder, chain, sink, conditions)
                        key = f"{label}, OTLP/{transport}"
                        try:
                            before, started = collector.cpu_seconds(), time.monotonic()
                            if transport == "http":
                                wrk_body = folder / "big.bin"
                                wrk_body.write_bytes(body)
                                result = wrk(
                                    collector.http_port,
                                    "/v1/logs",
                                    wrk_body,
                                    PROTOBUF,
                                    args.seconds,
                                )
                            else:
                                result = grpc_load(collector.grpc_port, body_file, args.seconds)
                            busy = collector.cpu_seconds() - before
                            elapsed = time.monotonic() - started
                            # wrk counts refused requests too: rates are of accepted ones.
                            result["rps"] -= result["non2xx"] / elapsed
                            result["cpu_us"] = busy / (result["rps"] * elapsed * records) * 1e6
                            runs.setdefault(key, []).append(result)
                            peaks[key] = max(peaks.get(key, 0.0), collector.peak_rss())
                        finally:
                            collector.stop()
        finally:
            nginx.terminate()
            nginx.wait(timeout=10)
    print(
        f"{args.rounds} rounds of {args.seconds} s, 1 MiB requests of {records:,} log records; "
        "the median round by requests/s\n"
    )
    print(
        "| scenario | requests/s | records/s | p50 ms | p99 ms | CPU us/record | failed "
        "| peak RSS MiB |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for key, results in runs.items():
        ordered = sorted(results, key=lambda r: r["rps"])
        median = ordered[len(ordered) // 2]
        failed = sum(r["non2xx"] for r in ordered)
        print(
            f"| {key} | {median['rps']:,.1f} | {median['rps'] * records:,.0f} | "
            f"{median['p50']:.1f} | {median['p99']:.1f} | {median['cpu_us']:.2f} | "
            f"{failed:.0f} | {peaks[key]:.1f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
