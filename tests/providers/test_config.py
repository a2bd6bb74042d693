"""Provider configuration: errors name the offending field (unknown keys too),
``${ENV}`` expands as in the collector."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sluice.providers.config import (
    ConfigError,
    ProviderConfig,
    expand_env,
    grpc_target,
    parse_provider,
    parse_providers,
)
from tests.providers.helpers import self_signed

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


@pytest.mark.parametrize(
    ("entry", "key"),
    [
        ({"type": "file", "path": ""}, "path"),
        ({"type": "file", "path": "${SLUICE_TEST_UNSET:-}"}, "path"),
        ({"type": "grpc", "url": ""}, "url"),
        ({"type": "http", "url": ""}, "url"),
    ],
)
def test_an_empty_path_or_url_is_a_missing_one(entry: dict[str, str], key: str) -> None:
    """An empty path would read the working directory, an empty gRPC target
    dial nothing: both fail at every poll instead of at start."""
    assert error_of([entry]) == (
        f"config.json: policy_providers[0]: {key!r} is required for a {entry['type']} provider"
    )


@pytest.mark.parametrize(
    ("kind", "url"),
    [
        ("http", "http://user:secretpw@h/v1/policy/sync"),
        ("http", "https://secretpw@h/v1/policy/sync?k=v"),
        ("grpc", "grpcs://user:secretpw@h:4317"),
    ],
)
def test_credentials_in_a_url_are_refused_without_showing_them(kind: str, url: str) -> None:
    """They would not be sent (headers carry credentials)."""
    message = error_of([{"type": kind, "url": url}])
    assert message.startswith(f"{WHERE}[0].url: credentials in the URL would not be sent: ")
    assert "***@h" in message and "secretpw" not in message


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("http://h:99999/v1/policy/sync", "Port out of range 0-65535"),
        ("http://h:0/v1/policy/sync", "port 0 cannot be connected to (1-65535)"),
        ("http://h:x/v1/policy/sync", "Port could not be cast to integer value as 'x'"),
        ("http://[zzz]/v1/policy/sync", "'zzz' does not appear to be an IPv4 or IPv6 address"),
        ("http://exa mple/v1/policy/sync", "spaces and control characters are not allowed"),
        ("http:///v1/policy/sync", "expected http(s)://host[:port]/path"),
    ],
)
def test_an_http_url_that_cannot_be_used_names_the_field(url: str, problem: str) -> None:
    """These raised ValueError (a traceback) when the transport was made, or
    failed every sync."""
    assert error_of([{"type": "http", "url": url}]) == f"{WHERE}[0].url: {problem}, got {url!r}"


@pytest.mark.parametrize(
    "url",
    [
        "dns:///policies.example.com:4317",
        "unix:///run/policies.sock",
        "ftp://h:4317",
        "grpc://:4317",
    ],
)
def test_a_grpc_url_of_another_scheme_is_refused(url: str) -> None:
    """gRPC took these and failed every sync with its own parsing error."""
    assert error_of([{"type": "grpc", "url": url}]) == (
        f"{WHERE}[0].url: expected host:port, or a grpc://, grpcs://, http:// or https:// "
        f"URL with a host and port, got {url!r}"
    )


@pytest.mark.parametrize(
    "url",
    [
        "http://h:4317/v1/policy/sync",
        "https://h:4317/tero.policy.v1.PolicyService",
        "grpc://h:4317?x=1",
        "h:4317/sync",
    ],
)
def test_a_grpc_url_with_a_path_is_refused(url: str) -> None:
    assert error_of([{"type": "grpc", "url": url}]) == (
        f"{WHERE}[0].url: a gRPC provider's url has no path (the sync call is "
        f"/tero.policy.v1.PolicyService/Sync on the server), got {url.replace('x=1', '***')!r}"
    )


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("h:99999", "Port out of range 0-65535"),
        ("h:0", "port 0 cannot be connected to (1-65535)"),
        ("https://h:0", "port 0 cannot be connected to (1-65535)"),
        ("http://h:x", "Port could not be cast to integer value as 'x'"),
        ("grpc://10.0.0.256:4317", "'10.0.0.256' is not an IP address or a host name"),
    ],
)
def test_a_grpc_url_that_cannot_be_used_names_the_field(url: str, problem: str) -> None:
    assert error_of([{"type": "grpc", "url": url}]) == f"{WHERE}[0].url: {problem}, got {url!r}"


@pytest.mark.parametrize("url", ["grpc://h", "grpcs://h/", "h", "GRPC://[::1]"])
def test_a_grpc_url_without_a_port_is_refused(url: str) -> None:
    """Only http:// and https:// have a default port (80, 443); gRPC took
    these as port 443, which a plaintext server is seldom on."""
    assert error_of([{"type": "grpc", "url": url}]) == (
        f"{WHERE}[0].url: a port is required (only http:// and https:// URLs "
        f"have a default: 80, 443), got {url!r}"
    )


@pytest.mark.parametrize(
    ("url", "target", "tls"),
    [
        ("127.0.0.1:4317", "127.0.0.1:4317", False),
        ("[::1]:4317", "[::1]:4317", False),
        ("grpc://h:4317", "h:4317", False),
        ("grpcs://h:4317/", "h:4317", True),
        ("http://h:4317", "h:4317", False),
        ("HTTPS://h:4317", "h:4317", True),
        ("http://h", "h:80", False),
        ("https://h/", "h:443", True),
        ("https://h:", "h:443", True),
    ],
)
def test_a_grpc_url_is_a_target_and_whether_it_is_tls(url: str, target: str, tls: bool) -> None:
    [config] = parse_providers([{"type": "grpc", "url": url}], WHERE)
    assert config.url == url
    assert grpc_target(url) == (target, tls)


def test_an_http_url_must_be_http() -> None:
    message = error_of([{"type": "http", "url": "ftp://example/sync"}])
    assert message.startswith("config.json: policy_providers[0].url: ")
    assert "ftp://example/sync" in message


@pytest.mark.parametrize(("kind", "written"), [("ftp", "'ftp'"), (3, "3")])
def test_an_unknown_type_names_the_field(kind: Any, written: str) -> None:
    message = error_of([{"type": kind, "path": "p.json", "url": "http://x/"}])
    assert message.startswith("config.json: policy_providers[0].type: unknown provider type")
    assert written in message


def test_a_missing_type_is_required() -> None:
    message = error_of([{"path": "p.json", "url": "http://x/"}])
    assert message == "config.json: policy_providers[0].type: required (file, http or grpc)"


@pytest.mark.parametrize(
    ("interval", "written"),
    [(0, "0"), (-1, "-1"), (0.001, "0.001"), ("5", "'5'"), (True, "true"), (None, "null")],
)
def test_a_bad_poll_interval_names_the_field(interval: Any, written: str) -> None:
    message = error_of([{"type": "file", "path": "p.json", "poll_interval_secs": interval}])
    assert message.startswith("config.json: policy_providers[0].poll_interval_secs: ")
    assert message.endswith(f", got {written}")


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("poll_interval_secs", float("nan"), "a number from 0.01 to 86400"),
        ("poll_interval_secs", float("inf"), "a number from 0.01 to 86400"),
        ("poll_interval_secs", 86_401, "a number from 0.01 to 86400"),
        ("timeout_secs", float("nan"), "a number from 0.01 to 3600"),
        ("timeout_secs", float("inf"), "a number from 0.01 to 3600"),
        ("timeout_secs", float("-inf"), "a number from 0.01 to 3600"),
        ("timeout_secs", 3_601, "a number from 0.01 to 3600"),
        ("max_response_bytes", 1 << 31, "an integer from 1024 to 2147483647"),
        ("max_response_bytes", 10**30, "an integer from 1024 to 2147483647"),
    ],
)
def test_a_number_that_is_not_finite_or_out_of_range_names_the_field(
    key: str, value: float, expected: str
) -> None:
    """NaN would make the poll loop spin, an infinity overflows the clock and
    gRPC's message limit is a C int: all are refused as they load."""
    message = error_of([{"type": "grpc", "url": "h:1", key: value}])
    # The value as the JSON file holds it (NaN, Infinity, 1e+30...).
    assert message == f"{WHERE}[0].{key}: expected {expected}, got {json.dumps(value)}"


