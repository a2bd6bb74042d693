"""Provider configuration: ``{type, id, path | url, poll_interval_secs, headers}``,
validated once (unknown keys are errors), with ``${ENV}`` expansion in string
values (:mod:`sluice.confexpand`)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from sluice.confexpand import Unresolved, expand_text

ProviderType = Literal["file", "http", "grpc"]
PROVIDER_TYPES: tuple[ProviderType, ...] = ("file", "http", "grpc")
DEFAULT_POLL_SECS = {"file": 30.0, "http": 60.0, "grpc": 60.0}
DEFAULT_MAX_RESPONSE_BYTES = 16 << 20
"""Four times gRPC's own default, and several times a set of 10,000 policies."""


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


def unknown_key(key: str, known: Iterable[str]) -> str:
    """The problem text for a key that is not one of `known`: the nearest valid
    key when one is close (a typo), else every valid key."""
    valid = sorted(known)
    close = difflib.get_close_matches(key, valid, n=1, cutoff=0.6)
    if close:
        return f"unknown key (did you mean {close[0]!r}?)"
    return f"unknown key (valid keys: {', '.join(valid)})"


@dataclass(frozen=True)
class ProviderConfig:
    """One policy provider. `path` for file providers; `url` for http (the
    sync endpoint URL) and grpc (``host:port``, or ``grpcs://host:port`` /
    ``tls: true`` for TLS)."""

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


KEYS = frozenset(
    {
        "type",
        "id",
        "path",
        "url",
        "poll_interval_secs",
        "headers",
        "encoding",
        "timeout_secs",
        "max_response_bytes",
        "tls",
        "ca_file",
    }
)
"""The keys of a provider entry."""
HEADER_KEYS = frozenset({"name", "value"})


def _number(raw: Any, where: str, minimum: float) -> float:
    if isinstance(raw, bool) or not isinstance(raw, int | float) or raw < minimum:
        raise ConfigError(f"{where}: expected a number >= {minimum:g}, got {raw!r}")
    return float(raw)


def _string(raw: Any, where: str, expand: bool) -> str:
    if not isinstance(raw, str):
        raise ConfigError(f"{where}: expected a string, got {raw!r}")
    return expand_env(raw, where) if expand else raw


def parse_provider(
    raw: Any, where: str, index: int, base_dir: Path | None = None, expand: bool = True
) -> ProviderConfig:
    """Validate one provider entry; `where` prefixes error messages
    (e.g. ``config.json: policy_providers[0]``). A relative file `path` is
    taken relative to `base_dir` (the config file's folder) when given.
    `expand`: replace ``${NAME}`` in string values (False when the caller's
    config format has expanded them already, as the collector's does)."""
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: expected an object, got {raw!r}")
    for key in raw:
        if key not in KEYS:
            raise ConfigError(f"{where}.{key}: {unknown_key(str(key), KEYS)}")
    kind = raw.get("type")
    if kind not in PROVIDER_TYPES:
        raise ConfigError(
            f"{where}.type: unknown provider type {kind!r} (expected file, http or grpc)"
        )
    pid = raw.get("id", f"{kind}-{index}")
    pid = _string(pid, f"{where}.id", expand)
    values: dict[str, Any] = {"type": kind, "id": pid}
    if kind == "file":
        if "path" not in raw:
            raise ConfigError(f"{where}: 'path' is required for a file provider")
        values["path"] = _string(raw["path"], f"{where}.path", expand)
    else:
        if "url" not in raw:
            raise ConfigError(f"{where}: 'url' is required for a {kind} provider")
        url = _string(raw["url"], f"{where}.url", expand)
        if kind == "http" and not url.startswith(("http://", "https://")):
            raise ConfigError(f"{where}.url: expected an http:// or https:// URL, got {url!r}")
        values["url"] = url
    values["poll_interval_secs"] = _number(
        raw.get("poll_interval_secs", DEFAULT_POLL_SECS[kind]), f"{where}.poll_interval_secs", 0.01
    )
    headers = raw.get("headers", [])
    if not isinstance(headers, list):
        raise ConfigError(f"{where}.headers: expected a list of {{name, value}} objects")
    parsed = []
    for i, header in enumerate(headers):
        at = f"{where}.headers[{i}]"
        if not isinstance(header, Mapping) or "name" not in header or "value" not in header:
            raise ConfigError(f"{at}: expected an object with 'name' and 'value'")
        for key in header:
            if key not in HEADER_KEYS:
                raise ConfigError(f"{at}.{key}: {unknown_key(str(key), HEADER_KEYS)}")
        parsed.append(
            (
                _string(header["name"], f"{at}.name", expand),
                _string(header["value"], f"{at}.value", expand),
            )
        )
    values["headers"] = tuple(parsed)
    encoding = raw.get("encoding", "json")
    if encoding not in ("json", "protobuf"):
        raise ConfigError(f"{where}.encoding: expected 'json' or 'protobuf', got {encoding!r}")
    values["encoding"] = encoding
    values["timeout_secs"] = _number(raw.get("timeout_secs", 10), f"{where}.timeout_secs", 0.01)
    limit = raw.get("max_response_bytes", DEFAULT_MAX_RESPONSE_BYTES)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1024:
        raise ConfigError(f"{where}.max_response_bytes: expected an integer >= 1024, got {limit!r}")
    values["max_response_bytes"] = limit
    tls = raw.get("tls", False)
    if not isinstance(tls, bool):
        raise ConfigError(f"{where}.tls: expected true or false, got {tls!r}")
    values["tls"] = tls
    if "ca_file" in raw:
        values["ca_file"] = _string(raw["ca_file"], f"{where}.ca_file", expand)
    config = ProviderConfig(**values)
    return config.under(base_dir) if base_dir is not None else config


def parse_providers(
    raw: Any, where: str, base_dir: Path | None = None, expand: bool = True
) -> list[ProviderConfig]:
    """A ``policy_providers`` list; provider ids must be unique. `expand`: as
    in :func:`parse_provider`."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ConfigError(f"{where}: expected a list of providers")
    providers = [
        parse_provider(item, f"{where}[{i}]", i, base_dir, expand) for i, item in enumerate(raw)
    ]
    seen: set[str] = set()
    for i, provider in enumerate(providers):
        if provider.id in seen:
            raise ConfigError(f"{where}[{i}].id: duplicate provider id {provider.id!r}")
        seen.add(provider.id)
    return providers
