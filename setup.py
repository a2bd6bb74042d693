"""Build hook: compile the modules on Sluice's per-record and per-request paths
to C extensions with mypyc (the mypy compiler, pinned in the lock file).

The source stays plain, type-checked Python and runs unchanged without the
compiled modules: set ``SLUICE_PURE_PYTHON=1`` to install without compiling
(the same tests pass either way). Everything else (metadata, entry points)
is in pyproject.toml.
"""

import os
from typing import Any

from setuptools import Extension, setup

COMPILED = [
    "collector/components/processors/filter/logs.py",
    "collector/components/processors/filter/metrics.py",
    "collector/components/processors/filter/traces.py",
    "collector/pdata.py",
    "edge/filtering.py",
    "edge/metrics.py",
    "edge/routes.py",
    "ottl/compare.py",
    "ottl/compiler.py",
    "ottl/contexts/base.py",
    "ottl/contexts/log.py",
    "ottl/contexts/metric.py",
    "ottl/contexts/trace.py",
    "ottl/functions.py",
    "ottl/scans.py",
    "ottl/sequence.py",
    "ottl/values.py",
    "policy/outcomes.py",
    "policy/patterns.py",
    "policy/ratelimit.py",
    "policy/sampling.py",
    "policy/snapshot.py",
    "policy/stats.py",
    "policy/table.py",
    "policy/transform.py",
    "telemetry/compression.py",
    "telemetry/datadog.py",
    "telemetry/datadog_metrics.py",
    "telemetry/jsonbody.py",
    "telemetry/otlp_codec.py",
    "telemetry/otlp_ids.py",
    "telemetry/otlp_json/__init__.py",
    "telemetry/otlp_json/attributes.py",
    "telemetry/otlp_json/fields.py",
    "telemetry/otlp_json/logs.py",
    "telemetry/otlp_json/metrics.py",
    "telemetry/otlp_json/traces.py",
    "telemetry/otlp_json/view.py",
    "telemetry/otlp_lean.py",
    "telemetry/otlp_pbjson.py",
    "telemetry/otlp_proto.py",
    "telemetry/otlp_raw.py",
    "telemetry/reading.py",
    "transport/connections.py",
    "transport/go_reading.py",
    "transport/http_client.py",
    "transport/http_message.py",
    "transport/http_server.py",
]


def extensions() -> list[Any]:
    if os.environ.get("SLUICE_PURE_PYTHON") == "1":
        return []
    from mypyc.build import mypycify

    # Scans Hyperscan databases with vectorgrep's libhs, which it loads at run
    # time (see sluice.policy.native): building it needs no Hyperscan.
    scanner = Extension(
        "sluice.policy._hsnative",
        ["src/sluice/policy/_hsnative.c"],
        depends=["src/sluice/policy/_hsnative.h"],
        libraries=["dl"],
        extra_compile_args=["-O2"],
    )
    reader = Extension(
        "sluice.telemetry._lean",
        ["src/sluice/telemetry/_lean.c"],
        depends=[
            "src/sluice/telemetry/_found.h",
            "src/sluice/telemetry/_keys.h",
            "src/sluice/telemetry/_memo.h",
            "src/sluice/policy/_hsnative.h",
        ],
        extra_compile_args=["-O2"],
    )
    json_reader = Extension(
        "sluice.telemetry._jsonread",
        ["src/sluice/telemetry/_jsonread.c"],
        depends=[
            "src/sluice/telemetry/_found.h",
            "src/sluice/telemetry/_keys.h",
            "src/sluice/telemetry/_memo.h",
            "src/sluice/policy/_hsnative.h",
        ],
        extra_compile_args=["-O2"],
    )
    # The id-length check of sluice.telemetry.otlp_ids, on every OTLP request.
    ids = Extension(
        "sluice.telemetry._ids",
        ["src/sluice/telemetry/_ids.c"],
        extra_compile_args=["-O2"],
    )
    # Whether an OTLP JSON body needs sluice.telemetry.otlp_pbjson's exact read.
    json_scan = Extension(
        "sluice.telemetry._jsonscan",
        ["src/sluice/telemetry/_jsonscan.c"],
        extra_compile_args=["-O2"],
    )
    # Sampling's hash (sluice.policy.sampling.fnv1a64 is its reference).
    hashing = Extension(
        "sluice.policy._sampling",
        ["src/sluice/policy/_sampling.c"],
        extra_compile_args=["-O2"],
    )
    return [
        *mypycify(
            [f"src/sluice/{module}" for module in COMPILED],
            opt_level="3",
            group_name="sluice_native",
        ),
        scanner,
        reader,
        json_reader,
        ids,
        json_scan,
        hashing,
    ]


setup(ext_modules=extensions())
