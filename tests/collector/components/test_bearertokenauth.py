"""The ``bearertokenauth`` extension in process: config as upstream's, the
server's answers, the client's header, the token file read again when it
changes (and waited for with ``file_retry``). End to end through a
collector: ``test_auth_e2e.py``."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest

from sluice.collector.component import Host, Kind
from sluice.collector.components.extensions.bearertokenauth import FACTORY
from sluice.collector.components.extensions.bearertokenauth.config import (
    BearerTokenAuthConfig,
    FileRetrySettings,
)
from sluice.collector.components.extensions.bearertokenauth.extension import BearerTokenAuth
from sluice.collector.configauth import AuthenticationError, ClientAuthenticator
from sluice.collector.configauth import ServerAuthenticator as ServerAuth
from sluice.collector.confmap.decode import Duration, Opaque
from tests.collector.helpers import run_cli
from tests.collector.testdata_configs import load_config

TESTDATA = Path(__file__).parent / "testdata" / "bearertokenauth"
LOG = logging.getLogger("test.bearertokenauth")


def load(name: str) -> tuple[BearerTokenAuthConfig, list[str]]:
    return load_config(BearerTokenAuthConfig, TESTDATA / name)


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


# -- config ----------------------------------------------------------------------------------


def test_factory_is_upstreams() -> None:
    assert FACTORY.component_type == "bearertokenauth"
    assert FACTORY.kind is Kind.EXTENSION
    assert FACTORY.stability == {"extension": "beta"}
    assert FACTORY.module.endswith("/extension/bearertokenauthextension")


def test_defaults_and_upstreams_testdata() -> None:
    config, problems = load("config_token.yaml")
    assert problems == []
    assert config == BearerTokenAuthConfig(token=Opaque("sometoken"))
    assert (config.header, config.scheme, config.filename) == ("Authorization", "Bearer", "")
    assert config.file_retry == FileRetrySettings()
    config, problems = load("config_tokens.yaml")
    assert problems == []
    assert config.tokens == ["randomtoken", "thistokenalsoworks"]
    config, problems = load("config_header.yaml")
    assert problems == []
    assert (config.header, config.scheme) == ("X-API-Key", "")
    config, problems = load("config_file_retry.yaml")
    assert problems == []
    assert config.file_retry == FileRetrySettings(True, 10, Duration(2.0))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("config_none.yaml", ["no bearer token provided"]),
        ("config_none_and_more.yaml", ["no bearer token provided"]),
        ("config_token_and_tokens.yaml", ["either tokens or token should be provided, not both"]),
        (
            "config_file_retry_no_file.yaml",
            ["file_retry: file_retry.enabled requires filename to be set"],
        ),
        (
            "config_file_retry_no_interval.yaml",
            [
                "file_retry::retry_interval: file_retry.retry_interval must be greater than 0 "
                "when file_retry.enabled is true"
            ],
        ),
        (
            "config_bad_values.yaml",
            [
                "tokens[1]: 'tokens[1]' expected type 'configopaque.String', got unconvertible type "
                "'map[string]interface {}', value: '[REDACTED]'",
                "header: 'X API Key' is not a valid header name",
                "scheme: must be one word of ASCII text",
                "tokens[0]: a token must be ASCII text, not empty, without control characters",
                "tokens[1]: a token must be ASCII text, not empty, without control characters",
                "tokens[2]: a token must be ASCII text, not empty, without control characters",
            ],
        ),
    ],
)
def test_config_errors_in_upstreams_words(name: str, expected: list[str]) -> None:
    problems = load(name)[1]
    assert problems == expected
    assert "s3cret" not in "\n".join(problems)


def test_tokens_never_show() -> None:
    config, _ = load("config_token_and_tokens.yaml")
    assert (config.token.reveal(), config.tokens[0].reveal()) == (
        "s3cret-never-shown",
        "another-s3cret",
    )
    assert "s3cret" not in repr(config) and "s3cret" not in f"{config.token} {config.tokens}"


# -- server and client -----------------------------------------------------------------------


def refusal(auth: BearerTokenAuth, headers: dict[str, str]) -> str:
    with pytest.raises(AuthenticationError) as refused:
        run(auth.authenticate(headers))
    return str(refused.value)


def test_one_token_both_ways() -> None:
    auth = BearerTokenAuth(BearerTokenAuthConfig(token=Opaque("tok")), LOG)
    assert isinstance(auth, ServerAuth) and isinstance(auth, ClientAuthenticator)
    assert auth.requires_transport_security
    run(auth.start(Host()))
    assert auth.request_headers() == {"Authorization": "Bearer tok"}
    run(auth.authenticate({"authorization": "Bearer tok"}))
    assert refusal(auth, {}) == "missing or empty authorization header: Authorization"
    for wrong in ("Bearer other", "tok", "bearer tok", "Bearer tok ", ""):
        assert refusal(auth, {"authorization": wrong}) == "scheme or token does not match"


def test_several_tokens_a_header_and_no_scheme() -> None:
    config = BearerTokenAuthConfig(
        header="X-API-Key", scheme="", tokens=[Opaque("key-1"), Opaque("key-2")]
    )
    auth = BearerTokenAuth(config, LOG)
    assert auth.request_headers() == {"X-API-Key": "key-1"}  # the first one goes out
    for accepted in ("key-1", "key-2"):
        run(auth.authenticate({"x-api-key": accepted}))
    assert refusal(auth, {"authorization": "key-1"}) == (
        "missing or empty authorization header: X-API-Key"
    )
    assert refusal(auth, {"x-api-key": "Bearer key-1"}) == "scheme or token does not match"


def test_the_token_file_is_read_again_when_it_changes(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("first\n\nsecond\n")
    config = BearerTokenAuthConfig(token=Opaque("ignored"), filename=str(path))

    async def scenario() -> list[Any]:
        auth = BearerTokenAuth(config, LOG)
        await auth.start(Host())
        seen: list[Any] = [dict(auth.request_headers())]
        await auth.authenticate({"authorization": "Bearer second"})
        path.write_text("third")
        for _ in range(100):
            await asyncio.sleep(0.02)
            if auth.request_headers() != seen[0]:
                break
        seen.append(dict(auth.request_headers()))
        await auth.authenticate({"authorization": "Bearer third"})
        try:
            await auth.authenticate({"authorization": "Bearer first"})
        except AuthenticationError as refused:
            seen.append(str(refused))
        path.write_text("\n")  # no token: refused, the last good one stays
        await asyncio.sleep(1.2)
        seen.append(dict(auth.request_headers()))
        await auth.shutdown()
        return seen

    assert run(scenario()) == [
        {"Authorization": "Bearer first"},
        {"Authorization": "Bearer third"},
        "scheme or token does not match",
        {"Authorization": "Bearer third"},
    ]


def test_a_missing_token_file_fails_the_start(tmp_path: Path) -> None:
    auth = BearerTokenAuth(BearerTokenAuthConfig(filename=str(tmp_path / "absent")), LOG)
    with pytest.raises(ValueError) as failed:
        run(auth.start(Host()))
    assert str(failed.value) == (
        f"failed to read credentials file {str(tmp_path / 'absent')!r}: no such file or directory"
    )


def test_file_retry_waits_for_the_file(tmp_path: Path) -> None:
    path = tmp_path / "token"
    retry = FileRetrySettings(True, 20, Duration(0.05))
    auth = BearerTokenAuth(BearerTokenAuthConfig(filename=str(path), file_retry=retry), LOG)

    async def scenario() -> Any:
        starting = asyncio.ensure_future(auth.start(Host()))
        await asyncio.sleep(0.2)
        assert not starting.done()
        path.write_text("late")
        await starting
        headers = dict(auth.request_headers())
        await auth.shutdown()
        return headers

    assert run(scenario()) == {"Authorization": "Bearer late"}


def test_the_upstream_readme_example_validates() -> None:
    done = run_cli("validate", "--config", str(TESTDATA / "config_readme.yaml"))
    assert (done.returncode, done.stdout, done.stderr) == (0, "config is valid\n", "")


def test_validate_never_prints_a_token(tmp_path: Path) -> None:
    config = tmp_path / "collector.yaml"
    config.write_text(
        "extensions:\n"
        "  bearertokenauth:\n"
        '    tokens: [{nested: s3cret-one}, "s3cret-two\\n"]\n'
        "  basicauth:\n"
        "    client_auth: {username: u, password: [s3cret-three]}\n"
        "receivers: {otlp: {protocols: {http:}}}\n"
        "exporters: {debug:}\n"
        "service:\n"
        "  extensions: [bearertokenauth, basicauth]\n"
        "  pipelines: {logs: {receivers: [otlp], exporters: [debug]}}\n"
    )
    done = run_cli("validate", "--config", str(config))
    assert done.returncode == 1
    assert "extensions::bearertokenauth::tokens[0]" in done.stderr
    assert "extensions::basicauth::client_auth::password" in done.stderr
    assert "[REDACTED]" in done.stderr and "s3cret" not in done.stderr + done.stdout
