"""The ``basicauth`` extension in process: config as upstream's, every htpasswd
hash upstream's library reads, the server's answers and its memory of
verified credentials, the client's header and its credential files. End to
end through a collector: ``test_auth_e2e.py``."""

from __future__ import annotations

import asyncio
import base64
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import bcrypt
import pytest

from sluice.collector.component import ComponentID, Host, Kind, Settings
from sluice.collector.components.extensions.basicauth import FACTORY, htpasswd
from sluice.collector.components.extensions.basicauth.client import BasicAuthClient
from sluice.collector.components.extensions.basicauth.config import (
    BasicAuthConfig,
    ClientAuthSettings,
    HtpasswdSettings,
)
from sluice.collector.components.extensions.basicauth.server import BasicAuthServer
from sluice.collector.configauth import AuthConfig, AuthenticationError, ClientAuthenticator
from sluice.collector.configauth import ServerAuthenticator as ServerAuth
from sluice.collector.confmap.decode import Opaque
from sluice.collector.telemetry import ServiceTelemetry
from tests.collector.helpers import CollectorProcess, free_ports, run_cli
from tests.collector.testdata_configs import load_config

TESTDATA = Path(__file__).parent / "testdata" / "basicauth"
LOG = logging.getLogger("test.basicauth")


def load(name: str) -> tuple[BasicAuthConfig, list[str]]:
    return load_config(BasicAuthConfig, TESTDATA / name)


def basic(username: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()


# -- config ----------------------------------------------------------------------------------


def test_factory_is_upstreams() -> None:
    assert FACTORY.component_type == "basicauth"
    assert FACTORY.kind is Kind.EXTENSION
    assert FACTORY.stability == {"extension": "beta"}
    assert FACTORY.module.endswith("/extension/basicauthextension")


def test_server_and_client_sections_decode() -> None:
    server, problems = load("config_server.yaml")
    assert problems == []
    assert server.htpasswd == HtpasswdSettings(inline="username1:password1\nusername2:password2\n")
    assert server.client_auth is None
    client, problems = load("config_client.yaml")
    assert problems == []
    assert client.client_auth == ClientAuthSettings(
        username="username", password=Opaque("password")
    )
    files, problems = load("config_client_files.yaml")
    assert problems == []
    assert files.client_auth is not None
    assert files.client_auth.password_file == "/etc/secrets/password"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("config_both.yaml", ["only one of `htpasswd` or `client_auth` can be specified"]),
        ("config_none.yaml", ["no credential source provided"]),
        (
            "config_aws.yaml",
            [
                "client_auth::aws_secrets_manager: not supported by Sluice; use username_file "
                "and password_file (re-read when they change)"
            ],
        ),
        (
            "config_aws_combined.yaml",
            [
                "client_auth: aws_secrets_manager cannot be combined with username, "
                "username_file, password, or password_file",
                "client_auth::aws_secrets_manager: not supported by Sluice; use username_file "
                "and password_file (re-read when they change)",
            ],
        ),
        (
            "config_bad_values.yaml",
            [
                "client_auth::password: 'client_auth.password' expected type "
                "'configopaque.String', got unconvertible type "
                "'[]interface {}', value: '[REDACTED]'",
            ],
        ),
    ],
)
def test_config_errors_in_upstreams_words(name: str, expected: list[str]) -> None:
    assert load(name)[1] == expected


def test_a_null_section_is_no_section() -> None:
    # upstream's sections are nil pointers by default and mapstructure leaves
    # a field as it is for a null: `htpasswd:` alone is no credential source
    # (an empty `htpasswd: {}` is one)
    config, problems = load("config_htpasswd_null.yaml")
    assert (config.htpasswd, problems) == (None, ["no credential source provided"])
    config, problems = load("config_client_htpasswd_null.yaml")
    assert problems == []
    assert config.htpasswd is None
    assert config.client_auth == ClientAuthSettings(
        username="username", password=Opaque("password")
    )


