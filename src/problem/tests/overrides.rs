//! Overrides, defaults, presets and serialization of problem files.

use super::*;

// ---- overrides

#[test]
fn overrides_change_values() {
    let text = "robot: {model: monopod}\nterrain: {model: added_mass}\nschedule:\n  - {contacts: [foot]}\n  - {contacts: []}\ntask:\n  apex_rise: 0.06\n";
    let problem = read_with(
        text,
        &[
            "task.apex_rise=0.08",
            "terrain.foot_radius=0.1",
            "solver.print_level=0",
        ],
    )
    .unwrap();
    assert_eq!(problem.task.apex_rise, Some(0.08));
    let PlanarTerrainConfig::AddedMass(bed) = &problem.terrain else {
        panic!("{:?}", problem.terrain);
    };
    assert_eq!(bed.foot_radius, Some(0.1));
    assert_eq!(problem.solver["print_level"], OptionValue::Int(0));
    assert_eq!(problem.solver["tol"], OptionValue::Num(1.0e-8));

    // A section's model is replaced with the section.
    let problem = read_with(text, &["terrain={model: rigid}"]).unwrap();
    assert_eq!(
        problem.terrain,
        PlanarTerrainConfig::Rigid(RigidGroundConfig::default())
    );
}

#[test]
fn overrides_reach_list_entries() {
    let text = "robot: {model: monopod}\nschedule:\n  - {contacts: [foot]}\n  - {contacts: []}\n";
    let problem = read_with(
        text,
        &["schedule.1.nodes=41", "schedule[0].duration=[0.02, 0.1]"],
    )
    .unwrap();
    assert_eq!(problem.schedule[1].nodes, 41);
    assert_eq!(problem.schedule[0].duration, [0.02, 0.1]);
    assert_eq!(problem.schedule[0].nodes, 21);
    // One past the end adds a phase.
    let problem = read_with(text, &["schedule.2.contacts=[foot]"]).unwrap();
    assert_eq!(contacts(&problem), [vec!["foot"], vec![], vec!["foot"]]);
    assert_eq!(problem.schedule[2].nodes, 21);
}

#[test]
fn overrides_reach_the_robot_file_s_robot() {
    let hopper = load_robot(&root().join("robots/hopper.yaml"), &[]).unwrap();
    assert_eq!(hopper.bodies[0].mass, 0.948);
    let problem = read_in_repo(HOPPER, &["robot.description.bodies.0.mass=1.0"]).unwrap();
    assert_eq!(description(&problem).bodies[0].mass, 1.0);
    // Only that value.
    let mut expected = hopper.clone();
    expected.bodies[0].mass = 1.0;
    assert_eq!(description(&problem), &expected);
    // Keys written in the problem override the file's too.
    let text = "robot:\n  file: ../robots/hopper.yaml\n  description:\n    guide_angle: 0.2\nschedule:\n  - {contacts: [foot]}\n  - {contacts: []}\n";
    let problem = read_in_repo(text, &[]).unwrap();
    assert_eq!(description(&problem).guide_angle, 0.2);
    assert_eq!(description(&problem).bodies, hopper.bodies);

    // Bad values there are placed like the file's own.
    let error = read_in_repo(HOPPER, &["robot.description.bodies.0.mass=-1"]).unwrap_err();
    assert_eq!(
        error.source_of_value,
        ValueSource::Override("robot.description.bodies.0.mass=-1".into())
    );
    assert_eq!(
        error.field.as_deref(),
        Some("robot.description.bodies[0].mass")
    );
    assert_contains(&error, &["> 0 kg", "got -1"]);
    let text = "robot:\n  file: ../robots/hopper.yaml\n  description:\n    guide_angle: 2\nschedule:\n  - {contacts: [foot]}\n  - {contacts: []}\n";
    let error = read_in_repo(text, &[]).unwrap_err();
    assert_eq!((error.line, error.column), (Some(4), Some(5)));
    assert_eq!(
        error.field.as_deref(),
        Some("robot.description.guide_angle")
    );
    assert_contains(&error, &["got 2"]);
    let error = read_in_repo(HOPPER, &["robot.description.bodies.0.mas=1"]).unwrap_err();
    assert!(matches!(error.source_of_value, ValueSource::Override(_)));
    assert_contains(&error, &["unknown field `mas`", "did you mean `mass`?"]);
}

