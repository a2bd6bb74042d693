"""``sluice-builder``: manifests in the upstream builder's format build
runnable distributions holding exactly their components; every manifest
problem names the file and key, exits 1 and writes nothing."""

from __future__ import annotations

import filecmp
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource

from sluice.builder import modules
from sluice.builder.modules import singular
from tests.collector.helpers import BIN, CollectorProcess, free_ports, run_cli
from tests.edge.helpers import Upstream, policies, write_json

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "builder"
OTLP = "go.opentelemetry.io/collector/receiver/otlpreceiver"
POLICY = "github.com/usetero/tero-collector-distro/processor/policyprocessor"
DEBUG = "go.opentelemetry.io/collector/exporter/debugexporter"
SEED = f"""\
dist:
  name: seed-collector
  description: Seed collector with policies
  version: 1.0.0
  output_path: ./dist
  otelcol_version: 0.115.0
  cgo_enabled: true
receivers:
  - gomod: {OTLP} v0.115.0
processors:
  - gomod: {POLICY} v0.2.0
exporters:
  - gomod: {DEBUG} v0.115.0
"""


def run_builder(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "sluice-builder"), *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )


def build(
    folder: Path, manifest: str, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "manifest.yaml").write_text(manifest)
    return run_builder("--config", "manifest.yaml", *args, cwd=folder, env=env)


