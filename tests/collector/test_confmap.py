"""Config sources, merging, ``--set`` and ``${...}`` expansion, and the typed
decoder's key-path errors."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest

from sluice.collector.confmap import expand, sources
from sluice.collector.confmap.decode import (
    Duration,
    Int64,
    Opaque,
    Problems,
    Uint32,
    decode,
    parse_duration,
    plain,
)
from sluice.confexpand import Expanded


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


def test_a_file_with_a_long_path_is_named_whole(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    config = deep / "collector.yaml"
    config.write_text("processors:\n  batch:\n    timeout: 1s\n")
    inline = "yaml:processors::batch::send_batch_size: " + "1" * 100
    loaded = sources.Loaded([str(config), inline], [])
    assert loaded.origin("processors::batch::timeout") == str(config)
    assert loaded.origin("processors::batch::send_batch_size") == inline[:77] + "..."


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
        # upstream's file provider's words, Go's error included
        (
            "/nonexistent/c.yaml",
            "unable to read the file file:/nonexistent/c.yaml: "
            "open /nonexistent/c.yaml: no such file or directory",
        ),
        (
            "file:/nonexistent/./c.yaml",
            "unable to read the file file:/nonexistent/./c.yaml: "
            "open /nonexistent/c.yaml: no such file or directory",
        ),
        ("/", "unable to read the file file:/: read /: is a directory"),
        ("yaml:a: [1", "not valid YAML"),
        ("env:SLUICE_TEST_UNSET_VAR", "environment variable SLUICE_TEST_UNSET_VAR is not set"),
        ("ftp:x", 'unsupported scheme on URI "ftp:x"'),
        (
            "yaml:- 1",
            "yaml:- 1: retrieved value (type=[]interface {}) cannot be used as a Conf",
        ),
        ("yaml:just text", "retrieved value (type=string) cannot be used as a Conf"),
        # A colon with no scheme before it (upstream's resolver), but a drive letter is a path.
        ("./a:b.yaml", 'invalid uri: "./a:b.yaml"'),
        ("c:/nonexistent/c.yaml", "unable to read the file file:c:/nonexistent/c.yaml: open"),
    ],
)
def test_unreadable_sources_name_themselves(uri: str, message: str) -> None:
    with pytest.raises(sources.SourceError, match=re.escape(message)):
        sources.Loaded([uri], [])


@pytest.mark.parametrize("bad", ["ftp:x", "./a:b.yaml"])
def test_every_source_is_located_before_any_is_read(tmp_path: Path, bad: str) -> None:
    """As upstream's resolver, which checks each URI's scheme when it is made
    and reads the sources only when it resolves: a bad URI after a missing
    file is the error, and nothing is read (or fetched) first."""
    with pytest.raises(sources.SourceError) as raised:
        sources.Loaded([str(tmp_path / "missing.yaml"), bad], [])
    assert f'"{bad}"' in str(raised.value)


def test_an_env_source_takes_its_default_only_when_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    """As ``${env:NAME:-default}`` and upstream's env provider: a variable set
    to the empty string is an empty config, not the default."""
    uri = "env:SLUICE_TEST_SOURCE:-{exporters: {debug: {verbosity: detailed}}}"
    monkeypatch.delenv("SLUICE_TEST_SOURCE", raising=False)
    assert sources.Loaded([uri], []).raw == {"exporters": {"debug": {"verbosity": "detailed"}}}
    monkeypatch.setenv("SLUICE_TEST_SOURCE", "")
    assert sources.Loaded(["yaml:a: 1", uri], []).raw == {"a": 1}


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
        "empty_is_not_unset": "${env:EMPTY:-x}",
        "dollar": "a$$b",
        "escaped": "$${env:HOST}",
        "list": ["${env:HOST}"],
    }
    expanded = expand.expand(doc, "", problems)
    assert plain(expanded) == {
        "port": 4318,
        "bare": 4318,
        "url": "http://collector:4318/v1",
        "fallback": "localhost:4317",
        "empty_is_not_unset": None,
        "dollar": "a$b",
        "escaped": "${env:HOST}",
        "list": ["collector"],
    }
    assert expanded["port"] == Expanded(4318, "4318")
    assert expanded["empty_is_not_unset"] == Expanded(None, "")
    assert not problems


@dataclass
class _Fields:
    text: str = ""
    number: int = 0
    anything: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    names: list[str] = field(default_factory=list)
    mode: Literal["on", "off"] = "off"


@pytest.mark.parametrize(
    ("variable", "text", "number", "anything"),
    [
        ("0755", "0755", 493, 493),
        ("0x1F", "0x1F", 31, 31),
        ("1_000", "1_000", 1000, 1000),
        ("'quoted'", "'quoted'", None, "'quoted'"),
        ("a #c", "a #c", None, "a #c"),
        ("12:30", "12:30", None, "12:30"),
        ("2024-01-01", "2024-01-01", None, "2024-01-01"),
        ("", "", 0, None),
    ],
)
def test_a_whole_value_reference_is_its_text_where_a_field_holds_text(
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
    text: str,
    number: int | None,
    anything: Any,
) -> None:
    """As upstream: a token or header value of 0755 stays 0755, while a
    number field reads the YAML value and a field of any type the typed one."""
    monkeypatch.setenv("V", variable)
    problems = Problems()
    raw = expand.expand({"text": "${env:V}", "headers": {"h": "${env:V}"}}, "", problems)
    decoded = decode(_Fields, raw, "x", problems)
    assert (decoded.text, decoded.headers) == (text, {"h": text})
    raw = expand.expand({"anything": "${env:V}"}, "", problems)
    assert decode(_Fields, raw, "x", problems).anything == anything
    if number is not None:
        raw = expand.expand({"number": "${env:V}"}, "", problems)
        assert decode(_Fields, raw, "x", problems).number == number
    assert not problems


def test_whole_value_booleans_and_words_reach_text_fields_unchanged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ON", "on")
    monkeypatch.setenv("TRUE", "true")
    problems = Problems()
    raw = expand.expand(
        {"text": "${env:TRUE}", "mode": "${env:ON}", "headers": {"a": "${ON}"}}, "", problems
    )
    assert decode(_Fields, raw, "x", problems) == _Fields(
        text="true", mode="on", headers={"a": "on"}
    )
    assert not problems


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("${env:A:-${env:B}}", "bee"),
        ("${env:${env:NAME}}", "bee"),
        ("${env:INDIRECT}", "bee"),
        ("x-${env:INDIRECT}-y", "x-bee-y"),
        ("${env:B}${env:B}/${env:B}", "beebee/bee"),
        ("$$${env:B}", "$bee"),
        ("$$$$${env:B}", "$$bee"),
        ("$${env:${env:B}}", "${env:bee}"),
        ("$${env:$${B}}", "${env:${B}}"),
        ("$${A}$${B}", "${A}${B}"),
        ("$${A} ${env:B}", "${A} ${env:B}"),
        ("${env:B}}}}${env:B", "bee}}}${env:B"),
        ("${env:B${env:B}", "${env:Bbee"),
        ("env:B}${env:B}{", "env:B}bee{"),
        ("${env:DOLLARS}", "a$b"),
        ("HO{ST}", "HO{ST}"),
        ("text$$", "text$"),
        ("$B", "$B"),
    ],
)
def test_references_nest_and_escape_as_upstream(
    monkeypatch: pytest.MonkeyPatch, value: str, expected: str
) -> None:
    """Innermost first, expanded text expanded again, an escaped ``$${``
    stops expanding, and ``$$`` left over is ``$`` (even in expanded text)."""
    monkeypatch.delenv("A", raising=False)
    monkeypatch.setenv("B", "bee")
    monkeypatch.setenv("NAME", "B")
    monkeypatch.setenv("INDIRECT", "${env:B}")
    monkeypatch.setenv("DOLLARS", "a$$b")
    problems = Problems()
    assert plain(expand.expand({"k": value}, "", problems)) == {"k": expected}
    assert not problems


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("${env:LOOP}", "too many recursive expansions"),
        ("${env:A:-pa$word}", """the uri "env:A:-pa$word" contains unsupported characters ('$')"""),
        ("${env:}", 'environment variable "" has invalid name'),
        ("${env:-A}", 'environment variable "-A" has invalid name'),
    ],
)
def test_expansion_errors_name_the_key(
    monkeypatch: pytest.MonkeyPatch, value: str, message: str
) -> None:
    monkeypatch.delenv("A", raising=False)
    monkeypatch.setenv("LOOP", "${env:LOOP}")
    problems = Problems()
    expand.expand({"a": {"b": value}}, "", problems)
    assert len(problems.lines) == 1
    assert problems.lines[0].startswith(f"a::b: {message}")


def test_yaml_is_read_as_the_collector_reads_it() -> None:
    """YAML 1.2's core schema (yaml.v3), not PyYAML's YAML 1.1: NO, on and
    yes are text, 1:30 is not 90, a date is text; 0755 is still octal."""
    loaded = sources.Loaded(
        [
            "yaml:v: {country: NO, flag: on, answer: yes, time: 1:30, day: 2024-01-01, "
            "octal: 0755, hex: 0x1F, big: 1_000, t: True, f: FALSE, n: ~, inf: .inf, "
            "float: 1.50, text: tRUE, q: '0755'}"
        ],
        [],
    )
    assert loaded.raw["v"] == {
        "country": "NO",
        "flag": "on",
        "answer": "yes",
        "time": "1:30",
        "day": "2024-01-01",
        "octal": 493,
        "hex": 31,
        "big": 1000,
        "t": True,
        "f": False,
        "n": None,
        "inf": float("inf"),
        "float": 1.5,
        "text": "tRUE",
        "q": "0755",
    }


def test_a_key_written_twice_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("processors:\n  batch:\nexporters:\n  debug:\nprocessors:\n  memory_limiter:\n")
    with pytest.raises(sources.SourceError) as raised:
        sources.Loaded([str(path)], [])
    assert str(raised.value) == (
        f"{path}: not valid YAML (line 5, column 1): "
        'mapping key "processors" already defined at line 1'
    )
    merged = sources.Loaded(["yaml:a: &x {k: 1}\nb:\n  <<: *x\n  k: 2\n"], [])
    assert merged.raw == {"a": {"k": 1}, "b": {"k": 2}}  # a merge key may be overridden


def test_keys_that_are_not_text_become_the_text_go_prints() -> None:
    """yaml.v3 reads a map with a number, boolean or null key as
    ``map[interface{}]interface{}`` and koanf turns each key into its ``%v``
    text: ``1`` and ``true`` stay two keys, ``"1"`` and ``"true"``."""
    loaded = sources.Loaded(
        ["yaml:h: {1: a, true: b, 1.5: c, 1e6: d, 0x10: e, ~: f, False: g}"], []
    )
    assert loaded.raw == {
        "h": {
            "1": "a",
            "true": "b",
            "1.5": "c",
            "1e+06": "d",
            "16": "e",
            "<nil>": "f",
            "false": "g",
        }
    }


@pytest.mark.parametrize(
    ("snippet", "expected"),
    [
        ("a: !!int '0x1F'", 31),
        ("a: !!float 2", 2.0),
        ("a: !!bool TRUE", True),
        ("a: !!str 12", "12"),
        ("a: !!int abc", "cannot decode !!str `abc` as a !!int"),
        ("a: !!int 1.5", "cannot decode !!float `1.5` as a !!int"),
        ("a: !!float abc", "cannot decode !!str `abc` as a !!float"),
        ("a: !!bool yes", "cannot decode !!str `yes` as a !!bool"),
        ("a: !!int true", "cannot decode !!bool `true` as a !!int"),
    ],
)
def test_an_explicit_scalar_tag_must_fit_its_text(snippet: str, expected: Any) -> None:
    """yaml.v3 resolves a tagged scalar's text as it would untagged and
    refuses a value of another kind (an integer may be a float)."""
    if isinstance(expected, str) and expected.startswith("cannot"):
        with pytest.raises(sources.SourceError, match=re.escape(expected)):
            sources.Loaded([f"yaml:{snippet}"], [])
    else:
        assert sources.Loaded([f"yaml:{snippet}"], []).raw == {"a": expected}


def test_other_tags_read_as_yaml_v3_reads_them_untyped() -> None:
    """What yaml.v3 gives an ``interface{}``: a timestamp stays its text,
    binary is the decoded text, a set is a map of nulls, an ordered map a
    list of maps, and a tag it does not know is ignored."""
    loaded = sources.Loaded(
        [
            "yaml:{t: !!timestamp 2001-12-14, b: !!binary aGVsbG8=, s: !!set {x, y}, "
            "o: !!omap [k: 1], l: !local 12, m: !local {k: v}}"
        ],
        [],
    )
    assert loaded.raw == {
        "t": "2001-12-14",
        "b": "hello",
        "s": {"x": None, "y": None},
        "o": [{"k": 1}],
        "l": "12",
        "m": {"k": "v"},
    }
    with pytest.raises(sources.SourceError, match="invalid base64 data"):
        sources.Loaded(["yaml:b: !!binary '#'"], [])


@pytest.mark.parametrize("text", ["AAAA=", "AAAA==", "aGVsbG8==", "aGVsbG8"])
def test_binary_is_read_as_go_base64_std_encoding_reads_it(text: str) -> None:
    """yaml.v3 decodes !!binary with Go's ``base64.StdEncoding``, which
    refuses padding after the last whole group and a group cut short;
    Python's reader takes the first two."""
    with pytest.raises(sources.SourceError, match="!!binary value contains invalid base64 data"):
        sources.Loaded([f"yaml:b: !!binary {text}"], [])
    folded = sources.Loaded(["yaml:b: !!binary |\n  aGVs\n  bG8=\n"], [])
    assert folded.raw == {"b": "hello"}


def test_an_anchor_may_be_defined_again_and_an_alias_names_the_latest() -> None:
    """yaml.v3 (as the YAML spec) lets a later node take an anchor's name;
    an alias then stands for the latest definition before it."""
    loaded = sources.Loaded(["yaml:a: &x 1\nb: *x\nc: &x {k: 2}\nd: *x\n"], [])
    assert loaded.raw == {"a": 1, "b": 1, "c": {"k": 2}, "d": {"k": 2}}


def test_an_alias_inside_its_own_anchor_is_not_yaml(monkeypatch: pytest.MonkeyPatch) -> None:
    """yaml.v3 refuses a node that contains an alias to itself ("anchor 'x'
    value contains itself"): a source is then not valid YAML, and a
    ``${...}`` value holding one is its text, as any value that does not parse."""
    with pytest.raises(sources.SourceError, match="anchor 'x' value contains itself"):
        sources.Loaded(["yaml:a: &x\n  b: *x\n"], [])
    monkeypatch.setenv("LOOP", "&x [1, *x]")
    problems = Problems()
    assert expand.expand({"k": "${env:LOOP}"}, "", problems) == {"k": "&x [1, *x]"}
    assert not problems


def test_excessive_aliasing_is_not_yaml() -> None:
    """yaml.v3 refuses a document whose aliases expand it exponentially
    ("billion laughs"): "document contains excessive aliasing", at once;
    anchors used a few hundred times, as configs do, are fine."""
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    levels += [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]" for n in range(1, 10)]
    started = time.monotonic()
    with pytest.raises(sources.SourceError, match="document contains excessive aliasing"):
        sources.Loaded(["yaml:" + "\n".join(levels) + "\n"], [])
    assert time.monotonic() - started < 5
    shared = "base: &b {k: [1, 2, 3]}\n" + "".join(f"p{n}: *b\n" for n in range(300))
    assert len(sources.Loaded(["yaml:" + shared], []).raw) == 301


def test_null_list_and_map_items_are_zero_values() -> None:
    problems = Problems()
    decoded = decode(_Fields, {"headers": {"a": None}, "names": [None, "b"]}, "x", problems)
    assert (decoded.headers, decoded.names) == ({"a": ""}, ["", "b"])
    assert not problems


def test_a_list_of_text_takes_a_comma_separated_string(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORIGINS", "https://a.example,https://b.example")
    problems = Problems()
    raw = expand.expand({"names": "${env:ORIGINS}"}, "", problems)
    assert decode(_Fields, raw, "x", problems).names == ["https://a.example", "https://b.example"]
    assert decode(_Fields, {"names": ""}, "x", problems).names == []
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
    expand.expand({"a": "${vault:secret/token}"}, "", problems)
    assert problems.lines == ['a: scheme "vault" is not supported for uri "vault:secret/token"']


@pytest.mark.parametrize("reference", ["a:b", "env_x:y", ":x", "1x:y", "s_3:has invalid char"])
def test_a_scheme_that_is_no_scheme_name_is_an_invalid_uri(reference: str) -> None:
    """Upstream's scheme is a letter and at least one more letter, digit,
    ``+``, ``.`` or ``-`` (confmap expand.go newLocation)."""
    problems = Problems()
    expand.expand({"a": f"${{{reference}}}"}, "", problems)
    assert problems.lines == [f'a: invalid uri: "{reference}"']


def test_file_references_hold_snippets_and_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A snippet's YAML becomes the value (references in it expand too; one
    in a comment is ignored); a text field gets the file as written."""
    (tmp_path / "exporters.yaml").write_text("# ${hello.world}\ndebug:\n  verbosity: detailed\n")
    (tmp_path / "pipelines.yaml").write_text(
        "logs:\n  receivers: ${env:RECEIVERS}\n  exporters: [debug]\n"
    )
    (tmp_path / "token").write_text("s3cr3t\n")
    monkeypatch.setenv("BASE", str(tmp_path))
    monkeypatch.setenv("RECEIVERS", "[nop, otlp]")
    problems = Problems()
    doc = {
        "exporters": f"${{file:{tmp_path}/exporters.yaml}}",
        "pipelines": "${file:${env:BASE}/pipelines.yaml}",
        "text": f"${{file:{tmp_path}/token}}",
    }
    expanded = expand.expand(doc, "", problems)
    assert not problems
    assert plain(expanded)["exporters"] == {"debug": {"verbosity": "detailed"}}
    assert plain(expanded)["pipelines"] == {
        "logs": {"receivers": ["nop", "otlp"], "exporters": ["debug"]}
    }
    assert decode(_Fields, {"text": expanded["text"]}, "x", problems).text == "s3cr3t\n"
    expand.expand({"a": "${file:/nonexistent/token}"}, "", problems)
    assert problems.lines == [
        "a: unable to read the file file:/nonexistent/token: "
        "open /nonexistent/token: no such file or directory"
    ]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("200ms", 0.2),
        ("1m30s", 90.0),
        ("0", 0.0),
        ("1.5h", 5400.0),
        ("10us", 1e-5),
        ("10\u00b5s", 1e-5),
        ("10\u03bcs", 1e-5),
    ],
)
def test_go_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", 'time: invalid duration ""'),
        ("soon", 'time: invalid duration "soon"'),
        ("-.s", 'time: invalid duration "-.s"'),
        ("5", 'time: missing unit in duration "5"'),
        ("1.5.5s", 'time: missing unit in duration "1.5.5s"'),
        ("2x", 'time: unknown unit "x" in duration "2x"'),
        ("1d2h", 'time: unknown unit "d" in duration "1d2h"'),
        ("5 s", 'time: unknown unit " s" in duration "5 s"'),
        (" 5s", 'time: invalid duration " 5s"'),
        ("3000000h", 'time: invalid duration "3000000h"'),
        ("1\u00e9", 'time: unknown unit "\\xc3\\xa9" in duration "1\\xc3\\xa9"'),
    ],
)
def test_go_duration_errors(text: str, problem: str) -> None:
    """Go's ``time.ParseDuration`` wording: invalid, missing unit, unknown
    unit; non-ASCII bytes quoted as ``\\x..``."""
    with pytest.raises(ValueError) as bad:
        parse_duration(text)
    assert str(bad.value) == problem


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
        _Outer, {"size": 10, "timeout": "2s", "inner": None, "headers": {"a": "1"}}, "x", problems
    )
    assert not problems
    assert value == _Outer(10, Duration(2.0), _Inner(), [], {"a": "1"})
    assert decode(_Outer, None, "x", problems) == _Outer()


def test_decode_errors_name_the_key_path() -> None:
    problems = Problems()
    decode(
        _Outer,
        {"size": "lots", "timeout": "2x", "inner": {"endpont": "a"}, "names": 1},
        "processors::batch",
        problems,
    )
    assert problems.lines == [
        "processors::batch::size: 'size' expected type 'int', got unconvertible type 'string', "
        "value: 'lots'",
        'processors::batch::timeout: time: unknown unit "x" in duration "2x"',
        "processors::batch::inner: 'inner' has invalid keys: endpont",
        "processors::batch::names: 'names': source data must be an array or slice, got int",
    ]


def test_unknown_keys_are_sorted_and_named_from_the_decodes_root() -> None:
    """mapstructure's ErrorUnused: a component's own keys are named ``''``
    (debugexporter's config_test: "'' has invalid keys: verBosity"), a
    section's by its dotted name (otlpreceiver's "'protocols' has invalid
    keys: htttp")."""
    problems = Problems()
    decode(_Outer, {"zz": 1, "inner": {"b": 1, "a": 2}, "aa": 3}, "x", problems)
    assert problems.lines == [
        "x: '' has invalid keys: aa, zz",
        "x::inner: 'inner' has invalid keys: a, b",
    ]


def test_a_mismatch_shows_the_value_as_go_prints_it() -> None:
    """mapstructure's ``value: '%v'``: Go's words for booleans, floats, lists
    and maps, not Python's (upstream's e2e types_test: a bool read into a
    string field)."""
    problems = Problems()
    decode(
        _Outer,
        {"size": True, "timeout": [1, "a"], "inner": {"endpoint": {"b": 2.5, "a": None}}},
        "x",
        problems,
    )
    decode(_Fields, {"number": [1.5, False]}, "y", problems)
    assert problems.lines == [
        "x::size: 'size' expected type 'int', got unconvertible type 'bool', value: 'true'",
        "x::timeout: 'timeout' expected type 'time.Duration', got unconvertible type "
        "'[]interface {}', value: '[1 a]'",
        "x::inner::endpoint: 'inner.endpoint' expected type 'string', got unconvertible type "
        "'map[string]interface {}', value: 'map[a:<nil> b:2.5]'",
        "y::number: 'number' expected type 'int', got unconvertible type '[]interface {}', "
        "value: '[1.5 false]'",
    ]


def test_a_section_or_list_of_the_wrong_kind_is_named_as_mapstructure_names_it() -> None:
    problems = Problems()
    decode(_Outer, {"inner": [1], "headers": "a", "names": {"a": 1}}, "x", problems)
    decode(_Outer, 2.5, "y", problems)
    assert problems.lines == [
        "x::inner: 'inner' expected a map, got 'slice'",
        "x::headers: 'headers' expected a map, got 'string'",
        "x::names: 'names': source data must be an array or slice, got map",
        "y: '' expected a map, got 'float64'",
    ]


NO_SECRET = Opaque("")


@dataclass
class _Typed:
    size: Uint32 = 8192
    body: Int64 = 0
    count: int = 0
    factor: float = 0.5
    enabled: bool = True
    flag: bool = False
    text: str = ""
    secret: Opaque = NO_SECRET
    timeout: Duration = Duration(0.2)
    names: list[str] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    inner: _Inner = field(default_factory=_Inner)


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (
            {"size": "100"},
            "x::size: 'size' expected type 'uint32', got unconvertible type 'string', value: '100'",
        ),
        (
            {"body": "1"},
            "x::body: 'body' expected type 'int64', got unconvertible type 'string', value: '1'",
        ),
        (
            {"count": "100"},
            "x::count: 'count' expected type 'int', got unconvertible type 'string', value: '100'",
        ),
        (
            {"factor": "0.5"},
            "x::factor: 'factor' expected type 'float64', got unconvertible type 'string', "
            "value: '0.5'",
        ),
        (
            {"factor": True},
            "x::factor: 'factor' expected type 'float64', got unconvertible type 'bool', "
            "value: 'true'",
        ),
        # mapstructure's own words for a boolean: the field's value and Go's %#v.
        (
            {"enabled": "true"},
            "x::enabled: 'enabled' expected type '%!s(bool=true)', got unconvertible type "
            "'\"true\"', value: '\"true\"'",
        ),
        (
            {"flag": 1},
            "x::flag: 'flag' expected type '%!s(bool=false)', got unconvertible type '1', "
            "value: '1'",
        ),
        (
            {"flag": ["a", 1.5]},
            "x::flag: 'flag' expected type '%!s(bool=false)', got unconvertible type "
            "'[]interface {}{\"a\", 1.5}', value: '[]interface {}{\"a\", 1.5}'",
        ),
        (
            {"text": 100},
            "x::text: 'text' expected type 'string', got unconvertible type 'int', value: '100'",
        ),
        (
            {"text": 1.5},
            "x::text: 'text' expected type 'string', got unconvertible type 'float64', "
            "value: '1.5'",
        ),
        (
            {"text": False},
            "x::text: 'text' expected type 'string', got unconvertible type 'bool', value: 'false'",
        ),
        (
            {"secret": 1234},
            "x::secret: 'secret' expected type 'configopaque.String', got unconvertible type "
            "'int', value: '[REDACTED]'",
        ),
        (
            {"names": ["a", 2]},
            "x::names[1]: 'names[1]' expected type 'string', got unconvertible type 'int', "
            "value: '2'",
        ),
        (
            {"headers": {"h": 7}},
            "x::headers::h: 'headers[h]' expected type 'string', got unconvertible type 'int', "
            "value: '7'",
        ),
        (
            {"inner": {"enabled": "yes"}},
            "x::inner::enabled: 'inner.enabled' expected type '%!s(bool=true)', got "
            "unconvertible type '\"yes\"', value: '\"yes\"'",
        ),
        ({"size": -5}, "x::size: cannot parse 'size', -5 overflows uint"),
        ({"size": -1.5}, "x::size: cannot parse 'size', -1.500000 overflows uint"),
        (
            {"timeout": True},
            "x::timeout: 'timeout' expected type 'time.Duration', got unconvertible type "
            "'bool', value: 'true'",
        ),
    ],
)
def test_values_are_typed_strictly_as_upstream(raw: dict[str, Any], problem: str) -> None:
    """mapstructure without WeaklyTypedInput (confmap.strictlyTypedInput is
    stable and removed by v0.115): no quoted numbers or booleans, no numbers
    as text."""
    problems = Problems()
    decode(_Typed, raw, "x", problems)
    assert problems.lines == [problem]


