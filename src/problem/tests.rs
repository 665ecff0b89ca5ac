//! The loader end to end: every class of error with its line, field and accepted values,
//! overrides, defaults, presets, serialization, and every shipped problem file.

#![allow(clippy::result_large_err)]

use std::path::{Path, PathBuf};

use super::*;

const FILE: &str = "problems/test.yaml";

fn read(text: &str) -> Result<Problem, ProblemError> {
    parse(text, Path::new(FILE), &[])
}

fn read_with(text: &str, overrides: &[&str]) -> Result<Problem, ProblemError> {
    let overrides: Vec<String> = overrides.iter().map(|text| text.to_string()).collect();
    parse(text, Path::new(FILE), &overrides)
}

fn failure(text: &str) -> ProblemError {
    read(text).expect_err("the problem should be refused")
}

fn failure_with(text: &str, overrides: &[&str]) -> ProblemError {
    read_with(text, overrides).expect_err("the problem should be refused")
}

fn assert_contains(error: &ProblemError, pieces: &[&str]) {
    for piece in pieces {
        assert!(
            error.message.contains(piece),
            "`{piece}` missing from: {error}"
        );
    }
}

fn default_resolved(name: &str) -> Problem {
    let mut problem = Problem::default();
    problem.resolve();
    problem.name = Some(name.to_owned());
    problem
}

// ---- 1. malformed YAML

#[test]
fn malformed_yaml_has_the_parser_position() {
    let error = failure("robot:\n  motor_mass: [1, 2\ntask:\n  stroke: 0.02\n");
    assert_eq!(error.file, PathBuf::from(FILE));
    assert_eq!((error.line, error.column), (Some(3), Some(5)));
    assert_contains(
        &error,
        &[
            "not valid YAML",
            "while parsing a flow sequence at line 2 column 15",
        ],
    );
    assert!(
        !error.message.contains("line 3 column 5"),
        "position repeated: {error}"
    );

    let tabs = failure("robot:\n\tmotor_mass: 1\n");
    assert_eq!(tabs.line, Some(2));
    assert_contains(&tabs, &["indented with a tab"]);
}

#[test]
fn duplicate_keys_are_refused() {
    let error = failure("gravity: 9.81\nrobot:\n  rod_mass: 0.1\n  rod_mass: 0.2\n");
    assert_eq!(error.line, Some(3));
    assert_contains(&error, &["duplicate", "rod_mass"]);
}

// ---- 2. unknown fields

#[test]
fn misspelt_field_suggests_the_name_and_lists_the_accepted() {
    let error = failure("gravity: 9.81\nrobot:\n  rod_mass: 0.2\n  motr_mass: 1.0\n");
    assert_eq!((error.line, error.column), (Some(4), Some(3)));
    assert_eq!(error.field.as_deref(), Some("robot.motr_mass"));
    assert_eq!(error.source_of_value, ValueSource::File);
    assert!(
        error.message.starts_with("unknown field `motr_mass` in `robot`; did you mean `motor_mass`? accepted: motor_mass, rod_mass, foot_mass,"),
        "{error}"
    );
    assert!(
        error
            .to_string()
            .starts_with("problems/test.yaml:4:3: robot.motr_mass: unknown field"),
        "{error}"
    );
}

#[test]
fn unknown_top_level_and_phase_fields() {
    let error = failure("name: x\n\ngravty: 9.81\n");
    assert_eq!(error.line, Some(3));
    assert_eq!(error.field.as_deref(), Some("gravty"));
    assert_contains(
        &error,
        &[
            "at the top level",
            "did you mean `gravity`?",
            "accepted: name, gravity, robot",
        ],
    );

    let error = failure("phases:\n  - domain: stance\n  - domain: flight\n    node: 31\n");
    assert_eq!(error.line, Some(4));
    assert_eq!(error.field.as_deref(), Some("phases[1].node"));
    assert_contains(
        &error,
        &[
            "in `phases[1]`",
            "did you mean `nodes`?",
            "accepted: domain, nodes, duration",
        ],
    );
}

#[test]
fn a_name_far_from_every_field_gets_no_guess() {
    let error = failure("task:\n  height_of_the_jump: 0.06\n");
    assert_eq!(error.line, Some(2));
    assert!(!error.message.contains("did you mean"), "{error}");
    assert_contains(&error, &["accepted: apex_height, max_motor_force, stroke"]);
}

