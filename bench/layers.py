"""HTTP layer comparison: Edge's own server and upstream client against granian
(Rust, hyper; server) and pyreqwest (Rust, reqwest; client), on scenarios (a)
and (b) of ``bench/edge.py`` (same payloads, rules, wrk load and nginx upstream).

Variants, each serving Edge's request handler (``sluice.edge.routes.Edge``):
  own          ``sluice-edge`` as shipped (httptools server, own pooled client);
  granian      the handler behind granian's embedded server (RSGI, HTTP/1.1,
               asyncio tasks), the own client;
  granian-bp4  the same with ``backpressure=4`` (at most 4 requests in the
               handler), the setting that brings its memory near the sidecar's;
  own-src      the own server and client with ``routes`` run from source;
  pyreqwest    the own server with ``routes`` run from source and its upstream
               pools replaced by pyreqwest clients (the compiled ``Edge`` only
               takes its own pool type, hence the source module for both).

granian and pyreqwest are not Sluice dependencies: ``.venv/bin/pip install
granian==2.8.7 pyreqwest==0.15.1`` first. Run from the repository root:
``.venv/bin/python bench/layers.py [--variants own,granian] [--seconds 8] [--rounds 2]``.
Reports requests/s, Edge's CPU time per request (all its threads and
processes) and its peak RSS; results are in bench/README.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

if not __package__:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.edge import (
    EDGE,
    PROTOBUF,
    RULES,
    _free_port,
    _wait_port,
    datadog_body,
    otlp_body,
    start_nginx,
    wrk,
)

VARIANTS = ("own", "granian", "granian-bp4", "own-src", "pyreqwest")


def _source_routes() -> Any:
    """``sluice.edge.routes`` from its .py file, even where a compiled module
    shadows it (an interpreted Edge accepts any object with ``request``)."""
    path = Path(__file__).resolve().parent.parent / "src/sluice/edge/routes.py"
    spec = importlib.util.spec_from_file_location("sluice.edge.routes", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["sluice.edge.routes"] = module
    spec.loader.exec_module(module)
    return module


class ReqwestPool:
    """The subset of UpstreamPool that routes use, on a pyreqwest client."""

    def __init__(self, base_url: str, timeout: float) -> None:
        self.base = base_url.rstrip("/")
        self.timeout = timeout
        self.client: Any = None

    async def request(self, method: str, path: str, query: str, headers: bytes, body: bytes) -> Any:
        from pyreqwest.client import ClientBuilder

        from sluice.transport.http_client import UpstreamError, UpstreamResponse

        if self.client is None:
            self.client = (
                ClientBuilder().timeout(timedelta(seconds=self.timeout)).pool_max_idle_per_host(64)
            ).build()
        url = self.base + path + ("?" + query if query else "")
        pairs = [line.partition(b": ") for line in headers.split(b"\r\n") if line]
        listed = [(name.decode("latin-1"), value.decode("latin-1")) for name, _, value in pairs]
        try:
            builder = self.client.request(method, url).headers(listed).body_bytes(body)
            response = await builder.build().send()
            data = await response.bytes()
        except Exception as problem:
            raise UpstreamError(str(problem)) from None
        relayed = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in response.headers.items()]
        return UpstreamResponse(response.status, relayed, bytes(data), True)

    def close(self) -> None:
        pass


def serve(variant: str, config_path: str) -> int:
    """Run one variant in this process until SIGTERM."""
    from sluice.edge.config import load_config

    config = load_config(config_path)
    if variant in ("own-src", "pyreqwest"):
        routes = _source_routes()
        if variant == "pyreqwest":
            built = routes.Edge.__init__

            def with_reqwest(edge: Any, config: Any, *args: Any, **kwargs: Any) -> None:
                built(edge, config, *args, **kwargs)
                timeout = config.upstream_timeout_secs
                edge.upstream = ReqwestPool(config.upstream_url, timeout)
                edge.logs_upstream = ReqwestPool(config.datadog_logs_url, timeout)
                edge.metrics_upstream = ReqwestPool(config.datadog_metrics_url, timeout)
                edge.pools = []

            routes.Edge.__init__ = with_reqwest
        from sluice.edge import app

        return app.run(config)
    import uvloop

    uvloop.run(_serve_granian(config, backpressure=4 if variant == "granian-bp4" else None))
    return 0


async def _serve_granian(config: Any, backpressure: int | None) -> None:
    from granian.constants import HTTPModes, Interfaces
    from granian.server.embed import Server

    from sluice.edge.routes import Edge
    from sluice.logs import configure_logging
    from sluice.policy.patterns import DatabaseCache
    from sluice.providers import PolicyRegistry, make_providers
    from sluice.transport.http_message import WRITTEN_BY_EDGE, Request, is_hop_by_hop

    configure_logging(config.log_level)
    registry = PolicyRegistry(cache=DatabaseCache.default())
    providers = make_providers(list(config.policy_providers), registry, config.service)
    for provider in providers:
        provider.start()
    edge = Edge(config, registry, providers)

    class App:
        async def __rsgi__(self, scope: Any, protocol: Any) -> None:
            body = await protocol()
            lowered: dict[bytes, bytes] = {}
            relayed: list[bytes] = []
            for name, value in scope.headers.items():
                raw_name, raw_value = name.encode("latin-1"), value.encode("latin-1")
                lowered.setdefault(raw_name, raw_value)
                if not is_hop_by_hop(raw_name) and raw_name not in WRITTEN_BY_EDGE:
                    relayed += (raw_name, b": ", raw_value, b"\r\n")
            request = Request(
                scope.method, scope.path, scope.query_string, lowered, b"".join(relayed), body
            )
            response = await edge.handle(request)
            headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in response.headers]
            if response.content_type is not None:
                headers.append(("content-type", response.content_type.decode("latin-1")))
            protocol.response_bytes(response.status, headers, response.body)

    extra: dict[str, Any] = {"backpressure": backpressure} if backpressure else {}
    server = Server(
        App(),
        address=config.listen_address,
        port=config.listen_port,
        interface=Interfaces.RSGI,
        http=HTTPModes.http1,
        log_enabled=False,
        **extra,
    )
    await server.serve()


def _process_tree(pid: int) -> list[int]:
    tree, index = [pid], 0
    while index < len(tree):
        children = Path(f"/proc/{tree[index]}/task/{tree[index]}/children")
        if children.exists():
            tree += [int(child) for child in children.read_text().split()]
        index += 1
    return tree


def _cpu_seconds(pid: int) -> float:
    total = 0.0
    for member in _process_tree(pid):
        stat = Path(f"/proc/{member}/stat")
        if stat.exists():
            fields = stat.read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def _peak_rss_mib(pid: int) -> float:
    peak = 0
    for member in _process_tree(pid):
        for line in Path(f"/proc/{member}/status").read_text().splitlines():
            if line.startswith("VmHWM"):
                peak += int(line.split()[1])
    return peak / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--serve", nargs=2, metavar=("VARIANT", "CONFIG"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        return serve(*args.serve)
    variants = args.variants.split(",")
    rng = random.Random(20251121)
    rules = [{"name": r["id"], **r} for r in RULES]
    results: dict[tuple[str, str, str], list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="sluice-layers-") as tmp:
        folder = Path(tmp)
        small = folder / "small.jsonl"
        small.write_bytes(b"\n".join(datadog_body(rng) for _ in range(200)))
        big, records = otlp_body(rng)
        (folder / "big.pb").write_bytes(big)
        upstream = _free_port()
        nginx = start_nginx(folder, upstream)
        try:
            for _ in range(args.rounds):
                for variant in variants:
                    for label, policies in (("rules", rules), ("passthrough", [])):
                        port = _free_port()
                        (folder / "policies.json").write_text(json.dumps({"policies": policies}))
                        config = {
                            "listen_port": port,
                            "upstream_url": f"http://127.0.0.1:{upstream}",
                            "log_level": "warn",
                            "max_body_size": 4 << 20,
                            "policy_providers": [{"type": "file", "path": "policies.json"}],
                        }
                        (folder / "edge.json").write_text(json.dumps(config))
                        command = (
                            [str(EDGE)]
                            if variant == "own"
                            else [sys.executable, __file__, "--serve", variant]
                        )
                        env = {**os.environ, "SLUICE_CACHE_DIR": str(folder / "cache")}
                        edge = subprocess.Popen([*command, str(folder / "edge.json")], env=env)
                        try:
                            _wait_port(port)
                            time.sleep(1.5)  # policies loaded
                            for scenario, path, body, kind in (
                                ("a", "/api/v2/logs", small, "application/json"),
                                ("b", "/v1/logs", folder / "big.pb", PROTOBUF),
                            ):
                                before, started = _cpu_seconds(edge.pid), time.monotonic()
                                result = wrk(port, path, body, kind, args.seconds)
                                busy = _cpu_seconds(edge.pid) - before
                                elapsed = time.monotonic() - started
                                result["cpu_us"] = busy / (result["rps"] * elapsed) * 1e6
                                result["peak"] = _peak_rss_mib(edge.pid)
                                results.setdefault((variant, label, scenario), []).append(result)
                        finally:
                            edge.send_signal(signal.SIGTERM)
                            try:
                                edge.wait(15)
                            except subprocess.TimeoutExpired:
                                edge.kill()
                                edge.wait()
        finally:
            nginx.terminate()
            nginx.wait(timeout=10)
    print(f"{args.rounds} interleaved rounds of {args.seconds} s; medians (records/s for (b))\n")
    print("| variant | scenario | requests/s | Edge CPU us/request | peak RSS MiB | non-2xx |")
    print("|---|---|---:|---:|---:|---:|")
    for (variant, label, scenario), runs in results.items():
        ordered = sorted(runs, key=lambda r: r["rps"])
        median = ordered[len(ordered) // 2]
        rate = median["rps"] * (records if scenario == "b" else 1)
        print(
            f"| {variant} | ({scenario}) {label} | {rate:,.0f} | {median['cpu_us']:,.0f} | "
            f"{max(r['peak'] for r in runs):.0f} | {sum(r['non2xx'] for r in runs):.0f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
