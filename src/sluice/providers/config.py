"""Provider configuration: ``{type, id, path | url, poll_interval_secs, headers}``,
validated once (unknown keys are errors), with ``${ENV}`` expansion in string
values (:mod:`sluice.confexpand`); also the value readers Edge's config
validates its own keys with, so a number means the same in both."""

from __future__ import annotations

import contextlib
import difflib
import ipaddress
import json
import re
import ssl
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal
from urllib.parse import SplitResult, urlsplit

from sluice.confexpand import Unresolved, expand_text
from sluice.logs import has_userinfo, redact_url
from sluice.transport.header_rules import (
    valid_header_name,
    valid_header_value,
    valid_metadata_key,
    valid_metadata_value,
)

ProviderType = Literal["file", "http", "grpc"]
PROVIDER_TYPES: tuple[ProviderType, ...] = ("file", "http", "grpc")
DEFAULT_POLL_SECS = {"file": 30.0, "http": 60.0, "grpc": 60.0}
DEFAULT_MAX_RESPONSE_BYTES = 16 << 20
"""Four times gRPC's own default, and several times a set of 10,000 policies."""
MAX_RESPONSE_BYTES = (1 << 31) - 1
"""The largest message gRPC takes a limit for (a C int)."""


class ConfigError(ValueError):
    """A configuration problem; the message names where and what (one line
    per problem when there are several)."""


def expand_env(value: str, where: str = "") -> str:
    """`value` with ``${NAME}``, ``${env:NAME}`` and ``${env:NAME:-default}``
    replaced and ``$$`` as a literal ``$``; an unset variable without a default
    raises :class:`ConfigError` naming `where` and the variable."""
    try:
        return expand_text(value)
    except Unresolved as problem:
        raise ConfigError(f"{where or 'config'}: {problem}") from None


def shown(value: Any) -> str:
    """A config value as a problem shows it: text quoted as Python writes it
    (as every other quoted name in these messages), anything else as JSON
    writes it (``true``, ``null``, ``[1, 2]``), the form the file holds."""
    if isinstance(value, str):
        return repr(value)
    return json.dumps(value, ensure_ascii=False, default=repr)


def unknown_key(key: str, known: Iterable[str]) -> str:
    """The problem text for a key that is not one of `known`: the nearest valid
    key when one is close (a typo), else every valid key."""
    return f"unknown key ({_nearest(key, known)})"


def _nearest(key: str, known: Iterable[str]) -> str:
    valid = sorted(known)
    close = difflib.get_close_matches(key, valid, n=1, cutoff=0.6)
    if close:
        return f"did you mean {close[0]!r}?"
    return f"valid keys: {', '.join(valid)}"


Reader = Callable[[Any, str], Any]
"""Validates one key's value: ``(value, where) -> parsed``; raises ConfigError
naming `where` (``config.json: key.path``)."""

_INTEGER_TEXT = re.compile(r"[+-]?[0-9]+")
_NUMBER_TEXT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
"""Numbers as text (an expanded ``${VAR}``): ASCII digits only, where int()
and float() also take other scripts' digits, underscores, ``nan`` and ``inf``."""


def integer_reader(low: int, high: int, text: bool = False) -> Reader:
    """An integer in [low, high]. With `text`, a string of digits (an
    expanded ``${VAR}``) counts as its number; any other string is a wrong
    value."""

    def read(raw: Any, where: str) -> int:
        value = raw
        digits = raw.strip() if text and isinstance(raw, str) else ""
        if _INTEGER_TEXT.fullmatch(digits):
            with contextlib.suppress(ValueError):  # more digits than int() takes
                value = int(digits)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ConfigError(
                f"{where}: expected an integer from {low} to {high}, got {shown(raw)}"
            )
        return value

    return read


def number_reader(low: float, high: float, low_open: bool = False, text: bool = False) -> Reader:
    """A number in [low, high] (or (low, high]): never NaN or an infinity,
    which no range holds (JSON's ``NaN``, and ``1e999`` reads as infinity).
    With `text`, numeric strings count."""

    def read(raw: Any, where: str) -> float:
        value = raw
        number = raw.strip() if text and isinstance(raw, str) else ""
        if _NUMBER_TEXT.fullmatch(number):
            value = float(number)
        in_range = (
            not isinstance(value, bool)
            and isinstance(value, int | float)
            and (low < value if low_open else low <= value)
            and value <= high
        )
        if not in_range:
            lowest = f"above {low:g}" if low_open else f"from {low:g}"
            raise ConfigError(f"{where}: expected a number {lowest} to {high:g}, got {shown(raw)}")
        return float(value)

    return read