// ---- 3. wrong types

#[test]
fn wrong_type_names_the_field_and_the_accepted_type() {
    let error = failure("robot:\n  motor_mass: heavy\n");
    assert_eq!((error.line, error.column), (Some(2), Some(15)));
    assert_eq!(error.field.as_deref(), Some("robot.motor_mass"));
    assert_contains(
        &error,
        &["invalid type", "\"heavy\"", "accepted: a number in kg"],
    );

    let error = failure("phases:\n  - domain: stance\n  - domain: flight\n    nodes: 3.5\n");
    assert_eq!(error.line, Some(4));
    assert_eq!(error.field.as_deref(), Some("phases[1].nodes"));
    assert_contains(
        &error,
        &["3.5", "accepted: a whole number of nodes, at least 3"],
    );

    let error = failure(
        "phases:\n  - domain: stance\n    duration: [0.01, 0.1, 0.2]\n  - domain: flight\n",
    );
    assert_eq!(error.line, Some(3));
    assert_eq!(error.field.as_deref(), Some("phases[0].duration"));
    assert_contains(&error, &["accepted: [min, max] in s"]);

    let error = failure("robot: 3\n");
    assert_eq!(error.field.as_deref(), Some("robot"));
    assert_contains(
        &error,
        &["accepted: a section with the fields motor_mass, rod_mass"],
    );

    let error = failure("- gravity: 3\n");
    assert_eq!(error.field, None);
    assert_contains(&error, &["accepted: a map of the sections name, gravity"]);
}

#[test]
fn start_position_is_free_or_metres() {
    let error = failure("task:\n  start_position: fre\n");
    assert_eq!(error.line, Some(2));
    assert_eq!(error.field.as_deref(), Some("task.start_position"));
    assert_contains(&error, &["expected `free` or a number in metres"]);
    let error = failure("task:\n  start_position: [0]\n");
    assert_contains(&error, &["`free` or a number in metres"]);

    let fixed = read("task: {start_position: -0.01}").unwrap();
    assert_eq!(fixed.task.start_position, StartPosition::Fixed(-0.01));
    let integer = read("task: {start_position: 0}").unwrap();
    assert_eq!(integer.task.start_position, StartPosition::Fixed(0.0));
}

#[test]
fn a_phase_needs_its_domain() {
    let error = failure("phases:\n  - domain: stance\n  - nodes: 31\n");
    assert_eq!(error.line, Some(3));
    assert_eq!(error.field.as_deref(), Some("phases[1]"));
    assert_contains(&error, &["missing field `domain`", "one of stance, flight"]);
}

// ---- 4. unknown enum values

#[test]
fn unknown_enum_value_lists_the_accepted() {
    let error = failure("terrain:\n  model: sand\n");
    assert_eq!((error.line, error.column), (Some(2), Some(10)));
    assert_eq!(error.field.as_deref(), Some("terrain.model"));
    assert_eq!(
        error.message,
        "unknown value `sand`; accepted: rigid, added_mass"
    );

    // The rail hopper's old form says where it went.
    let error = failure("terrain:\n  model: wrench_space\n");
    assert_eq!(error.field.as_deref(), Some("terrain.model"));
    assert_contains(&error, &["robots/hopper.yaml", "problems/hopper_rail.yaml"]);

    let error = failure("terrain:\n  model: rigd\n");
    assert_contains(&error, &["did you mean `rigid`?"]);

    let error = failure("transcription: {scheme: hermite-simpson}\n");
    assert_eq!(error.field.as_deref(), Some("transcription.scheme"));
    assert_contains(
        &error,
        &[
            "did you mean `hermite_simpson`?",
            "accepted: trapezoidal, hermite_simpson",
        ],
    );

    let error = failure("phases:\n  - domain: stance\n  - domain: fligth\n");
    assert_eq!(error.line, Some(3));
    assert_contains(&error, &["did you mean `flight`?"]);

    let error = failure("initial_guess: 0\n");
    assert_eq!(error.field.as_deref(), Some("initial_guess"));
    assert_contains(&error, &["zero, auto"]);
}

// ---- 5. semantic validation