def run_program(
    program: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(program), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def component_names(components_output: str) -> dict[str, list[str]]:
    doc = yaml.safe_load(components_output)
    return {
        kind: [item["name"] for item in doc[kind]]
        for kind in ("receivers", "processors", "exporters", "connectors", "extensions")
    }


# -- the seed manifest ------------------------------------------------------------


def test_the_seed_manifest_builds_a_program_holding_exactly_its_components(
    tmp_path: Path,
) -> None:
    built = build(tmp_path, SEED)
    assert built.returncode == 0, built.stderr
    out = tmp_path / "dist"
    assert sorted(p.name for p in out.iterdir()) == [
        "Dockerfile",
        "components.yaml",
        "requirements.txt",
        "seed-collector",
    ]
    listed = run_program(out / "seed-collector", "components")
    assert listed.returncode == 0, listed.stderr
    doc = yaml.safe_load(listed.stdout)
    assert doc["buildinfo"] == {
        "command": "seed-collector",
        "description": "Seed collector with policies",
        "version": "1.0.0",
    }
    assert component_names(listed.stdout) == {
        "receivers": ["otlp"],
        "processors": ["policy"],
        "exporters": ["debug"],
        "connectors": [],
        "extensions": [],
    }
    [policy] = doc["processors"]
    assert policy["module"] == f"{POLICY} v0.2.0"  # the manifest's gomod, as upstream
    resolved = yaml.safe_load((out / "components.yaml").read_text())
    assert resolved["dist"]["otelcol_version"] == "0.115.0"
    assert [p["gomod"] for p in resolved["processors"]] == [f"{POLICY} v0.2.0"]
    version = run_program(out / "seed-collector", "--version")
    assert version.stdout.strip() == "seed-collector version 1.0.0"
    dockerfile = (out / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["/opt/seed-collector/seed-collector"]' in dockerfile


def test_a_built_program_runs_a_pipeline_with_policies(tmp_path: Path) -> None:
    assert build(tmp_path, SEED).returncode == 0
    [http_port] = free_ports(1)
    policy_file = tmp_path / "policies.json"
    write_json(
        policy_file,
        policies(
            {
                "id": "drop-health",
                "log": {"match": [{"log_field": "body", "contains": "health"}], "keep": "none"},
            }
        ),
    )
    config = {
        "receivers": {"otlp": {"protocols": {"http": {"endpoint": f"127.0.0.1:{http_port}"}}}},
        "processors": {
            "policy": {"providers": [{"type": "file", "id": "f", "path": str(policy_file)}]}
        },
        "exporters": {"debug": {"verbosity": "detailed", "use_internal_logger": False}},
        "service": {
            "telemetry": {"metrics": {"level": "none"}},
            "pipelines": {
                "logs": {"receivers": ["otlp"], "processors": ["policy"], "exporters": ["debug"]}
            },
        },
    }
    collector = CollectorProcess(
        tmp_path / "run", config, program=tmp_path / "dist" / "seed-collector"
    ).wait_ready()
    try:
        provider = LoggerProvider(resource=Resource.create({"service.name": "seed"}))
        exporter = OTLPLogExporter(endpoint=f"http://127.0.0.1:{http_port}/v1/logs")
        provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
        logger = provider.get_logger("builder")
        for body in ("order placed", "GET /health", "order shipped"):
            logger.emit(body=body)
        provider.shutdown()
        deadline = time.monotonic() + 10
        while "order shipped" not in collector.stdout_path.read_text():
            assert time.monotonic() < deadline, collector.stderr()
            time.sleep(0.05)
        printed = collector.stdout_path.read_text()
        assert "order placed" in printed and "GET /health" not in printed
    finally:
        assert collector.terminate() == 0, collector.stderr()


def test_a_config_using_a_component_the_build_lacks_fails_with_unknown_type(
    tmp_path: Path,
) -> None:
    assert build(tmp_path, SEED).returncode == 0
    config = tmp_path / "config.yaml"
    config.write_text(
        "receivers: {otlp: {protocols: {http: {}}}}\n"
        "processors: {batch: {}}\n"
        "exporters: {debug: {}}\n"
        "service: {pipelines: {logs: {receivers: [otlp], processors: [batch],"
        " exporters: [debug]}}}\n"
    )
    checked = run_program(
        tmp_path / "dist" / "seed-collector", "--dry-run", "--config", str(config)
    )
    assert checked.returncode == 1
    assert 'unknown type: "batch" for id: "batch" (valid values: [policy])' in checked.stderr
    # Unlike sluice-collector, a custom build has no default config.
    bare = run_program(tmp_path / "dist" / "seed-collector")
    assert bare.returncode == 1
    assert bare.stderr == "Error: at least one config flag must be provided\n"
    # A --set is a config flag too, as upstream: the config is that snippet alone.
    only_set = run_program(
        tmp_path / "dist" / "seed-collector", "validate", "--set", "processors.batch.timeout=1s"
    )
    assert only_set.returncode == 1
    assert 'unknown type: "batch" for id: "batch"' in only_set.stderr


def test_the_program_imports_only_the_components_it_holds(tmp_path: Path) -> None:
    assert build(tmp_path, SEED).returncode == 0
    traced = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            str(tmp_path / "dist" / "seed-collector"),
            "components",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert traced.returncode == 0, traced.stderr
    imported = {line.rsplit("|", 1)[-1].strip() for line in traced.stderr.splitlines()}
    packages = {
        ".".join(name.split(".")[3:5])
        for name in imported
        if name.startswith("sluice.collector.components.") and name.count(".") >= 4
    }
    assert packages == {"receivers.otlp", "processors.policy", "exporters.debug"}


def test_the_same_manifest_gives_the_same_files(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    assert build(first, SEED).returncode == 0
    assert build(second, SEED).returncode == 0
    comparison = filecmp.dircmp(first / "dist", second / "dist")
    assert comparison.left_list == comparison.right_list
    assert comparison.diff_files == [] and comparison.funny_files == []


def test_dry_run_prints_the_plan_and_writes_nothing(tmp_path: Path) -> None:
    planned = build(tmp_path, SEED, "--dry-run")
    assert planned.returncode == 0, planned.stderr
    assert "would build seed-collector" in planned.stdout
    assert f"processor policy ({POLICY} v0.2.0" in planned.stdout
    assert not (tmp_path / "dist").exists()


def test_help_and_version() -> None:
    helped = run_builder("--help")
    assert helped.returncode == 0
    assert (
        OTLP in helped.stdout and POLICY in helped.stdout and "sluice.components" in helped.stdout
    )
    flag = run_builder("--version")
    assert flag.returncode == 0
    assert flag.stdout.strip() == "sluice-builder version 0.1.0"
    # ocb's version subcommand prints with cobra's cmd.Println: to stderr.
    command = run_builder("version")
    assert command.returncode == 0
    assert (command.stdout, command.stderr) == ("", "sluice-builder version 0.1.0\n")


# -- sluice-collector is one manifest among others --------------------------------


def test_without_a_manifest_it_builds_sluice_collector_giving_the_installed_components(
    tmp_path: Path,
) -> None:
    """As ocb builds its default otelcorecol without --config; DIST_OUTPUT_PATH
    sets dist::output_path, as ocb's environment overrides."""
    built = run_builder(cwd=tmp_path, env={"DIST_OUTPUT_PATH": "out"})
    assert built.returncode == 0, built.stderr
    program = tmp_path / "out" / "sluice-collector"
    ours = run_program(program, "components")
    installed = run_cli("components")
    assert ours.returncode == installed.returncode == 0
    assert ours.stdout == installed.stdout
    # Holding every component of the default config, it runs it too.
    assert "default_config=True" in program.read_text()


# -- cgo_enabled and versions ------------------------------------------------------


def test_without_cgo_enabled_the_policy_processor_fails_the_build(tmp_path: Path) -> None:
    built = build(tmp_path, SEED.replace("cgo_enabled: true", "cgo_enabled: false"))
    assert built.returncode == 1
    assert (
        "manifest.yaml: processors::0: the policy processor "
        f"({POLICY}) needs native regex libraries" in built.stderr
    )
    assert "set dist::cgo_enabled: true" in built.stderr
    assert not (tmp_path / "dist").exists()
    unset = build(tmp_path, SEED.replace("  cgo_enabled: true\n", ""))
    assert unset.returncode == 1 and "cgo_enabled" in unset.stderr


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            ("otelcol_version: 0.115.0", "otelcol_version: 0.116.0"),
            "manifest.yaml: dist::otelcol_version: 0.116.0: this Sluice provides collector core"
            " v0.115",
        ),
        (
            (f"{OTLP} v0.115.0", f"{OTLP} v0.116.0"),
            f"manifest.yaml: receivers::0::gomod: {OTLP} v0.116.0: this Sluice provides v0.115",
        ),
        (
            (f"{POLICY} v0.2.0", f"{POLICY} v0.3.0"),
            f"manifest.yaml: processors::0::gomod: {POLICY} v0.3.0: this Sluice provides v0.2",
        ),
    ],
)
def test_a_release_line_sluice_does_not_provide_is_refused(
    tmp_path: Path, edit: tuple[str, str], message: str
) -> None:
    built = build(tmp_path, SEED.replace(*edit))
    assert built.returncode == 1
    assert message in built.stderr, built.stderr
    assert not (tmp_path / "dist").exists()


