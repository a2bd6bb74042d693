"""Edge configuration (EDGE.md section 1): read once, expanded as the
collector expands (:mod:`sluice.confexpand`), validated against :data:`FIELDS`
(an unknown key is an error that suggests the nearest valid one), every
problem reported at once, each naming the file, the key path and the problem."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from sluice.confexpand import expand_tree
from sluice.edge.datadog_intake import default_api_url
from sluice.logs import has_userinfo, level_name, redact_url
from sluice.providers.config import (
    ConfigError,
    ProviderConfig,
    Reader,
    flag_reader,
    http_url,
    integer_reader,
    is_host,
    number_reader,
    parse_providers,
    shown,
    unknown_key,
)
from sluice.providers.sync import ClientIdentity
from sluice.transport.connections import ServerLimits
from sluice.transport.http_client import DEFAULT_MAX_RESPONSE

LOG_FORMATS = ("logfmt", "json")


def _url(raw: Any, where: str) -> str:
    """An upstream base URL: ``http(s)://host[:port][/path]``. Each request
    goes with its own query and credential headers, so a query or a
    ``user:password@`` here would be dropped: they are refused."""
    if not isinstance(raw, str):
        raise ConfigError(f"{where}: expected a URL string, got {shown(raw)}")
    http_url(raw, where, "http(s)://host[:port][/path]")
    if has_userinfo(raw):
        raise ConfigError(
            f"{where}: credentials in the URL would not be sent (requests go upstream with "
            f"their own Authorization and DD-API-KEY headers): remove them, "
            f"got {redact_url(raw)!r}"
        )
    if "?" in raw or "#" in raw:
        raise ConfigError(
            f"{where}: a query or fragment would not be sent (each request's own query "
            f"is forwarded): remove it, got {redact_url(raw)!r}"
        )
    return raw


def _address(raw: Any, where: str) -> str:
    """The address to listen on: an IP address, or a host name resolved when
    Edge binds (validate checks its form only, as resolving could answer
    differently where Edge runs)."""
    if not isinstance(raw, str) or not is_host(raw):
        hint = " (IPv6 without brackets: ::)" if isinstance(raw, str) and "[" in raw else ""
        raise ConfigError(f"{where}: expected an IP address or a host name{hint}, got {shown(raw)}")
    return raw


def _integer(low: int, high: int) -> Reader:
    """An integer in [low, high]; numeric strings (an expanded ``${VAR}``) count."""
    return integer_reader(low, high, text=True)


def _number(low: float, high: float, low_open: bool = False) -> Reader:
    """A number in [low, high] (or (low, high]); numeric strings count."""
    return number_reader(low, high, low_open, text=True)


_flag = flag_reader(text=True)


def _log_level(raw: Any, where: str) -> str:
    """debug, info, warn, error; any case, and ``warning`` and the reference's
    ``err`` too."""
    level = level_name(raw) if isinstance(raw, str) else None
    if level is None:
        raise ConfigError(f"{where}: expected one of debug, info, warn, error, got {shown(raw)}")
    return level


def _log_format(raw: Any, where: str) -> str:
    if raw not in LOG_FORMATS:
        raise ConfigError(f"{where}: expected one of {', '.join(LOG_FORMATS)}, got {shown(raw)}")
    return str(raw)


def _check_keys(raw: Mapping[str, Any], known: Collection[str], where: str) -> None:
    for key in raw:
        if key not in known:
            raise ConfigError(f"{where}.{key}: {unknown_key(str(key), known)}")


def _pairs(raw: Any, where: str) -> tuple[tuple[str, str], ...]:
    """String pairs as an object (``{"team": "platform"}``) or, as the
    reference writes them, a list of ``{"key": ..., "value": ...}``."""
    if isinstance(raw, Mapping) and all(isinstance(v, str) for v in raw.values()):
        return tuple((str(k), v) for k, v in raw.items())
    if not isinstance(raw, list):
        raise ConfigError(
            f"{where}: expected an object of string values or a list of {{key, value}} objects"
        )
    pairs = []
    for i, item in enumerate(raw):
        at = f"{where}[{i}]"
        if not isinstance(item, Mapping):
            raise ConfigError(f"{at}: expected an object with 'key' and 'value', got {shown(item)}")
        _check_keys(item, ("key", "value"), at)  # first: a misspelt key is why one is missing
        if not {"key", "value"} <= item.keys():
            raise ConfigError(f"{at}: expected an object with 'key' and 'value', got {shown(item)}")
        if not isinstance(item["key"], str) or not isinstance(item["value"], str):
            raise ConfigError(f"{at}: 'key' and 'value' must be strings, got {shown(item)}")
        pairs.append((item["key"], item["value"]))
    return tuple(pairs)


_IDENTITY_TEXT = {
    "name": "service_name",
    "namespace": "service_namespace",
    "version": "service_version",
    "instance_id": "instance_id",
}
_IDENTITY_KEYS = (*_IDENTITY_TEXT, "resource_attributes", "labels")


def _identity(raw: Any, where: str) -> ClientIdentity:
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: expected an object, got {shown(raw)}")
    _check_keys(raw, _IDENTITY_KEYS, where)
    values: dict[str, Any] = {"service_name": "sluice-edge"}
    for key, target in _IDENTITY_TEXT.items():
        if key in raw:
            if not isinstance(raw[key], str):
                raise ConfigError(f"{where}.{key}: expected a string, got {shown(raw[key])}")
            values[target] = raw[key]
    for key in ("resource_attributes", "labels"):
        if key in raw:
            values[key] = _pairs(raw[key], f"{where}.{key}")
    return ClientIdentity(**values)


def _providers(raw: Any, where: str, base_dir: Path | None = None) -> tuple[ProviderConfig, ...]:
    """Relative paths (a file provider's ``path``, ``ca_file``) are taken from
    `base_dir`, the config file's folder."""
    # Expanded with the rest of the config: expanding again would undo $$.
    return tuple(parse_providers(raw, where, base_dir, expand=False, text=True))


LIMITS: dict[str, Reader] = {
    "max_header_size": _integer(1024, 1 << 24),
    "max_header_count": _integer(8, 10_000),
    "max_url_size": _integer(256, 1 << 20),
    "idle_timeout_secs": _number(0.01, 86_400),
    "header_timeout_secs": _number(0.01, 3_600),
    "body_timeout_secs": _number(0.01, 3_600),
    "max_connections": _integer(1, 1 << 20),
}
"""Keys bounding what clients may cost; each sets the ServerLimits field of
its name less ``_secs``."""

FIELDS: dict[str, Reader] = {
    "listen_address": _address,
    "listen_port": _integer(0, 65535),
    "upstream_url": _url,
    "logs_url": _url,
    "metrics_url": _url,
    "api_url": _url,
    "log_level": _log_level,
    "log_format": _log_format,
    "max_body_size": _integer(1, 1 << 31),
    "policy_providers": _providers,
    "policy_metrics": _flag,
    "service": _identity,
    "upstream_timeout_secs": _number(0, 86_400, low_open=True),
    "workers": _integer(1, 256),
    "max_response_size": _integer(1024, 1 << 31),
    **LIMITS,
}
"""Every config key and its reader. A key outside LIMITS sets the EdgeConfig
field of its name, so adding a key is one line here and a field there."""


@dataclass(frozen=True)
class EdgeConfig:
    """Everything Edge needs to run. See the README's configuration reference."""

    upstream_url: str
    listen_address: str = "127.0.0.1"
    listen_port: int = 8080
    logs_url: str = ""
    metrics_url: str = ""
    api_url: str = ""
    log_level: str = "info"
    log_format: str = "logfmt"
    max_body_size: int = 1_048_576
    policy_providers: tuple[ProviderConfig, ...] = ()
    policy_metrics: bool = False
    """Per-policy series on /_metrics too (they are always at /_policies)."""
    service: ClientIdentity = field(default_factory=lambda: ClientIdentity("sluice-edge"))
    upstream_timeout_secs: float = 30.0
    workers: int = 1
    limits: ServerLimits = field(default_factory=ServerLimits)
    max_response_size: int = DEFAULT_MAX_RESPONSE
    source: str = ""
    """The file this came from (for messages)."""

    @property
    def datadog_logs_url(self) -> str:
        return self.logs_url or self.upstream_url

    @property
    def datadog_metrics_url(self) -> str:
        return self.metrics_url or self.upstream_url

    def routing(self) -> list[tuple[str, str]]:
        """Where each kind of request goes: (routes, upstream URL)."""
        return [
            ("/v1/logs, /v1/metrics, /v1/traces (OTLP/HTTP, filtered)", self.upstream_url),
            ("/api/v2/logs (Datadog logs, filtered)", self.datadog_logs_url),
            ("/v1/input (Datadog legacy logs, proxied unchanged)", self.datadog_logs_url),
            (
                "/api/v1/series, /api/v2/series, /api/beta/sketches (Datadog metrics, filtered)",
                self.datadog_metrics_url,
            ),
            (
                "/api/v1/check_run, /api/v1/distribution_points (Datadog, proxied unchanged)",
                self.datadog_metrics_url,
            ),
            (
                "other /api/ and /intake/ paths (Datadog API, proxied unchanged)",
                self.datadog_api_url,
            ),
            ("any other path (proxied unchanged)", self.upstream_url),
        ]

    @property
    def datadog_api_url(self) -> str:
        """Where the Agent's calls other than logs and metrics go (see
        :mod:`sluice.edge.datadog_intake`)."""
        if self.api_url:
            return self.api_url
        return default_api_url(self.metrics_url) if self.metrics_url else self.upstream_url

    @property
    def datadog_routing(self) -> bool:
        """Whether any Datadog family has its own upstream."""
        return bool(self.logs_url or self.metrics_url or self.api_url)


def _dotted(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def parse_config(doc: Any, source: str) -> EdgeConfig:
    """Validate a decoded config document; ConfigError holds one line per problem."""
    if not isinstance(doc, dict):
        raise ConfigError(f"{source}: expected a JSON object at the top level")
    problems: list[str] = []
    unexpanded: set[str] = set()

    def unresolved(path: str, problem: str) -> None:
        problems.append(f"{source}: {path}: {problem}")
        unexpanded.add(re.split(r"[.\[]", path, maxsplit=1)[0])

    doc = expand_tree(doc, "", unresolved, _dotted)
    values: dict[str, Any] = {}
    for key, raw in doc.items():
        reader = FIELDS.get(key)
        if reader is None:
            problems.append(f"{source}: {key}: {unknown_key(key, FIELDS)}")
            continue
        if key in unexpanded:
            continue  # reported; its reader would only complain about the hole
        if key == "policy_providers" and source:
            reader = partial(_providers, base_dir=Path(source).parent)
        try:
            values[key] = reader(raw, f"{source}: {key}")
        except ConfigError as problem:
            problems.append(str(problem))
    if "upstream_url" not in doc:
        problems.append(f"{source}: upstream_url: required (where to forward telemetry)")
    if values.get("workers", 1) > 1 and not values.get("listen_port", EdgeConfig.listen_port):
        problems.append(f"{source}: workers: more than one worker needs a fixed listen_port")
    if problems:
        raise ConfigError("\n".join(problems))
    limits = {key.removesuffix("_secs"): values.pop(key) for key in LIMITS if key in values}
    limits["max_body_size"] = values.get("max_body_size", EdgeConfig.max_body_size)
    return EdgeConfig(**values, limits=ServerLimits(**limits), source=source)


Repeats = dict[int, tuple[dict[str, Any], list[str]]]
"""Objects of a JSON document given a key more than once, by id: the object
(held, so that its id is not reused) and those keys."""


def _collecting_repeats(repeated: Repeats) -> Callable[[list[tuple[str, Any]]], Any]:
    """A JSON object hook that builds each object as ``json.loads`` does and
    notes in `repeated` the keys it was given more than once."""

    def build(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        built = dict(pairs)
        if len(built) < len(pairs):
            seen: set[str] = set()
            again: list[str] = []
            repeated[id(built)] = (built, again)
            for key, _ in pairs:
                if key in seen and key not in again:
                    again.append(key)
                seen.add(key)
        return built

    return build


def _repeats(doc: Any, repeated: Repeats, path: str = "") -> Iterator[str]:
    """The key path of every key `repeated` noted in `doc`, in document order."""
    if isinstance(doc, dict):
        noted = repeated.get(id(doc))
        for key in noted[1] if noted is not None and noted[0] is doc else ():
            yield _dotted(path, key)
        for key, value in doc.items():
            yield from _repeats(value, repeated, _dotted(path, key))
    elif isinstance(doc, list):
        for index, item in enumerate(doc):
            yield from _repeats(item, repeated, f"{path}[{index}]")


def load_config(path: str | Path) -> EdgeConfig:
    """Read and validate a config file; ConfigError names the file and field.
    A key given twice in one object is an error too (as the collector's YAML
    refuses it): JSON readers would silently keep one of the values."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as problem:
        raise ConfigError(f"{path}: cannot read: {problem}") from None
    too_deep = f"{path}: nested too deeply"
    repeated: Repeats = {}
    try:
        doc = json.loads(text, object_pairs_hook=_collecting_repeats(repeated))
    except json.JSONDecodeError as problem:
        raise ConfigError(f"{path}: not valid JSON: {problem}") from None
    except ValueError:  # what int() refuses to read (sys.get_int_max_str_digits)
        raise ConfigError(f"{path}: not valid JSON: an integer has too many digits") from None
    except RecursionError:
        raise ConfigError(too_deep) from None
    try:
        twice = [
            f"{path}: {key}: duplicate key (given more than once)"
            for key in (_repeats(doc, repeated) if repeated else ())
        ]
        try:
            config = parse_config(doc, str(path))
        except ConfigError as problem:
            raise ConfigError("\n".join([*twice, str(problem)])) from None
    except RecursionError:  # the expansion walks the whole document
        raise ConfigError(too_deep) from None
    if twice:
        raise ConfigError("\n".join(twice))
    return config