#[test]
fn negative_mass_is_placed_and_explained() {
    let error = failure("name: hop\nrobot:\n  motor_mass: -0.5\n");
    assert_eq!((error.line, error.column), (Some(3), Some(3)));
    assert_eq!(error.field.as_deref(), Some("robot.motor_mass"));
    assert_eq!(error.message, "must be > 0 kg, got -0.5");
    assert_eq!(
        error.to_string(),
        "problems/test.yaml:3:3: robot.motor_mass: must be > 0 kg, got -0.5"
    );
}

#[test]
fn the_first_error_in_the_file_is_reported() {
    let error = failure("task:\n  apex_height: -1\nrobot:\n  motor_mass: -1\n");
    assert_eq!(error.field.as_deref(), Some("task.apex_height"));
    assert_eq!(error.line, Some(2));
    assert_eq!(error.message, "must be > 0 m, got -1");
}

#[test]
fn duration_bounds_in_order() {
    let text = "phases:\n  - domain: stance\n  - domain: flight\n    nodes: 31\n    duration: [0.3, 0.2]\n";
    let error = failure(text);
    assert_eq!(error.line, Some(5));
    assert_eq!(error.field.as_deref(), Some("phases[1].duration"));
    assert_contains(
        &error,
        &["lower bound 0.3 is above upper bound 0.2", "0 < min <= max"],
    );

    let error = failure("phases: [{domain: stance, duration: [0, 0.2]}, {domain: flight}]\n");
    assert_eq!(error.line, Some(1));
    assert_eq!(error.field.as_deref(), Some("phases[0].duration"));
    assert_contains(&error, &["lower bound must be > 0 s, got 0"]);
}

#[test]
fn the_schedule_must_be_stance_then_flight() {
    let error = failure("phases:\n  - domain: flight\n  - domain: stance\n");
    assert_eq!(error.line, Some(2));
    assert_eq!(error.field.as_deref(), Some("phases[0].domain"));
    assert_contains(
        &error,
        &[
            "the first phase must be `stance`, got `flight`",
            "stance and flight phases in turn",
        ],
    );

    let error = failure("phases:\n  - domain: stance\n");
    assert_eq!(error.field.as_deref(), Some("phases[0].domain"));
    assert_contains(&error, &["the last phase must be `flight`"]);

    let error = failure("phases: []\n");
    assert_eq!(error.line, Some(1));
    assert_eq!(error.field.as_deref(), Some("phases"));
    assert_contains(&error, &["no phases"]);

    let error = failure("phases:\n  - domain: stance\n    nodes: 2\n  - domain: flight\n");
    assert_eq!(error.line, Some(3));
    assert_contains(&error, &["must be at least 3 nodes, got 2"]);
}

#[test]
fn medium_and_task_ranges() {
    let error = failure("terrain:\n  volume_fraction: 1.2\n");
    assert_eq!(error.line, Some(2));
    assert_eq!(
        error.message,
        "must be between 0 and 1 (exclusive), got 1.2"
    );
    let error = failure("terrain:\n  shear_band_angle_deg: 95\n");
    assert_eq!(
        error.message,
        "must be between 0 and 90 deg (exclusive), got 95"
    );
    let error = failure("terrain:\n  drag_scaling: .nan\n");
    assert_eq!(error.message, "must be a finite number > 0, got NaN");
    let error = failure("task:\n  start_position: 0.03\n");
    assert_eq!(error.line, Some(2));
    assert_contains(&error, &["[-0.0275, 0.0275] m, got 0.03"]);
    let error = failure("task:\n  min_rod_foot_gap: -0.01\n");
    assert_eq!(error.message, "must be >= 0 m, got -0.01");
    let error = failure("gravity: 0\n");
    assert_eq!(error.message, "must be > 0 m/s², got 0");
}

#[test]
fn solver_option_names_must_not_be_empty() {
    let error = failure("solver:\n  tol: 1.0e-6\n  \"\": 3\n");
    assert_eq!(error.field.as_deref(), Some("solver"));
    assert_eq!(error.line, Some(1));
    assert_contains(
        &error,
        &["option name is empty", "tol, max_iter, print_level"],
    );
}