def test_the_largest_values_in_range_load() -> None:
    [config] = parse_providers(
        [
            {
                "type": "grpc",
                "url": "h:1",
                "poll_interval_secs": 86_400,
                "timeout_secs": 3_600,
                "max_response_bytes": (1 << 31) - 1,
            }
        ],
        WHERE,
    )
    assert (config.poll_interval_secs, config.timeout_secs) == (86_400.0, 3_600.0)
    assert config.max_response_bytes == (1 << 31) - 1


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


@pytest.mark.parametrize(
    ("limit", "written"),
    [(0, "0"), (1023, "1023"), (1.5e6, "1500000.0"), ("16MiB", "'16MiB'"), (True, "true")],
)
def test_a_bad_max_response_bytes_names_the_field(limit: Any, written: str) -> None:
    message = error_of([{"type": "http", "url": "http://h/", "max_response_bytes": limit}])
    assert message.startswith("config.json: policy_providers[0].max_response_bytes: ")
    assert message.endswith(f", got {written}")


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
        (
            [{"name": "", "value": "v"}],
            "policy_providers[0].headers[0].name: expected a header name",
        ),
        (
            [{"name": "X Token", "value": "v"}],
            "policy_providers[0].headers[0].name: expected a header name",
        ),
        (
            [{"name": "X-Token:", "value": "v"}],
            "policy_providers[0].headers[0].name: expected a header name",
        ),
        (
            [{"name": "X-Token", "value": "a\r\nX-Other: b"}],
            "policy_providers[0].headers[0].value: a header value cannot hold a line break",
        ),
    ],
)
def test_bad_headers_name_the_field(headers: Any, field: str) -> None:
    message = error_of([{"type": "http", "url": "http://h/v1/policy/sync", "headers": headers}])
    assert message.startswith(f"config.json: {field}"), message
    assert "X-Other: b" not in message  # a value may be a secret: never shown


