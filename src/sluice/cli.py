"""Command-line entry points: parse arguments, call into the library."""

from __future__ import annotations

import argparse
import gc
import logging
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from sluice import __version__
from sluice.demo import run_demo, send_demo
from sluice.evaluate import (
    InputError,
    OutputError,
    evaluate_document,
    lowercase_ids,
    read_json,
    read_json_file,
    stats_document,
    write_json,
)
from sluice.logs import redact_url
from sluice.policy import PolicySnapshot, Signal
from sluice.policy.cache import CompileCache
from sluice.providers import Provider, make_providers, parse_providers
from sluice.providers.config import (
    TIMEOUT_SECS,
    ConfigError,
    ProviderConfig,
    ProviderType,
    check_header,
    expand_env,
    sync_url,
)
from sluice.providers.file import PolicyFileError, log_report, read_policy_file
from sluice.providers.registry import PolicyRegistry
from sluice.providers.remote import RemoteProvider
from sluice.providers.server import PolicyServer
from sluice.telemetry.otlp_json import detect_signal

log = logging.getLogger("sluice")

SIGNALS = {"log": Signal.LOG, "metric": Signal.METRIC, "trace": Signal.TRACE}


class UsageError(Exception):
    """Arguments that cannot work together; printed as an error, exit 2."""


def _headers(raw: list[str], grpc: bool) -> tuple[tuple[str, str], ...]:
    """The ``--header`` options, checked as a provider's ``headers`` are."""
    headers = []
    for item in raw:
        name, sep, value = item.partition(":")
        if not sep or not name.strip():
            raise UsageError(f"--header {item!r}: expected 'Name: value'")
        name = name.strip()
        try:
            value = expand_env(value.strip(), "--header")
            check_header(name, value, "--header", f"--header {name!r}", grpc)
        except ConfigError as problem:
            raise UsageError(str(problem)) from None
        headers.append((name, value))
    return tuple(headers)


def _sync_config(args: argparse.Namespace) -> ProviderConfig:
    """The policy server of ``--server`` or ``--grpc``, its URL, headers and
    timeout checked as a provider's in a config file are (a wrong one failed
    only at the sync, or was dialled at another port)."""
    kind: ProviderType = "grpc" if args.grpc else "http"
    option = "--grpc" if args.grpc else "--server"
    try:
        url = sync_url(args.grpc or args.server, option, kind, expand=False)
        timeout = TIMEOUT_SECS[False](args.timeout, "--timeout")
    except ConfigError as problem:
        raise UsageError(str(problem)) from None
    headers = _headers(args.header, grpc=kind == "grpc")
    return ProviderConfig(type=kind, id="sync", url=url, headers=headers, timeout_secs=timeout)


def _synced_snapshot(config: ProviderConfig) -> tuple[PolicySnapshot, RemoteProvider]:
    provider = RemoteProvider(config, PolicyRegistry(cache=CompileCache.default()))
    if not provider.sync(full_sync=True):
        raise InputError(f"policy sync with {redact_url(config.url)} failed: {provider.last_error}")
    return provider.registry.snapshot, provider


def _configured_snapshot(path: str) -> tuple[PolicySnapshot, list[Provider]]:
    """Load every provider of a config file's ``policy_providers`` once."""
    doc = read_json(path)
    if not isinstance(doc, dict):
        raise ConfigError(f"{path}: expected a JSON object")
    configs = parse_providers(
        doc.get("policy_providers"), f"{path}: policy_providers", Path(path).parent, text=True
    )
    if not configs:
        raise ConfigError(f"{path}: policy_providers: no providers configured")
    registry = PolicyRegistry(cache=CompileCache.default())
    providers = make_providers(configs, registry)
    failed = []
    for provider in providers:
        if isinstance(provider, RemoteProvider):
            ok = provider.sync(full_sync=True)
        else:
            ok = provider.poll()
        if not ok:
            failed.append(f"{provider.config.id}: {provider.last_error}")
    if failed:
        raise InputError(f"{path}: provider(s) failed to load: " + "; ".join(failed))
    return registry.snapshot, providers


def cmd_eval(args: argparse.Namespace) -> int:
    sources = [bool(args.policies), bool(args.server), bool(args.grpc), bool(args.config)]
    if sum(sources) != 1:
        raise UsageError("eval needs exactly one of --policies, --server, --grpc or --config")
    server = _sync_config(args) if args.server or args.grpc else None
    # One batch, then exit: nothing it builds (policies, the whole input
    # document) becomes garbage before the end, so the cyclic collector
    # would only walk it again and again (more than half of the run on
    # 50,000 records); what cyclic garbage there is goes with the process.
    gc.disable()
    providers: list[Provider] = []
    if args.policies:
        cache = CompileCache.default()
        report = read_policy_file(args.policies, cache)
        log_report(report, args.policies)
        snapshot = PolicySnapshot.compile(report.policies, cache=cache)
    elif args.config:
        snapshot, providers = _configured_snapshot(args.config)
    elif server is not None:
        snapshot, remote = _synced_snapshot(server)
        providers = [remote]
    source = read_json_file(args.input)
    signal = SIGNALS[args.signal] if args.signal else detect_signal(source.document)
    evaluate_document(snapshot, source.document, signal)
    lowercase_ids(source.document, signal)
    write_json(args.output, source.document, plain=source.plain)
    for provider in providers:
        if isinstance(provider, RemoteProvider):
            if not provider.sync(full_sync=True):
                log.error("final status sync failed: %s", provider.last_error)
            provider.transport.close()
    if args.stats:
        write_json(args.stats, stats_document(snapshot.runtime.stats))
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    failed = 0
    for path in args.files:
        report = read_policy_file(path)
        for warning in report.warnings:
            print(f"{path}: warning: {warning}")
        errors = 0
        for policy in report.policies:
            if not policy.enabled:
                continue
            for error in policy.errors:
                print(f"{path}: {policy.id}: {error}")
                errors += 1
        valid = sum(1 for p in report.policies if p.enabled and p.valid and p.signal)
        disabled = sum(1 for p in report.policies if not p.enabled)
        print(f"{path}: {valid} valid, {errors} error(s), {disabled} disabled")
        failed += errors
    return 1 if failed else 0


