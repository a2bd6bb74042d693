#!/usr/bin/env bash
# Create .venv at the repository root and install the locked dependencies
# (requirements-dev.lock: the runtime ones of requirements.lock plus the
# build, lint and test tools) and Sluice itself (editable). The hot-path
# modules listed in setup.py are compiled with mypyc, and the C sources under
# src with the C compiler, into extension modules next to their sources, so
# the install re-runs whenever a source file, a lock file or the build files
# change (otherwise a stale compiled module would shadow an edited source).
# SLUICE_PURE_PYTHON=1 installs without compiling.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
stamp=".venv/.sluice-installed"
want="$(
  {
    echo "pure=${SLUICE_PURE_PYTHON:-0}"
    cat requirements.lock requirements-dev.lock pyproject.toml setup.py
    find src \( -name '*.py' -o -name '*.c' -o -name '*.h' \) -print0 | sort -z | xargs -0 sha256sum
  } | sha256sum | cut -d' ' -f1
)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x .venv/bin/sluice ]; then
  exit 0
fi
"$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Sluice needs Python >= 3.11")'
[ -x .venv/bin/python ] || "$python" -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check --require-hashes -r requirements-dev.lock
find src -name '*.so' -delete # compiled modules of an earlier install
if [ "${SLUICE_PURE_PYTHON:-0}" != 1 ]; then
  echo "bootstrap: compiling the hot-path modules with mypyc (about a minute)" >&2
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
echo "$want" > "$stamp"