#[test]
fn a_default_that_breaks_a_rule_says_so() {
    let report = Report {
        origin: Path::new(FILE),
        text: "task: {}\n",
        changes: Vec::new(),
    };
    let violation = Violation {
        field: "task.stroke".into(),
        message: "must be > 0 m, got 0".into(),
    };
    let error = report.violation_error(violation);
    assert_eq!(error.line, None);
    assert_eq!(error.field.as_deref(), Some("task.stroke"));
    assert_contains(
        &error,
        &["the file does not set it, so this is the default"],
    );
}

// ---- overrides

#[test]
fn overrides_change_values() {
    let problem = read_with(
        "task:\n  apex_height: 0.06\n",
        &[
            "task.apex_height=0.08",
            "terrain.model=rigid",
            "task.start_position=0",
            "solver.print_level=0",
        ],
    )
    .unwrap();
    assert_eq!(problem.task.apex_height, 0.08);
    assert_eq!(problem.terrain.model, TerrainModel::Rigid);
    assert_eq!(problem.task.start_position, StartPosition::Fixed(0.0));
    assert_eq!(problem.solver["print_level"], OptionValue::Int(0));
    assert_eq!(problem.solver["tol"], OptionValue::Num(1.0e-8));
}

#[test]
fn overrides_reach_list_entries() {
    let text = "phases:\n  - domain: stance\n  - domain: flight\n";
    let problem = read_with(
        text,
        &["phases.1.nodes=41", "phases[0].duration=[0.02, 0.1]"],
    )
    .unwrap();
    assert_eq!(problem.phases[1].nodes, 41);
    assert_eq!(problem.phases[0].duration, Some([0.02, 0.1]));
    // A file without phases gets the default two, then the override.
    let problem = read_with("{}", &["phases.1.nodes=41"]).unwrap();
    assert_eq!(problem.phases.len(), 2);
    assert_eq!((problem.phases[0].nodes, problem.phases[1].nodes), (31, 41));
    assert_eq!(problem.phases[1].domain, Domain::Flight);
}

#[test]
fn override_of_an_unknown_field_suggests_like_the_file() {
    let error = failure_with("{}", &["robot.motr_mass=1"]);
    assert_eq!(
        error.source_of_value,
        ValueSource::Override("robot.motr_mass=1".into())
    );
    assert_eq!(error.field.as_deref(), Some("robot.motr_mass"));
    assert_eq!(error.line, None);
    assert_contains(
        &error,
        &["unknown field `motr_mass` in `robot`; did you mean `motor_mass`? accepted: motor_mass"],
    );
    let in_file = failure("robot:\n  motr_mass: 1\n");
    assert_eq!(error.message, in_file.message);
}

#[test]
fn errors_name_the_override() {
    let error = failure_with("robot:\n  motor_mass: 0.9\n", &["robot.motor_mass=-1"]);
    assert_eq!(
        error.to_string(),
        "problems/test.yaml: --set robot.motor_mass=-1: robot.motor_mass: must be > 0 kg, got -1"
    );

    let error = failure_with("{}", &["task.apex_height=high"]);
    assert_eq!(
        error.source_of_value,
        ValueSource::Override("task.apex_height=high".into())
    );
    assert_contains(&error, &["invalid type", "accepted: a number in m"]);

    let error = failure_with("{}", &["phases=[{domain: flight}, {domain: flight}]"]);
    assert_eq!(error.field.as_deref(), Some("phases[0].domain"));
    assert!(matches!(error.source_of_value, ValueSource::Override(_)));
}

#[test]
fn malformed_overrides_are_named() {
    let error = failure_with("{}", &["task.apex_height"]);
    assert_eq!(
        error.source_of_value,
        ValueSource::Override("task.apex_height".into())
    );
    assert_contains(&error, &["`task.apex_height`", "PATH=VALUE"]);
    assert!(
        error
            .to_string()
            .starts_with("problems/test.yaml: --set task.apex_height: malformed"),
        "{error}"
    );

    let error = failure_with("{}", &["phases.7.nodes=3"]);
    assert_eq!(error.field.as_deref(), Some("phases"));
    assert_contains(&error, &["out of range"]);
}

#[test]
fn an_override_can_repair_the_file() {
    let problem = read_with("robot:\n  motor_mass: heavy\n", &["robot.motor_mass=1.0"]).unwrap();
    assert_eq!(problem.robot.motor_mass, 1.0);
}

