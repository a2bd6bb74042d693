"""The ``resource`` processor: upstream's config and examples, and the
attributes processor's actions applied to every resource of logs, metrics
and traces."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from sluice.collector import client
from sluice.collector.components.processors.resource import FACTORY
from sluice.collector.components.processors.resource.config import ResourceConfig
from sluice.policy import Signal
from tests.collector.components.attribute_data import (
    ACTION_CASES,
    SIGNALS,
    decoded,
    item_attributes,
    one_item,
    processed,
    resource_attributes,
)
from tests.collector.helpers import run_cli
from tests.collector.testdata_configs import load_config

TESTDATA = Path(__file__).parent / "testdata" / "resource"


def load(name: str) -> tuple[ResourceConfig, list[str]]:
    return load_config(ResourceConfig, TESTDATA / name)


def run(config: ResourceConfig, signal: Signal, data: Any) -> Any:
    return processed(FACTORY, config, signal, data)


def test_factory_is_upstreams() -> None:
    assert FACTORY.component_type == "resource"
    assert FACTORY.stability == {"logs": "beta", "metrics": "beta", "traces": "beta"}
    assert FACTORY.module.endswith("/processor/resourceprocessor")


def test_configs_with_upstreams_wording() -> None:
    config, problems = load("config_attributes.yaml")
    assert problems == []
    assert [(a.key, a.kind) for a in config.attributes] == [
        ("cloud.availability_zone", "upsert"),
        ("k8s.cluster.name", "insert"),
        ("redundant-attribute", "delete"),
    ]
    assert load("config_empty.yaml")[1] == ['missing required field "attributes"']
    assert load("config_unknown_key.yaml")[1] == ["'' has invalid keys: include"]


def test_actions_are_checked_when_a_pipeline_creates_the_processor() -> None:
    """Upstream's Validate wants only a non-empty ``attributes``; NewAttrProc
    checks the actions when a pipeline creates the processor."""
    config, problems = load("config_bad_action.yaml")
    assert problems == []
    for signal in SIGNALS:
        assert list(FACTORY.signal_problems(config, signal)) == [
            (
                "attributes[0]",
                'error creating AttrProc. Either field "value", "from_attribute" or '
                '"from_context" setting must be specified for 0-th action',
            )
        ]  # and no word of the 1-th action's unnamed group: upstream stops at the first


def test_a_processor_with_bad_actions_loads_until_a_pipeline_uses_it(tmp_path: Path) -> None:
    config = tmp_path / "collector.yaml"
    bad = (TESTDATA / "config_bad_action.yaml").read_text()
    unused = (
        (TESTDATA / "upstream_examples.yaml")
        .read_text()
        .replace("processors:\n", "processors:\n" + textwrap.indent(bad, "  "), 1)
    )
    config.write_text(unused)
    result = run_cli("validate", "--config", str(config), env={"DEPLOYMENT_ENV": ""})
    assert (result.returncode, result.stdout) == (0, "config is valid\n"), result.stderr
    config.write_text(unused.replace("[resource/readme,", "[resource/bad_action, resource/readme,"))
    problems = [
        f"{config}: processors::resource/bad_action::attributes[0]: error creating AttrProc. "
        'Either field "value", "from_attribute" or "from_context" setting must be specified '
        f'for 0-th action (creating it for pipeline "{pipeline}")'
        for pipeline in ("traces", "logs", "metrics")
    ]
    for command in (["validate"], []):
        result = run_cli(*command, "--config", str(config), env={"DEPLOYMENT_ENV": ""})
        assert result.returncode == 1
        assert result.stderr.splitlines() == [
            *problems,
            "sluice-collector: the config does not load (3 problem(s))",
        ]


def test_upstreams_examples_validate(tmp_path: Path) -> None:
    path = TESTDATA / "upstream_examples.yaml"
    result = run_cli("validate", "--config", str(path), env={"DEPLOYMENT_ENV": ""})
    assert (result.returncode, result.stdout) == (0, "config is valid\n"), result.stderr


def test_default_values_fill_in_for_missing_sources() -> None:
    raw = {
        "attributes": [
            {
                "key": "deployment.environment",
                "value": None,
                "default_value": "development",
                "action": "upsert",
            },
            {
                "key": "service.namespace",
                "from_attribute": "namespace",
                "default_value": "default",
                "action": "insert",
            },
            {
                "key": "cloud.region",
                "from_context": "metadata.region",
                "default_value": "us-east-1",
                "action": "upsert",
            },
        ]
    }
    config = decoded(ResourceConfig, raw)
    data = run(config, Signal.METRIC, one_item(Signal.METRIC, [("namespace", "shop")]))
    assert resource_attributes(Signal.METRIC, data) == [
        [
            ("namespace", "Str(shop)"),
            ("deployment.environment", "Str(development)"),
            ("service.namespace", "Str(shop)"),
            ("cloud.region", "Str(us-east-1)"),
        ]
    ]


def test_from_context_reads_the_requests_client() -> None:
    config = decoded(
        ResourceConfig,
        {
            "attributes": [
                {"key": "tenant", "from_context": "metadata.x-tenant", "action": "upsert"},
                {"key": "user", "from_context": "auth.username", "action": "insert"},
            ]
        },
    )
    sent = client.Info("", client.metadata_of([("X-Tenant", "acme")]), {"username": "bob"})
    with client.serving(sent):
        data = run(config, Signal.LOG, one_item(Signal.LOG, [("tenant", "old")]))
    assert resource_attributes(Signal.LOG, data) == [
        [("tenant", "Str(acme)"), ("user", "Str(bob)")]
    ]


@pytest.mark.parametrize(
    ("entries", "given", "expected"),
    [case[1:] for case in ACTION_CASES],
    ids=[case[0] for case in ACTION_CASES],
)
@pytest.mark.parametrize("signal", SIGNALS, ids=["logs", "metrics", "traces"])
def test_actions_edit_resource_attributes(
    signal: Signal,
    entries: list[dict[str, Any]],
    given: list[tuple[str, Any]],
    expected: list[tuple[str, str]],
) -> None:
    config = decoded(ResourceConfig, {"attributes": entries})
    data = one_item(signal, given)
    before = item_attributes(signal, data)
    run(config, signal, data)
    assert resource_attributes(signal, data) == [expected]
    assert item_attributes(signal, data) == before  # the items are not the processor's