#[test]
fn override_of_an_unknown_field_suggests_like_the_file() {
    let error = failure_with("{}", &["task.apex_rize=1"]);
    assert_eq!(
        error.source_of_value,
        ValueSource::Override("task.apex_rize=1".into())
    );
    assert_eq!(error.field.as_deref(), Some("task.apex_rize"));
    assert_eq!(error.line, None);
    assert_contains(
        &error,
        &["unknown field `apex_rize` in `task`; did you mean `apex_rise`? accepted: start"],
    );
    let in_file = failure("task:\n  apex_rize: 1\n");
    assert_eq!(error.message, in_file.message);
}

#[test]
fn errors_name_the_override() {
    let error = failure_with(
        "robot:\n  model: monopod\n  leg_mass: 0.9\n",
        &["robot.leg_mass=-1"],
    );
    assert!(
        error.to_string().starts_with(
            "problems/test.yaml: --set robot.leg_mass=-1: robot.leg_mass: a mass must be a finite number > 0 kg"
        ),
        "{error}"
    );
    assert!(error.message.ends_with("got -1"), "{error}");

    let error = failure_with("{}", &["task.apex_rise=high"]);
    assert_eq!(
        error.source_of_value,
        ValueSource::Override("task.apex_rise=high".into())
    );
    assert_eq!(error.field.as_deref(), Some("task.apex_rise"));
    assert_contains(&error, &["invalid type", "\"high\""]);

    let error = failure_with("{}", &["schedule=[{contacts: [foot]}, {contacts: [foot]}]"]);
    assert_eq!(error.field.as_deref(), Some("schedule[1].contacts"));
    assert!(matches!(error.source_of_value, ValueSource::Override(_)));

    // A section's model changed alone leaves the old model's fields: the error says how to
    // replace the section.
    let error = failure_with(
        "terrain:\n  model: added_mass\n  foot_radius: 0.05\n",
        &["terrain.model=rigid"],
    );
    assert_eq!(
        error.source_of_value,
        ValueSource::Override("terrain.model=rigid".into())
    );
    assert_contains(
        &error,
        &[
            "unknown field `foot_radius` in `terrain`",
            "replace the section whole",
            "--set 'terrain={model: rigid}'",
        ],
    );
}

#[test]
fn malformed_overrides_are_named() {
    let error = failure_with("{}", &["task.apex_rise"]);
    assert_eq!(
        error.source_of_value,
        ValueSource::Override("task.apex_rise".into())
    );
    assert_contains(&error, &["`task.apex_rise`", "PATH=VALUE"]);
    assert!(
        error
            .to_string()
            .starts_with("problems/test.yaml: --set task.apex_rise: malformed"),
        "{error}"
    );

    let error = failure_with(
        "schedule:\n  - {contacts: [foot]}\n  - {contacts: []}\n",
        &["schedule.7.nodes=3"],
    );
    assert_eq!(error.field.as_deref(), Some("schedule"));
    assert_contains(&error, &["out of range", "has 2 entries"]);
}

#[test]
fn an_override_can_repair_the_file() {
    let problem = read_with("gravity: heavy\n", &["gravity=9.8"]).unwrap();
    assert_eq!(problem.gravity, 9.8);
    let problem = read_with(
        "robot:\n  model: monopod\n  leg_mass: -1\n",
        &["robot.leg_mass=1.5"],
    )
    .unwrap();
    let RobotConfig::Monopod(monopod) = &problem.robot else {
        panic!("{:?}", problem.robot);
    };
    assert_eq!(monopod.leg_mass, 1.5);
}