def test_an_older_release_line_builds_in_the_provided_one_unless_strict(tmp_path: Path) -> None:
    """Go's minimal version selection resolves an older module release to the
    newest any module requires; ocb's strict versioning (off by default)
    refuses the mismatch."""
    older = SEED.replace(f"{OTLP} v0.115.0", f"{OTLP} v0.112.0")
    built = build(tmp_path, older)
    assert built.returncode == 0, built.stderr
    assert f"manifest.yaml: receivers::0::gomod: {OTLP} v0.112.0 builds in v0.115.0" in built.stderr
    listed = run_program(tmp_path / "dist" / "seed-collector", "components")
    assert f"module: {OTLP} v0.112.0" in listed.stdout  # the manifest's text, as upstream
    strict = build(tmp_path / "strict", older, "--skip-strict-versioning=false")
    assert strict.returncode == 1
    assert (
        "manifest.yaml: receivers::0::gomod: mismatch in go.mod and builder configuration "
        f'versions: component "{OTLP}" version calculated by dependencies "v0.115.0" does not '
        'match configured version "v0.112.0". Use --skip-strict-versioning to temporarily '
        "disable this check. This flag will be removed in a future minor version\n" in strict.stderr
    ), strict.stderr


# -- manifest errors ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        (SEED.replace("  name: seed-collector\n", ""), "manifest.yaml: dist::name: missing"),
        (
            SEED.replace(f"  - gomod: {DEBUG} v0.115.0", "  - import: debugexporter"),
            "manifest.yaml: exporters::0: missing gomod specification for module (or pymod)",
        ),
        (
            SEED.replace(DEBUG, "github.com/example/fancyexporter"),
            "manifest.yaml: exporters::0::gomod: unknown module 'github.com/example/fancyexporter'",
        ),
        (
            SEED.replace(f"{DEBUG} v0.115.0", f"{DEBUG} latest"),
            "manifest.yaml: exporters::0::gomod: 'latest' is not a version like v0.115.0",
        ),
        (
            SEED.replace(f"{DEBUG} v0.115.0", DEBUG),
            f"manifest.yaml: exporters::0::gomod: '{DEBUG}' is not '<module> <version>'",
        ),
        (
            SEED.replace(
                f"  - gomod: {DEBUG} v0.115.0",
                f"  - gomod: {DEBUG} v0.115.0\n    path: ./no/such/folder",
            ),
            "manifest.yaml: exporters::0::path:",
        ),
        (SEED + "receivers: [\n", "manifest.yaml: yaml: line"),
        (
            SEED.replace("processors:", "exporters:", 1).replace(
                f"exporters:\n  - gomod: {DEBUG}",
                f"processors:\n  - gomod: {DEBUG}",
            ),
            f"manifest.yaml: exporters::0: {POLICY} is a processor, listed under exporters",
        ),
        (
            SEED.replace(f"{DEBUG} v0.115.0", "no_such_package.processor 1.0.0").replace(
                "  - gomod: no_such", "  - pymod: no_such"
            ),
            "manifest.yaml: exporters::0::pymod: no installed distribution registers"
            " 'no_such_package.processor'",
        ),
    ],
    ids=[
        "no-name",
        "no-gomod",
        "unknown-module",
        "bad-version",
        "no-version",
        "missing-path",
        "yaml-syntax",
        "wrong-kind",
        "unknown-pymod",
    ],
)
def test_manifest_problems_name_the_file_and_key_and_write_nothing(
    tmp_path: Path, manifest: str, message: str
) -> None:
    built = build(tmp_path, manifest)
    assert built.returncode == 1
    assert message in built.stderr, built.stderr
    assert "nothing was written" in built.stderr
    assert not (tmp_path / "dist").exists()