def test_numbers_convert_between_number_fields_as_go_does() -> None:
    """A float fills an int field cut to its whole part, an int a float
    field; past the field's size the value wraps (Go's conversion)."""
    problems = Problems()
    decoded = decode(
        _Typed,
        {"size": 4294967297, "body": 2.9, "count": -7.9, "factor": 2, "timeout": 1.7},
        "x",
        problems,
    )
    assert not problems
    assert (decoded.size, decoded.body, decoded.count) == (1, 2, -7)
    assert decoded.factor == 2.0 and isinstance(decoded.factor, float)
    assert decoded.timeout == 1e-9


@pytest.mark.parametrize(
    ("variable", "target", "expected"),
    [
        # upstream's confmap/internal/e2e/types_test.go TestStrictTypeCasting
        ("123", "count", 123),
        ("123", "text", "123"),
        ("0123", "count", 83),
        ("0123", "text", "0123"),
        ("0xdeadbeef", "count", 3735928559),
        ("0xdeadbeef", "text", "0xdeadbeef"),
        ('"0123"', "text", '"0123"'),
        (
            '"0123"',
            "count",
            "x::count: 'count' expected type 'int', got unconvertible type 'string', "
            "value: '\"0123\"'",
        ),
        ("!!str 0123", "text", "!!str 0123"),
        (
            "t",
            "flag",
            "x::flag: 'flag' expected type '%!s(bool=false)', got unconvertible type '\"t\"', "
            "value: '\"t\"'",
        ),
        (
            "23",
            "flag",
            "x::flag: 'flag' expected type '%!s(bool=false)', got unconvertible type '23', "
            "value: '23'",
        ),
        ("true", "flag", True),
        ("true", "text", "true"),
        ("100", "size", 100),
        ("0.5", "factor", 0.5),
        # TestIssue10949_UnsetVar: an empty value is the field type's zero.
        ("", "size", 0),
        ("", "enabled", False),
        ("", "factor", 0.0),
        ("", "timeout", 0.0),
    ],
)
def test_an_expanded_value_is_typed_by_its_field(
    monkeypatch: pytest.MonkeyPatch, variable: str, target: str, expected: Any
) -> None:
    monkeypatch.setenv("ENV", variable)
    problems = Problems()
    raw = expand.expand({target: "${env:ENV}"}, "", problems)
    decoded = decode(_Typed, raw, "x", problems)
    if isinstance(expected, str) and expected.startswith("x::"):
        assert problems.lines == [expected]
        assert getattr(decoded, target) == getattr(_Typed(), target)
    else:
        assert not problems
        assert getattr(decoded, target) == expected


def test_a_section_list_or_map_expanded_to_nothing_is_gos_zero(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """confmap's useExpandValue decodes a ``${...}`` whose value is nil as
    reflect.Zero of the field: a struct with every field zero (not its
    defaults), an empty slice, a nil map (TestIssue10949_UnsetVar)."""
    monkeypatch.setenv("ENV", "")
    problems = Problems()
    raw = expand.expand(
        {"inner": "${env:ENV}", "names": "${env:ENV}", "headers": "${env:ENV}"}, "", problems
    )
    base = _Typed(names=["a"], headers={"h": "v"})
    decoded = decode(_Typed, raw, "x", problems, base=base)
    assert not problems
    assert (decoded.inner, decoded.names, decoded.headers) == (_Inner("", False), [], {})