#[test]
fn file_errors_keep_their_line_beside_overrides() {
    let error = failure_with(
        "gravity: 9.81\nrobot:\n  model: monopod\n  leg_mass: -2\n",
        &["task.distance=0.1"],
    );
    assert_eq!(error.source_of_value, ValueSource::File);
    assert_eq!((error.line, error.column), (Some(4), Some(3)));
    let error = failure_with(
        "gravity: 9.81\ntask:\n  apex_rize: 1\n",
        &["task.distance=0.1"],
    );
    assert_eq!(error.source_of_value, ValueSource::File);
    assert_eq!((error.line, error.column), (Some(3), Some(3)));
}

// ---- defaults, presets, serialization

#[test]
fn an_empty_mapping_is_the_default_problem_and_an_empty_file_is_refused() {
    assert_eq!(read("{}").unwrap(), default_resolved("test"));
    // An empty file is a mistake (the wrong file, or one not yet written), not "all defaults".
    for text in ["", "# nothing but a comment\n"] {
        let error = read(text).unwrap_err();
        assert!(error.message.contains("the file is empty"), "{error}");
        assert_eq!(error.file, PathBuf::from(FILE));
    }

    let problem = read("{}").unwrap();
    assert_eq!(problem.name(), "test");
    assert_eq!(problem.gravity, 9.81);
    assert_eq!(
        problem.robot,
        RobotConfig::Monopod(MonopodParams::default())
    );
    assert_eq!(
        problem.terrain,
        PlanarTerrainConfig::Rigid(RigidGroundConfig { friction: 0.8 })
    );
    // One stance on every foot of the robot.
    assert_eq!(
        problem.schedule,
        [PhaseSpec {
            contacts: vec!["foot".into()],
            nodes: 21,
            duration: [0.02, 1.0],
        }]
    );
    assert!(problem.task.start.at_rest && !problem.task.end.at_rest);
    assert_eq!(
        (problem.task.distance, problem.task.apex_rise),
        (None, None)
    );
    assert_eq!(problem.task.objective, Objective::Effort);
    assert_eq!(problem.task.contact_margin, 0.05);
    assert_eq!(problem.transcription.scheme, Scheme::Trapezoidal);
    assert_eq!(problem.initial_guess, InitialGuess::Rest);
    assert_eq!(problem.strategy, Strategy::OneStage);
    assert_eq!(problem.starts, 1);
    assert_eq!(
        problem.mesh,
        Some(MeshRefinement {
            tolerance: 0.005,
            max_rounds: 3
        })
    );
    assert_eq!(problem.solver, default_solver_options());

    // The default schedule is the robot's feet.
    let quadruped = read("robot: {model: quadruped}\n").unwrap();
    assert_eq!(
        contacts(&quadruped),
        [vec!["front_left", "front_right", "hind_left", "hind_right"]]
    );
}

#[test]
fn a_phase_takes_the_defaults_it_leaves_out() {
    let problem =
        read("schedule:\n  - contacts: [foot]\n    nodes: 11\n  - {contacts: []}\n").unwrap();
    assert_eq!(problem.schedule[0].nodes, 11);
    assert_eq!(problem.schedule[0].duration, [0.02, 1.0]);
    assert_eq!(problem.schedule[1].nodes, 21);
    assert_eq!(problem.schedule[1].duration, [0.02, 1.0]);
}

#[test]
fn a_medium_field_overrides_only_itself() {
    let problem =
        read("terrain: {model: added_mass, medium: poppy_seeds, drag_scaling: 15}\n").unwrap();
    let PlanarTerrainConfig::AddedMass(bed) = &problem.terrain else {
        panic!("{:?}", problem.terrain);
    };
    let medium = bed.medium_parameters();
    let poppy = MediumPreset::PoppySeeds.parameters();
    assert_eq!(medium.drag_scaling, 15.0);
    assert_eq!(
        Medium {
            drag_scaling: poppy.drag_scaling,
            ..medium
        },
        poppy
    );
    assert_ne!(poppy.drag_scaling, 15.0);
    assert_eq!(poppy.recruitment_rate, 2.0);
    assert_eq!(poppy.shear_band_angle_deg, 60.0);
    assert_eq!(poppy.surrounding_mass_scaling, 2.7);
    assert_eq!(poppy.volume_fraction, 0.57);
    assert_eq!(poppy.penetration_stiffness, 1600.0);
    assert_eq!(poppy.resistive_stress, 1.2e5);
    assert!((poppy.shear_band_angle() - std::f64::consts::FRAC_PI_3).abs() < 1e-15);
    // `medium` defaults to poppy seeds.
    let default = read("terrain: {model: added_mass}\n").unwrap();
    let PlanarTerrainConfig::AddedMass(bed) = &default.terrain else {
        panic!("{:?}", default.terrain);
    };
    assert_eq!(bed.medium, MediumPreset::PoppySeeds);
    assert_eq!(bed.medium_parameters(), poppy);
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
    assert_refused(
        &error,
        Some(2),
        "solver.tol",
        &["an integer, a number or text"],
    );
}