def test_a_manifest_that_cannot_be_read_is_named_in_os_readfiles_words(tmp_path: Path) -> None:
    """koanf's file provider reads the manifest with os.ReadFile: a missing
    file fails opening it, a folder fails reading it."""
    missing = run_builder("--config", "nope.yaml", cwd=tmp_path)
    assert missing.returncode == 1
    assert (
        "nope.yaml: failed to load configuration file: open nope.yaml: no such file or directory\n"
        in missing.stderr
    ), missing.stderr
    (tmp_path / "folder").mkdir()
    folder = run_builder("--config", "folder", cwd=tmp_path)
    assert folder.returncode == 1
    assert (
        "folder: failed to load configuration file: read folder: is a directory\n" in folder.stderr
    ), folder.stderr


def test_go_build_keys_are_noted_and_unknown_top_level_keys_warned(tmp_path: Path) -> None:
    manifest = SEED + "replaces:\n  - a => b\nexcludes: []\ncolour: blue\n"
    built = build(tmp_path, manifest, "--dry-run")
    assert built.returncode == 0, built.stderr
    assert "manifest.yaml: replaces: ignored" in built.stderr
    assert "manifest.yaml: excludes: ignored" in built.stderr
    assert "manifest.yaml: colour: unknown top-level key, ignored" in built.stderr
    # Lists of text, as ocb decodes them: a lone text is a list of one, a mapping is no text.
    lone = build(tmp_path / "lone", SEED + "replaces: a => b\n", "--dry-run")
    assert lone.returncode == 0, lone.stderr
    mapped = build(tmp_path / "mapped", SEED + "replaces:\n  a: b\nexcludes: [[x]]\n", "--dry-run")
    assert mapped.returncode == 1
    assert "manifest.yaml: replaces::0: expected a string, got a mapping" in mapped.stderr
    assert "manifest.yaml: excludes::0: expected a string, got a list" in mapped.stderr


# -- a third-party component ---------------------------------------------------------


def _link_example_component(folder: Path) -> None:
    """The example manifest's ``path`` (taken from the current folder, as
    upstream) seen from `folder`."""
    (folder / "examples" / "builder").mkdir(parents=True)
    (folder / "examples" / "builder" / "third-party-component").symlink_to(
        EXAMPLE / "third-party-component"
    )