#[test]
fn file_errors_keep_their_line_beside_overrides() {
    let error = failure_with(
        "gravity: 9.81\nrobot:\n  motor_mass: -2\n",
        &["task.apex_height=0.08"],
    );
    assert_eq!(error.source_of_value, ValueSource::File);
    assert_eq!(error.line, Some(3));
    let error = failure_with(
        "gravity: 9.81\nrobot:\n  motr_mass: 1\n",
        &["task.apex_height=0.08"],
    );
    assert_eq!((error.line, error.column), (Some(3), Some(3)));
}

// ---- defaults, presets, serialization

#[test]
fn an_empty_mapping_is_the_default_problem_and_an_empty_file_is_refused() {
    let expected = default_resolved("test");
    assert_eq!(read("{}").unwrap(), expected);
    // An empty file is a mistake (the wrong file, or one not yet written), not "all defaults".
    for text in ["", "# nothing but a comment\n"] {
        let error = read(text).unwrap_err();
        assert!(error.message.contains("the file is empty"), "{error}");
    }

    let problem = read("{}").unwrap();
    assert_eq!(problem.name(), "test");
    assert_eq!(problem.gravity, 9.81);
    assert_eq!(problem.robot.motor_mass, 0.948);
    assert_eq!(problem.task.stroke, 0.0275);
    assert_eq!(problem.terrain.model, TerrainModel::AddedMass);
    assert_eq!(
        problem.terrain.medium_parameters(),
        MediumPreset::PoppySeeds.parameters()
    );
    assert_eq!(problem.terrain.grain_density, Some(1000.0));
    assert_eq!(problem.phases.len(), 2);
    assert_eq!(
        (problem.phases[0].domain, problem.phases[0].nodes),
        (Domain::Stance, 31)
    );
    assert_eq!(problem.phases[0].duration, Some([0.01, 0.2]));
    assert_eq!(
        (problem.phases[1].domain, problem.phases[1].nodes),
        (Domain::Flight, 31)
    );
    assert_eq!(problem.phases[1].duration, Some([0.01, 0.6]));
    assert_eq!(problem.task.start_position, StartPosition::Free);
    assert_eq!(problem.transcription.scheme, Scheme::Trapezoidal);
    assert_eq!(problem.initial_guess, InitialGuess::Rest);
    assert_eq!(problem.solver, default_solver_options());
}

#[test]
fn a_phase_duration_defaults_by_domain() {
    let problem =
        read("phases:\n  - domain: stance\n    nodes: 11\n  - {domain: flight}\n").unwrap();
    assert_eq!(problem.phases[0].duration, Some([0.01, 0.2]));
    assert_eq!(problem.phases[1].duration, Some([0.01, 0.6]));
    assert_eq!(problem.phases[1].nodes, 31);
}

#[test]
fn a_medium_field_overrides_only_itself() {
    let problem = read("terrain:\n  drag_scaling: 15\n").unwrap();
    let medium = problem.terrain.medium_parameters();
    let poppy = MediumPreset::PoppySeeds.parameters();
    assert_eq!(medium.drag_scaling, 15.0);
    assert_eq!(
        Medium {
            drag_scaling: poppy.drag_scaling,
            ..medium
        },
        poppy
    );
    assert_eq!(poppy.recruitment_rate, 2.0);
    assert_eq!(poppy.shear_band_angle_deg, 60.0);
    assert_eq!(poppy.surrounding_mass_scaling, 2.7);
    assert_eq!(poppy.volume_fraction, 0.57);
    assert_eq!(poppy.penetration_stiffness, 1600.0);
    assert_eq!(poppy.resistive_stress, 1.2e5);
    assert_eq!(problem.terrain.resistive_stress, Some(1.2e5));
    assert!((poppy.shear_band_angle() - std::f64::consts::FRAC_PI_3).abs() < 1e-15);
}