@pytest.mark.parametrize(
    ("header", "problem"),
    [
        (
            {"name": "X!Y", "value": "v"},
            "policy_providers[0].headers[0].name: a gRPC metadata key holds only letters,"
            " digits and -_., got 'X!Y'",
        ),
        (
            {"name": "X-Tenant", "value": "équipe"},
            "policy_providers[0].headers[0].value: a gRPC metadata value is printable ASCII",
        ),
    ],
)
def test_a_grpc_header_must_be_valid_metadata(header: dict[str, str], problem: str) -> None:
    """An HTTP header grpcio cannot send as metadata would fail every sync."""
    message = error_of([{"type": "grpc", "url": "h:1", "headers": [header]}])
    assert message.startswith(f"config.json: {problem}"), message
    assert "équipe" not in message  # a value may be a secret: never shown
    http = [{"type": "http", "url": "http://h/v1/policy/sync", "headers": [header]}]
    assert parse_providers(http, WHERE)[0].headers


def test_a_bin_grpc_header_may_hold_any_text() -> None:
    headers = [{"name": "X-Tenant-Bin", "value": "équipe"}]
    [config] = parse_providers([{"type": "grpc", "url": "h:1", "headers": headers}], WHERE)
    assert config.headers == (("X-Tenant-Bin", "équipe"),)


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
    # As upstream's confmap: an escaped reference stops expanding the rest,
    # and a reference expanded replaces every copy of its text.
    assert expand_env("a $${X} b ${X}") == "a ${X} b ${X}"
    assert expand_env("a ${X} b $${X}") == "a expanded b $expanded"
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
    assert error_of([{"type": "file", "path": "p.json", "zzz": 5}]) == (
        f"{WHERE}[0].zzz: unknown key (valid keys: id, path, poll_interval_secs, type)"
    )
    assert error_of([{"type": "fiel", "path": "p.json", "urll": 5}]) == (
        f"{WHERE}[0].urll: unknown key (did you mean 'url'?)\n"
        f"{WHERE}[0].type: unknown provider type 'fiel' (expected file, http or grpc)"
    )


def test_every_problem_of_every_entry_is_reported() -> None:
    """One line each, as the rest of Edge's config: the first problem alone
    hid the others until it was fixed."""
    raw = [
        {"type": "file", "id": "local", "path": "a.json"},
        {"type": "http", "url": "ftp://h/sync", "poll_interval_secs": 0, "encoding": "xml"},
        {"type": "file", "id": "local", "path": "b.json"},
        {"type": "grpc", "url": "h:0", "timeout_secs": -1, "tls": "yes", "pollinterval": 5},
        {"type": "grpc", "url": "h:1", "headers": [{"name": "a b", "value": "v"}, {"nme": "X"}]},
        {"type": "grpc", "urll": "h:1"},
        {"type": "ftp", "url": "h:1"},
        "file",
    ]
    assert error_of(raw).splitlines() == [
        f"{WHERE}[1].url: expected an http:// or https:// URL, got 'ftp://h/sync'",
        f"{WHERE}[1].poll_interval_secs: expected a number from 0.01 to 86400, got 0",
        f"{WHERE}[1].encoding: expected 'json' or 'protobuf', got 'xml'",
        f"{WHERE}[2].id: duplicate provider id 'local'",
        f"{WHERE}[3].pollinterval: unknown key (did you mean 'poll_interval_secs'?)",
        f"{WHERE}[3].url: port 0 cannot be connected to (1-65535), got 'h:0'",
        f"{WHERE}[3].timeout_secs: expected a number from 0.01 to 3600, got -1",
        f"{WHERE}[3].tls: expected true or false, got 'yes'",
        f"{WHERE}[4].headers[0].name: expected a header name (letters, digits and "
        "!#$%&'*+-.^_`|~), got 'a b'",
        f"{WHERE}[4].headers[1].nme: unknown key (did you mean 'name'?)",
        f"{WHERE}[5].urll: unknown key (did you mean 'url'?)",
        f"{WHERE}[6].type: unknown provider type 'ftp' (expected file, http or grpc)",
        f"{WHERE}[7]: expected an object, got 'file'",
    ]