@pytest.fixture(scope="module")
def third_party(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The example component installed (into a folder of its own, put on
    PYTHONPATH) as a user would pip install it."""
    site = tmp_path_factory.mktemp("third-party") / "site"
    source = tmp_path_factory.mktemp("source") / "third-party-component"
    # Built from a copy: a build leaves files behind in the source folder.
    subprocess.run(["cp", "-r", str(EXAMPLE / "third-party-component"), str(source)], check=True)
    subprocess.run(
        [
            str(BIN / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--target",
            str(site),
            str(source),
        ],
        check=True,
        timeout=120,
    )
    return {"PYTHONPATH": str(site)}


def test_a_third_party_component_is_built_in_and_runs_in_a_pipeline(
    tmp_path: Path, third_party: dict[str, str], upstream: Upstream
) -> None:
    manifest = (EXAMPLE / "manifest.yaml").read_text()
    _link_example_component(tmp_path)
    built = build(tmp_path, manifest, env=third_party)
    assert built.returncode == 0, built.stderr
    out = tmp_path / "dist"
    assert (out / "requirements.txt").read_text().splitlines()[-1] == (
        "./components/sluice-example-tag"
    )
    assert (out / "components" / "sluice-example-tag" / "pyproject.toml").exists()
    program = out / "my-collector"
    listed = run_program(program, "components", env=third_party)
    assert component_names(listed.stdout)["processors"] == ["batch", "policy", "tag"]
    [http_port] = free_ports(1)
    policy_file = tmp_path / "policies.json"
    write_json(
        policy_file,
        policies(
            {
                "id": "drop-debug",
                "log": {"match": [{"log_field": "body", "starts_with": "debug"}], "keep": "none"},
            }
        ),
    )
    config: dict[str, Any] = {
        "receivers": {"otlp": {"protocols": {"http": {"endpoint": f"127.0.0.1:{http_port}"}}}},
        "processors": {
            "policy": {"providers": [{"type": "file", "id": "f", "path": str(policy_file)}]},
            "tag": {"key": "gateway", "value": "eu-west-1"},
            "batch": {"timeout": "50ms"},
        },
        "exporters": {"otlphttp": {"endpoint": upstream.url}},
        "service": {
            "telemetry": {"metrics": {"level": "none"}},
            "pipelines": {
                "logs": {
                    "receivers": ["otlp"],
                    "processors": ["policy", "tag", "batch"],
                    "exporters": ["otlphttp"],
                }
            },
        },
    }
    collector = CollectorProcess(tmp_path / "run", config, env=third_party, program=program)
    collector.wait_ready()
    try:
        provider = LoggerProvider(resource=Resource.create({"service.name": "shop"}))
        exporter = OTLPLogExporter(endpoint=f"http://127.0.0.1:{http_port}/v1/logs")
        provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
        logger = provider.get_logger("builder")
        for body in ("order placed", "debug: cache warm", "order shipped"):
            logger.emit(body=body)
        provider.shutdown()
        deadline = time.monotonic() + 10
        while True:
            requests = [
                ExportLogsServiceRequest.FromString(r.decoded())
                for r in upstream.received("/v1/logs")
            ]
            records = [
                (
                    {kv.key: kv.value.string_value for kv in rl.resource.attributes},
                    record.body.string_value,
                )
                for request in requests
                for rl in request.resource_logs
                for sl in rl.scope_logs
                for record in sl.log_records
            ]
            if len(records) >= 2 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert sorted(body for _, body in records) == ["order placed", "order shipped"]
        assert all(attrs.get("gateway") == "eu-west-1" for attrs, _ in records)
        assert all(attrs.get("service.name") == "shop" for attrs, _ in records)
    finally:
        assert collector.terminate() == 0, collector.stderr()


def test_a_third_party_version_the_installed_one_does_not_match_is_refused(
    tmp_path: Path, third_party: dict[str, str]
) -> None:
    manifest = (
        (EXAMPLE / "manifest.yaml")
        .read_text()
        .replace("sluice_example_tag.processor 1.0.0", "sluice_example_tag.processor 2.0.0")
    )
    _link_example_component(tmp_path)
    built = build(tmp_path, manifest, env=third_party)
    assert built.returncode == 1
    assert (
        "manifest.yaml: processors::2::pymod: sluice_example_tag.processor 2.0.0: the installed"
        " sluice-example-tag is 1.0.0" in built.stderr
    ), built.stderr


def test_the_readme_walk_through_runs_as_written(tmp_path: Path, fixed_ports: None) -> None:
    """The README's builder walk-through, run by bash from a folder that
    sees the repository's .venv, examples and src (so dist/ and the log land
    in the temporary folder). It installs the example component into .venv,
    as a user would, and uses the default OTLP/HTTP port 4318."""
    readme = (ROOT / "README.md").read_text()
    found = re.search(r"### Walk-through.*?```sh\n(.*?)```", readme, re.S)
    assert found is not None
    for name in (".venv", "examples", "src"):
        (tmp_path / name).symlink_to(ROOT / name)
    (tmp_path / "walk.sh").write_text(found.group(1))
    ran = subprocess.run(
        ["bash", "-e", "walk.sh"], capture_output=True, text=True, timeout=180, cwd=tmp_path
    )
    log = tmp_path / "my-collector.out"
    assert ran.returncode == 0, ran.stdout + ran.stderr + (log.read_text() if log.exists() else "")
    assert "config is valid" in ran.stdout
    assert "No such file" not in ran.stderr  # the wait starts before the log exists
    assert "- name: tag" in ran.stdout.replace("-   name", "- name")
    assert "to http://localhost:4318/v1/logs: HTTP 200" in ran.stdout
    stamped = int(ran.stdout.strip().splitlines()[-1])
    assert stamped >= 3  # a resource of each signal at least
    deadline = time.monotonic() + 30
    while "Shutdown complete" not in log.read_text():  # kill %1 stopped it
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.1)


def test_the_readme_lists_every_module_path_the_builder_maps() -> None:
    readme = (ROOT / "README.md").read_text()
    table = readme.split("### Module paths", 1)[1].split("\n## ", 1)[0]
    rows = {
        tuple(cell.strip().strip("`") for cell in line.strip("|").split("|"))
        for line in table.splitlines()
        if line.startswith("| ") and "`" in line and not line.startswith("| kind")
    }
    shipped = {
        (singular(factory.kind), factory.component_type, module, f"v{factory.version}")
        for module, (_, factory) in modules.shipped().items()
    }
    assert rows == shipped


# -- the manifest as ocb decodes it ---------------------------------------------------


def test_keys_match_in_any_case_values_are_weakly_typed_and_unknown_keys_warned(
    tmp_path: Path,
) -> None:
    """mapstructure as ocb configures it: field names in any case, weak
    typing (a number where text is due is text, "true" where a boolean is
    due is one), keys it does not know ignored."""
    manifest = (
        SEED.replace("  version: 1.0.0\n", "  Version: 2\n  colour: blue\n")
        .replace("  cgo_enabled: true\n", '  cgo_enabled: "true"\n  debug_compilation: 1\n')
        .replace(f"  - gomod: {DEBUG} v0.115.0", f"  - GoMod: {DEBUG} v0.115.0\n    tag: x")
    )
    built = build(tmp_path, manifest)
    assert built.returncode == 0, built.stderr
    assert "manifest.yaml: dist::colour: unknown key, ignored" in built.stderr
    assert "manifest.yaml: exporters::0::tag: unknown key, ignored" in built.stderr
    assert "manifest.yaml: dist::debug_compilation: ignored" in built.stderr
    listed = run_program(tmp_path / "dist" / "seed-collector", "components")
    assert yaml.safe_load(listed.stdout)["buildinfo"]["version"] == "2"
    bad = build(tmp_path / "bad", SEED.replace("cgo_enabled: true", "cgo_enabled: maybe"))
    assert bad.returncode == 1
    assert "manifest.yaml: dist::cgo_enabled: cannot parse 'maybe' as bool" in bad.stderr


def test_only_the_first_yaml_document_of_the_manifest_is_read(tmp_path: Path) -> None:
    """ocb's YAML parser (yaml.v3's Unmarshal) decodes the first document
    and reads no further: documents after it, even unfinished, are not seen."""
    built = build(tmp_path, SEED + "---\ndist:\n  name: second\n---\nreceivers: [\n", "--dry-run")
    assert built.returncode == 0, built.stderr
    assert built.stdout.startswith("would build seed-collector 1.0.0 into dist:"), built.stdout
    empty_first = build(tmp_path, "---\n---\n" + SEED, "--dry-run")
    assert empty_first.returncode == 1
    assert "manifest.yaml: dist::name: missing" in empty_first.stderr


def test_a_single_mapping_where_a_list_is_due_is_a_one_entry_list(tmp_path: Path) -> None:
    """mapstructure's weak typing lifts a value given for a list into a
    one-element list: a component given as a mapping is one entry; a bare
    text is still not an entry."""
    manifest = SEED.replace(f"  - gomod: {DEBUG} v0.115.0", f"  gomod: {DEBUG} v0.115.0")
    built = build(tmp_path, manifest)
    assert built.returncode == 0, built.stderr
    listed = run_program(tmp_path / "dist" / "seed-collector", "components")
    assert component_names(listed.stdout)["exporters"] == ["debug"]
    bare = build(tmp_path / "bare", SEED.replace(f"  - gomod: {DEBUG}", f"  {DEBUG}"))
    assert bare.returncode == 1
    assert "manifest.yaml: exporters::0: must be a mapping with gomod or pymod" in bare.stderr


def test_dist_environment_variables_override_the_manifest(tmp_path: Path) -> None:
    built = build(
        tmp_path, SEED, env={"DIST_NAME": "env-collector", "DIST_DESCRIPTION": "From env"}
    )
    assert built.returncode == 0, built.stderr
    listed = run_program(tmp_path / "dist" / "env-collector", "components")
    assert yaml.safe_load(listed.stdout)["buildinfo"] == {
        "command": "env-collector",
        "description": "From env",
        "version": "1.0.0",
    }


def test_unset_dist_keys_take_ocbs_defaults(tmp_path: Path) -> None:
    """No version, no description (the program shows them empty and has no
    --version flag, as a cobra command with an empty version), and no
    output_path: a new temporary folder, which the builder names."""
    manifest = (
        SEED.replace("  version: 1.0.0\n", "")
        .replace("  description: Seed collector with policies\n", "")
        .replace("  output_path: ./dist\n", "")
    )
    built = build(tmp_path, manifest)
    assert built.returncode == 0, built.stderr
    found = re.search(r"^built seed-collector in (\S+)$", built.stdout, re.M)
    assert found is not None, built.stdout
    out = Path(found[1])
    try:
        assert out.name.startswith("otelcol-distribution")
        program = out / "seed-collector"
        listed = run_program(program, "components")
        assert listed.stdout.startswith(
            'buildinfo:\n    command: seed-collector\n    description: ""\n    version: ""\n'
        )
        version = run_program(program, "--version")
        assert version.returncode == 1
        assert version.stderr.strip() == "Error: unknown flag: --version"
    finally:
        subprocess.run(["rm", "-rf", str(out)], check=True)


def test_a_path_is_taken_from_the_current_folder(tmp_path: Path) -> None:
    """As ocb (filepath.Abs), not from the manifest's folder."""
    manifest = SEED.replace(
        f"  - gomod: {DEBUG} v0.115.0", f"  - gomod: {DEBUG} v0.115.0\n    path: ./local"
    )
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "manifest.yaml").write_text(manifest)
    (tmp_path / "sub" / "local").mkdir()
    missing = run_builder("--config", "sub/manifest.yaml", "--dry-run", cwd=tmp_path)
    assert missing.returncode == 1
    assert f"exporters::0::path: filepath does not exist: {tmp_path / 'local'}" in missing.stderr
    (tmp_path / "local").mkdir()
    found = run_builder("--config", "sub/manifest.yaml", "--dry-run", cwd=tmp_path)
    assert found.returncode == 0, found.stderr


