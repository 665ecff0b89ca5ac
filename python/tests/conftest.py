"""Fixtures of the Python package's tests: the repository, and the `loam` binary they compare
with (the command line is the reference: a plan from Python must be the plan it writes)."""

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def loam_binary():
    """`LOAM_BIN`, or the release binary of this checkout's target folder."""
    if os.environ.get("LOAM_BIN"):
        return Path(os.environ["LOAM_BIN"])
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return target / "release" / "loam"


@pytest.fixture(scope="session")
def cli():
    """Runs `loam ARGS...` and returns the completed process (exit code not checked)."""
    binary = loam_binary()
    if not binary.exists():
        pytest.fail(
            f"{binary} is missing: build it with `cargo build --release` (python/test.sh does), "
            "or name one with LOAM_BIN"
        )

    def run(*args, cwd=ROOT):
        return subprocess.run(
            [str(binary), *map(str, args)], cwd=cwd, capture_output=True, text=True
        )

    return run


@pytest.fixture(scope="session")
def cli_run(cli, tmp_path_factory):
    """`loam solve problems/NAME.yaml` into a temporary run folder, once per problem; returns
    the folder."""
    done = {}

    def solve(name):
        if name not in done:
            out = tmp_path_factory.mktemp("cli") / name
            result = cli("solve", ROOT / "problems" / f"{name}.yaml", "--out", out, "-q")
            assert result.returncode == 0, result.stderr
            done[name] = out
        return done[name]

    return solve


def solution(run_dir):
    return json.loads((Path(run_dir) / "solution.json").read_text())
