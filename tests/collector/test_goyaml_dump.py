"""``goyaml.dump`` writes what Go's yaml.v3 ``Marshal`` writes (upstream's
``components`` output is yaml.v3's)."""

from __future__ import annotations

import pytest

from sluice.collector.confmap import goyaml

# otelcol/testdata/components-output.yaml in the collector repository (v0.115.0),
# shortened to one component per kind.
UPSTREAM = """\
buildinfo:
    command: otelcol
    description: OpenTelemetry Collector
    version: latest
receivers:
    - name: nop
      module: go.opentelemetry.io/collector/receiver/receivertest v1.2.3
      stability:
        logs: Stable
        metrics: Stable
        traces: Stable
processors: []
connectors:
    - name: nop
      module: go.opentelemetry.io/collector/connector/connectortest v1.2.3
      stability:
        logs-to-logs: Development
extensions:
    - name: nop
      module: go.opentelemetry.io/collector/extension/extensiontest v1.2.3
      stability:
        extension: Stable
"""


def test_the_upstream_components_output_round_trips() -> None:
    assert goyaml.dump(goyaml.load(UPSTREAM)) == UPSTREAM


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("plain text", "plain text"),
        ("", '""'),
        ("true", '"true"'),
        ("yes", '"yes"'),  # a YAML 1.1 boolean
        ("1.0", '"1.0"'),
        ("0x1F", '"0x1F"'),
        ("2024-01-01", '"2024-01-01"'),
        ("1:30", '"1:30"'),  # a YAML 1.1 sexagesimal number
        ("a: b", "'a: b'"),
        ("it's: here", "'it''s: here'"),
        ("- item", "'- item'"),
        ("tab\there", '"tab\\there"'),
        ("bell\a", '"bell\\a"'),
        ("x" * 120, "x" * 120),  # never wrapped
        ("Collecteur à politiques", "Collecteur à politiques"),  # yaml.v3 writes Unicode
    ],
)
def test_scalars_are_quoted_only_where_plain_would_read_back_otherwise(
    text: str, written: str
) -> None:
    assert goyaml.dump({"key": text}) == f"key: {written}\n"


def test_nesting_follows_yaml_v3s_indentation() -> None:
    doc = {"a": [["x", "y"], {"k": {"deep": "v"}}, "text\nlines"], "n": {}, "z": "1"}
    assert goyaml.dump(doc) == (
        "a:\n"
        "    - - x\n"
        '      - "y"\n'  # a YAML 1.1 boolean
        "    - k:\n"
        "        deep: v\n"
        "    - |-\n"
        "      text\n"
        "      lines\n"
        '"n": {}\n'
        'z: "1"\n'
    )