def test_import_names_the_package_within_the_gomod_module(tmp_path: Path) -> None:
    """As ocb's generated sources import ``import`` (config_test.go's
    TestModuleFromCore): the component is the one at the import path, and
    its module text is still the gomod's."""
    manifest = SEED.replace(
        f"  - gomod: {OTLP} v0.115.0",
        f"  - gomod: go.opentelemetry.io/collector v0.115.0\n    import: {OTLP}",
    ) + (
        "providers:\n"
        "  - gomod: go.opentelemetry.io/collector/confmap v1.21.0\n"
        "    import: go.opentelemetry.io/collector/confmap/provider/envprovider\n"
    )
    built = build(tmp_path, manifest)
    assert built.returncode == 0, built.stderr
    listed = run_program(tmp_path / "dist" / "seed-collector", "components")
    receivers = yaml.safe_load(listed.stdout)["receivers"]
    assert [(item["name"], item["module"]) for item in receivers] == [
        ("otlp", "go.opentelemetry.io/collector v0.115.0")
    ]
    unknown = build(
        tmp_path / "unknown",
        SEED.replace(f"{DEBUG} v0.115.0", f"{DEBUG} v0.115.0\n    import: x/y"),
    )
    assert unknown.returncode == 1
    assert "manifest.yaml: exporters::0::import: unknown module 'x/y'" in unknown.stderr


