"""Edge configuration (EDGE.md section 1): read once, validated, with errors
that name the file, the field and the problem."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from sluice.edge.datadog_intake import default_api_url
from sluice.providers.config import ConfigError, ProviderConfig, expand_env, parse_providers
from sluice.providers.sync import ClientIdentity
from sluice.transport.http_client import DEFAULT_MAX_RESPONSE
from sluice.transport.http_server import ServerLimits

log = logging.getLogger(__name__)

LOG_LEVELS = ("debug", "info", "warn", "error")
LIMITS: tuple[tuple[str, float, float], ...] = (
    ("max_header_size", 1024, 1 << 24),
    ("max_header_count", 8, 10_000),
    ("max_url_size", 256, 1 << 20),
    ("idle_timeout_secs", 0.01, 86_400),
    ("header_timeout_secs", 0.01, 3_600),
    ("body_timeout_secs", 0.01, 3_600),
    ("max_connections", 1, 1 << 20),
)
"""Config keys bounding what clients may cost: (key, lowest, highest). Each
sets the ServerLimits field of its name less ``_secs``; integers unless the
key ends in ``_secs``."""
KNOWN_KEYS = frozenset(
    {
        "listen_address",
        "listen_port",
        "upstream_url",
        "logs_url",
        "metrics_url",
        "api_url",
        "log_level",
        "max_body_size",
        "policy_providers",
        "service",
        "upstream_timeout_secs",
        "workers",
        "max_response_size",
        *(key for key, _, _ in LIMITS),
    }
)


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
    max_body_size: int = 1_048_576
    policy_providers: tuple[ProviderConfig, ...] = ()
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


def _expand(value: Any, where: str) -> Any:
    if isinstance(value, str):
        return expand_env(value, where)
    if isinstance(value, list):
        return [_expand(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {k: _expand(v, f"{where}.{k}") for k, v in value.items()}
    return value


def _url(raw: Any, where: str) -> str:
    if not isinstance(raw, str):
        raise ConfigError(f"{where}: expected a URL string, got {raw!r}")
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{where}: expected http(s)://host[:port][/path], got {raw!r}")
    try:
        parts.port  # noqa: B018 - validates the port
    except ValueError as problem:
        raise ConfigError(f"{where}: {problem}") from None
    return raw


def _int(raw: Any, where: str, low: int, high: int) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int) or not low <= raw <= high:
        raise ConfigError(f"{where}: expected an integer from {low} to {high}, got {raw!r}")
    return raw


def _identity(raw: Any, where: str) -> ClientIdentity:
    if raw is None:
        return ClientIdentity("sluice-edge")
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected an object")
    values: dict[str, Any] = {}
    for key, target in (
        ("name", "service_name"),
        ("namespace", "service_namespace"),
        ("version", "service_version"),
        ("instance_id", "instance_id"),
    ):
        if key in raw:
            if not isinstance(raw[key], str):
                raise ConfigError(f"{where}.{key}: expected a string, got {raw[key]!r}")
            values[target] = raw[key]
    for key, target in (("resource_attributes", "resource_attributes"), ("labels", "labels")):
        if key in raw:
            mapping = raw[key]
            if not isinstance(mapping, dict) or not all(
                isinstance(v, str) for v in mapping.values()
            ):
                raise ConfigError(f"{where}.{key}: expected an object of string values")
            values[target] = tuple(mapping.items())
    values.setdefault("service_name", "sluice-edge")
    return ClientIdentity(**values)


def parse_config(doc: Any, source: str) -> EdgeConfig:
    """Validate a decoded config document."""
    if not isinstance(doc, dict):
        raise ConfigError(f"{source}: expected a JSON object at the top level")
    # Providers expand their own values (expanding twice would undo "$${X}").
    doc = {
        k: v if k == "policy_providers" else _expand(v, f"{source}: {k}") for k, v in doc.items()
    }
    for key in doc:
        if key not in KNOWN_KEYS:
            log.warning("%s: unknown key %r ignored", source, key)
    if "upstream_url" not in doc:
        raise ConfigError(f"{source}: upstream_url: required (where to forward telemetry)")
    values: dict[str, Any] = {"source": source}
    values["upstream_url"] = _url(doc["upstream_url"], f"{source}: upstream_url")
    for key in ("logs_url", "metrics_url", "api_url"):
        if key in doc:
            values[key] = _url(doc[key], f"{source}: {key}")
    if "listen_address" in doc:
        if not isinstance(doc["listen_address"], str) or not doc["listen_address"]:
            raise ConfigError(f"{source}: listen_address: expected an address string")
        values["listen_address"] = doc["listen_address"]
    if "listen_port" in doc:
        values["listen_port"] = _int(doc["listen_port"], f"{source}: listen_port", 0, 65535)
    if "log_level" in doc:
        level = doc["log_level"]
        if level not in LOG_LEVELS:
            raise ConfigError(
                f"{source}: log_level: expected one of {', '.join(LOG_LEVELS)}, got {level!r}"
            )
        values["log_level"] = level
    if "max_body_size" in doc:
        values["max_body_size"] = _int(doc["max_body_size"], f"{source}: max_body_size", 1, 1 << 31)
    if "upstream_timeout_secs" in doc:
        raw = doc["upstream_timeout_secs"]
        if isinstance(raw, bool) or not isinstance(raw, int | float) or raw <= 0:
            raise ConfigError(
                f"{source}: upstream_timeout_secs: expected a positive number, got {raw!r}"
            )
        values["upstream_timeout_secs"] = float(raw)
    if "workers" in doc:
        values["workers"] = _int(doc["workers"], f"{source}: workers", 1, 256)
    if "max_response_size" in doc:
        values["max_response_size"] = _int(
            doc["max_response_size"], f"{source}: max_response_size", 1024, 1 << 31
        )
    limits: dict[str, Any] = {}
    for key, low, high in LIMITS:
        if key not in doc:
            continue
        raw, where = doc[key], f"{source}: {key}"
        if key.endswith("_secs"):
            if isinstance(raw, bool) or not isinstance(raw, int | float) or not low <= raw <= high:
                raise ConfigError(
                    f"{where}: expected a number from {low:g} to {high:g}, got {raw!r}"
                )
            limits[key.removesuffix("_secs")] = float(raw)
        else:
            limits[key] = _int(raw, where, int(low), int(high))
    values["limits"] = ServerLimits(
        max_body_size=values.get("max_body_size", EdgeConfig.max_body_size), **limits
    )
    base = Path(source).parent if source else None
    values["policy_providers"] = tuple(
        parse_providers(doc.get("policy_providers"), f"{source}: policy_providers", base)
    )
    values["service"] = _identity(doc.get("service"), f"{source}: service")
    return EdgeConfig(**values)


def load_config(path: str | Path) -> EdgeConfig:
    """Read and validate a config file; ConfigError names the file and field."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as problem:
        raise ConfigError(f"{path}: cannot read: {problem}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as problem:
        raise ConfigError(f"{path}: not valid JSON: {problem}") from None
    return parse_config(doc, str(path))
