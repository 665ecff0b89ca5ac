#!/usr/bin/env bash
# Builds loam's Python package into a virtual environment and runs its tests (docs/PYTHON.md).
#
#     bash python/test.sh
#
# From a fresh clone: makes the environment (target/python-venv, or $LOAM_PY_VENV), installs
# maturin, pytest and NumPy into it from PyPI, builds and installs the package with
# `pip install ./python` (maturin, in this checkout's cargo target folder, so the loam library
# the binary was built from is not compiled again), builds the `loam` binary the tests compare
# with (`cargo build --release`; $LOAM_BIN names another), and runs pytest.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
target="${CARGO_TARGET_DIR:-$root/target}"
venv="${LOAM_PY_VENV:-$target/python-venv}"

if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
# The environment's tools first: pip's build of the package runs `maturin` by name.
export PATH="$venv/bin:$PATH"
# Versions: maturin 1.x builds the package (pyproject.toml); the tests need pytest and NumPy.
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "maturin>=1.5,<2" pytest numpy
# --no-build-isolation: the maturin just installed builds it, no second download.
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    --no-build-isolation --force-reinstall --no-deps ./python

if [ -z "${LOAM_BIN:-}" ]; then
    cargo build --release --quiet --bin loam
    export LOAM_BIN="$target/release/loam"
fi
# From the repository root, so that `import loam` is the installed package.
"$venv/bin/python" -m pytest -q python/tests "$@"
