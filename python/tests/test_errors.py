"""Failures are exceptions carrying what the command line prints and the exit code it gives:
a bad problem file names its file, line and field."""

import pytest

import loam
from conftest import ROOT

BAD = """\
# a hopper whose motor has a negative mass
robot:
  motor_mass: -1.0
task:
  apex_height: 0.05
"""


def test_a_bad_problem_file_raises_problem_error_with_file_line_and_field(tmp_path, cli):
    file = tmp_path / "bad.yaml"
    file.write_text(BAD)
    with pytest.raises(loam.ProblemError) as raised:
        loam.load_problem(file)
    error = raised.value
    assert error.file == str(file)
    assert error.line == 3
    assert error.field == "robot.motor_mass"
    assert error.override is None
    assert isinstance(error, ValueError) and isinstance(error, loam.InputError)
    # The text and the exit code are the command line's.
    result = cli("check", file)
    assert result.returncode == error.exit_code == 2
    assert result.stderr.strip() == f"error: {error}"


def test_a_bad_override_names_it(tmp_path, cli):
    file = ROOT / "problems" / "hopper_rigid.yaml"
    with pytest.raises(loam.ProblemError) as raised:
        loam.load_problem(file, set=["task.apex_height=-0.1"])
    assert raised.value.override == "task.apex_height=-0.1"
    assert raised.value.field == "task.apex_height"
    result = cli("check", file, "--set", "task.apex_height=-0.1")
    assert result.stderr.strip() == f"error: {raised.value}"


def test_an_unknown_field_in_a_dict_names_the_field():
    with pytest.raises(loam.ProblemError) as raised:
        loam.load_problem({"robot": {"motor_mas": 1.0}}, origin="mine.yaml")
    assert raised.value.file == "mine.yaml"
    assert "motor_mas" in str(raised.value)


def test_a_missing_file_is_input_error():
    with pytest.raises(loam.ProblemError) as raised:
        loam.load_problem(ROOT / "problems" / "no_such_problem.yaml")
    assert "no_such_problem.yaml" in str(raised.value)


def test_a_folder_that_cannot_be_written_is_output_error(tmp_path):
    plan = loam.load_problem(ROOT / "problems" / "hopper_rigid.yaml").solve()
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    with pytest.raises(loam.OutputError) as raised:
        plan.write(blocker / "run")
    assert raised.value.exit_code == 3
    assert isinstance(raised.value, OSError)


def test_a_folder_that_is_not_a_run_is_input_error(tmp_path):
    with pytest.raises(loam.InputError) as raised:
        loam.simulate(tmp_path)
    assert raised.value.exit_code == 2


def test_an_unknown_terrain_is_input_error(tmp_path):
    plan = loam.load_problem(ROOT / "problems" / "hopper_rigid.yaml").solve()
    with pytest.raises(loam.InputError, match="not a terrain preset"):
        plan.simulate(terrain="quicksand")


def test_refine_is_refused_for_the_hopper_s_own_problem():
    problem = loam.load_problem(ROOT / "problems" / "hopper_rigid.yaml")
    with pytest.raises(loam.InputError, match="refine"):
        problem.solve(refine=0.01)


def test_a_warm_start_that_does_not_fit_is_input_error(cli_run):
    problem = loam.load_problem(ROOT / "problems" / "hopper_granular.yaml", set=["phases.0.nodes=21"])
    with pytest.raises(loam.InputError, match="cannot start this problem"):
        problem.solve(warm_start=cli_run("hopper_granular"))
