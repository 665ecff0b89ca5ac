"""A plan solved from Python is the plan `loam solve` writes, and a replay from Python is
`loam simulate`'s: same objective (to 1e-12), same columns and values, same files."""

import csv
import json
from pathlib import Path

import numpy as np
import pytest

import loam
from conftest import ROOT, solution

# The hopper's robot file on poppy seeds and on rigid ground, and the monopod's hop.
PROBLEMS = ["hopper_granular", "hopper_rigid", "monopod_hop"]


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


@pytest.fixture(scope="module")
def plans():
    """Each problem solved once from Python."""
    return {
        name: loam.load_problem(ROOT / "problems" / f"{name}.yaml").solve() for name in PROBLEMS
    }


@pytest.mark.parametrize("name", PROBLEMS)
def test_objective_and_outcome_are_the_cli_s(name, plans, cli_run):
    plan, cli = plans[name], solution(cli_run(name))
    assert plan.converged and cli["converged"]
    assert abs(plan.objective - cli["objective"]) <= 1e-12
    assert plan.status == cli["status"]
    assert plan.iterations == cli["iterations"]
    assert abs(plan.max_violation - cli["max_violation"]) <= 1e-12


@pytest.mark.parametrize("name", PROBLEMS)
def test_trajectory_columns_match_trajectory_csv(name, plans, cli_run):
    plan = plans[name]
    header, rows = read_csv(cli_run(name) / "trajectory.csv")
    assert plan.columns == header
    assert list(plan.trajectory) == header
    for j, column in enumerate(header):
        values = plan.trajectory[column]
        assert len(values) == len(rows)
        if values.dtype.kind == "f":
            assert np.array_equal(values, np.array([float(r[j]) for r in rows])), column
        elif values.dtype.kind == "i":
            assert values.tolist() == [int(r[j]) for r in rows], column
        else:
            assert values.tolist() == [r[j] for r in rows], column


@pytest.mark.parametrize("name", PROBLEMS)
def test_written_run_folder_is_the_cli_s(name, plans, cli_run, tmp_path):
    plan, cli_dir = plans[name], cli_run(name)
    plan_id = plan.write(tmp_path / name)
    assert plan.run_dir == str(tmp_path / name)
    ours = solution(tmp_path / name)
    assert plan_id == ours["plan_id"] == solution(cli_dir)["plan_id"]
    for file in ["trajectory.csv"]:
        assert (tmp_path / name / file).read_bytes() == (cli_dir / file).read_bytes()
    log = (tmp_path / name / "ipopt.log").read_text()
    assert "EXIT: Optimal Solution Found." in log
    # What reproduces it: the Python call.
    assert ours["provenance"]["command_line"][:2] == ["python", "-c"]
    assert "loam.load_problem(" in ours["provenance"]["command_line"][2]


@pytest.mark.parametrize("name", ["hopper_granular", "monopod_hop"])
def test_replay_is_loam_simulate_s(name, cli, cli_run, tmp_path):
    plan, cli_dir = loam.load_problem(ROOT / "problems" / f"{name}.yaml").solve(), cli_run(name)
    result = cli("simulate", cli_dir, "-q")
    assert result.returncode == 0, result.stderr
    header, rows = read_csv(cli_dir / "replay.csv")
    # From memory (a temporary folder) and from the written folder: the same replay.
    in_memory = plan.simulate()
    assert in_memory.csv_path is None
    plan.write(tmp_path / name)
    written = plan.simulate()
    assert written.csv_path == str(tmp_path / name / "replay.csv")
    assert (tmp_path / name / "replay.csv").read_bytes() == (cli_dir / "replay.csv").read_bytes()
    for replay in [in_memory, written]:
        assert replay.stem == "replay" and replay.complete
        assert replay.columns == header
        numeric = [c for c in header if replay.data[c].dtype.kind == "f"]
        for column in numeric:
            j = header.index(column)
            assert np.array_equal(replay.data[column], [float(r[j]) for r in rows]), column
        assert replay.summary == json.loads((cli_dir / "replay.json").read_text())


def test_replay_on_another_terrain_is_named_as_the_cli_names_it(plans, tmp_path):
    plan = plans["hopper_granular"]
    plan.write(tmp_path / "granular")
    replay = plan.simulate(terrain="rigid")
    assert replay.stem == "replay-on-rigid"
    assert (tmp_path / "granular" / "replay-on-rigid.json").exists()
    assert replay.summary["terrain"]["model"] == "rigid"
    assert plan.simulate().summary["terrain"]["model"] == "added_mass"


def test_simulate_a_run_folder_the_cli_wrote(cli_run):
    replay = loam.simulate(cli_run("hopper_rigid"))
    assert replay.complete
    assert replay.summary["achieved_apex_rise_m"] > 0


def test_a_problem_from_a_dict_solves_as_its_file(plans):
    problem = loam.load_problem(ROOT / "problems" / "hopper_rigid.yaml")
    again = loam.load_problem(problem.to_dict(), origin="hopper_rigid.yaml")
    assert again.name == problem.name
    assert again.solve().objective == plans["hopper_rigid"].objective


def test_overrides_change_the_plan():
    file = ROOT / "problems" / "hopper_rigid.yaml"
    low = loam.load_problem(file, set=["task.apex_rise=0.03"])
    assert low.overrides == ["task.apex_rise=0.03"]
    assert low.to_dict()["task"]["apex_rise"] == 0.03
    plan = low.solve()
    assert plan.converged
    # The rod (task.apex_of) is the stroke below the motor block.
    rod = plan.trajectory["z"] - plan.trajectory["stroke"]
    assert rod.max() - rod[0] == pytest.approx(0.03, abs=1e-6)


