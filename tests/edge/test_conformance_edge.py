"""Black-box conformance through Edge: every public single-batch, file-mode
testcase is POSTed as OTLP JSON to a fresh ``sluice-edge`` (one process per
testcase, so rate limiters start fresh) and what the upstream received is
compared with ``expected.json`` after the harness's normalisation.

Edges run a few at a time; one shared upstream tells testcases apart by the
base path each Edge forwards to (``upstream_url`` = upstream + ``/<case>``).
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conformance.harness import TESTCASES
from tests.conformance.normalize import normalize
from tests.edge.helpers import EdgeProcess, Upstream

PATHS = {"logs_": "/v1/logs", "metrics_": "/v1/metrics", "traces_": "/v1/traces"}
CASES = sorted(
    case
    for case in TESTCASES.iterdir()
    if case.is_dir()
    and (case / "input.json").exists()
    and not (case / "input_1.json").exists()
    and not (case / "provider_only").exists()
)
PARALLEL = 4


@dataclass
class Outcome:
    status: int = 0
    answer: bytes = b""
    forwarded: list[tuple[str, bytes]] | None = None
    exit_code: int | None = None
    error: str = ""
    stderr: str = ""


def route(case: Path) -> str:
    return next(path for prefix, path in PATHS.items() if case.name.startswith(prefix))


def run_case(case: Path, root: Path, upstream: Upstream) -> Outcome:
    outcome = Outcome()
    edge: EdgeProcess | None = None
    try:
        config = {
            "upstream_url": f"{upstream.url}/{case.name}",
            "policy_providers": [
                {
                    "type": "file",
                    "id": "case",
                    "path": str(case / "policies.json"),
                    "poll_interval_secs": 60,
                }
            ],
        }
        edge = EdgeProcess(root / case.name, config).wait_ready(loaded=True)
        answer = edge.post(route(case), (case / "input.json").read_bytes(), "application/json")
        outcome.status, outcome.answer = answer.status, answer.body
        outcome.forwarded = [(r.path, r.body) for r in upstream.received(f"/{case.name}/")]
    except Exception:
        outcome.error = traceback.format_exc()
    finally:
        if edge is not None:
            outcome.exit_code = edge.terminate()
            outcome.stderr = edge.stderr()
    return outcome


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Outcome]]:
    upstream = Upstream()
    root = tmp_path_factory.mktemp("conformance-edges")
    try:
        with ThreadPoolExecutor(PARALLEL) as pool:
            results = pool.map(lambda case: (case.name, run_case(case, root, upstream)), CASES)
            yield dict(results)
    finally:
        upstream.stop()


def test_the_single_batch_cases_are_present() -> None:
    assert len(CASES) == 115


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_conformance_case_through_edge(case: Path, outcomes: dict[str, Outcome]) -> None:
    outcome = outcomes[case.name]
    assert not outcome.error, outcome.error + outcome.stderr
    assert outcome.exit_code == 0, outcome.stderr
    assert outcome.status == 200, (outcome.answer, outcome.stderr)
    expected = normalize(json.loads((case / "expected.json").read_text()))
    assert outcome.forwarded is not None
    if not outcome.forwarded:
        # Every record dropped: no upstream call, an empty JSON export answer.
        assert expected == {}, "Edge forwarded nothing but records were expected"
        assert outcome.answer == b"{}"
        return
    [(path, body)] = outcome.forwarded
    assert path == f"/{case.name}{route(case)}"
    actual = normalize(json.loads(body))
    assert actual == expected


PROVIDER_ONLY = sorted(c for c in TESTCASES.iterdir() if (c / "provider_only").exists())


@pytest.mark.parametrize("case", PROVIDER_ONLY, ids=[c.name for c in PROVIDER_ONLY])
def test_provider_only_case_through_edge(case: Path, tmp_path: Path) -> None:
    """Policies from a real policy server through an http provider; after SIGTERM,
    the statuses Edge reported (hits and compile errors) are compared at /stats."""
    from tests.conformance.servers import policy_server
    from tests.conformance.test_provider_mode import normalize_stats

    upstream = Upstream()
    try:
        with policy_server(case / "policies.json") as server:
            config = {
                "upstream_url": upstream.url,
                "policy_providers": [
                    {
                        "type": "http",
                        "id": "control-plane",
                        "url": server.sync_url,
                        "poll_interval_secs": 60,
                    }
                ],
            }
            edge = EdgeProcess(tmp_path / "edge", config).wait_ready(loaded=True)
            answer = edge.post(route(case), (case / "input.json").read_bytes(), "application/json")
            assert edge.terminate() == 0, edge.stderr()  # sends the final status sync
            collected = server.get("/stats")
        assert answer.status == 200, answer.body
        expected = normalize(json.loads((case / "expected.json").read_text()))
        forwarded = upstream.received(route(case))
        actual = normalize(json.loads(forwarded[0].body)) if forwarded else {}
        assert actual == expected
        expected_stats = json.loads((case / "expected_stats.json").read_text())
        assert normalize_stats(collected) == normalize_stats(expected_stats)
    finally:
        upstream.stop()
