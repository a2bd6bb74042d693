"""Config sources, merging, ``--set`` and ``${...}`` expansion, and the typed
decoder's key-path errors."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from sluice.collector.confmap import expand, sources
from sluice.collector.confmap.decode import Duration, Problems, decode, parse_duration


def test_files_merge_in_order_maps_merge_lists_replace(tmp_path: Path) -> None:
    first = tmp_path / "a.yaml"
    first.write_text("processors:\n  batch:\n    timeout: 1s\n    metadata_keys: [a, b]\n")
    second = tmp_path / "b.yaml"
    second.write_text("processors:\n  batch:\n    metadata_keys: [c]\n  memory_limiter: {}\n")
    loaded = sources.Loaded([str(first), f"file:{second}"], [])
    assert loaded.raw == {
        "processors": {"batch": {"timeout": "1s", "metadata_keys": ["c"]}, "memory_limiter": {}}
    }
    assert loaded.origin("processors::batch::timeout") == str(first)
    assert loaded.origin("processors::batch::metadata_keys[0]") == str(second)


def test_yaml_snippets_env_sources_and_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BASE", "exporters:\n  debug:\n    verbosity: basic\n")
    loaded = sources.Loaded(
        ["env:BASE", "yaml:processors::batch::timeout: 2s"],
        ["exporters.debug.verbosity=detailed", "processors.batch.send_batch_size=[1, 2]"],
    )
    assert loaded.raw == {
        "exporters": {"debug": {"verbosity": "detailed"}},
        "processors": {"batch": {"timeout": "2s", "send_batch_size": [1, 2]}},
    }


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("/nonexistent/c.yaml", "/nonexistent/c.yaml: cannot read"),
        ("yaml:a: [1", "not valid YAML"),
        ("env:SLUICE_TEST_UNSET_VAR", "environment variable SLUICE_TEST_UNSET_VAR is not set"),
        ("ftp:x", 'unsupported scheme on URI "ftp:x"'),
        ("yaml:- 1", "the config must be a map"),
    ],
)
def test_unreadable_sources_name_themselves(uri: str, message: str) -> None:
    with pytest.raises(sources.SourceError, match=message.replace("[", r"\[")):
        sources.Loaded([uri], [])


def test_set_needs_an_equal_sign() -> None:
    with pytest.raises(sources.SourceError, match="missing equal sign"):
        sources.Loaded([], ["processors.batch.timeout"])


def test_expansion_types_whole_values_and_keeps_embedded_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PORT", "4318")
    monkeypatch.setenv("HOST", "collector")
    monkeypatch.setenv("EMPTY", "")
    problems = Problems()
    doc = {
        "port": "${env:PORT}",
        "bare": "${PORT}",
        "url": "http://${env:HOST}:${PORT}/v1",
        "fallback": "${env:SLUICE_TEST_UNSET_VAR:-localhost:4317}",
        "empty_fallback": "${env:EMPTY:-x}",
        "dollar": "a$$b",
        "escaped": "$${env:HOST}",
        "list": ["${env:HOST}"],
    }
    assert expand.expand(doc, "", problems) == {
        "port": 4318,
        "bare": 4318,
        "url": "http://collector:4318/v1",
        "fallback": "localhost:4317",
        "empty_fallback": "x",
        "dollar": "a$b",
        "escaped": "${env:HOST}",
        "list": ["collector"],
    }
    assert not problems


def test_an_unset_variable_without_default_is_an_error_naming_the_key() -> None:
    problems = Problems()
    expand.expand(
        {"exporters": {"otlp": {"endpoint": "${env:SLUICE_TEST_UNSET_VAR}"}}}, "", problems
    )
    assert problems.lines == [
        "exporters::otlp::endpoint: environment variable SLUICE_TEST_UNSET_VAR is not set "
        "(give a default with ${env:SLUICE_TEST_UNSET_VAR:-default})"
    ]


def test_unsupported_schemes_are_errors() -> None:
    problems = Problems()
    expand.expand({"a": "${file:/etc/passwd}"}, "", problems)
    assert problems.lines == ['a: scheme "file" is not supported for uri "file:/etc/passwd"']


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("200ms", 0.2), ("1m30s", 90.0), ("0", 0.0), ("1.5h", 5400.0), ("10us", 1e-5)],
)
def test_go_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@dataclass
class _Inner:
    endpoint: str = "localhost:4318"
    enabled: bool = True


@dataclass
class _Outer:
    size: int = 8192
    timeout: Duration = Duration(0.2)
    inner: _Inner | None = None
    names: list[str] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)


def test_decode_applies_defaults_types_and_null_sections() -> None:
    problems = Problems()
    value = decode(
        _Outer, {"size": 10, "timeout": "2s", "inner": None, "headers": {"a": 1}}, "x", problems
    )
    assert not problems
    assert value == _Outer(10, Duration(2.0), _Inner(), [], {"a": "1"})
    assert decode(_Outer, None, "x", problems) == _Outer()


def test_decode_errors_name_the_key_path() -> None:
    problems = Problems()
    decode(
        _Outer,
        {"size": "lots", "timeout": "2x", "inner": {"endpont": "a"}, "names": "a"},
        "processors::batch",
        problems,
    )
    assert problems.lines == [
        "processors::batch::size: expected type 'int', got unconvertible type 'string', value: 'lots'",
        'processors::batch::timeout: time: invalid duration "2x"',
        "processors::batch::inner: has invalid keys: endpont",
        "processors::batch::names: expected type 'slice', got unconvertible type 'string', value: 'a'",
    ]