def test_a_path_is_cleaned_before_it_is_looked_for(tmp_path: Path) -> None:
    """ocb's filepath.Abs cleans the path lexically: "no-such/.." goes
    whether or not the folder exists, and the message names the clean path."""
    manifest = SEED.replace(
        f"  - gomod: {DEBUG} v0.115.0",
        f"  - gomod: {DEBUG} v0.115.0\n    path: ./no-such/../local/.",
    )
    missing = build(tmp_path, manifest, "--dry-run")
    assert missing.returncode == 1
    assert (
        f"manifest.yaml: exporters::0::path: filepath does not exist: {tmp_path / 'local'}\n"
        in missing.stderr
    ), missing.stderr
    (tmp_path / "local").mkdir()
    found = build(tmp_path, manifest, "--dry-run")
    assert found.returncode == 0, found.stderr


def test_providers_and_converters_are_checked(tmp_path: Path) -> None:
    providers = SEED + (
        "providers:\n"
        "  - gomod: go.opentelemetry.io/collector/confmap/provider/envprovider v1.21.0\n"
        "  - gomod: go.opentelemetry.io/collector/confmap/provider/fileprovider v1.21.0\n"
    )
    built = build(tmp_path, providers, "--dry-run")
    assert built.returncode == 0, built.stderr
    assert "the program reads http, https, yaml config sources too" in built.stderr
    unknown = build(
        tmp_path,
        SEED + "providers:\n  - gomod: example.com/s3provider v0.1.0\n"
        "converters:\n  - gomod: example.com/someconverter v0.1.0\n",
        "--dry-run",
    )
    assert unknown.returncode == 1
    assert "providers::0::gomod: unknown module 'example.com/s3provider'" in unknown.stderr
    assert "converters::0::gomod: unknown module 'example.com/someconverter'" in unknown.stderr
    twice = build(
        tmp_path,
        SEED + "providers:\n"
        "  - gomod: go.opentelemetry.io/collector/confmap/provider/envprovider v1.21.0\n"
        "  - gomod: go.opentelemetry.io/collector/confmap v1.21.0\n"
        "    import: go.opentelemetry.io/collector/confmap/provider/envprovider\n",
        "--dry-run",
    )
    assert twice.returncode == 1
    assert (
        "manifest.yaml: providers::1: config provider scheme 'env' is already built in by "
        "providers::0\n" in twice.stderr
    ), twice.stderr
    no_gomod = build(tmp_path, SEED + "converters:\n  - import: x\n", "--dry-run")
    assert no_gomod.returncode == 1
    assert "converters::0: missing gomod specification for module" in no_gomod.stderr


