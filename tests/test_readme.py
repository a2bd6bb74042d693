"""The README's policy examples are valid policies, and its error list is real."""

from __future__ import annotations

import json
import re
from pathlib import Path

from sluice.policy import load_document

README = (Path(__file__).parent.parent / "README.md").read_text()


def test_policy_file_examples_load_without_errors() -> None:
    blocks = [
        json.loads(b)
        for b in re.findall(r"```json\n(.*?)```", README, re.S)
        if b.lstrip().startswith('{\n  "policies"')
    ]
    assert blocks
    for block in blocks:
        report = load_document(block)
        assert report.warnings == []
        assert [p.errors for p in report.policies if p.errors] == []


def test_transform_example_loads() -> None:
    snippet = re.search(r"```json\n(\"transform\".*?)```", README, re.S)
    assert snippet is not None
    transform = json.loads("{" + snippet.group(1) + "}")["transform"]
    policy = {
        "id": "t",
        "name": "t",
        "log": {"match": [{"log_field": "body", "exists": True}], "transform": transform},
    }
    assert load_document({"policies": [policy]}).policies[0].errors == ()


def test_documented_error_messages_are_produced() -> None:
    documented = re.search(r"Messages\n.*?```\n(.*?)```", README, re.S)
    assert documented is not None
    policies = {
        "policies": [
            {
                "id": "e",
                "name": "e",
                "enabled": "false",
                "log": {
                    "match": [
                        {"log_field": "body", "regex": "([bad"},
                        {"exact": "x"},
                        {"log_attribute": [], "exact": "x"},
                        {"log_field": "body"},
                        {"log_field": "body", "exact": "a", "regex": "b"},
                        {"log_field": "body", "exact": ""},
                    ],
                    "keep": "sometimes",
                    "transform": {
                        "redact": [{"log_field": "body", "regex": "(?=x)"}],
                        "rename": [{"from_log_attribute": "a", "to": ""}],
                    },
                },
            }
        ]
    }
    errors = load_document(policies).policies[0].errors
    lines = documented.group(1).splitlines()
    for line in lines[:6] + lines[7:8] + lines[-1:]:
        prefix = line.split("…")[0]
        assert any(e.startswith(prefix) for e in errors), line
