"""Failures are exceptions carrying what the command line prints and the exit code it gives:
a bad problem file names its file, line and field."""

import pytest

import loam
from conftest import ROOT

BAD = """\
# a monopod whose leg has a negative mass
robot:
  model: monopod
  leg_mass: -1.0
task:
  distance: 0.1
"""

# The hopper in loam's former schema, which is no longer read.
FORMER = """\
name: jump
phases:
  - {domain: stance, nodes: 31}
  - {domain: flight, nodes: 31}
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
    assert error.line == 4
    assert error.field == "robot.leg_mass"
    assert "got -1" in str(error)
    assert error.override is None
    assert isinstance(error, ValueError) and isinstance(error, loam.InputError)
    # The text and the exit code are the command line's.
    result = cli("check", file)
    assert result.returncode == error.exit_code == 2
    assert result.stderr.strip() == f"error: {error}"


def test_a_bad_override_names_it(tmp_path, cli):
    file = ROOT / "problems" / "hopper_rigid.yaml"
    bad = "robot.description.bodies.0.mass=-1"
    with pytest.raises(loam.ProblemError) as raised:
        loam.load_problem(file, set=[bad])
    assert raised.value.override == bad
    assert raised.value.field == "robot.description.bodies[0].mass"
    result = cli("check", file, "--set", bad)
    assert result.returncode == 2
    assert result.stderr.strip() == f"error: {raised.value}"


def test_a_file_in_the_former_hopper_schema_says_how_to_write_it(tmp_path, cli):
    file = tmp_path / "jump.yaml"
    file.write_text(FORMER)
    with pytest.raises(loam.ProblemError) as raised:
        loam.load_problem(file)
    error = raised.value
    assert error.line == 2
    assert error.field == "phases"
    assert "robots/hopper.yaml" in str(error)
    result = cli("check", file)
    assert result.returncode == error.exit_code == 2
    assert result.stderr.strip() == f"error: {error}"


def test_an_unknown_field_in_a_dict_names_the_field():
    with pytest.raises(loam.ProblemError) as raised:
        loam.load_problem({"task": {"apex_rize": 0.06}}, origin="mine.yaml")
    assert raised.value.file == "mine.yaml"
    assert raised.value.field == "task.apex_rize"
    assert "did you mean `apex_rise`?" in str(raised.value)


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


def test_refine_is_refused_on_a_wrench_space():
    problem = loam.load_problem(ROOT / "problems" / "hopper_rail.yaml")
    with pytest.raises(loam.InputError, match="refine"):
        problem.solve(refine=0.01)


def test_a_warm_start_from_another_robot_is_input_error(cli_run):
    problem = loam.load_problem(ROOT / "problems" / "hopper_granular.yaml")
    with pytest.raises(loam.InputError, match="not this problem's robot's"):
        problem.solve(warm_start=cli_run("monopod_hop"))
