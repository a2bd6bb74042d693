"""Provider configuration: errors name the offending field (unknown keys too),
``${ENV}`` expands as in the collector."""

from __future__ import annotations

from typing import Any

import pytest

from sluice.providers.config import (
    ConfigError,
    ProviderConfig,
    expand_env,
    parse_provider,
    parse_providers,
)

WHERE = "config.json: policy_providers"


def error_of(raw: Any) -> str:
    with pytest.raises(ConfigError) as caught:
        parse_providers(raw, WHERE)
    return str(caught.value)


def test_a_file_provider_without_path_names_the_field() -> None:
    assert error_of([{"type": "file", "id": "f"}]) == (
        "config.json: policy_providers[0]: 'path' is required for a file provider"
    )


@pytest.mark.parametrize("kind", ["http", "grpc"])
def test_a_remote_provider_without_url_names_the_field(kind: str) -> None:
    raw = [{"type": "file", "path": "p.json"}, {"type": kind, "id": "r"}]
    assert error_of(raw) == (
        f"config.json: policy_providers[1]: 'url' is required for a {kind} provider"
    )


def test_an_http_url_must_be_http() -> None:
    message = error_of([{"type": "http", "url": "ftp://example/sync"}])
    assert message.startswith("config.json: policy_providers[0].url: ")
    assert "ftp://example/sync" in message


@pytest.mark.parametrize("kind", ["ftp", None, 3])
def test_an_unknown_type_names_the_field(kind: Any) -> None:
    raw: dict[str, Any] = {"path": "p.json", "url": "http://x/"}
    if kind is not None:
        raw["type"] = kind
    message = error_of([raw])
    assert message.startswith("config.json: policy_providers[0].type: unknown provider type")
    assert repr(kind) in message


@pytest.mark.parametrize("interval", [0, -1, 0.001, "5", True, None])
def test_a_bad_poll_interval_names_the_field(interval: Any) -> None:
    message = error_of([{"type": "file", "path": "p.json", "poll_interval_secs": interval}])
    assert message.startswith("config.json: policy_providers[0].poll_interval_secs: ")
    assert repr(interval) in message


def test_a_valid_poll_interval_and_defaults() -> None:
    file, http, grpc = parse_providers(
        [
            {"type": "file", "path": "p.json", "poll_interval_secs": 0.5},
            {"type": "http", "url": "http://127.0.0.1:1/v1/policy/sync"},
            {"type": "grpc", "url": "127.0.0.1:2", "id": "g"},
        ],
        WHERE,
    )
    assert (file.id, file.poll_interval_secs, file.priority) == ("file-0", 0.5, 0)
    assert (http.id, http.poll_interval_secs, http.priority) == ("http-1", 60.0, 1)
    assert (grpc.id, grpc.url, grpc.priority) == ("g", "127.0.0.1:2", 1)


def test_max_response_bytes_defaults_to_16_mib() -> None:
    [default, small] = parse_providers(
        [
            {"type": "http", "url": "http://127.0.0.1:1/v1/policy/sync"},
            {"type": "grpc", "url": "127.0.0.1:2", "max_response_bytes": 65536},
        ],
        WHERE,
    )
    assert (default.max_response_bytes, small.max_response_bytes) == (16 << 20, 65536)


@pytest.mark.parametrize("limit", [0, 1023, 1.5e6, "16MiB", True])
def test_a_bad_max_response_bytes_names_the_field(limit: Any) -> None:
    message = error_of([{"type": "http", "url": "http://h/", "max_response_bytes": limit}])
    assert message.startswith("config.json: policy_providers[0].max_response_bytes: ")
    assert repr(limit) in message


@pytest.mark.parametrize(
    ("headers", "field"),
    [
        ({"Authorization": "Bearer x"}, "policy_providers[0].headers: expected a list"),
        ("Authorization: Bearer x", "policy_providers[0].headers: expected a list"),
        ([{"name": "Authorization"}], "policy_providers[0].headers[0]: expected an object"),
        ([{"value": "v"}], "policy_providers[0].headers[0]: expected an object"),
        (
            [{"name": "A", "value": "1"}, ["B", "2"]],
            "policy_providers[0].headers[1]: expected an object",
        ),
        ([{"name": "A", "value": 7}], "policy_providers[0].headers[0].value: expected a string"),
        ([{"name": None, "value": "v"}], "policy_providers[0].headers[0].name: expected a string"),
    ],
)
def test_bad_headers_name_the_field(headers: Any, field: str) -> None:
    message = error_of([{"type": "http", "url": "http://h/v1/policy/sync", "headers": headers}])
    assert message.startswith(f"config.json: {field}"), message