def cmd_demo(args: argparse.Namespace) -> int:
    if args.endpoint:
        metrics = None if args.metrics == "none" else args.metrics
        return send_demo(sys.stdout, args.endpoint, metrics, args.wait)
    return run_demo(sys.stdout, Path(args.output_dir) if args.output_dir else None)


def cmd_policy_server(args: argparse.Namespace) -> int:
    path = Path(args.policies)
    if not path.is_file():
        raise PolicyFileError(f"{path}: no such file")
    token = expand_env(args.token, "--token") if args.token else ""
    if bool(args.tls_cert) != bool(args.tls_key):
        raise UsageError("--tls-cert and --tls-key go together")
    tls = (Path(args.tls_cert), Path(args.tls_key)) if args.tls_cert else None
    server = PolicyServer(path, token=token, host=args.host, tls=tls)
    if server.source.problem:
        raise PolicyFileError(server.source.problem)
    # gRPC first: once HTTP answers, both are serving, so a script can wait on
    # one URL (the README's provider walk-through does).
    grpc_port = server.start_grpc(args.grpc_port)
    http_port = server.start_http(args.http_port)
    print(f"HTTP_PORT={http_port}", flush=True)
    print(f"GRPC_PORT={grpc_port}", flush=True)

    def stop(signum: int, frame: FrameType | None) -> None:
        server.stopped.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    server.stopped.wait()
    server.stop()
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sluice", description="Telemetry policy filtering for OpenTelemetry and Datadog."
    )
    parser.add_argument("--version", action="version", version=f"sluice {__version__}")
    parser.add_argument(
        "--log-level", default="warning", choices=["debug", "info", "warning", "error"]
    )
    sub = parser.add_subparsers(dest="command", required=True)

    ev = sub.add_parser("eval", help="apply policies to one OTLP JSON export request")
    ev.add_argument("--policies", help="policy file (JSON)")
    ev.add_argument(
        "--server",
        metavar="URL",
        help="get policies from a sync server over HTTP (…/v1/policy/sync)",
    )
    ev.add_argument("--grpc", metavar="HOST:PORT", help="get policies from a gRPC sync server")
    ev.add_argument(
        "--config",
        metavar="CONFIG.json",
        help="get policies from the policy_providers of a config file",
    )
    ev.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="header for sync requests (repeatable; ${ENV} is expanded)",
    )
    ev.add_argument("--timeout", type=float, default=10.0, help="sync timeout in seconds")
    ev.add_argument("--input", required=True, help="OTLP JSON export request to filter")
    ev.add_argument("--output", required=True, help="where to write the filtered request")
    ev.add_argument("--stats", help="where to write per-policy hit/miss counts")
    ev.add_argument(
        "--signal",
        choices=sorted(SIGNALS),
        help="log, metric or trace (default: from the input's top-level key)",
    )
    ev.set_defaults(run=cmd_eval)

    check = sub.add_parser("check", help="validate policy files; exit 1 on any error")
    check.add_argument("files", nargs="+", metavar="POLICIES.json")
    check.set_defaults(run=cmd_check)

    demo = sub.add_parser("demo", help="run the bundled example policies on bundled telemetry")
    demo.add_argument("--output-dir", help="also write the filtered documents here")
    demo.add_argument(
        "--endpoint",
        help="send the bundled telemetry to a collector's OTLP/HTTP endpoint instead "
        "(e.g. http://localhost:4318)",
    )
    demo.add_argument(
        "--metrics",
        default="http://localhost:8888/metrics",
        help="with --endpoint: the collector's metrics, to show what its policies did "
        "('none' to skip)",
    )
    demo.add_argument(
        "--wait",
        type=float,
        default=30,
        metavar="SECS",
        help="with --endpoint: wait this long for the collector to listen (default 30)",
    )
    demo.set_defaults(run=cmd_demo)

    server = sub.add_parser("policy-server", help="serve a policy file over HTTP and gRPC sync")
    server.add_argument(
        "--policies", required=True, help="policy file to serve (reloaded on change)"
    )
    server.add_argument("--host", default="127.0.0.1", help="address to listen on")
    server.add_argument("--http-port", type=int, default=0, help="HTTP port (0: any free port)")
    server.add_argument("--grpc-port", type=int, default=0, help="gRPC port (0: any free port)")
    server.add_argument(
        "--token", default="", help="require 'Authorization: Bearer TOKEN' (${ENV} is expanded)"
    )
    server.add_argument("--tls-cert", help="PEM certificate chain: serve HTTPS and gRPC over TLS")
    server.add_argument("--tls-key", help="PEM private key for --tls-cert")
    server.set_defaults(run=cmd_policy_server)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=args.log_level.upper(),
        stream=sys.stderr,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        code: int = args.run(args)
    except UsageError as problem:
        parser.error(str(problem))
    except (PolicyFileError, InputError, OutputError, ConfigError) as problem:
        print(f"sluice: error: {problem}", file=sys.stderr)
        return 1
    return code


if __name__ == "__main__":
    sys.exit(main())