def flag_reader(text: bool = False) -> Reader:
    """``true`` or ``false``. With `text`, those words as text in any case
    (an expanded ``${VAR}``) count as their value."""

    def read(raw: Any, where: str) -> bool:
        if isinstance(raw, bool):
            return raw
        if text and isinstance(raw, str) and raw.lower() in ("true", "false"):
            return raw.lower() == "true"
        raise ConfigError(f"{where}: expected true or false, got {shown(raw)}")

    return read


def duplicate_id(where: str, index: int, pid: str) -> ConfigError:
    """The problem of entry `index` of the providers list at `where`, whose
    id an earlier entry has."""
    return ConfigError(f"{where}[{index}].id: duplicate provider id {shown(pid)}")


_LABEL = re.compile(r"(?!-)[A-Za-z0-9_-]{1,63}(?<!-)")
"""One label of a host name: letters, digits, hyphens inside (and the
underscores some private networks' names have)."""


def is_host(host: str) -> bool:
    """Whether `host` is an IP address or has the form of a host name (only
    the form: nothing is resolved). The last label of a name is not all
    digits, so a mistyped address (``10.0.0.256``) is not taken for a name."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        labels = host.removesuffix(".").split(".")
        return (
            len(host) <= 253
            and all(_LABEL.fullmatch(label) for label in labels)
            and not labels[-1].isdigit()
        )
    return True


def http_url(url: str, where: str, form: str) -> SplitResult:
    """`url` split, when it is ``http(s)://`` and a host (an IP address or a
    name's form) with a valid port and no space or control character
    anywhere; else ConfigError naming `where` and the expected `form`. A
    message shows the URL redacted (:func:`sluice.logs.redact_url`)."""
    parts = _split(url, url, where)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{where}: expected {form}, got {redact_url(url)!r}")
    _check_host(parts, url, where)
    return parts


def _split(url: str, written: str, where: str) -> SplitResult:
    """`url` split, or ConfigError naming `where` and showing `written` (what
    the config holds, redacted) when it holds a space or a control character
    or its port (0 too) or bracketed host is not one."""
    shown = redact_url(written)
    if not url.isprintable() or any(c.isspace() for c in url):
        raise ConfigError(f"{where}: spaces and control characters are not allowed, got {shown!r}")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as problem:  # the port, or a bracketed host that is not IPv6
        raise ConfigError(f"{where}: {problem}, got {shown!r}") from None
    if port == 0:  # no server listens there: every connection would be refused
        raise ConfigError(f"{where}: port 0 cannot be connected to (1-65535), got {shown!r}")
    return parts


def _check_host(parts: SplitResult, written: str, where: str) -> None:
    if parts.hostname and not is_host(parts.hostname):
        raise ConfigError(
            f"{where}: {parts.hostname!r} is not an IP address or a host name, "
            f"got {redact_url(written)!r}"
        )


GRPC_SCHEMES = {"grpc": False, "grpcs": True, "http": False, "https": True}
"""The schemes a grpc provider's ``url`` may have, and whether each means TLS:
``http(s)://`` is the form the Rust client (policy-rs) takes."""
_DEFAULT_PORTS = {"http": 80, "https": 443}


def grpc_target(url: str) -> tuple[str, bool]:
    """A grpc provider's `url` as a gRPC channel target (``host:port``) and
    whether the URL asks for TLS. ``host:port`` is taken as it is (TLS only
    with ``tls: true``); an ``http://`` or ``https://`` URL without a port
    has its scheme's (80, 443), as a URL means, where gRPC would take 443
    (the other forms need a port: :func:`_grpc_url`)."""
    scheme, sep, rest = url.partition("://")
    tls = GRPC_SCHEMES.get(scheme.lower())
    if not sep or tls is None:
        return url, False
    target = rest.removesuffix("/")
    default = _DEFAULT_PORTS.get(scheme.lower())
    with contextlib.suppress(ValueError):  # a bad port: gRPC reports it
        if default is not None and urlsplit(url).port is None:
            target = f"{target.removesuffix(':')}:{default}"  # "https://h:" too
    return target, tls


