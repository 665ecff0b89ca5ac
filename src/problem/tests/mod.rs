//! The loader end to end: every class of error with its line, field and accepted values,
//! overrides, defaults, presets, serialization, robot files, the former hopper schema's
//! refusal, and every shipped problem file.

#![allow(clippy::result_large_err)]

use std::path::{Path, PathBuf};

use super::planar::{
    Objective, PhaseSpec, PlanarProblem, PlanarTerrainConfig, RigidGroundConfig, RobotConfig,
};
use super::*;
use crate::model::planar::monopod::MonopodParams;

const FILE: &str = "problems/test.yaml";

fn read(text: &str) -> Result<PlanarProblem, ProblemError> {
    read_with(text, &[])
}

fn read_with(text: &str, overrides: &[&str]) -> Result<PlanarProblem, ProblemError> {
    let overrides: Vec<String> = overrides.iter().map(|text| text.to_string()).collect();
    parse_problem(text, Path::new(FILE), &overrides)
}

fn failure(text: &str) -> ProblemError {
    read(text).expect_err("the problem should be refused")
}

fn failure_with(text: &str, overrides: &[&str]) -> ProblemError {
    read_with(text, overrides).expect_err("the problem should be refused")
}

/// The crate's root, where `problems/` and `robots/` are.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Where a problem that names `../robots/hopper.yaml` is read from: beside the shipped ones.
fn in_problems() -> PathBuf {
    root().join(FILE)
}

/// Problem text read as if it were `problems/test.yaml` of the crate, so that its robot file
/// `../robots/NAME.yaml` is the shipped one.
fn read_in_repo(text: &str, overrides: &[&str]) -> Result<PlanarProblem, ProblemError> {
    let overrides: Vec<String> = overrides.iter().map(|text| text.to_string()).collect();
    parse_problem(text, &in_problems(), &overrides)
}

/// The hopper's robot file with a stance and a flight: the smallest robot-file problem.
const HOPPER: &str =
    "robot: {file: ../robots/hopper.yaml}\nschedule:\n  - {contacts: [foot]}\n  - {contacts: []}\n";