# -- ocb's flags ----------------------------------------------------------------------


def test_skip_generate_and_skip_compilation_split_the_output(tmp_path: Path) -> None:
    """Generate writes the files describing the distribution; compile writes
    the program."""
    generated = build(tmp_path / "a", SEED, "--skip-compilation", "--skip-get-modules")
    assert generated.returncode == 0, generated.stderr
    assert sorted(p.name for p in (tmp_path / "a" / "dist").iterdir()) == [
        "Dockerfile",
        "components.yaml",
        "requirements.txt",
    ]
    compiled = build(tmp_path / "a", SEED, "--skip-generate=true", "--ldflags=-s -w")
    assert compiled.returncode == 0, compiled.stderr
    assert (tmp_path / "a" / "dist" / "seed-collector").exists()
    neither = build(tmp_path / "b", SEED, "--skip-generate", "--skip-compilation=true")
    assert neither.returncode == 0, neither.stderr
    assert not (tmp_path / "b" / "dist").exists()
    nowhere = build(tmp_path / "c", SEED, "--skip-generate")
    assert nowhere.returncode == 1
    assert "Error: failed to compile the OpenTelemetry Collector distribution" in nowhere.stderr


def test_the_output_path_is_made_without_its_parents(tmp_path: Path) -> None:
    built = build(tmp_path, SEED.replace("output_path: ./dist", "output_path: ./a/b"))
    assert built.returncode == 1
    assert (
        "Error: failed to create output path: mkdir a/b: no such file or directory" in built.stderr
    )


def test_the_output_path_is_made_owner_and_group_only(tmp_path: Path) -> None:
    """ocb makes the folder with mode 0750 (then the umask)."""
    umask = os.umask(0o022)
    os.umask(umask)
    built = build(tmp_path, SEED, "--skip-compilation")
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "dist").stat().st_mode & 0o777 == 0o750 & ~umask


def test_a_file_that_cannot_be_written_fails_the_build_in_ocbs_words(tmp_path: Path) -> None:
    """As ocb's Generate: an output path that exists is written into whatever
    it is (no mkdir), and a file that cannot be created is an error naming
    it, not a crash."""
    (tmp_path / "a" / "dist" / "components.yaml").mkdir(parents=True)
    taken = build(tmp_path / "a", SEED)
    assert taken.returncode == 1
    assert taken.stderr.startswith(
        'Error: failed to generate source file "components.yaml": '
        "open dist/components.yaml: is a directory\n"
    ), taken.stderr
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "dist").write_text("")
    a_file = build(tmp_path / "b", SEED)
    assert a_file.returncode == 1
    assert a_file.stderr.startswith(
        'Error: failed to generate source file "components.yaml": '
        "open dist/components.yaml: not a directory\n"
    ), a_file.stderr


def test_the_deprecated_output_path_flag_overrides_the_manifest(tmp_path: Path) -> None:
    built = build(tmp_path, SEED, "--output-path", "elsewhere", "--verbose")
    assert built.returncode == 0, built.stderr
    assert (
        "Flag --output-path has been deprecated, use config distribution::output_path"
        in built.stderr
    )
    assert (tmp_path / "elsewhere" / "seed-collector").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--colour"], "Error: unknown flag: --colour"),
        (["--verbose=maybe"], 'Error: invalid argument "maybe" for "--verbose" flag'),
        (["build"], 'Error: unknown command "build" for "sluice-builder"'),
        (["--conf", "manifest.yaml"], "Error: unknown flag: --conf"),
    ],
)
def test_a_bad_command_line_exits_1_in_cobras_words(
    tmp_path: Path, args: list[str], message: str
) -> None:
    ran = run_builder(*args, cwd=tmp_path)
    assert ran.returncode == 1
    assert ran.stderr.startswith(message), ran.stderr