def test_progress_is_called_and_can_stop_ipopt():
    seen = []

    def progress(info):
        seen.append(info["iteration"])
        return info["iteration"] < 3

    plan = loam.load_problem(ROOT / "problems" / "hopper_granular.yaml").solve(progress=progress)
    assert seen[:4] == [0, 1, 2, 3]
    assert not plan.converged
    assert plan.iterations == 3


def test_an_exception_in_progress_is_raised():
    def progress(info):
        raise KeyError("from the callback")

    with pytest.raises(KeyError, match="from the callback"):
        loam.load_problem(ROOT / "problems" / "hopper_rigid.yaml").solve(progress=progress)


def test_plot_draws_the_run(plans, tmp_path):
    plan = plans["hopper_granular"]
    plan.write(tmp_path / "run")
    plan.simulate()
    files = loam.plot(tmp_path / "run", svg=False)
    assert files and all(Path(f).exists() and f.endswith(".png") for f in files)


def test_the_libraries_loaded_are_those_loam_was_linked_against():
    assert Path(loam.loaded_casadi_dir()).resolve() == Path(loam.casadi_dir()).resolve()
    info = loam.build_info()
    assert info["casadi_version"] == "3.8.2"
    assert info["ipopt_version"].startswith("3.14")


def test_a_warm_start_is_loam_solve_warm_start_s(cli, cli_run, tmp_path):
    start = cli_run("hopper_granular")
    file = ROOT / "problems" / "hopper_granular.yaml"
    higher = ["task.apex_rise=0.065"]
    out = tmp_path / "cli"
    result = cli("solve", file, "--set", higher[0], "--warm-start", start, "--out", out, "-q")
    assert result.returncode == 0, result.stderr
    plan = loam.load_problem(file, set=higher).solve(warm_start=start)
    cli_solution = solution(out)
    assert abs(plan.objective - cli_solution["objective"]) <= 1e-12
    assert plan.iterations == cli_solution["iterations"]
    plan.write(tmp_path / "py")
    recorded = solution(tmp_path / "py")["provenance"]["warm_start"]
    assert recorded == cli_solution["provenance"]["warm_start"]
    assert recorded["kind"] == "plan"
    assert "warm_start=" in solution(tmp_path / "py")["provenance"]["command_line"][2]


@pytest.mark.parametrize("name", PROBLEMS)
def test_transcription_error_is_the_cli_s(name, plans, cli_run):
    """A plan's interval errors are solution.json's (MODEL.md 5.3)."""
    plan, cli = plans[name], solution(cli_run(name))
    error, recorded = plan.transcription_error, cli["transcription_error"]
    assert error["worst_state"] == recorded["worst_state"]
    assert abs(error["max"] - recorded["max"]) <= 1e-12
    assert [len(p) for p in error["intervals"]] == [p["nodes"] - 1 for p in cli["phases"]]


def test_a_gait_replays_stride_after_stride_as_the_cli_does(cli, cli_run):
    """`Plan.simulate(strides=N)` is `loam simulate RUN --strides N`: each stride measured."""
    plan = loam.load_problem(ROOT / "problems" / "monopod_gait.yaml").solve()
    cli_dir = cli_run("monopod_gait")
    assert plan.objective == pytest.approx(solution(cli_dir)["objective"], rel=1e-12)
    result = cli("simulate", cli_dir, "--strides", "2", "-q")
    assert result.returncode == 0, result.stderr
    replay = plan.simulate(strides=2)
    assert replay.complete
    assert replay.summary["strides"] == json.loads((cli_dir / "replay.json").read_text())["strides"]
    assert [s["stride"] for s in replay.summary["strides"]] == [1, 2]
    for stride in replay.summary["strides"]:
        assert stride["length_error_rel"] < 0.02 and stride["apex_error_rel"] < 0.02


def test_a_rigid_plan_replays_on_a_wrench_space_as_the_cli_does(cli, cli_run):
    """`loam.simulate(run, terrain=FILE)` with FILE's terrain a wrench space is `loam simulate
    RUN --terrain FILE`: the MDP simulator's replay, the same numbers."""
    sand = ROOT / "problems" / "monopod_sand_hop.yaml"
    cli_dir = cli_run("monopod_hop")
    result = cli("simulate", cli_dir, "--terrain", sand, "-q")
    assert result.returncode in (0, 1), result.stderr
    cli_json = next(cli_dir.glob("replay-on-monopod_sand_hop-*.json"))
    replay = loam.simulate(cli_dir, terrain=str(sand))
    assert replay.stem == cli_json.stem
    assert replay.summary["terrain"]["model"] == "wrench_space"
    assert replay.summary["integration"]["max_step_s"] == 1e-3
    cli_summary = json.loads(cli_json.read_text())
    assert replay.summary["achieved_distance_m"] == cli_summary["achieved_distance_m"]
    assert replay.summary["complete"] == cli_summary["complete"]
    # `backend` and `mdp_step` are `--backend` and `--mdp-step`.
    coarse = loam.simulate(cli_dir, terrain=str(sand), backend="mdp", mdp_step=2e-3)
    assert coarse.summary["integration"]["max_step_s"] == 2e-3
    with pytest.raises(loam.InputError, match="--backend reduced"):
        loam.simulate(cli_dir, terrain=str(sand), backend="reduced")
    with pytest.raises(loam.InputError, match="accepted here"):
        loam.simulate(cli_dir, backend="dem-cpu")