@pytest.mark.parametrize(
    ("entry", "key", "valid"),
    [
        ({"type": "file", "path": "p.json", "url": "http://h/"}, "url", "id, path"),
        ({"type": "file", "path": "p.json", "headers": []}, "headers", "id, path"),
        ({"type": "file", "path": "p.json", "encoding": "json"}, "encoding", "id, path"),
        ({"type": "file", "path": "p.json", "tls": True}, "tls", "id, path"),
        ({"type": "file", "path": "p.json", "timeout_secs": 5}, "timeout_secs", "id, path"),
        ({"type": "http", "url": "https://h/", "tls": True}, "tls", "ca_file, encoding"),
        ({"type": "http", "url": "https://h/", "path": "p.json"}, "path", "ca_file, encoding"),
        ({"type": "grpc", "url": "h:1", "encoding": "protobuf"}, "encoding", "ca_file, headers"),
    ],
)
def test_a_key_of_another_provider_type_is_an_error(
    entry: dict[str, Any], key: str, valid: str
) -> None:
    """It would be ignored: a file provider with a url reads its path, an
    http provider does not do gRPC's tls."""
    message = error_of([entry])
    assert message.startswith(
        f"{WHERE}[0].{key}: not a key of {entry['type']} providers (valid keys: {valid}"
    ), message


@pytest.mark.parametrize("pid", ["", "  "])
def test_an_empty_id_is_an_error(pid: str) -> None:
    assert error_of([{"type": "file", "id": pid, "path": "p.json"}]) == (
        f"{WHERE}[0].id: expected a non-empty string, got {pid!r}"
    )


def test_a_set_but_empty_variable_is_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVICE_API_KEY", "")
    assert expand_env("Bearer ${SERVICE_API_KEY}", "here") == "Bearer "


# -- ca_file -------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["http", "grpc"])
def test_a_ca_file_that_cannot_be_read_names_the_field(kind: str, tmp_path: Path) -> None:
    url = "https://h/v1/policy/sync" if kind == "http" else "h:1"
    missing = tmp_path / "missing.pem"
    assert error_of([{"type": kind, "url": url, "ca_file": str(missing)}]) == (
        f"{WHERE}[0].ca_file: cannot read {missing}: No such file or directory"
    )
    assert error_of([{"type": kind, "url": url, "ca_file": str(tmp_path)}]) == (
        f"{WHERE}[0].ca_file: cannot read {tmp_path}: Is a directory"
    )


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"not a certificate\n",
        b"\x30\x82\x01\x0a\x02\xff",
        b"-----BEGIN CERTIFICATE-----\nMIIBzzzz\n-----END CERTIFICATE-----\n",
    ],
)
def test_a_ca_file_without_a_pem_certificate_names_the_field(
    content: bytes, tmp_path: Path
) -> None:
    path = tmp_path / "ca.pem"
    path.write_bytes(content)
    raw = [{"type": "http", "url": "https://h/v1/policy/sync", "ca_file": str(path)}]
    assert error_of(raw) == (
        f"{WHERE}[0].ca_file: no certificate found in {path} "
        "(expected PEM: -----BEGIN CERTIFICATE-----)"
    )


def test_a_readable_ca_file_is_kept_and_an_empty_one_means_the_system_roots(
    tmp_path: Path,
) -> None:
    cert, _ = self_signed(tmp_path)
    cert.write_bytes("# Zertifikat für localhost\n".encode() + cert.read_bytes())
    custom, system = parse_providers(
        [
            {"type": "http", "url": "https://h/v1/policy/sync", "ca_file": str(cert)},
            {"type": "http", "url": "https://h/v1/policy/sync", "ca_file": ""},
        ],
        WHERE,
    )
    assert (custom.ca_file, system.ca_file) == (str(cert), "")
