"""``sluice-edge validate CONFIG.json`` (or ``--dry-run``): the config is
valid (the caller loaded it), so load every policy provider once and print
what Edge would run: where it listens, where each route goes, and each
provider's policies. Nothing listens and nothing is forwarded. Exit 1 when a
provider cannot load, since Edge would then start without its policies."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from sluice.edge.config import EdgeConfig
from sluice.edge.metrics import TELEMETRY_TYPES
from sluice.logs import redact_url
from sluice.policy import Policy
from sluice.policy.patterns import DatabaseCache
from sluice.providers import PolicyRegistry, Provider, RemoteProvider, make_providers


def _where(provider: Provider) -> str:
    config = provider.config
    return f"{config.type} {config.path or redact_url(config.url)}"


def _summary(policies: Sequence[Policy]) -> list[str]:
    active = [p for p in policies if p.enabled and p.valid and p.signal is not None]
    counts = ", ".join(
        f"{sum(p.signal is s for p in active)} {name}" for s, name in TELEMETRY_TYPES.items()
    )
    disabled = sum(not p.enabled for p in policies)
    broken = [p for p in policies if p.enabled and not p.valid]
    lines = [
        f"{len(active)} active policies ({counts}), {disabled} disabled, "
        f"{len(broken)} with errors (skipped)"
    ]
    lines += [f"  {p.id}: {error}" for p in broken for error in p.errors]
    return lines


def validate(config: EdgeConfig, distribution: str, out: TextIO, err: TextIO) -> int:
    """Load each provider once and print the plan to `out`; 0, or 1 when a
    provider failed (named on `err`)."""
    workers = f"{config.workers} worker{'s' if config.workers > 1 else ''}"
    print(f"{config.source}: config is valid", file=out)
    print(
        f"{distribution} would listen on {config.listen_address}:{config.listen_port} "
        f"({workers}, log_level {config.log_level}, log_format {config.log_format})",
        file=out,
    )
    print("routes:", file=out)
    for routes, url in config.routing():
        print(f"  {routes} -> {redact_url(url)}", file=out)
    registry = PolicyRegistry(cache=DatabaseCache.default())
    providers = make_providers(list(config.policy_providers), registry, config.service)
    if not providers:
        print("policy providers: none (every request is forwarded unfiltered)", file=out)
    else:
        print("policy providers:", file=out)
    failed = []
    for provider in providers:
        loaded = provider.poll()
        if isinstance(provider, RemoteProvider):
            provider.transport.close()
        print(f"  {provider.config.id} ({_where(provider)}):", file=out)
        if not loaded:
            failed.append(f"{provider.config.id}: {provider.last_error}")
            print(f"    cannot load: {provider.last_error}", file=out)
            continue
        for line in _summary(registry.owned_by(provider.config.id)):
            print(f"    {line}", file=out)
    for failure in failed:
        print(f"{config.source}: policy provider {failure}", file=err)
    return 1 if failed else 0