#[test]
fn solver_options_keep_their_types() {
    let text = "solver:\n  tol: 1e-6\n  print_level: 5\n  mu_strategy: adaptive\n  print_user_options: yes\n  warm_start_init_point: true\n";
    let problem = read(text).unwrap();
    assert_eq!(problem.solver["tol"], OptionValue::Num(1e-6));
    assert_eq!(problem.solver["print_level"], OptionValue::Int(5));
    assert_eq!(
        problem.solver["mu_strategy"],
        OptionValue::Str("adaptive".into())
    );
    assert_eq!(
        problem.solver["print_user_options"],
        OptionValue::Str("yes".into())
    );
    assert_eq!(
        problem.solver["warm_start_init_point"],
        OptionValue::Str("yes".into())
    );
    assert_eq!(problem.solver["max_iter"], OptionValue::Int(3000));

    let error = failure("solver:\n  tol: [1]\n");
    assert_eq!(error.field.as_deref(), Some("solver.tol"));
    assert_contains(&error, &["an integer, a number or text"]);
}

#[test]
fn the_resolved_problem_round_trips_through_json() {
    let text = "terrain: {drag_scaling: 15}\ntask: {start_position: 0.01}\nsolver: {mu_strategy: adaptive}\n";
    for problem in [read(text).unwrap(), read("{}").unwrap()] {
        let json = serde_json::to_string_pretty(&problem).unwrap();
        let back: Problem = serde_json::from_str(&json).unwrap();
        assert_eq!(back, problem, "{json}");
        // Resolved: nothing is left implied.
        assert!(!json.contains("null"), "{json}");
    }
}

#[test]
fn resolving_twice_changes_nothing() {
    let mut problem = read("terrain: {drag_scaling: 15}").unwrap();
    let once = problem.clone();
    problem.resolve();
    assert_eq!(problem, once);
}

#[test]
fn the_name_defaults_to_the_file_stem() {
    let problem = parse("{}", Path::new("some/where/deep_sand.yaml"), &[]).unwrap();
    assert_eq!(problem.name(), "deep_sand");
    let problem = parse("name: mine", Path::new("some/where/deep_sand.yaml"), &[]).unwrap();
    assert_eq!(problem.name(), "mine");
    let error = failure("name: a/b\n");
    assert_contains(&error, &["folder name"]);
}

#[test]
fn load_reads_files_and_reports_missing_ones() {
    let error = load(Path::new("no/such/problem.yaml"), &[]).unwrap_err();
    assert_eq!(error.file, PathBuf::from("no/such/problem.yaml"));
    assert_contains(&error, &["cannot read the problem file"]);
}

// ---- shipped problems

/// Every `problems/*.yaml` of the crate, found by listing the folder.
fn shipped_problems() -> Vec<PathBuf> {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&folder)
        .unwrap_or_else(|error| panic!("cannot list {}: {error}", folder.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension == "yaml")
        })
        .collect();
    files.sort();
    files
}

#[test]
fn every_shipped_problem_loads() {
    let files = shipped_problems();
    assert!(!files.is_empty(), "no problems/*.yaml found");
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        if super::is_planar(&text, &[]) {
            // Planar robots' files: tests/suite/planar_plans.rs solves and replays each.
            let planar: super::planar::PlanarProblem =
                super::parse_as(&text, file, &[]).unwrap_or_else(|error| panic!("{error}"));
            assert!(planar.validate().is_ok());
            continue;
        }
        let problem = load(file, &[]).unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(problem.validate(), Ok(()));
        let stem = file.file_stem().unwrap().to_str().unwrap();
        assert_eq!(
            problem.name(),
            stem,
            "{}: name differs from the file name",
            file.display()
        );
        // Each also takes an override, as its comments promise.
        let raised = load(file, &["task.apex_height=0.08".to_owned()]).unwrap();
        assert_eq!(raised.task.apex_height, 0.08);
    }
}

#[test]
fn the_two_hopper_problems_are_what_they_say() {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems");
    let granular = load(&folder.join("hopper_granular.yaml"), &[]).unwrap();
    let rigid = load(&folder.join("hopper_rigid.yaml"), &[]).unwrap();
    assert_eq!(granular.terrain.model, TerrainModel::AddedMass);
    assert_eq!(granular.terrain.medium, MediumPreset::PoppySeeds);
    assert_eq!(rigid.terrain.model, TerrainModel::Rigid);
    for problem in [&granular, &rigid] {
        assert_eq!(problem.task.apex_height, 0.06);
        assert_eq!(problem.robot, Robot::default());
        let domains: Vec<Domain> = problem.phases.iter().map(|phase| phase.domain).collect();
        assert_eq!(domains, [Domain::Stance, Domain::Flight]);
    }
}