def _grpc_url(url: str, where: str) -> None:
    """Check a grpc provider's `url`: ``host:port``, or a URL of one of
    :data:`GRPC_SCHEMES` with a host, a port (none only for ``http://`` and
    ``https://``, which have a default), and no path (gRPC
    names the service itself); else ConfigError naming `where`. gRPC would
    take most of these and fail every sync with a message about its own
    parsing (``Misformatted domain name``)."""
    form = "host:port, or a grpc://, grpcs://, http:// or https:// URL with a host and port"
    scheme, sep, _ = url.partition("://")
    if sep and scheme.lower() not in GRPC_SCHEMES:
        raise ConfigError(f"{where}: expected {form}, got {redact_url(url)!r}")
    parts = _split(url if sep else f"//{url}", url, where)
    if not parts.hostname:
        raise ConfigError(f"{where}: expected {form}, got {redact_url(url)!r}")
    _check_host(parts, url, where)
    if parts.path not in ("", "/") or "?" in url or "#" in url:
        raise ConfigError(
            f"{where}: a gRPC provider's url has no path (the sync call is "
            f"/tero.policy.v1.PolicyService/Sync on the server), got {redact_url(url)!r}"
        )
    if parts.port is None and not (sep and scheme.lower() in _DEFAULT_PORTS):
        # gRPC would dial 443, a port a plaintext grpc:// server is seldom on.
        raise ConfigError(
            f"{where}: a port is required (only http:// and https:// URLs have a "
            f"default: 80, 443), got {redact_url(url)!r}"
        )


_POLL_SECS = {text: number_reader(0.01, 86_400, text=text) for text in (False, True)}
TIMEOUT_SECS = {text: number_reader(0.01, 3_600, text=text) for text in (False, True)}
_RESPONSE_BYTES = {
    text: integer_reader(1024, MAX_RESPONSE_BYTES, text=text) for text in (False, True)
}
_TLS = {text: flag_reader(text) for text in (False, True)}
"""The readers of a provider's numbers and flag, by whether text counts."""


@dataclass(frozen=True)
class ProviderConfig:
    """One policy provider. `path` for file providers; `url` for http (the
    sync endpoint URL) and grpc (``host:port``, or a URL: ``grpc://`` or
    ``http://`` plaintext, ``grpcs://`` or ``https://`` TLS, as does
    ``tls: true``)."""

    type: ProviderType
    id: str
    path: str = ""
    url: str = ""
    poll_interval_secs: float = 60.0
    headers: tuple[tuple[str, str], ...] = ()
    encoding: Literal["json", "protobuf"] = "json"
    """HTTP request/response format of the sync protocol."""
    timeout_secs: float = 10.0
    """Bounds a whole sync: connect, send, and the complete response."""
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    """A larger sync response is refused (the previous policies stay)."""
    tls: bool = False
    ca_file: str = ""

    @property
    def priority(self) -> int:
        """Remote providers win over files for the same policy id."""
        return 0 if self.type == "file" else 1

    def under(self, base_dir: Path) -> ProviderConfig:
        """This provider with a relative file `path` taken relative to `base_dir`."""
        if self.type != "file" or Path(self.path).is_absolute():
            return self
        return replace(self, path=str(base_dir / self.path))


_REMOTE_KEYS = {"url", "headers", "timeout_secs", "max_response_bytes", "ca_file"}
KEYS_OF: dict[str, frozenset[str]] = {
    "file": frozenset({"type", "id", "path", "poll_interval_secs"}),
    "http": frozenset({"type", "id", "poll_interval_secs", *_REMOTE_KEYS, "encoding"}),
    "grpc": frozenset({"type", "id", "poll_interval_secs", *_REMOTE_KEYS, "tls"}),
}
"""The keys an entry of each provider type has."""
KEYS = frozenset().union(*KEYS_OF.values())
"""The keys of any provider entry."""
HEADER_KEYS = frozenset({"name", "value"})
TEXT_KEYS = frozenset({"type", "id", "path", "url", "encoding", "ca_file"})
"""The keys of an entry whose value is text (as ``name`` and ``value`` of a
header): a config format that types what it expands fills them with the
text, whatever it looks like."""


def _string(raw: Any, where: str, expand: bool) -> str:
    if not isinstance(raw, str):
        raise ConfigError(f"{where}: expected a string, got {shown(raw)}")
    return expand_env(raw, where) if expand else raw