def test_an_empty_htpasswd_is_valid_but_cannot_be_made() -> None:
    # upstream's Validate takes any `htpasswd` section; the extension's
    # constructor refuses one with neither `file` nor `inline`
    config, problems = load("config_htpasswd_empty.yaml")
    assert problems == []
    assert config.htpasswd == HtpasswdSettings()
    settings = Settings(ComponentID("basicauth"), Kind.EXTENSION, ServiceTelemetry())
    with pytest.raises(ValueError, match=r"^no credential source provided$"):
        FACTORY.create(settings, config)


def test_an_empty_htpasswd_fails_only_a_collector_that_runs_it(tmp_path: Path) -> None:
    unused = (
        "extensions:\n  basicauth:\n    htpasswd: {}\n"
        "receivers:\n  otlp:\n    protocols:\n      http:\n"
        f"        endpoint: 127.0.0.1:{free_ports(1)[0]}\n"
        "exporters:\n  debug:\n"
        "service:\n  telemetry:\n    metrics:\n      level: none\n"
        "  pipelines:\n    logs:\n      receivers: [otlp]\n      exporters: [debug]\n"
    )
    path = tmp_path / "config.yaml"
    path.write_text(unused)
    done = run_cli("validate", "--config", str(path))
    assert (done.returncode, done.stdout) == (0, "config is valid\n"), done.stderr
    collector = CollectorProcess(tmp_path, unused).wait_ready()
    assert collector.terminate() == 0
    path.write_text(unused.replace("service:\n", "service:\n  extensions: [basicauth]\n"))
    failed = run_cli("--config", str(path))
    assert failed.returncode == 1
    # logged as a logfmt value: its quotes escaped
    assert (
        'failed to build extensions: failed to create extension \\"basicauth\\": '
        "no credential source provided"
    ) in failed.stderr


def test_the_password_never_shows() -> None:
    config, _ = load("config_aws_combined.yaml")
    assert config.client_auth is not None
    assert config.client_auth.password.reveal() == "s3cret-never-shown"
    for shown in (repr(config), str(config), f"{config.client_auth.password}"):
        assert "s3cret" not in shown and "[REDACTED]" in shown


def test_the_factory_makes_the_side_the_config_asks_for() -> None:
    telemetry = ServiceTelemetry()
    settings = Settings(ComponentID("basicauth"), Kind.EXTENSION, telemetry)
    server = FACTORY.create(settings, load("config_server.yaml")[0])
    client = FACTORY.create(settings, load("config_client.yaml")[0])
    assert isinstance(server, ServerAuth) and not isinstance(server, ClientAuthenticator)
    assert isinstance(client, ClientAuthenticator) and not isinstance(client, ServerAuth)


# -- htpasswd entries ------------------------------------------------------------------------

ENTRIES = {
    # Made with `openssl passwd` (-apr1, -1, -5, -6), and Drepper's SHA-crypt test vectors.
    "apr1": ("$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/", "secret"),
    "md5crypt": ("$1$abc$iCQ2D3nhptRYi27fDYv2s1", "secret"),
    "sha1": ("{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ=", "secret"),
    "ssha": ("{SSHA}gVK8WC9YyFT1gMsQHTGCgT3sSv5zYWx0", "secret"),
    "sha256crypt": ("$5$saltsalt$0IyaXrmV7.sGNS6tirgqHLqX/G.FBvgkYA.lpPdS5sA", "secret"),
    "sha512crypt": (
        "$6$saltsaltsaltsalt$ph0yGsyjzqdeFaon7.gJZo8eAG5/rj9/JdzOu1Rl7dKzBYg3xgvl7T2VQ2Rt81bc"
        "5AXkdA54r0p8QvC1omD6R1",
        "secret",
    ),
    "sha256crypt-rounds": (
        "$5$rounds=10000$saltstringsaltst$3xv.VbSHBb41AL9AvLeujZkZRBAwqFMz2.opqey6IcA",
        "Hello world!",
    ),
    "sha512crypt-rounds": (
        "$6$rounds=10000$saltstringsaltst$OW1/O6BYHV6BcXZu8QVeXbDWra3Oeqh0sbHbbMCVNSnCM/Urjm"
        "M0Dp8vOuZeHBy/YTBmSK6H9qs/y3RnOaw5v.",
        "Hello world!",
    ),
    "plain": ("secret", "secret"),
    "plain-nginx": ("{PLAIN}secret", "secret"),
}


