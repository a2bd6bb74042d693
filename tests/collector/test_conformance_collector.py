"""Black-box conformance through the collector: every public single-batch,
file-mode testcase gets its own pipeline in ONE collector process (its own
OTLP/HTTP receiver port, its own policy processor on the case's policies, so
rate limiters start fresh, and an otlphttp exporter to the shared sink under
``/<case>``). Each input is POSTed as OTLP JSON; what the sink received is
compared with ``expected.json`` after the harness's normalisation."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.collector.helpers import CollectorProcess, free_ports
from tests.conformance.normalize import normalize
from tests.edge.helpers import Upstream, http_request
from tests.edge.test_conformance_edge import CASES, route


@dataclass
class Outcome:
    status: int
    answer: bytes
    forwarded: list[tuple[str, bytes]]


def _config(upstream: Upstream, ports: dict[str, int]) -> dict[str, Any]:
    receivers, processors, exporters, pipelines = {}, {}, {}, {}
    for i, case in enumerate(CASES):
        name = f"c{i}"
        receivers[f"otlp/{name}"] = {
            "protocols": {"http": {"endpoint": f"127.0.0.1:{ports[case.name]}"}}
        }
        processors[f"policy/{name}"] = {
            "providers": [{"type": "file", "id": name, "path": str(case / "policies.json")}]
        }
        exporters[f"otlphttp/{name}"] = {
            "endpoint": f"{upstream.url}/{case.name}",
            "encoding": "json",
            "compression": "none",
            "sending_queue": {"enabled": False},
            "retry_on_failure": {"enabled": False},
        }
        signal = route(case).rsplit("/", 1)[1]
        pipelines[f"{signal}/{name}"] = {
            "receivers": [f"otlp/{name}"],
            "processors": [f"policy/{name}"],
            "exporters": [f"otlphttp/{name}"],
        }
    return {
        "receivers": receivers,
        "processors": processors,
        "exporters": exporters,
        "service": {"telemetry": {"metrics": {"level": "none"}}, "pipelines": pipelines},
    }


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Outcome]]:
    upstream = Upstream()
    ports = dict(zip((case.name for case in CASES), free_ports(len(CASES)), strict=True))
    collector = CollectorProcess(
        tmp_path_factory.mktemp("conformance-collector"), _config(upstream, ports)
    )
    try:
        collector.wait_ready()

        def run(case: Path) -> tuple[str, Outcome]:
            body = (case / "input.json").read_bytes()
            answer = http_request(
                ports[case.name],
                "POST",
                route(case),
                body,
                {"Content-Type": "application/json"},
                30.0,
            )
            forwarded = [(r.path, r.body) for r in upstream.received(f"/{case.name}/")]
            return case.name, Outcome(answer.status, answer.body, forwarded)

        with ThreadPoolExecutor(4) as pool:
            yield dict(pool.map(run, CASES))
    finally:
        code = collector.terminate()
        upstream.stop()
        assert code == 0, collector.stderr()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_conformance_case_through_the_collector(case: Path, outcomes: dict[str, Outcome]) -> None:
    outcome = outcomes[case.name]
    assert outcome.status == 200, outcome.answer
    expected = normalize(json.loads((case / "expected.json").read_text()))
    if not outcome.forwarded:
        assert expected == {}, "the collector exported nothing but records were expected"
        return
    [(path, body)] = outcome.forwarded
    assert path == f"/{case.name}{route(case)}"
    assert normalize(json.loads(body)) == expected