def check_header(name: str, value: str, name_at: str, value_at: str, grpc: bool) -> None:
    """Raise ConfigError naming `name_at` or `value_at` unless `name` and
    `value` can go as a request header (gRPC metadata when `grpc`), which
    every sync would otherwise fail on; the value is never shown (it is
    often a secret)."""
    if not valid_header_name(name):
        raise ConfigError(
            f"{name_at}: expected a header name (letters, digits and !#$%&'*+-.^_`|~), got {name!r}"
        )
    if not valid_header_value(value):
        raise ConfigError(
            f"{value_at}: a header value cannot hold a line break or another control character"
        )
    key = name.lower()
    if grpc and not valid_metadata_key(key):
        raise ConfigError(
            f"{name_at}: a gRPC metadata key holds only letters, digits and -_., got {name!r}"
        )
    if grpc and not valid_metadata_value(key, value):
        raise ConfigError(
            f"{value_at}: a gRPC metadata value is printable ASCII (or name the key '...-bin')"
        )


def sync_url(raw: Any, where: str, kind: str, expand: bool) -> str:
    """A policy server's address: an http(s) URL for http, ``host:port`` or
    a URL without path for grpc (:func:`grpc_target`). Credentials in it
    would not be sent (``headers`` carry them), so they are refused."""
    url = _string(raw, where, expand)
    if kind == "http":
        if not url.startswith(("http://", "https://")):
            raise ConfigError(
                f"{where}: expected an http:// or https:// URL, got {redact_url(url)!r}"
            )
        http_url(url, where, "http(s)://host[:port]/path")
    else:
        _grpc_url(url, where)
    if has_userinfo(url):
        raise ConfigError(
            f"{where}: credentials in the URL would not be sent: give them in headers "
            f"(an Authorization header), got {redact_url(url)!r}"
        )
    return url


def _ca_file(raw: Any, where: str, expand: bool, base_dir: Path | None) -> str:
    """A CA bundle path (a relative one taken from `base_dir` when given),
    read now: a missing file or one without a PEM certificate is a config
    error, not a failure at the first sync."""
    path = _string(raw, where, expand)
    if not path:
        return path  # the system roots, as when the key is absent
    if base_dir is not None and not Path(path).is_absolute():
        path = str(base_dir / path)
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_verify_locations(cafile=path)
    except ssl.SSLError:  # an OSError too: first
        raise ConfigError(
            f"{where}: no certificate found in {path} (expected PEM: -----BEGIN CERTIFICATE-----)"
        ) from None
    except (OSError, ValueError) as problem:  # ValueError: a NUL in the path
        reason = getattr(problem, "strerror", None) or problem
        raise ConfigError(f"{where}: cannot read {path}: {reason}") from None
    return path


def parse_provider(
    raw: Any,
    where: str,
    index: int,
    base_dir: Path | None = None,
    expand: bool = True,
    text: bool = False,
) -> ProviderConfig:
    """Validate one provider entry; `where` prefixes error messages
    (e.g. ``config.json: policy_providers[0]``). Every problem of the entry
    is reported, one line each, in one :class:`ConfigError`; a missing
    ``path`` or ``url`` only when no key is unknown (a misspelt one is the
    usual reason it is missing), and nothing past a missing or unknown
    ``type``, which gives the other keys their meaning.
    A relative file `path` or ``ca_file`` is taken relative to `base_dir`
    (the config file's folder, or the collector's working directory) when given.
    `expand`: replace ``${NAME}`` in string values (False when the caller's
    config format has expanded them already, as the collector's does).
    `text`: a number or boolean may be given as text, as a ``${NAME}`` in a
    JSON config fills it (``"poll_interval_secs": "${POLL_SECS}"``); YAML
    types what the collector's expansion fills itself."""
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: expected an object, got {shown(raw)}")
    problems: list[str] = []
    kind = raw.get("type")
    known = KEYS_OF.get(kind, KEYS) if isinstance(kind, str) else KEYS
    for key in raw:
        if key in known:
            continue
        if key in KEYS:  # another type's: ignoring it would hide a mistake
            problem = f"not a key of {kind} providers ({_nearest(key, known)})"
        else:
            problem = unknown_key(str(key), known)
        problems.append(f"{where}.{key}: {problem}")
    unknown = bool(problems)
    if kind is None:
        problems.append(f"{where}.type: required (file, http or grpc)")
    elif kind not in PROVIDER_TYPES:
        problems.append(
            f"{where}.type: unknown provider type {shown(kind)} (expected file, http or grpc)"
        )
    if kind not in PROVIDER_TYPES:
        raise ConfigError("\n".join(problems))
    values: dict[str, Any] = {"type": kind}

    def take(key: str, read: Callable[[], Any]) -> None:
        try:
            values[key] = read()
        except ConfigError as problem:
            problems.append(str(problem))

    def identifier() -> str:
        pid = _string(raw.get("id", f"{kind}-{index}"), f"{where}.id", expand)
        if not pid.strip():
            raise ConfigError(f"{where}.id: expected a non-empty string, got {shown(pid)}")
        return pid

    take("id", identifier)
    # An empty path or url (an unset ${VAR:-} too) is a missing one: it would
    # read the working directory or dial nothing at every poll.
    located = "path" if kind == "file" else "url"
    try:
        value = _string(raw[located], f"{where}.{located}", expand) if located in raw else ""
        if value and kind != "file":
            value = sync_url(value, f"{where}.url", kind, expand=False)  # expanded already
        if value:
            values[located] = value
        elif not unknown:
            problems.append(f"{where}: {located!r} is required for a {kind} provider")
    except ConfigError as problem:
        problems.append(str(problem))
    take(
        "poll_interval_secs",
        lambda: _POLL_SECS[text](
            raw.get("poll_interval_secs", DEFAULT_POLL_SECS[kind]), f"{where}.poll_interval_secs"
        ),
    )
    take(
        "headers",
        lambda: _headers(raw.get("headers", []), f"{where}.headers", expand, kind == "grpc"),
    )
    take("encoding", lambda: _encoding(raw.get("encoding", "json"), f"{where}.encoding"))
    take(
        "timeout_secs",
        lambda: TIMEOUT_SECS[text](raw.get("timeout_secs", 10), f"{where}.timeout_secs"),
    )
    take(
        "max_response_bytes",
        lambda: _RESPONSE_BYTES[text](
            raw.get("max_response_bytes", DEFAULT_MAX_RESPONSE_BYTES),
            f"{where}.max_response_bytes",
        ),
    )
    take("tls", lambda: _TLS[text](raw.get("tls", False), f"{where}.tls"))
    if "ca_file" in raw:
        take("ca_file", lambda: _ca_file(raw["ca_file"], f"{where}.ca_file", expand, base_dir))
    if problems:
        raise ConfigError("\n".join(problems))
    config = ProviderConfig(**values)
    return config.under(base_dir) if base_dir is not None else config