def bcrypt_entry(prefix: str, password: str) -> str:
    hashed = bcrypt.hashpw(password.encode(), bcrypt.gensalt(4)).decode()
    return prefix + hashed[4:]


@pytest.mark.parametrize("kind", sorted(ENTRIES))
def test_every_hash_upstreams_library_reads(kind: str) -> None:
    encoded, password = ENTRIES[kind]
    entry = htpasswd.parse_entry(encoded)
    assert entry.matches(password.encode())
    assert not entry.matches(password.encode() + b"x")
    assert not entry.matches(b"")


@pytest.mark.parametrize("prefix", ["$2y$", "$2a$", "$2b$", "$2x$"])
def test_bcrypt_under_each_prefix(prefix: str) -> None:
    entry = htpasswd.parse_entry(bcrypt_entry(prefix, "wonderland"))
    assert isinstance(entry, htpasswd.Bcrypt) and entry.slow
    assert entry.matches(b"wonderland") and not entry.matches(b"Wonderland")
    assert not entry.matches(b"x" * 100)  # past bcrypt's 72 bytes: no match, no error


def test_bcrypt_reads_only_the_first_72_bytes_of_a_password() -> None:
    # Go's bcrypt (golang.org/x/crypto) compares a longer password by its
    # first 72 bytes, as the Blowfish key schedule reads no more: so does
    # upstream's htpasswd library, and a longer password is not refused.
    stored = bcrypt.hashpw(b"k" * 72, bcrypt.gensalt(4)).decode()
    entry = htpasswd.parse_entry(stored)
    assert entry.matches(b"k" * 72)
    assert entry.matches(b"k" * 72 + b"anything after")
    assert not entry.matches(b"k" * 71)


def test_bad_lines_are_reported_without_their_text_and_skipped() -> None:
    table: dict[str, htpasswd.Entry] = {}
    text = "\n".join(
        [
            "alice:secret",
            "",
            "no colon here",
            "bob:{SHA}not-base64!",
            "carol:$apr1$saltonly",
            "dave:$6$rounds=x$salt$hash",
            "  erin:{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ=  ",
            "alice:replaced",
        ]
    )
    bad = [str(b) for b in htpasswd.parse_lines(text, "users.htpasswd", table)]
    assert bad == [
        "users.htpasswd line 3: malformed line, no colon; entry skipped",
        "users.htpasswd line 4: malformed sha1: not base64; entry skipped",
        "users.htpasswd line 5: malformed md5 password; entry skipped",
        "users.htpasswd line 6: malformed crypt-SHA password: rounds; entry skipped",
    ]
    assert sorted(table) == ["alice", "erin"]
    assert table["alice"].matches(b"replaced") and not table["alice"].matches(b"secret")
    assert table["erin"].matches(b"secret")


# -- the server ------------------------------------------------------------------------------


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def started_server(tmp_path: Path, file_lines: list[str], inline: str = "") -> BasicAuthServer:
    path = tmp_path / ".htpasswd"
    path.write_text("\n".join(file_lines) + "\n")
    server = BasicAuthServer(HtpasswdSettings(file=str(path), inline=inline), LOG)
    run(server.start(Host()))
    return server


def refusal(server: BasicAuthServer, headers: dict[str, str]) -> str:
    with pytest.raises(AuthenticationError) as refused:
        run(server.authenticate(headers))
    return str(refused.value)