/// A folder of its own under the system's temporary folder, empty.
fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("loam-problem-tests-{}-{name}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A refusal at `line` naming `field`, whose message holds every one of `pieces`.
fn assert_refused(error: &ProblemError, line: Option<usize>, field: &str, pieces: &[&str]) {
    assert_eq!(error.line, line, "{error}");
    assert_eq!(error.field.as_deref(), Some(field), "{error}");
    assert_contains(error, pieces);
}

fn assert_contains(error: &ProblemError, pieces: &[&str]) {
    for piece in pieces {
        assert!(
            error.message.contains(piece),
            "`{piece}` missing from: {error}"
        );
    }
}

fn default_resolved(name: &str) -> PlanarProblem {
    let mut problem = PlanarProblem::default();
    Schema::resolve(&mut problem);
    problem.name = Some(name.to_owned());
    problem
}

fn description(problem: &PlanarProblem) -> &crate::model::planar::description::RobotDescription {
    match &problem.robot {
        RobotConfig::File(file) => &file.description,
        other => panic!("not a robot file's robot: {other:?}"),
    }
}

fn contacts(problem: &PlanarProblem) -> Vec<Vec<&str>> {
    problem
        .schedule
        .iter()
        .map(|phase| phase.contacts.iter().map(String::as_str).collect())
        .collect()
}

// ---- 1. malformed YAML

#[test]
fn malformed_yaml_has_the_parser_position() {
    let error = failure("robot:\n  model: [monopod\ntask:\n  apex_rise: 0.02\n");
    assert_eq!(error.file, PathBuf::from(FILE));
    assert_eq!((error.line, error.column), (Some(3), Some(5)));
    assert_contains(
        &error,
        &[
            "not valid YAML",
            "while parsing a flow sequence at line 2 column 10",
        ],
    );
    assert!(
        !error.message.contains("line 3 column 5"),
        "position repeated: {error}"
    );

    let tabs = failure("task:\n\tapex_rise: 0.1\n");
    assert_eq!(tabs.line, Some(2));
    assert_contains(&tabs, &["indented with a tab"]);
}

#[test]
fn duplicate_keys_are_refused() {
    let error = failure("gravity: 9.81\ntask:\n  distance: 0.1\n  distance: 0.2\n");
    assert_eq!(error.line, Some(3));
    assert_contains(&error, &["duplicate", "distance"]);
}

// ---- 2. unknown fields

#[test]
fn misspelt_field_suggests_the_name_and_lists_the_accepted() {
    let error = failure("gravity: 9.81\ntask:\n  distance: 0.1\n  apex_rize: 0.06\n");
    assert_eq!((error.line, error.column), (Some(4), Some(3)));
    assert_eq!(error.field.as_deref(), Some("task.apex_rize"));
    assert_eq!(error.source_of_value, ValueSource::File);
    assert!(
        error.message.starts_with(
            "unknown field `apex_rize` in `task`; did you mean `apex_rise`? accepted: start, end, distance, apex_rise, apex_of,"
        ),
        "{error}"
    );
    assert!(
        error
            .to_string()
            .starts_with("problems/test.yaml:4:3: task.apex_rize: unknown field"),
        "{error}"
    );
}

#[test]
fn unknown_top_level_and_phase_fields() {
    let error = failure("name: x\n\nschedul:\n  - {contacts: [foot]}\n");
    assert_eq!(error.line, Some(3));
    assert_eq!(error.field.as_deref(), Some("schedul"));
    assert_contains(
        &error,
        &[
            "at the top level",
            "did you mean `schedule`?",
            "accepted: name, gravity, robot, terrain, schedule, task,",
        ],
    );

    let error = failure(
        "robot: {model: monopod}\nschedule:\n  - {contacts: [foot]}\n  - contacts: []\n    node: 31\n",
    );
    assert_eq!(error.line, Some(5));
    assert_eq!(error.field.as_deref(), Some("schedule[1].node"));
    assert_contains(
        &error,
        &[
            "in `schedule[1]`",
            "did you mean `nodes`?",
            "accepted: contacts, nodes, duration",
        ],
    );
}

#[test]
fn unknown_fields_of_a_model_list_that_model_s_fields() {
    // A robot preset's parameters and a terrain model's: the section chosen by its `model`.
    let error = failure("robot: {model: monopod, leg_mas: 1.0}\n");
    assert_eq!(error.field.as_deref(), Some("robot"));
    assert_contains(
        &error,
        &[
            "unknown field `leg_mas` in `robot`",
            "did you mean `leg_mass`?",
            "accepted: body_mass, body_inertia, leg_mass,",
        ],
    );
    let error = failure("terrain:\n  model: spring\n  stifness: 1\n");
    assert_eq!(error.field.as_deref(), Some("terrain"));
    assert_contains(
        &error,
        &[
            "unknown field `stifness` in `terrain`",
            "did you mean `stiffness`?",
            "accepted: friction, stiffness, damping",
        ],
    );
}

#[test]
fn a_name_far_from_every_field_gets_no_guess() {
    let error = failure("task:\n  height_of_the_jump: 0.06\n");
    assert_eq!(error.line, Some(2));
    assert!(!error.message.contains("did you mean"), "{error}");
    assert_contains(&error, &["accepted: start, end, distance, apex_rise"]);
}

// ---- 3. wrong types

#[test]
fn wrong_type_names_the_field_and_the_value() {
    let error = failure("gravity: heavy\n");
    assert_eq!((error.line, error.column), (Some(1), Some(10)));
    assert_eq!(error.field.as_deref(), Some("gravity"));
    assert_contains(
        &error,
        &["invalid type", "\"heavy\"", "accepted: a number in m/s²"],
    );

    let error = failure("schedule:\n  - {contacts: [foot]}\n  - contacts: []\n    nodes: 3.5\n");
    assert_eq!((error.line, error.column), (Some(4), Some(12)));
    assert_eq!(error.field.as_deref(), Some("schedule[1].nodes"));
    assert_contains(&error, &["invalid type", "3.5"]);

    let error = failure("schedule:\n  - contacts: [foot]\n    duration: [0.01, 0.1, 0.2]\n");
    assert_refused(
        &error,
        Some(3),
        "schedule[0].duration",
        &["invalid length 3"],
    );

    let error = failure("task: {start: {set: {z: free}}}\n");
    assert_refused(
        &error,
        Some(1),
        "task.start.set.z",
        &["invalid type", "\"free\""],
    );

    let error = failure("task: 3\n");
    assert_refused(&error, Some(1), "task", &["invalid type", "`3`"]);

    let error = failure("- gravity: 3\n");
    assert_eq!(error.field, None);
    assert_contains(&error, &["invalid type: sequence"]);
}

#[test]
fn coordinates_and_contacts_are_the_robot_s() {
    let error = failure("task: {start: {set: {hieght: 0.1}}}\n");
    assert_eq!(error.line, Some(1));
    assert_eq!(error.field.as_deref(), Some("task.start.set.hieght"));
    assert_contains(
        &error,
        &[
            "the monopod has no coordinate `hieght`",
            "accepted: `x`, `z`, `pitch`, `hip`, `leg`",
        ],
    );

    let error = failure("schedule:\n  - {contacts: [fot]}\n");
    assert_eq!((error.line, error.column), (Some(2), Some(17)));
    assert_eq!(error.field.as_deref(), Some("schedule[0].contacts[0]"));
    assert_eq!(
        error.message,
        "the monopod has no contact `fot`; accepted: `foot`"
    );

    // A robot file's robot is named by its own name.
    let error = read_in_repo(
        "robot: {file: ../robots/hopper.yaml}\nschedule:\n  - {contacts: [feet]}\n  - {contacts: []}\n",
        &[],
    )
    .unwrap_err();
    assert_eq!(error.line, Some(3));
    assert_eq!(error.field.as_deref(), Some("schedule[0].contacts[0]"));
    assert_contains(
        &error,
        &["the robot `hopper` has no contact `feet`; accepted: `foot`"],
    );
}

// ---- 4. unknown enum values

#[test]
fn unknown_enum_value_lists_the_accepted() {
    let error = failure("terrain:\n  model: sand\n");
    assert_eq!((error.line, error.column), (Some(2), Some(10)));
    assert_eq!(error.field.as_deref(), Some("terrain.model"));
    assert_eq!(
        error.message,
        "unknown value `sand`; accepted: rigid, added_mass, wrench_space, spring"
    );

    let error = failure("terrain:\n  model: rigd\n");
    assert_contains(&error, &["did you mean `rigid`?"]);

    let error = failure("robot: {model: biped}\n");
    assert_eq!(error.field.as_deref(), Some("robot.model"));
    assert_contains(&error, &["accepted: planar_foot, monopod, quadruped, file"]);

    let error = failure("transcription: {scheme: hermite-simpson}\n");
    assert_eq!(error.field.as_deref(), Some("transcription.scheme"));
    assert_contains(
        &error,
        &[
            "did you mean `hermite_simpson`?",
            "accepted: trapezoidal, hermite_simpson",
        ],
    );

    let error = failure("task:\n  objective: efort\n");
    assert_eq!(error.line, Some(2));
    assert_eq!(error.field.as_deref(), Some("task.objective"));
    assert_contains(
        &error,
        &[
            "did you mean `effort`?",
            "inputs_squared",
            "cost_of_transport",
        ],
    );

    let error = failure("initial_guess: 0\n");
    assert_eq!(error.field.as_deref(), Some("initial_guess"));
    assert_contains(&error, &["zero", "rest", "footholds"]);

    // The former hopper planner's guesses are gone with it: an unknown value, with the list.
    let error = failure("initial_guess: ballistic\n");
    assert_eq!(error.field.as_deref(), Some("initial_guess"));
    assert_contains(
        &error,
        &["unknown value `ballistic`", "zero, auto, rest, footholds"],
    );
}

// ---- 5. semantic validation

#[test]
fn negative_mass_is_placed_and_explained() {
    let error = failure("name: hop\nrobot:\n  model: monopod\n  leg_mass: -0.5\n");
    assert_eq!((error.line, error.column), (Some(4), Some(3)));
    assert_eq!(error.field.as_deref(), Some("robot.leg_mass"));
    assert!(
        error
            .message
            .starts_with("a mass must be a finite number > 0 kg")
            && error.message.ends_with("got -0.5"),
        "{error}"
    );
    assert!(
        error
            .to_string()
            .starts_with("problems/test.yaml:4:3: robot.leg_mass: a mass must be"),
        "{error}"
    );
}

#[test]
fn an_error_in_a_robot_file_names_the_robot_file() {
    let dir = scratch("robot-file");
    let robot = dir.join("bot.yaml");
    std::fs::write(
        &robot,
        "name: bot\nbodies:\n  - name: base\n    mass: -1.0\n    inertia: 0.1\ncontacts:\n  - {name: foot, body: base, point: [0.0, 0.0]}\n",
    )
    .unwrap();
    let problem = dir.join("problem.yaml");
    let error = parse_problem("robot: {file: bot.yaml}\n", &problem, &[]).unwrap_err();
    assert_eq!(error.file, robot);
    assert_eq!((error.line, error.column), (Some(4), Some(5)));
    assert_eq!(error.field.as_deref(), Some("bodies[0].mass"));
    assert_contains(&error, &["> 0 kg", "got -1"]);

    // A robot file that is not there: the file, and the problem that named it.
    let error = parse_problem("robot: {file: gone.yaml}\n", &problem, &[]).unwrap_err();
    assert_eq!(error.file, dir.join("gone.yaml"));
    assert_contains(
        &error,
        &[
            "cannot read the robot file",
            &format!("named by robot.file in {}", problem.display()),
        ],
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_first_error_in_the_file_is_reported() {
    // The robot's mass is checked before the ground's friction; the friction comes first in
    // the file.
    let error = failure(
        "terrain:\n  model: rigid\n  friction: -1\nrobot:\n  model: monopod\n  leg_mass: -1\n",
    );
    assert_eq!(error.field.as_deref(), Some("terrain.friction"));
    assert_eq!(error.line, Some(3));
    assert_eq!(error.message, "must be in [0, 10], got -1");
}

#[test]
fn duration_bounds_in_order() {
    let text = "schedule:\n  - {contacts: [foot], nodes: 31}\n  - contacts: []\n    nodes: 31\n    duration: [0.3, 0.2]\n";
    let error = failure(text);
    assert_eq!(error.line, Some(5));
    assert_eq!(error.field.as_deref(), Some("schedule[1].duration"));
    assert_eq!(
        error.message,
        "must be [min, max] with 0 < min <= max s, got [0.3, 0.2]"
    );

    let error = failure("schedule: [{contacts: [foot], duration: [0, 0.2]}, {contacts: []}]\n");
    assert_refused(
        &error,
        Some(1),
        "schedule[0].duration",
        &["0 < min <= max", "got [0, 0.2]"],
    );

    let error = failure("schedule:\n  - {contacts: [foot]}\n  - {contacts: [], nodes: 2}\n");
    assert_eq!(error.line, Some(3));
    assert_eq!(error.field.as_deref(), Some("schedule[1].nodes"));
    assert_eq!(error.message, "must be at least 3, got 2");
}

#[test]
fn the_schedule_must_make_a_motion() {
    // Each phase lifts or lands a foot.
    let error = failure("schedule:\n  - {contacts: [foot]}\n  - {contacts: [foot]}\n");
    assert_refused(
        &error,
        Some(3),
        "schedule[1].contacts",
        &["the same feet as schedule[0]", "lift a foot"],
    );

    // A robot at rest starts on the ground.
    let error = failure("schedule:\n  - {contacts: []}\n  - {contacts: [foot]}\n");
    assert_refused(
        &error,
        Some(2),
        "schedule[0].contacts",
        &["the first phase must have a foot on the ground"],
    );

    // An apex ends a flight.
    let error = failure("task:\n  apex_rise: 0.05\n");
    assert_refused(
        &error,
        Some(2),
        "task.apex_rise",
        &["the last phase must be a flight (contacts: [])"],
    );
    let error = failure("task:\n  apex_of: rod\n");
    assert_eq!(error.field.as_deref(), Some("task.apex_of"));
    assert_contains(&error, &["set task.apex_rise too"]);

    // Feet only leave a granular bed.
    let error = failure(
        "terrain: {model: added_mass}\nschedule:\n  - {contacts: [foot]}\n  - {contacts: []}\n  - {contacts: [foot]}\n",
    );
    assert_eq!(error.line, Some(5));
    assert_eq!(error.field.as_deref(), Some("schedule[2].contacts[0]"));
    assert_contains(
        &error,
        &["`foot` lands in the bed", "plan landings on `model: rigid`"],
    );
}

#[test]
fn medium_and_task_ranges() {
    let error = failure("terrain:\n  model: added_mass\n  volume_fraction: 1.2\n");
    assert_eq!(error.line, Some(3));
    assert_eq!(error.field.as_deref(), Some("terrain.volume_fraction"));
    assert_eq!(
        error.message,
        "must be between 0 and 1 (exclusive), got 1.2"
    );
    let error = failure("terrain:\n  model: added_mass\n  shear_band_angle_deg: 95\n");
    assert_eq!(
        error.message,
        "must be between 0 and 90 deg (exclusive), got 95"
    );
    let error = failure("terrain:\n  model: added_mass\n  foot_radius: 0\n");
    assert_eq!(error.field.as_deref(), Some("terrain.foot_radius"));
    assert_eq!(error.message, "must be a finite number > 0 m, got 0");
    let error = failure("terrain: {model: rigid, friction: 11}\n");
    assert_eq!(error.field.as_deref(), Some("terrain.friction"));
    assert_eq!(error.message, "must be in [0, 10], got 11");
    let error = failure("task:\n  contact_margin: -0.01\n");
    assert_eq!(error.line, Some(2));
    assert_contains(&error, &["must be a finite number >= 0", "got -0.01"]);
    let error = failure("gravity: 0\n");
    assert_eq!(error.message, "must be a finite number > 0 m/s², got 0");
}

#[test]
fn nan_is_never_a_value() {
    let error = failure("terrain:\n  model: added_mass\n  drag_scaling: .nan\n");
    assert_eq!(error.line, Some(3));
    assert_eq!(error.field.as_deref(), Some("terrain.drag_scaling"));
    assert_eq!(error.message, "must be a finite number > 0, got NaN");
    let error = failure("gravity: .nan\n");
    assert_eq!(error.field.as_deref(), Some("gravity"));
    assert_contains(&error, &["got NaN"]);
    let error = failure("task:\n  distance: .nan\n");
    assert_eq!(error.line, Some(2));
    assert_eq!(error.message, "must be finite, got NaN");
    // An IPOPT option's number must be finite.
    let error = failure("robot: {model: monopod}\nsolver: {tol: .nan}\n");
    assert_eq!((error.line, error.column), (Some(2), Some(10)));
    assert_eq!(error.field.as_deref(), Some("solver.tol"));
    assert_eq!(error.message, "must be a finite number, got NaN");
    // Where no rule of the schema looks, NaN is refused all the same.
    let error = failure("robot: {model: monopod}\ntask: {swing_height: .nan}\n");
    assert_eq!(error.field.as_deref(), Some("task.swing_height"));
    assert_contains(&error, &["NaN"]);
    // And from an override.
    let error = failure_with("{}", &["task.distance=.nan"]);
    assert_eq!(
        error.source_of_value,
        ValueSource::Override("task.distance=.nan".into())
    );
    assert_contains(&error, &["got NaN"]);
}

#[test]
fn a_default_that_breaks_a_rule_says_so() {
    let report = Report {
        origin: Path::new(FILE),
        text: "task: {}\n",
        changes: Vec::new(),
    };
    let violation = Violation {
        field: "terrain.friction".into(),
        message: "must be in [0, 10], got -1".into(),
    };
    let error = report.violation_error(violation);
    assert_eq!(error.line, None);
    assert_eq!(error.field.as_deref(), Some("terrain.friction"));
    assert_contains(
        &error,
        &["the file does not set it, so this is the default"],
    );
}

// ---- the former hopper schema

#[test]
fn a_file_in_the_former_hopper_schema_is_refused_with_how_to_write_it() {
    let text = "name: hop\n\nphases:\n  - domain: stance\n  - domain: flight\ntask:\n  apex_height: 0.06\n";
    let error = failure(text);
    assert_eq!((error.line, error.column), (Some(3), Some(1)));
    assert_eq!(error.field.as_deref(), Some("phases"));
    assert_eq!(error.source_of_value, ValueSource::File);
    assert_contains(
        &error,
        &[
            "former hopper schema",
            "robots/hopper.yaml",
            "schedule:",
            "apex_rise",
            "problems/hopper_granular.yaml",
        ],
    );
    // Not serde's bare complaint about an unknown field.
    assert!(!error.message.contains("unknown field"), "{error}");
    // Whatever else the file holds, and however short it is.
    let error = failure("phases: []\n");
    assert_eq!(error.field.as_deref(), Some("phases"));
    assert_contains(&error, &["robots/hopper.yaml"]);
}

mod footprint;
mod overrides;
