"""HTTPS and gRPC over TLS against a real ``sluice policy-server --tls-cert/--tls-key``
with a freshly made self-signed certificate."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from sluice.providers.config import ProviderConfig, ProviderType
from sluice.providers.registry import PolicyRegistry
from sluice.providers.remote import RemoteProvider
from tests.conformance.servers import RunningServer, policy_server
from tests.edge.helpers import EdgeProcess
from tests.providers.helpers import drop, self_signed, surviving, write_policies


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[RunningServer, Path]]:
    cert, key = self_signed(tmp_path)
    policies = tmp_path / "policies.json"
    write_policies(policies, drop("drop-x", "x"))
    with policy_server(policies, "--tls-cert", str(cert), "--tls-key", str(key)) as server:
        yield server, cert


def provider(kind: ProviderType, url: str, ca_file: str, tls: bool = False) -> RemoteProvider:
    config = ProviderConfig(
        type=kind,
        id="tls",
        url=url,
        ca_file=ca_file,
        tls=tls,
        timeout_secs=5,
    )
    return RemoteProvider(config, PolicyRegistry())


def test_https_sync_trusting_the_servers_certificate(
    tls_server: tuple[RunningServer, Path],
) -> None:
    server, cert = tls_server
    url = f"https://localhost:{server.http_port}/v1/policy/sync"
    trusting = provider("http", url, str(cert))
    assert trusting.sync(), trusting.last_error
    assert surviving(trusting.registry.snapshot, "x", "y") == ["y"]
    untrusting = provider("http", url, "")
    assert not untrusting.sync()
    assert "CERTIFICATE_VERIFY_FAILED" in untrusting.last_error


def test_grpc_over_tls(tls_server: tuple[RunningServer, Path]) -> None:
    server, cert = tls_server
    trusting = provider("grpc", f"localhost:{server.grpc_port}", str(cert), tls=True)
    assert trusting.sync(), trusting.last_error
    assert surviving(trusting.registry.snapshot, "x", "y") == ["y"]
    for scheme in ("grpcs", "https"):  # https: the form policy-rs takes
        via_scheme = provider("grpc", f"{scheme}://localhost:{server.grpc_port}", str(cert))
        assert via_scheme.sync(), f"{scheme}: {via_scheme.last_error}"
    plaintext = provider("grpc", f"localhost:{server.grpc_port}", "")
    assert not plaintext.sync()
    assert "UNAVAILABLE" in plaintext.last_error


def test_an_edge_config_takes_a_relative_ca_file_from_its_folder(
    tls_server: tuple[RunningServer, Path], tmp_path: Path
) -> None:
    """As a file provider's ``path``: Edge runs from another working directory
    (here the repository's) and still finds the CA next to its config."""
    server, cert = tls_server
    workdir = tmp_path / "edge"
    workdir.mkdir()
    shutil.copy(cert, workdir / "ca.pem")
    url = f"https://localhost:{server.http_port}/v1/policy/sync"
    config = {
        "upstream_url": "http://127.0.0.1:9",
        "policy_providers": [{"type": "http", "id": "tls", "url": url, "ca_file": "ca.pem"}],
    }
    edge = EdgeProcess(workdir, config).wait_ready()  # every provider loaded
    try:
        assert Path.cwd() != workdir
        [loaded] = edge.health()["providers"]
        assert loaded["loaded"] and not loaded.get("error"), loaded
    finally:
        assert edge.terminate() == 0, edge.stderr()