def test_the_servers_answers(tmp_path: Path) -> None:
    server = started_server(tmp_path, ["alice:wonderland"], inline="bob:builder\n")
    run(server.authenticate({"authorization": basic("alice", "wonderland")}))
    run(server.authenticate({"authorization": basic("bob", "builder")}))
    run(server.authenticate({"authorization": "bAsIc " + basic("bob", "builder")[6:]}))
    assert refusal(server, {}) == "no basic auth provided"
    assert refusal(server, {"authorization": ""}) == "no basic auth provided"
    assert refusal(server, {"authorization": "Bearer x"}) == "invalid authorization scheme prefix"
    assert refusal(server, {"authorization": "Basic %%%"}) == "invalid authorization format"
    no_colon = "Basic " + base64.b64encode(b"alice").decode()
    assert refusal(server, {"authorization": no_colon}) == "invalid authorization format"
    assert refusal(server, {"authorization": basic("alice", "wrong")}) == "invalid credentials"
    assert refusal(server, {"authorization": basic("mallory", "x")}) == "invalid credentials"


def test_credentials_are_base64_as_gos_standard_encoding_reads_it(tmp_path: Path) -> None:
    # Go's base64.StdEncoding takes whole 4-character groups, padding only
    # in the last one: '=' past that is not base64, however the rest reads.
    server = started_server(tmp_path, ["user:pass"])
    valid = base64.b64encode(b"user:pass").decode()
    assert not valid.endswith("=")
    run(server.authenticate({"authorization": "Basic " + valid}))
    for extra in ("=", "==", "===", "===="):
        header = {"authorization": "Basic " + valid + extra}
        assert refusal(server, header) == "invalid authorization format"
    padded = base64.b64encode(b"user:pass!").decode()
    assert padded.endswith("==")
    server = started_server(tmp_path, ["user:pass!"])
    run(server.authenticate({"authorization": "Basic " + padded}))
    assert refusal(server, {"authorization": "Basic " + padded + "="}) == (
        "invalid authorization format"
    )


def test_sha_entries_are_base64_as_gos_standard_encoding_reads_it() -> None:
    encoded, password = ENTRIES["sha1"]
    with pytest.raises(ValueError, match="malformed sha1: not base64"):
        htpasswd.parse_entry(encoded + "=")
    with pytest.raises(ValueError, match="malformed ssha: not base64"):
        htpasswd.parse_entry(ENTRIES["ssha"][0] + "====")
    # Go's decoder skips line breaks inside the text.
    assert htpasswd.parse_entry(encoded[:9] + "\r" + encoded[9:]).matches(password.encode())


def test_inline_entries_win_over_the_files(tmp_path: Path) -> None:
    server = started_server(tmp_path, ["alice:from-file", "bob:from-file"], "alice:inline\n")
    run(server.authenticate({"authorization": basic("alice", "inline")}))
    run(server.authenticate({"authorization": basic("bob", "from-file")}))
    assert refusal(server, {"authorization": basic("alice", "from-file")}) == "invalid credentials"


def test_a_missing_file_fails_the_start(tmp_path: Path) -> None:
    server = BasicAuthServer(HtpasswdSettings(file=str(tmp_path / "absent")), LOG)
    with pytest.raises(ValueError) as failed:
        run(server.start(Host()))
    assert str(failed.value) == (
        f"open htpasswd file: open {tmp_path / 'absent'}: no such file or directory"
    )


@pytest.mark.parametrize("where", ["file", "inline"])
def test_a_line_past_the_scanners_64_kib_fails_the_start(tmp_path: Path, where: str) -> None:
    # go-htpasswd reads the lines with a bufio.Scanner, whose longest line
    # is 64 KiB less its newline: a longer one fails the read, so the start.
    longest = "alice:" + "p" * (65535 - len("alice:"))
    path = tmp_path / ".htpasswd"
    path.write_text(longest + "\n")
    server = BasicAuthServer(HtpasswdSettings(file=str(path), inline="bob:x\n"), LOG)
    run(server.start(Host()))
    run(server.authenticate({"authorization": basic("alice", longest[len("alice:") :])}))
    too_long = longest + "p"
    if where == "file":
        path.write_text("bob:x\n" + too_long)
        settings = HtpasswdSettings(file=str(path))
    else:
        settings = HtpasswdSettings(inline="bob:x\n" + too_long + "\n")
    with pytest.raises(ValueError) as failed:
        run(BasicAuthServer(settings, LOG).start(Host()))
    assert str(failed.value) == (
        "read htpasswd content: Error scanning htpasswd file: bufio.Scanner: token too long"
    )
    # Bytes count, not characters.
    wide = HtpasswdSettings(inline="u:" + "\u03c0" * 32767)
    with pytest.raises(ValueError, match="token too long"):
        run(BasicAuthServer(wide, LOG).start(Host()))