def _headers(raw: Any, where: str, expand: bool, grpc: bool) -> tuple[tuple[str, str], ...]:
    """A provider's ``headers`` (gRPC metadata when `grpc`); every bad header
    reported (one line each)."""
    if not isinstance(raw, list):
        raise ConfigError(f"{where}: expected a list of {{name, value}} objects")
    problems: list[str] = []
    parsed = []
    for i, header in enumerate(raw):
        at = f"{where}[{i}]"
        if not isinstance(header, Mapping):
            problems.append(f"{at}: expected an object with 'name' and 'value'")
            continue
        # Unknown keys first: a misspelt 'value' is the usual reason one is missing.
        unknown = [
            f"{at}.{key}: {unknown_key(str(key), HEADER_KEYS)}"
            for key in header
            if key not in HEADER_KEYS
        ]
        if unknown or "name" not in header or "value" not in header:
            problems.extend(unknown or [f"{at}: expected an object with 'name' and 'value'"])
            continue
        try:
            name = _string(header["name"], f"{at}.name", expand)
            value = _string(header["value"], f"{at}.value", expand)
            check_header(name, value, f"{at}.name", f"{at}.value", grpc)
            parsed.append((name, value))
        except ConfigError as problem:
            problems.append(str(problem))
    if problems:
        raise ConfigError("\n".join(problems))
    return tuple(parsed)


def _encoding(raw: Any, where: str) -> str:
    if raw not in ("json", "protobuf"):
        raise ConfigError(f"{where}: expected 'json' or 'protobuf', got {shown(raw)}")
    return str(raw)


def parse_providers(
    raw: Any, where: str, base_dir: Path | None = None, expand: bool = True, text: bool = False
) -> list[ProviderConfig]:
    """A ``policy_providers`` list; provider ids must be unique. Every
    problem of every entry is reported, one line each, in one
    :class:`ConfigError`. `expand` and `text`: as in :func:`parse_provider`."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ConfigError(f"{where}: expected a list of providers")
    problems: list[str] = []
    providers: list[ProviderConfig] = []
    seen: set[str] = set()
    for i, item in enumerate(raw):
        try:
            provider = parse_provider(item, f"{where}[{i}]", i, base_dir, expand, text)
        except ConfigError as problem:
            problems.append(str(problem))
            continue
        if provider.id in seen:
            problems.append(str(duplicate_id(where, i, provider.id)))
        seen.add(provider.id)
        providers.append(provider)
    if problems:
        raise ConfigError("\n".join(problems))
    return providers
