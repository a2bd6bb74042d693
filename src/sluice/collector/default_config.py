"""The built-in default config (COLLECTOR.md section 5): OTLP gRPC and HTTP
on localhost, memory_limiter, batch, policy on the bundled example policies,
the debug exporter and health_check, for all three signals."""

from __future__ import annotations

from importlib import resources

from sluice.collector.component import ComponentID, Kind
from sluice.collector.confmap import goyaml

TEMPLATE = """\
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: localhost:4317
      http:
        endpoint: localhost:4318
processors:
  memory_limiter:
    check_interval: 1s
    limit_mib: 512
  batch:
  policy:
    providers:
      - type: file
        id: bundled-examples
        path: "{policies}"
exporters:
  debug:
    verbosity: normal
    use_internal_logger: false   # records as plain lines on stdout
extensions:
  health_check:
    endpoint: localhost:13133
service:
  extensions: [health_check]
  telemetry:
    metrics:
      address: localhost:8888
  pipelines:
    logs:
      receivers: [otlp]
      processors: [memory_limiter, policy, batch]
      exporters: [debug]
    metrics:
      receivers: [otlp]
      processors: [memory_limiter, policy, batch]
      exporters: [debug]
    traces:
      receivers: [otlp]
      processors: [memory_limiter, policy, batch]
      exporters: [debug]
"""


def default_yaml() -> str:
    """The default config, with the bundled policy file's absolute path."""
    policies = resources.files("sluice.examples") / "policies.json"
    return TEMPLATE.format(policies=str(policies).replace('"', '\\"'))


def default_components() -> frozenset[tuple[Kind, str]]:
    """(kind, type) of every component the default config uses: a
    distribution holding all of them can run it."""
    doc = goyaml.load(TEMPLATE.format(policies=""))
    return frozenset(
        (kind, ComponentID.parse(name).type)
        for kind in (Kind.RECEIVER, Kind.PROCESSOR, Kind.EXPORTER, Kind.EXTENSION)
        for name in doc.get(kind.value, {})
    )