def test_duplicate_provider_ids_are_rejected() -> None:
    message = error_of(
        [
            {"type": "file", "id": "main", "path": "a.json"},
            {"type": "http", "id": "other", "url": "http://h/"},
            {"type": "grpc", "id": "main", "url": "h:1"},
        ]
    )
    assert message == "config.json: policy_providers[2].id: duplicate provider id 'main'"


def test_an_explicit_id_may_collide_with_a_default_one() -> None:
    message = error_of(
        [{"type": "file", "id": "file-1", "path": "a"}, {"type": "file", "path": "b"}]
    )
    assert message == "config.json: policy_providers[1].id: duplicate provider id 'file-1'"


def test_providers_must_be_a_list_of_objects() -> None:
    assert error_of({"type": "file"}) == f"{WHERE}: expected a list of providers"
    assert error_of(["file"]).startswith(f"{WHERE}[0]: expected an object")
    assert parse_providers(None, WHERE) == []


def test_the_bearer_token_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVICE_API_KEY", "k-123")
    config = parse_provider(
        {
            "type": "http",
            "id": "tero",
            "url": "http://127.0.0.1:9/v1/policy/sync",
            "headers": [{"name": "Authorization", "value": "Bearer ${SERVICE_API_KEY}"}],
        },
        "config.json: policy_providers[0]",
        0,
    )
    assert config == ProviderConfig(
        type="http",
        id="tero",
        url="http://127.0.0.1:9/v1/policy/sync",
        headers=(("Authorization", "Bearer k-123"),),
    )


def test_env_expansion_applies_to_path_and_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POLICY_DIR", "/etc/sluice")
    monkeypatch.setenv("POLICY_HOST", "127.0.0.1:4318")
    file, http = parse_providers(
        [
            {"type": "file", "path": "${POLICY_DIR}/policies.json"},
            {"type": "http", "url": "http://${POLICY_HOST}/v1/policy/sync"},
        ],
        WHERE,
    )
    assert file.path == "/etc/sluice/policies.json"
    assert http.url == "http://127.0.0.1:4318/v1/policy/sync"


def test_double_dollar_is_a_literal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("X", "expanded")
    assert expand_env("$${X}") == "${X}"
    assert expand_env("a $${X} b ${X}") == "a ${X} b expanded"
    assert expand_env("$X and {X} stay") == "$X and {X} stay"


def test_an_unset_variable_is_an_error_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SLUICE_TEST_UNSET_KEY", raising=False)
    with pytest.raises(ConfigError) as caught:
        parse_provider(
            {
                "type": "http",
                "url": "http://h/v1/policy/sync",
                "headers": [{"name": "Authorization", "value": "Bearer ${SLUICE_TEST_UNSET_KEY}"}],
            },
            "cfg: policy_providers[0]",
            0,
        )
    assert str(caught.value) == (
        "cfg: policy_providers[0].headers[0].value: environment variable SLUICE_TEST_UNSET_KEY "
        "is not set (give a default with ${env:SLUICE_TEST_UNSET_KEY:-default})"
    )


def test_defaults_and_the_env_scheme(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SLUICE_TEST_UNSET_KEY", raising=False)
    monkeypatch.setenv("X", "expanded")
    assert expand_env("${env:SLUICE_TEST_UNSET_KEY:-fallback}") == "fallback"
    assert expand_env("${SLUICE_TEST_UNSET_KEY:-fallback}") == "fallback"
    assert expand_env("${env:X}/${X:-unused}") == "expanded/expanded"


def test_an_unknown_key_names_the_nearest_valid_one() -> None:
    assert error_of([{"type": "file", "path": "p.json", "poll_interval": 5}]) == (
        f"{WHERE}[0].poll_interval: unknown key (did you mean 'poll_interval_secs'?)"
    )
    assert error_of([{"type": "file", "path": "p.json", "zzz": 5}]).startswith(
        f"{WHERE}[0].zzz: unknown key (valid keys: ca_file, encoding, headers, "
    )


def test_a_set_but_empty_variable_is_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVICE_API_KEY", "")
    assert expand_env("Bearer ${SERVICE_API_KEY}", "here") == "Bearer "