#[test]
fn the_resolved_problem_round_trips_through_json_and_solution_json() {
    let preset =
        read("terrain: {model: added_mass, drag_scaling: 15}\nsolver: {mu_strategy: adaptive}\n")
            .unwrap();
    let robot_file = read_in_repo(HOPPER, &["robot.description.bodies.0.mass=1.0"]).unwrap();
    let dir = scratch("round-trip");
    for problem in [preset, robot_file, read("{}").unwrap()] {
        let json = serde_json::to_string_pretty(&problem).unwrap();
        let back: PlanarProblem = serde_json::from_str(&json).unwrap();
        assert_eq!(back, problem, "{json}");
        // What `loam solve RUN` reads back from a run's solution.json: the same problem, its
        // robot described inline rather than read from the file again.
        std::fs::write(
            dir.join("solution.json"),
            format!("{{\"problem\": {json}}}"),
        )
        .unwrap();
        let again = load_any(&dir, &[]).unwrap();
        let mut expected = problem.clone();
        if let RobotConfig::File(file) = &mut expected.robot {
            file.file = None;
        }
        assert_eq!(again, expected, "{json}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn resolving_twice_changes_nothing() {
    let mut problem = read("terrain: {model: added_mass, drag_scaling: 15}").unwrap();
    let once = problem.clone();
    Schema::resolve(&mut problem);
    assert_eq!(problem, once);
}

#[test]
fn the_name_defaults_to_the_file_stem() {
    let problem = parse_problem("{}", Path::new("some/where/deep_sand.yaml"), &[]).unwrap();
    assert_eq!(problem.name(), "deep_sand");
    let problem = parse_problem("name: mine", Path::new("some/where/deep_sand.yaml"), &[]).unwrap();
    assert_eq!(problem.name(), "mine");
}

#[test]
fn load_reads_files_and_reports_missing_ones() {
    let error = load_any(Path::new("no/such/problem.yaml"), &[]).unwrap_err();
    assert_eq!(error.file, PathBuf::from("no/such/problem.yaml"));
    assert_contains(&error, &["cannot read the problem file"]);

    // A file is read with its overrides, and named in errors by its path.
    let dir = scratch("load");
    let file = dir.join("hop.yaml");
    std::fs::write(&file, "robot: {model: monopod}\ngravity: 9.81\n").unwrap();
    let problem = load_any(&file, &["gravity=3.7".to_owned()]).unwrap();
    assert_eq!((problem.name(), problem.gravity), ("hop", 3.7));
    std::fs::write(&file, "robot: {model: monopod}\ngravty: 9.81\n").unwrap();
    let error = load_any(&file, &[]).unwrap_err();
    assert_eq!(error.file, file);
    assert_eq!(error.line, Some(2));
    std::fs::remove_dir_all(&dir).ok();
}

// ---- shipped problems

/// Every `problems/*.yaml` of the crate, found by listing the folder.
fn shipped_problems() -> Vec<PathBuf> {
    let folder = root().join("problems");
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

/// The overrides a problem file's comments show on a `loam solve ... --set X` line.
fn overrides_in_comments(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in text.lines() {
        let Some(comment) = line.trim_start().strip_prefix('#') else {
            continue;
        };
        if !comment.contains("loam solve") {
            continue;
        }
        for (_, rest) in comment
            .match_indices("--set ")
            .map(|(i, _)| comment.split_at(i + 6))
        {
            let set = match rest.chars().next() {
                Some(quote @ ('"' | '\'')) => rest[1..].split(quote).next().unwrap_or(""),
                _ => rest.split_whitespace().next().unwrap_or(""),
            };
            found.push(set.to_owned());
        }
    }
    found
}

/// Whether every value in `wanted` is `value`'s (a map's keys that `wanted` leaves out are
/// free: `terrain={model: rigid}` gets its default friction).
fn holds(value: &serde_json::Value, wanted: &serde_json::Value) -> bool {
    match (value, wanted) {
        (serde_json::Value::Object(value), serde_json::Value::Object(wanted)) => wanted
            .iter()
            .all(|(key, wanted)| value.get(key).is_some_and(|v| holds(v, wanted))),
        (value, wanted) => match (value.as_f64(), wanted.as_f64()) {
            (Some(a), Some(b)) => a == b,
            _ => value == wanted,
        },
    }
}

#[test]
fn every_shipped_problem_loads() {
    let files = shipped_problems();
    assert!(!files.is_empty(), "no problems/*.yaml found");
    let mut overridden = 0;
    for file in &files {
        let problem = load_any(file, &[]).unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(Schema::validate(&problem), Ok(()));
        let stem = file.file_stem().unwrap().to_str().unwrap();
        assert_eq!(
            problem.name(),
            stem,
            "{}: name differs from the file name",
            file.display()
        );
        // Each takes the overrides its comments show, and they take effect.
        let text = std::fs::read_to_string(file).unwrap();
        for set in overrides_in_comments(&text) {
            let changed = load_any(file, std::slice::from_ref(&set))
                .unwrap_or_else(|error| panic!("{}: --set {set}: {error}", file.display()));
            let (path, value) = set.split_once('=').unwrap();
            let wanted: serde_json::Value = serde_yaml::from_str(value).unwrap();
            let mut at = serde_json::to_value(&changed).unwrap();
            for key in path.split('.') {
                at = match key.parse::<usize>() {
                    Ok(index) => at[index].take(),
                    Err(_) => at[key].take(),
                };
            }
            assert!(
                holds(&at, &wanted),
                "{}: --set {set} left {at}",
                file.display()
            );
            overridden += 1;
        }
    }
    assert!(
        overridden >= 6,
        "only {overridden} overrides found in comments"
    );
}

#[test]
fn the_two_hopper_problems_are_what_they_say() {
    let folder = root().join("problems");
    let granular = load_any(&folder.join("hopper_granular.yaml"), &[]).unwrap();
    let rigid = load_any(&folder.join("hopper_rigid.yaml"), &[]).unwrap();
    let hopper = load_robot(&root().join("robots/hopper.yaml"), &[]).unwrap();
    for problem in [&granular, &rigid] {
        // The hopper's robot file, as it is.
        let RobotConfig::File(robot) = &problem.robot else {
            panic!("{}: {:?}", problem.name(), problem.robot);
        };
        assert_eq!(robot.file.as_deref(), Some("../robots/hopper.yaml"));
        assert_eq!(robot.description, hopper);
        // A stance, then a flight to an apex 60 mm above the start of the rod.
        assert_eq!(contacts(problem), [vec!["foot"], vec![]]);
        assert_eq!(problem.task.apex_rise, Some(0.06));
        assert_eq!(problem.task.apex_of.as_deref(), Some("rod"));
    }
    // On poppy seeds under the paper's 7.6 cm disc.
    let PlanarTerrainConfig::AddedMass(bed) = &granular.terrain else {
        panic!("{:?}", granular.terrain);
    };
    assert_eq!(bed.medium, MediumPreset::PoppySeeds);
    assert_eq!(
        bed.medium_parameters(),
        MediumPreset::PoppySeeds.parameters()
    );
    assert_eq!(bed.foot_radius, Some(0.038));
    assert!(matches!(rigid.terrain, PlanarTerrainConfig::Rigid(_)));
    // Otherwise the same problem.
    let mut same = granular.clone();
    same.terrain = rigid.terrain.clone();
    same.name = rigid.name.clone();
    assert_eq!(same, rigid);
}