def test_a_directory_opens_but_does_not_read(tmp_path: Path) -> None:
    # Go's os.Open opens a directory; reading it is what fails, in the
    # htpasswd library's scanner.
    server = BasicAuthServer(HtpasswdSettings(file=str(tmp_path)), LOG)
    with pytest.raises(ValueError) as failed:
        run(server.start(Host()))
    assert str(failed.value) == (
        f"read htpasswd content: Error scanning htpasswd file: read {tmp_path}: is a directory"
    )


def test_bad_lines_are_logged_by_number(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        started_server(tmp_path, ["alice:{SHA}s3cret-hash-text"], inline="no colon s3cret\n")
    assert [r.getMessage() for r in caplog.records] == [
        f"htpasswd {tmp_path / '.htpasswd'} line 1: malformed sha1: not base64; entry skipped",
        "htpasswd.inline line 1: malformed line, no colon; entry skipped",
    ]
    assert "s3cret" not in caplog.text


@pytest.fixture
def bcrypt_calls(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every password bcrypt checks, in order (bcrypt itself still runs)."""
    calls: list[bytes] = []
    checkpw = bcrypt.checkpw

    def counting(password: bytes, hashed: bytes) -> bool:
        calls.append(password)
        time.sleep(0.05)  # as a real cost would: concurrent requests overlap
        return checkpw(password, hashed)

    monkeypatch.setattr(htpasswd.bcrypt, "checkpw", counting)
    return calls


def test_bcrypt_runs_once_per_distinct_credential(
    tmp_path: Path, bcrypt_calls: list[bytes]
) -> None:
    server = started_server(tmp_path, [f"alice:{bcrypt_entry('$2y$', 'wonderland')}"])
    right = {"authorization": basic("alice", "wonderland")}

    async def burst(headers: dict[str, str], count: int) -> list[BaseException | None]:
        results = await asyncio.gather(
            *(server.authenticate(headers) for _ in range(count)), return_exceptions=True
        )
        return [r if isinstance(r, BaseException) else None for r in results]

    assert run(burst(right, 20)) == [None] * 20
    assert bcrypt_calls == [b"wonderland"]  # 20 requests at once: one check
    assert run(burst(right, 5)) == [None] * 5
    assert bcrypt_calls == [b"wonderland"]  # remembered
    wrong = run(burst({"authorization": basic("alice", "guess")}, 1))
    wrong += run(burst({"authorization": basic("alice", "guess")}, 1))
    assert [str(w) for w in wrong] == ["invalid credentials"] * 2
    assert bcrypt_calls == [b"wonderland", b"guess", b"guess"]  # a failure is never remembered


def test_remembered_credentials_are_bounded(tmp_path: Path, bcrypt_calls: list[bytes]) -> None:
    lines = [f"user{i}:{bcrypt_entry('$2b$', f'pw{i}')}" for i in range(3)]
    path = tmp_path / ".htpasswd"
    path.write_text("\n".join(lines))
    server = BasicAuthServer(HtpasswdSettings(file=str(path)), LOG, remembered=2)
    run(server.start(Host()))
    for i in (0, 1, 2, 2, 1, 0):
        run(server.authenticate({"authorization": basic(f"user{i}", f"pw{i}")}))
    # user0 was the least recently used when user2 came in; it was checked again.
    assert bcrypt_calls == [b"pw0", b"pw1", b"pw2", b"pw0"]


def test_a_slow_check_does_not_hold_the_event_loop(
    tmp_path: Path, bcrypt_calls: list[bytes]
) -> None:
    server = started_server(tmp_path, [f"alice:{bcrypt_entry('$2y$', 'wonderland')}"])

    async def ticks_during_check() -> int:
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.005)
                ticks += 1

        ticker = asyncio.ensure_future(tick())
        await server.authenticate({"authorization": basic("alice", "wonderland")})
        ticker.cancel()
        return ticks

    assert run(ticks_during_check()) >= 3  # the loop ran while bcrypt (50 ms here) worked


# -- the client ------------------------------------------------------------------------------


def poll_until(check: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.02)


def test_the_client_header() -> None:
    client = BasicAuthClient(ClientAuthSettings(username="user", password=Opaque("p:ss")), LOG)
    run(client.start(Host()))
    assert client.request_headers() == {"Authorization": basic("user", "p:ss")}
    assert client.requires_transport_security


def test_a_username_with_a_colon_fails_the_exporters_start_not_the_config() -> None:
    # Upstream's Config.Validate and Start accept it; RoundTripper() and
    # PerRPCCredentials(), asked for when an exporter starts, refuse it.
    config, problems = load("config_bad_values.yaml")
    assert not any("username" in problem for problem in problems)
    assert config.client_auth is not None
    client = BasicAuthClient(config.client_auth, LOG)
    run(client.start(Host()))
    host = Host()
    host.extensions[ComponentID("basicauth", "client")] = client
    for transport in ("HTTP", "gRPC"):
        with pytest.raises(ValueError, match=r"^invalid authorization format$"):
            AuthConfig("basicauth/client").client_authenticator(host, transport)
    fine = BasicAuthClient(ClientAuthSettings(username="user", password=Opaque("p:ss")), LOG)
    run(fine.start(Host()))
    host.extensions[ComponentID("basicauth", "client")] = fine
    assert AuthConfig("basicauth/client").client_authenticator(host, "HTTP") is fine


def test_the_client_reads_its_files_again_when_they_change(tmp_path: Path) -> None:
    username, password = tmp_path / "username", tmp_path / "password"
    username.write_text("alice\n")
    password.write_text("  first  \n")
    settings = ClientAuthSettings(
        username="ignored", username_file=str(username), password_file=str(password)
    )

    async def scenario() -> list[Any]:
        client = BasicAuthClient(settings, LOG)
        await client.start(Host())
        seen = [dict(client.request_headers())]
        password.write_text("second")
        for _ in range(100):
            await asyncio.sleep(0.02)
            if client.request_headers() != seen[0]:
                break
        seen.append(dict(client.request_headers()))
        username.write_text("bad:name")  # refused: the last good value stays
        password.write_text("")  # refused too
        await asyncio.sleep(1.2)
        seen.append(dict(client.request_headers()))
        await client.shutdown()
        return seen

    assert run(scenario()) == [
        {"Authorization": basic("alice", "first")},
        {"Authorization": basic("alice", "second")},
        {"Authorization": basic("alice", "second")},
    ]


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (None, "no such file or directory"),
        ("", "it is empty"),
        ("a:b", "invalid authorization format"),
    ],
)
def test_an_unusable_username_file_fails_the_start(
    tmp_path: Path, content: str | None, reason: str
) -> None:
    path = tmp_path / "username"
    if content is not None:
        path.write_text(content)
    client = BasicAuthClient(ClientAuthSettings(username_file=str(path)), LOG)
    with pytest.raises(ValueError) as failed:
        run(client.start(Host()))
    assert str(path) in str(failed.value) and reason in str(failed.value)


def test_the_upstream_readme_example_validates() -> None:
    env = {"BASIC_AUTH_USERNAME": "user", "BASIC_AUTH_PASSWORD": "pass"}
    done = run_cli("validate", "--config", str(TESTDATA / "config_readme.yaml"), env=env)
    assert (done.returncode, done.stdout, done.stderr) == (0, "config is valid\n", "")
