"""Policy loading benchmark: what compiling policy sets costs Edge and ``sluice eval``.

Run from the repository root (``wrk`` and ``nginx`` for the latency section, as
``bench/edge.py``)::

    .venv/bin/python bench/policy_load.py                # every section, ~15 minutes
    .venv/bin/python bench/policy_load.py --only cold,warm --runs 3

Sections:

* ``cold``: a real ``sluice-edge`` started on a policy file with an empty compile
  cache, until ``/_health`` counts every policy: the time, Edge's peak RSS (VmHWM) and
  the peak of Edge's resident memory plus its compiler child's own memory, sampled
  every 5 ms (what a container's memory limit sees).
* ``warm``: the same restart with the cache left by the cold start.
* ``update``: one policy of 10,000 changed, added or removed in the file of a running
  file provider (in this process): the time from the poll to the swap, and to the
  background completion of the databases.
* ``latency``: wrk's scenario (a) of ``bench/edge.py`` against Edge, in 1-second rounds,
  while the 9 rules are replaced by the rules and 10,000 policies Edge has never compiled;
  p50/p99 of the rounds before, during and after the update.
* ``eval``: ``sluice eval`` of 50,000 log records with 10 and with 10,000 policies (cache
  warm), wall time; ``--sluice NAME=PATH`` compares builds.
* ``scan``: the cost of splitting a field into several databases: the body patterns of the
  10,000 realistic policies compiled into 1, 2, 4 and 8 databases, each database's compile
  time and peak memory, and the time to scan a body with all of them.

Policy sets: ``regex-N`` is N policies ``event-<i>-[a-f0-9]+ failed`` on the body (the issue's
reproducer); ``realistic-N`` is the engine benchmark's mix (``workload.py``). Budgets:
``--budget`` sets ``SLUICE_COMPILE_MEMORY_MIB`` for the 10,000-policy sets (default 128,
the issue's ceiling for them); the 1,000-policy sets run with the default (64).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

if not __package__:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import JsonObj
from bench.edge import RULES, _free_port, datadog_body, start_nginx, wrk
from bench.workload import DeadVocabulary, make_dataset, make_policies, policy_document

BIN = Path(sys.executable).parent
SEED = 20251121
ONE_MIB = 1 << 20


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Policy sets


def regex_set(count: int) -> JsonObj:
    return {
        "policies": [
            {
                "id": f"r{i:05d}",
                "name": f"regex {i}",
                "log": {
                    "match": [{"log_field": "body", "regex": f"event-{i}-[a-f0-9]+ failed"}],
                    "keep": "none",
                },
            }
            for i in range(count)
        ]
    }


def realistic_set(count: int, seed: int = SEED) -> JsonObj:
    vocabulary = DeadVocabulary.build(make_dataset(SEED, 2).corpus)
    return policy_document(make_policies(count, seed, vocabulary))


def policy_set(name: str) -> JsonObj:
    kind, _, size = name.partition("-")
    return regex_set(int(size)) if kind == "regex" else realistic_set(int(size))


# ---------------------------------------------------------------------------------------------
# Memory of a process and its children


def _children(pid: int) -> list[int]:
    """Children of every thread of `pid` (a thread's forks are its own)."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(p) for p in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def _private(pid: int) -> int:
    try:
        lines = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
    except OSError:
        return 0
    return sum(int(line.split()[1]) * 1024 for line in lines if line.startswith("Private_"))


def _resident(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


def peak_rss(pid: int) -> float:
    """VmHWM in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


class MemorySampler(threading.Thread):
    """Samples a process's resident size plus its children's own memory."""

    def __init__(self, pid: int, every: float = 0.005) -> None:
        super().__init__(daemon=True)
        self.pid, self.every = pid, every
        self.peak = 0
        self.child_peak = 0
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.is_set():
            children = sum(_private(child) for child in _children(self.pid))
            self.child_peak = max(self.child_peak, children)
            self.peak = max(self.peak, _resident(self.pid) + children)
            time.sleep(self.every)

    def stop(self) -> tuple[float, float]:
        """(peak total MiB, peak of the children's own memory MiB)."""
        self.stopped.set()
        self.join()
        return self.peak / ONE_MIB, self.child_peak / ONE_MIB


# ---------------------------------------------------------------------------------------------
# Edge


class Edge:
    """A sluice-edge on a policy file, with its own cache directory."""

    def __init__(self, folder: Path, upstream: int, budget: int | None, program: Path) -> None:
        self.folder, self.upstream, self.program = folder, upstream, program
        self.port = _free_port()
        self.env = {**os.environ, "SLUICE_CACHE_DIR": str(folder / "cache")}
        if budget is not None:
            self.env["SLUICE_COMPILE_MEMORY_MIB"] = str(budget)
        config = {
            "listen_port": self.port,
            "upstream_url": f"http://127.0.0.1:{upstream}",
            "log_level": "info",
            "max_body_size": 4 << 20,
            "policy_providers": [
                {
                    "type": "file",
                    "id": "bench",
                    "path": str(folder / "policies.json"),
                    "poll_interval_secs": 0.2,
                }
            ],
        }
        (folder / "edge.json").write_text(json.dumps(config))
        self.process: subprocess.Popen[bytes] | None = None

    def write(self, document: JsonObj) -> None:
        staging = self.folder / "policies.json.tmp"
        staging.write_text(json.dumps(document))
        staging.replace(self.folder / "policies.json")

    def start(self) -> float:
        """Start; returns the monotonic start time."""
        started = time.monotonic()
        self.process = subprocess.Popen(
            [str(self.program), str(self.folder / "edge.json")],
            env=self.env,
            stderr=open(self.folder / "edge.log", "ab"),  # noqa: SIM115 - the process owns it
        )
        return started

    def policies(self) -> int:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/_health", timeout=2) as r:
                return int(sum(json.loads(r.read())["policies"].values()))
        except OSError:
            return -1

    def wait_for(self, count: int, timeout: float = 600.0, every: float = 0.01) -> float:
        """Wait until `count` policies are active; returns the monotonic time."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.policies() >= count:
                return time.monotonic()
            time.sleep(every)
        raise SystemExit(f"Edge did not load {count} policies in {timeout:.0f} s")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=30)
            self.process = None


def load_edge(
    folder: Path, document: JsonObj, budget: int | None, program: Path, fresh: bool
) -> dict[str, float]:
    """Start Edge on `document`; measure until every policy is active."""
    if fresh:
        shutil.rmtree(folder / "cache", ignore_errors=True)
    edge = Edge(folder, _free_port(), budget, program)
    edge.write(document)
    started = edge.start()
    assert edge.process is not None
    sampler = MemorySampler(edge.process.pid)
    sampler.start()
    try:
        ready = edge.wait_for(len(document["policies"])) - started
        total, child = sampler.stop()
        result = {
            "ready_s": ready,
            "edge_hwm": peak_rss(edge.process.pid),
            "total": total,
            "child": child,
        }
    finally:
        edge.stop()
    log_text = (folder / "edge.log").read_text()
    (folder / "edge.log").unlink()
    built = [int(n) for n in re.findall(r"into (\d+) database", log_text)]
    result["databases"] = max(built, default=0)
    return result


def section_load(sets: list[tuple[str, int | None]], runs: int, program: Path) -> list[JsonObj]:
    rows = []
    for name, budget in sets:
        document = policy_set(name)
        with tempfile.TemporaryDirectory(prefix="sluice-load-") as tmp:
            folder = Path(tmp)
            cold = [load_edge(folder, document, budget, program, fresh=True) for _ in range(runs)]
            warm = [load_edge(folder, document, budget, program, fresh=False) for _ in range(runs)]
        row = {"set": name, "budget": budget or 64}
        for label, results in (("cold", cold), ("warm", warm)):
            for key in ("ready_s", "edge_hwm", "total", "child", "databases"):
                row[f"{label}_{key}"] = statistics.median(r[key] for r in results)
        log(f"{name}: {row}")
        rows.append(row)
    return rows


# ---------------------------------------------------------------------------------------------
# One-policy updates (in process)


def section_update(runs: int, budget: int) -> JsonObj:
    from sluice.policy.cache import CompileCache
    from sluice.providers.config import ProviderConfig
    from sluice.providers.file import FileProvider
    from sluice.providers.registry import PolicyRegistry

    document = realistic_set(10_000)
    edits: dict[str, Callable[[JsonObj, int], None]] = {
        "change a body regex": lambda d, run: _edit_body(d, "regex", f"x-{run}-[0-9]+ y"),
        "change a body literal": lambda d, run: _edit_body(d, "contains", f"zz{run}"),
        "add a policy": lambda d, run: d["policies"].append(_new_policy(run)),
        "remove a policy": lambda d, run: d["policies"].pop(len(d["policies"]) // 2 + run),
    }
    results: JsonObj = {}
    with tempfile.TemporaryDirectory(prefix="sluice-update-") as tmp:
        path = Path(tmp) / "policies.json"
        path.write_text(json.dumps(document))
        # This process holds the benchmark's data too: give it the headroom
        # Edge has in `budget` (Edge holds ~40 MiB before its policies).
        from sluice.heap import resident_bytes

        cache = CompileCache(Path(tmp) / "cache", budget=resident_bytes() + ((budget - 40) << 20))
        registry = PolicyRegistry(cache=cache)
        provider = FileProvider(ProviderConfig(type="file", id="f", path=str(path)), registry)
        assert provider.poll()
        registry.wait_complete()
        for label, edit in edits.items():
            swaps, completions = [], []
            for run in range(runs):
                changed = json.loads(json.dumps(document))
                edit(changed, run)
                path.write_text(json.dumps(changed))
                started = time.perf_counter()
                assert provider.poll()
                swaps.append(time.perf_counter() - started)
                registry.wait_complete()
                completions.append(time.perf_counter() - started)
                path.write_text(json.dumps(document))  # back, for the next run
                assert provider.poll()
                registry.wait_complete()
            results[label] = {
                "swap_ms": statistics.median(swaps) * 1000,
                "complete_s": statistics.median(completions),
            }
            log(f"update: {label}: {results[label]}")
    return results


def _edit_body(document: JsonObj, op: str, value: str) -> None:
    """Replace the first body condition of the first policy that has one."""
    for policy in document["policies"]:
        matchers = policy["log"]["match"]
        if matchers[0].get("log_field") == "body":
            matchers[0] = {"log_field": "body", op: value}
            return


def _new_policy(run: int) -> JsonObj:
    return {
        "id": f"new-{run}",
        "name": "new",
        "log": {
            "match": [{"log_field": "body", "regex": f"brand-new-{run}-[0-9]+"}],
            "keep": "none",
        },
    }


# ---------------------------------------------------------------------------------------------
# Latency under load while 10,000 new policies are compiled


def section_latency(program: Path, budget: int, rounds_before: int = 3) -> JsonObj:
    """Two cold updates to 10,000 new policies under wrk's scenario (a): the
    first in 1-second rounds (when the latency moves), the second under one
    wrk run as long as the first update took (the p99 of the whole update)."""
    import random

    rules = [{"name": r["id"], **r} for r in RULES]
    with tempfile.TemporaryDirectory(prefix="sluice-latency-") as tmp:
        folder = Path(tmp)
        rng = random.Random(SEED)
        bodies = folder / "small.jsonl"
        lines = [datadog_body(rng) for _ in range(200)]
        bodies.write_bytes(b"\n".join(lines))
        upstream = _free_port()
        nginx = start_nginx(folder, upstream)

        def load(seconds: int, phase: str, port: int) -> JsonObj:
            result = wrk(port, "/api/v2/logs", bodies, "application/json", seconds)
            return {"phase": phase, **result}

        rounds: list[JsonObj] = []
        whole: list[JsonObj] = []

        def before(port: int) -> None:
            rounds.extend(load(1, "before", port) for _ in range(rounds_before))

        def during(port: int, done: threading.Event) -> None:
            while not done.is_set():
                rounds.append(load(1, "during", port))

        def after(port: int) -> None:
            rounds.extend(load(1, "after", port) for _ in range(3))

        def nothing(port: int) -> None:
            return None

        try:
            update_s, first_timed = _update_under_load(
                folder / "rounds",
                upstream,
                budget,
                program,
                rules,
                SEED + 1,
                before,
                during,
                after,
                lines,
            )

            def whole_update(port: int, done: threading.Event) -> None:
                whole.append(load(max(1, round(update_s)), "whole", port))

            second_s, second_timed = _update_under_load(
                folder / "whole",
                upstream,
                budget,
                program,
                rules,
                SEED + 2,
                nothing,
                whole_update,
                nothing,
                lines,
            )
        finally:
            nginx.terminate()
            nginx.wait(timeout=10)
    summary: JsonObj = {
        "update_s": update_s,
        "rounds": rounds,
        "whole": whole[0],
        "second_update_s": second_s,
        "timed": [_timed_summary(first_timed), _timed_summary(second_timed)],
    }
    for phase in ("before", "during", "after"):
        chosen = [r for r in rounds if r["phase"] == phase]
        summary[phase] = {
            "rounds": len(chosen),
            "rps": statistics.median(r["rps"] for r in chosen),
            "p50": statistics.median(r["p50"] for r in chosen),
            "p99_median": statistics.median(r["p99"] for r in chosen),
            "p99_worst": max(r["p99"] for r in chosen),
        }
    log(f"latency: { ({k: v for k, v in summary.items() if k != 'rounds'}) }")
    return summary


class TimedClient:
    """One more client beside wrk: a request every 2 ms on one keep-alive
    connection, each one's latency kept, so that the longest wait shows (wrk
    reports percentiles per run)."""

    def __init__(self, port: int, bodies: list[bytes]) -> None:
        self.port, self.bodies = port, bodies
        self.latencies_ms: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> list[float]:
        self._stop.set()
        self._thread.join()
        return self.latencies_ms

    def _run(self) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        headers = {"Content-Type": "application/json", "DD-API-KEY": "bench"}
        sent = 0
        while not self._stop.is_set():
            body = self.bodies[sent % len(self.bodies)]
            sent += 1
            started = time.perf_counter()
            connection.request("POST", "/api/v2/logs", body, headers)
            connection.getresponse().read()
            self.latencies_ms.append((time.perf_counter() - started) * 1000)
            time.sleep(0.002)
        connection.close()


def _timed_summary(latencies: list[float]) -> JsonObj:
    ordered = sorted(latencies)
    return {
        "requests": len(ordered),
        "p99": ordered[int(len(ordered) * 0.99)] if ordered else 0.0,
        "longest": ordered[-1] if ordered else 0.0,
        "over_25ms": sum(1 for v in ordered if v > 25),
    }


def _update_under_load(
    folder: Path,
    upstream: int,
    budget: int,
    program: Path,
    rules: list[JsonObj],
    seed: int,
    before: Callable[[int], None],
    during: Callable[[int, threading.Event], None],
    after: Callable[[int], None],
    bodies: list[bytes],
) -> tuple[float, list[float]]:
    """Edge with `rules`, updated to rules + 10,000 policies it never saw;
    the callbacks put load on it before, during and after. Returns how long
    the update took to be swapped in, and the latencies a TimedClient saw
    from the update's start to its swap."""
    folder.mkdir()
    big = realistic_set(10_000, seed=seed)
    edge = Edge(folder, upstream, budget, program)
    edge.write({"policies": rules})
    try:
        edge.start()
        edge.wait_for(len(rules))
        before(edge.port)
        timed = TimedClient(edge.port, bodies)
        timed.start()
        edge.write({"policies": rules + big["policies"]})
        started = time.monotonic()
        done = threading.Event()
        swap: list[float] = []

        def watch() -> None:
            swap.append(edge.wait_for(len(rules) + len(big["policies"]), every=0.05))
            done.set()

        threading.Thread(target=watch, daemon=True).start()
        during(edge.port, done)
        done.wait()
        latencies = timed.stop()
        after(edge.port)
        return swap[0] - started, latencies
    finally:
        edge.stop()


# ---------------------------------------------------------------------------------------------
# sluice eval


def section_eval(builds: list[tuple[str, Path]], runs: int) -> JsonObj:
    data = make_dataset(SEED, 50)
    document = {
        "resourceLogs": [rl for i in range(50) for rl in data.json_batch(i)["resourceLogs"]]
    }
    results: JsonObj = {}
    with tempfile.TemporaryDirectory(prefix="sluice-eval-") as tmp:
        folder = Path(tmp)
        (folder / "in.json").write_text(json.dumps(document))
        for size in (10, 10_000):
            (folder / f"p{size}.json").write_text(json.dumps(realistic_set(size)))
        for name, program in builds:
            env = {**os.environ, "SLUICE_CACHE_DIR": str(folder / f"cache-{name}")}
            for size in (10, 10_000):
                command = [
                    str(program),
                    "eval",
                    "--policies",
                    str(folder / f"p{size}.json"),
                    "--input",
                    str(folder / "in.json"),
                    "--output",
                    str(folder / "out.json"),
                ]
                subprocess.run(command, env=env, check=True)  # fills the cache
                times = []
                for _ in range(runs):
                    started = time.perf_counter()
                    subprocess.run(command, env=env, check=True)
                    times.append(time.perf_counter() - started)
                results[f"{name} {size}"] = statistics.median(times)
                log(f"eval {name} {size} policies: {statistics.median(times):.3f} s")
    return results


# ---------------------------------------------------------------------------------------------
# Scan cost of splitting a field


def section_scan() -> list[JsonObj]:
    import hyperscan

    from sluice.policy import compiler_process, load_document
    from sluice.policy.conditions import PatternSpec
    from sluice.policy.databases import sorted_entries
    from sluice.policy.model import Selector, Source

    body = Selector(Source.FIELD, "body")
    entries = []
    for policy in load_document(realistic_set(10_000)).policies:
        for matcher in policy.matchers:
            spec = PatternSpec.of(matcher)
            if matcher.selector == body and spec is not None:
                expression = spec.hyperscan_expression()
                if expression is not None:
                    entries.append((expression, spec.flags))
    ordered = sorted_entries(entries)
    data = make_dataset(SEED, 2)
    bodies = [
        r["body"]["stringValue"].encode()
        for rl in data.json_batch(0)["resourceLogs"]
        for sl in rl["scopeLogs"]
        for r in sl["logRecords"]
    ]
    rows = []
    for parts in (1, 2, 4, 8):
        size = -(-len(ordered) // parts)
        runs = [ordered[i : i + size] for i in range(0, len(ordered), size)]
        started = time.perf_counter()
        peak = 0
        databases = []
        for run in runs:
            plans, used = compiler_process.run_isolated(run, 1 << 40)
            peak = max(peak, used)
            databases.append(hyperscan.loadb(plans[0][1], hyperscan.HS_MODE_BLOCK))
        compile_s = time.perf_counter() - started
        scratches = [hyperscan.Scratch(d) for d in databases]
        hits: list[int] = []

        def on_match(pattern: int, _start: int, _end: int, _flags: int, found: Any) -> None:
            found.append(pattern)

        timings = []
        for _ in range(5):
            started = time.perf_counter()
            for value in bodies:
                for database, scratch in zip(databases, scratches, strict=True):
                    database.scan(value, on_match, 0, hits, scratch)
            timings.append((time.perf_counter() - started) / len(bodies))
        rows.append(
            {
                "databases": parts,
                "patterns": len(ordered),
                "compile_s": compile_s,
                "peak_mib": peak / ONE_MIB,
                "scan_us": min(timings) * 1e6,
            }
        )
        log(f"scan: {rows[-1]}")
    return rows


# ---------------------------------------------------------------------------------------------
# Report


def report(results: JsonObj) -> str:
    out: list[str] = []
    if "load" in results:
        out += [
            "| policy set | budget MiB | cold: ready s | cold: Edge VmHWM MiB | cold: Edge + compiler"
            " MiB | compiler child MiB | body databases | warm restart: ready s"
            " | warm: Edge VmHWM MiB |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in results["load"]:
            out.append(
                f"| {r['set']} | {r['budget']} | {r['cold_ready_s']:.2f} | {r['cold_edge_hwm']:.1f}"
                f" | {r['cold_total']:.1f} | {r['cold_child']:.1f} | {r['cold_databases']:.0f}"
                f" | {r['warm_ready_s']:.3f} | {r['warm_edge_hwm']:.1f} |"
            )
        out.append("")
    if "update" in results:
        out += ["| one policy of 10,000 | swap ms | databases complete s |", "|---|---:|---:|"]
        for label, r in results["update"].items():
            out.append(f"| {label} | {r['swap_ms']:.0f} | {r['complete_s']:.2f} |")
        out.append("")
    if "latency" in results:
        lat = results["latency"]
        whole = lat["whole"]
        out += [
            f"Update to 10,000 new policies under load: swapped after {lat['update_s']:.1f} s"
            f" (second update {lat['second_update_s']:.1f} s). Whole second update under one"
            f" wrk run: {whole['rps']:,.0f} requests/s, p50 {whole['p50']:.2f} ms,"
            f" p99 {whole['p99']:.2f} ms.",
            "",
            "One more client, a request every 2 ms on one connection, from each update's start"
            " to its swap: "
            + "; ".join(
                f"{t['requests']:,} requests, p99 {t['p99']:.1f} ms, longest {t['longest']:.1f} ms,"
                f" {t['over_25ms']} over 25 ms"
                for t in lat["timed"]
            )
            + ".",
            "",
            "| phase | 1-s rounds | requests/s | p50 ms | p99 ms (median round) |"
            " p99 ms (worst round) |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for phase in ("before", "during", "after"):
            r = lat[phase]
            out.append(
                f"| {phase} | {r['rounds']} | {r['rps']:,.0f} | {r['p50']:.2f} |"
                f" {r['p99_median']:.2f} | {r['p99_worst']:.2f} |"
            )
        out.append("")
    if "eval" in results:
        out += ["| sluice eval, 50,000 records | seconds |", "|---|---:|"]
        out += [f"| {k} policies | {v:.3f} |" for k, v in results["eval"].items()]
        out.append("")
    if "scan" in results:
        out += [
            "| body databases | patterns | compile s (all) | compiler peak MiB (largest) |"
            " scan us per body |",
            "|---:|---:|---:|---:|---:|",
        ]
        for r in results["scan"]:
            out.append(
                f"| {r['databases']} | {r['patterns']:,} | {r['compile_s']:.2f} |"
                f" {r['peak_mib']:.1f} | {r['scan_us']:.2f} |"
            )
    return "\n".join(out)


SECTIONS = ("cold", "warm", "update", "latency", "eval", "scan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=",".join(SECTIONS), help="comma-separated sections")
    parser.add_argument("--runs", type=int, default=3, help="repetitions (medians reported)")
    parser.add_argument("--budget", type=int, default=128, help="MiB for the 10,000-policy sets")
    parser.add_argument("--edge", type=Path, default=BIN / "sluice-edge")
    parser.add_argument(
        "--sluice",
        action="append",
        metavar="NAME=PATH",
        help="sluice builds for the eval section (default: this .venv's)",
    )
    parser.add_argument("--json", type=Path, help="also write the raw results here")
    args = parser.parse_args(argv)
    only = set(args.only.split(","))
    results: JsonObj = {}
    if only & {"cold", "warm"}:
        sets: list[tuple[str, int | None]] = [
            ("regex-1000", None),
            ("realistic-1000", None),
            ("realistic-10000", args.budget),
            ("regex-10000", args.budget),
        ]
        results["load"] = section_load(sets, args.runs, args.edge)
    if "update" in only:
        results["update"] = section_update(args.runs, args.budget)
    if "latency" in only:
        results["latency"] = section_latency(args.edge, args.budget)
    if "eval" in only:
        builds = [
            (name, Path(path))
            for name, _, path in (
                s.partition("=") for s in args.sluice or [f"now={BIN / 'sluice'}"]
            )
        ]
        results["eval"] = section_eval(builds, args.runs)
    if "scan" in only:
        results["scan"] = section_scan()
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    print(report(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
