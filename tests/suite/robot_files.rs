//! Robot files (`robots/*.yaml`): the shipped files reproduce the Rust presets' dynamics, a
//! description written out and read back is the same robot, a problem may name a robot file,
//! and bad robot files are refused with exit 2, naming the file, the line and the field, and
//! nothing written.

use crate::common;

use std::path::{Path, PathBuf};

use common::compare::max_abs_diff;
use common::fd::Rng;
use common::run::loam;
use common::temp_dir::TempDir;
use loam::model::planar::description::RobotDescription;
use loam::model::planar::{MonopodParams, PlanarFootParams, PlanarRobot, QuadrupedParams};

const G: f64 = 9.81;

fn robots_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("robots")
}

fn shipped_robot(name: &str) -> PlanarRobot {
    let path = robots_dir().join(format!("{name}.yaml"));
    let description =
        loam::problem::load_robot(&path, &[]).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let robot = description.build(G);
    robot.validate().expect("a shipped robot is consistent");
    robot
}

/// M(q), h(q, v), the generalized forces of random inputs and every contact's Jacobian and
/// position agree to 1e-12 at random states.
fn assert_same_dynamics(file: &PlanarRobot, preset: &PlanarRobot) {
    assert_eq!(file.n_q(), preset.n_q());
    assert_eq!(file.inputs.len(), preset.inputs.len());
    assert_eq!(file.contacts.len(), preset.contacts.len());
    let mut rng = Rng::new(7);
    for _ in 0..50 {
        let q: Vec<f64> = preset
            .standing
            .iter()
            .map(|q0| q0 + rng.uniform(-0.7, 0.7))
            .collect();
        let v: Vec<f64> = (0..preset.n_q()).map(|_| rng.uniform(-2.0, 2.0)).collect();
        let u: Vec<f64> = preset
            .inputs
            .iter()
            .map(|i| rng.uniform(i.limit.0, i.limit.1))
            .collect();
        let m_file = file.body.mass_matrix(&q);
        let m_preset = preset.body.mass_matrix(&q);
        for (a, b) in m_file.iter().zip(&m_preset) {
            assert!(
                max_abs_diff(a, b) <= 1e-12,
                "M(q) differs for {}",
                preset.name
            );
        }
        let h = max_abs_diff(
            &file.body.bias_forces(&q, &v),
            &preset.body.bias_forces(&q, &v),
        );
        assert!(h <= 1e-12, "h(q, v) differs by {h} for {}", preset.name);
        let f = max_abs_diff(
            &file.generalized_forces(&q, &v, &u),
            &preset.generalized_forces(&q, &v, &u),
        );
        assert!(
            f <= 1e-12,
            "B u + springs differ by {f} for {}",
            preset.name
        );
        for (cf, cp) in file.contacts.iter().zip(&preset.contacts) {
            assert_eq!(cf.name, cp.name);
            assert_eq!(cf.half_width, cp.half_width);
            let jf = file.body.point_jacobian(&q, cf.body, cf.point);
            let jp = preset.body.point_jacobian(&q, cp.body, cp.point);
            for d in 0..2 {
                assert!(
                    max_abs_diff(&jf[d], &jp[d]) <= 1e-12,
                    "contact `{}` Jacobian differs for {}",
                    cf.name,
                    preset.name
                );
            }
            let pf = file.contact_point(&q, file.contact(&cf.name).unwrap());
            let pp = preset.contact_point(&q, preset.contact(&cp.name).unwrap());
            assert!(max_abs_diff(&pf, &pp) <= 1e-12);
        }
    }
    assert!(max_abs_diff(&file.standing, &preset.standing) <= 1e-12);
    for (a, b) in file.coordinates.iter().zip(&preset.coordinates) {
        assert_eq!(a.name, b.name);
        assert_eq!(a.nominal, b.nominal, "scaling of `{}`", a.name);
    }
}

#[test]
fn shipped_robot_files_reproduce_the_presets() {
    let presets = [
        PlanarFootParams::default().build(G),
        MonopodParams::default().build(G),
        QuadrupedParams::default().build(G),
    ];
    for preset in &presets {
        let file = shipped_robot(&preset.name);
        assert_same_dynamics(&file, preset);
        // Everything else the planner reads is the same too.
        assert_eq!(&file, preset, "robots/{}.yaml", preset.name);
    }
}

#[test]
fn a_description_written_out_and_read_back_is_the_same_robot() {
    let robot = shipped_robot("two_link_hopper");
    let text = loam::problem::robot_yaml(&RobotDescription::from_robot(&robot));
    let dir = TempDir::new("round-trip");
    let path = dir.write("again.yaml", &text);
    let again = loam::problem::load_robot(&path, &[])
        .expect("read back")
        .build(G);
    assert_eq!(again, robot);
    // Without a name, a robot file is named after its file.
    let unnamed = dir.write(
        "hopper_b.yaml",
        &text.replacen("name: two_link_hopper\n", "", 1),
    );
    let description = loam::problem::load_robot(&unnamed, &[]).expect("no name");
    assert_eq!(description.name, "hopper_b");
}

#[test]
fn bodies_listed_children_first_are_sorted_into_a_tree() {
    // The two-link hopper with its bodies in reverse order: same dynamics.
    let text = std::fs::read_to_string(robots_dir().join("two_link_hopper.yaml")).unwrap();
    let mut description: RobotDescription = serde_yaml::from_str(&text).unwrap();
    description.bodies.reverse();
    assert!(description.violations().is_empty());
    let reversed = description.build(G);
    assert_same_dynamics(&reversed, &shipped_robot("two_link_hopper"));
}

#[test]
fn the_two_link_hoppers_standing_posture_puts_its_foot_under_the_hip() {
    let robot = shipped_robot("two_link_hopper");
    let foot = robot.contact_point(&robot.standing, 0);
    assert!(foot[1].abs() < 1e-12, "the foot touches z = 0");
    assert!(
        foot[0].abs() < 1e-12,
        "equal links at (φ, −2φ): foot below the hip"
    );
    // Limits from the file: the NLP's state bounds.
    let bounds = robot.state_bounds();
    let knee = robot.coordinate("knee").unwrap();
    assert_eq!(bounds[knee], (-2.6, -0.05));
    assert_eq!(bounds[robot.n_q() + knee], (-25.0, 25.0));
    assert_eq!(bounds[0], (f64::NEG_INFINITY, f64::INFINITY));
}

/// A valid robot file with one line replaced.
fn variant(from: &str, to: &str) -> String {
    let text = std::fs::read_to_string(robots_dir().join("two_link_hopper.yaml")).unwrap();
    assert!(text.contains(from), "`{from}` in the robot file");
    text.replacen(from, to, 1)
}

/// The 1-based line of the first line containing `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).unwrap() + 1
}

struct Bad {
    label: &'static str,
    text: String,
    field: &'static str,
    /// Text on the offending line.
    at: &'static str,
    says: &'static str,
}

fn bad_files() -> Vec<Bad> {
    vec![
        Bad {
            label: "a body named twice",
            text: variant("  - name: shank\n", "  - name: thigh\n"),
            field: "bodies[2].name",
            at: "- name: thigh\n    mass: 0.5",
            says: "named twice",
        },
        Bad {
            label: "a joint naming a missing parent",
            text: variant("parent: thigh", "parent: thigh_bone"),
            field: "bodies[2].joint.parent",
            at: "parent: thigh_bone",
            says: "no body is named `thigh_bone`",
        },
        Bad {
            label: "a loop in the tree",
            text: variant("parent: body", "parent: shank"),
            field: "joint.parent",
            at: "parent: ",
            says: "loop",
        },
        Bad {
            label: "zero mass",
            text: variant("mass: 1.0", "mass: 0.0"),
            field: "bodies[1].mass",
            at: "mass: 0.0",
            says: "> 0 kg",
        },
        Bad {
            label: "negative mass",
            text: variant("mass: 0.5", "mass: -0.5"),
            field: "bodies[2].mass",
            at: "mass: -0.5",
            says: "> 0 kg",
        },
        Bad {
            label: "an inertia that is not positive",
            text: variant("inertia: 0.0052", "inertia: -0.0052"),
            field: "bodies[1].inertia",
            at: "inertia: -0.0052",
            says: "> 0 kg m²",
        },
        Bad {
            label: "limits with lower above upper",
            text: variant("position: [-1.4, 1.4]", "position: [1.4, -1.4]"),
            field: "bodies[1].joint.position",
            at: "position: [1.4, -1.4]",
            says: "lower < upper",
        },
        Bad {
            label: "an effort limit with lower above upper",
            text: variant("limit: [-40.0, 40.0]", "limit: [40.0, -40.0]"),
            field: "actuators[0].limit",
            at: "limit: [40.0, -40.0]",
            says: "lower < upper",
        },
        Bad {
            label: "an unknown actuator kind",
            text: variant(
                "kind: torque, limit: [-40.0",
                "kind: hydraulic, limit: [-40.0",
            ),
            field: "actuators[0].kind",
            at: "kind: hydraulic",
            says: "torque",
        },
        Bad {
            label: "a locked joint",
            text: variant("standing:", "locked: [knee]\nstanding:"),
            field: "locked[0]",
            at: "locked: [knee]",
            says: "accepted: x, z, pitch",
        },
        Bad {
            label: "a drive without integral gain",
            text: variant(
                "kind: torque, limit: [-40.0, 40.0]}",
                "kind: torque, limit: [-40.0, 40.0], drive: {force_constant: 1.0, position_gain: 10.0, velocity_feedforward: 1.0, velocity_gain: 1.0, integral_gain: 0.0}}",
            ),
            field: "actuators[0].drive.integral_gain",
            at: "integral_gain: 0.0",
            says: "> 0",
        },
        Bad {
            label: "an actuator on a missing joint",
            text: variant("joint: knee, kind", "joint: ankle, kind"),
            field: "actuators[1].joint",
            at: "joint: ankle",
            says: "no coordinate is named `ankle`",
        },
        Bad {
            label: "an unknown field",
            text: variant("    mass: 1.0\n", "    mass: 1.0\n    colour: red\n"),
            field: "bodies[1]",
            at: "colour: red",
            says: "colour",
        },
    ]
}

#[test]
fn bad_robot_files_exit_2_naming_file_line_and_field_and_write_nothing() {
    let dir = TempDir::new("bad");
    for bad in bad_files() {
        let path = dir.write("robot.yaml", &bad.text);
        let out = loam(dir.path(), &["robot", "check", path.to_str().unwrap()]);
        assert_eq!(out.code(), 2, "{}: {}", bad.label, out.dump());
        let line = line_of(&bad.text, bad.at.lines().next().unwrap());
        let expected_line = if bad.at.contains('\n') {
            // The first line of a multi-line marker whose continuation picks the occurrence.
            let first = bad.at.lines().next().unwrap();
            bad.text
                .match_indices(bad.at)
                .next()
                .map(|(i, _)| bad.text[..i].matches('\n').count() + 1)
                .unwrap_or_else(|| line_of(&bad.text, first))
        } else {
            line
        };
        let err = &out.stderr;
        assert!(
            err.contains("robot.yaml"),
            "{}: names the file: {err}",
            bad.label
        );
        assert!(
            err.contains(&format!(":{expected_line}")),
            "{}: names line {expected_line}: {err}",
            bad.label
        );
        assert!(
            err.contains(bad.field),
            "{}: names `{}`: {err}",
            bad.label,
            bad.field
        );
        assert!(
            err.contains(bad.says),
            "{}: says `{}`: {err}",
            bad.label,
            bad.says
        );

        // Through a problem that names it: the same error, and no run folder.
        let problem = dir.write(
            "hop.yaml",
            "robot: {file: robot.yaml}\nterrain: {model: rigid}\nschedule:\n  - {contacts: [foot], nodes: 5}\n",
        );
        let out = loam(
            dir.path(),
            &["solve", problem.to_str().unwrap(), "--out", "run"],
        );
        assert_eq!(out.code(), 2, "{}: {}", bad.label, out.dump());
        assert!(
            out.stderr.contains("robot.yaml"),
            "{}: {}",
            bad.label,
            out.stderr
        );
        assert!(
            out.stderr.contains(bad.field),
            "{}: {}",
            bad.label,
            out.stderr
        );
        assert!(
            !dir.path().join("run").exists(),
            "{}: nothing written",
            bad.label
        );
        assert!(
            !dir.path().join("runs").exists(),
            "{}: nothing written",
            bad.label
        );
    }
}

/// Every number in a robot file, by its dotted path (`bodies[1].joint.position[0]`).
fn numbers(tree: &serde_yaml::Value, path: String, out: &mut Vec<String>) {
    match tree {
        serde_yaml::Value::Number(_) => out.push(path),
        serde_yaml::Value::Mapping(map) => {
            for (k, v) in map {
                let k = k.as_str().unwrap().to_owned();
                let next = if path.is_empty() {
                    k
                } else {
                    format!("{path}.{k}")
                };
                numbers(v, next, out);
            }
        }
        serde_yaml::Value::Sequence(items) => {
            for (i, v) in items.iter().enumerate() {
                numbers(v, format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

fn set_at(tree: &mut serde_yaml::Value, path: &str, value: f64) {
    let mut node = tree;
    for part in path.split('.') {
        let (key, indices) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        node = node.get_mut(key).unwrap();
        for index in indices.split(['[', ']']).filter(|s| !s.is_empty()) {
            node = node.get_mut(index.parse::<usize>().unwrap()).unwrap();
        }
    }
    *node = serde_yaml::Value::from(value);
}

#[test]
fn a_nan_in_any_number_of_every_shipped_robot_is_refused_by_name() {
    // Generic over the schema: every numeric field of every shipped robot file, in turn.
    let dir = TempDir::new("nan");
    let mut checked = 0;
    for name in ["two_link_hopper", "monopod", "planar_foot", "quadruped"] {
        let text = std::fs::read_to_string(robots_dir().join(format!("{name}.yaml"))).unwrap();
        let tree: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
        let mut paths = Vec::new();
        numbers(&tree, String::new(), &mut paths);
        assert!(!paths.is_empty());
        for path in paths {
            let mut bad = tree.clone();
            set_at(&mut bad, &path, f64::NAN);
            let text = serde_yaml::to_string(&bad).unwrap();
            let description: RobotDescription = serde_yaml::from_str(&text).unwrap();
            let file = dir.write("nan.yaml", &text);
            let error = loam::problem::load_robot(&file, &[])
                .expect_err(&format!("{name}: NaN at {path} must be refused"));
            // The field itself, or the pair it is part of (`bodies[0].com`).
            let field = error.field.clone().unwrap_or_default();
            assert!(
                !field.is_empty() && path.starts_with(&field),
                "{name}: NaN at {path}: {error}"
            );
            assert!(
                error.line.is_some(),
                "{name}: NaN at {path}: a line: {error}"
            );
            assert!(error.to_string().contains("NaN"), "{error}");
            // And the model's own rules never let it build quietly.
            let _ = description;
            checked += 1;
        }
    }
    assert!(checked > 100, "checked {checked} fields");
}

#[test]
fn a_nan_in_a_planar_problem_is_refused_before_solving() {
    // The preset's `standing_hip_angle` was the field that got through.
    let dir = TempDir::new("nan-problem");
    let problem = dir.write(
        "stand.yaml",
        "robot: {model: quadruped, standing_hip_angle: .nan}\n",
    );
    let out = loam(dir.path(), &["check", problem.to_str().unwrap()]);
    assert_eq!(out.code(), 2, "{}", out.dump());
    assert!(
        out.stderr.contains("robot.standing_hip_angle"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("stand.yaml:1"), "{}", out.stderr);
}

#[test]
fn a_problem_names_a_robot_file_and_set_edits_it() {
    let problems = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems");
    let path = problems.join("two_link_hop.yaml");
    let problem = loam::problem::load_any(&path, &[]).expect("two_link_hop.yaml");
    let robot = problem.robot.build(problem.gravity);
    assert_eq!(robot, shipped_robot("two_link_hopper"));

    let overridden =
        loam::problem::load_any(&path, &["robot.description.bodies.1.mass=2.5".to_owned()])
            .expect("override");
    let problem = overridden;
    let robot = problem.robot.build(problem.gravity);
    assert_eq!(robot.body.bodies[1].mass, 2.5);
    assert!((robot.body.total_mass() - 11.0).abs() < 1e-12);

    // A bad override names the override, not the file.
    let error = loam::problem::load_any(&path, &["robot.description.bodies.1.mass=-1".to_owned()])
        .expect_err("negative mass");
    let text = error.to_string();
    assert!(text.contains("robot.description.bodies[1].mass"), "{text}");
    assert!(text.contains("--set"), "{text}");
}

#[test]
fn robot_info_reports_mass_and_centre_of_mass() {
    let dir = TempDir::new("info");
    let file = robots_dir().join("two_link_hopper.yaml");
    let out = loam(dir.path(), &["robot", "info", file.to_str().unwrap()]);
    assert_eq!(out.code(), 0, "{}", out.dump());
    let robot = shipped_robot("two_link_hopper");
    let com = robot.body.centre_of_mass(&robot.standing);
    assert!(out.stdout.contains("total mass 9.5 kg"), "{}", out.stdout);
    assert!(
        out.stdout
            .contains(&format!("({:.4}, {:.4}) m", com[0], com[1])),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("5 degrees of freedom"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("position [-2.6, -0.05] rad"),
        "{}",
        out.stdout
    );

    let out = loam(
        dir.path(),
        &["robot", "draw", file.to_str().unwrap(), "--out", "pictures"],
    );
    assert_eq!(out.code(), 0, "{}", out.dump());
    let png = dir.path().join("pictures/two_link_hopper.png");
    let image = image::open(&png).expect("a PNG");
    assert!(image.width() > 500 && image.height() > 500);
}

/// Solves a shipped problem into `dir/run` and replays it on its own ground; returns
/// solution.json and replay.json.
fn solve_and_replay(dir: &Path, problem: &str) -> (serde_json::Value, serde_json::Value, String) {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("problems")
        .join(problem);
    let out = loam(
        dir,
        &["solve", file.to_str().unwrap(), "--out", "run", "-q"],
    );
    assert_eq!(out.code(), 0, "{problem} converges: {}", out.dump());
    let out = loam(dir, &["simulate", "run"]);
    assert_eq!(
        out.code(),
        0,
        "{problem} replays without chatter: {}",
        out.dump()
    );
    let read = |name: &str| {
        serde_json::from_str(&std::fs::read_to_string(dir.join("run").join(name)).unwrap()).unwrap()
    };
    let csv = std::fs::read_to_string(dir.join("run/trajectory.csv")).unwrap();
    (read("solution.json"), read("replay.json"), csv)
}

/// Every node of the plan inside the robot's joint limits (the NLP's bounds, to IPOPT's
/// bound relaxation).
fn assert_within_limits(csv: &str, robot: &PlanarRobot) {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let names = robot.state_names();
    let bounds = robot.state_bounds();
    let mut nodes = 0;
    for line in lines {
        let row: Vec<f64> = line.split(',').map(|v| v.parse().unwrap()).collect();
        for (name, (lo, hi)) in names.iter().zip(&bounds) {
            let col = header.iter().position(|h| h == name).unwrap();
            let v = row[col];
            assert!(
                *lo - 1e-6 <= v && v <= *hi + 1e-6,
                "{name} = {v} outside [{lo}, {hi}]"
            );
        }
        nodes += 1;
    }
    assert!(nodes > 20);
}

#[test]
fn the_two_link_hopper_hops_forward_within_its_limits_on_rigid_ground_and_on_poppy_seeds() {
    let robot = shipped_robot("two_link_hopper");
    for problem in ["two_link_granular_hop.yaml", "two_link_hop.yaml"] {
        let dir = TempDir::new("two-link");
        let (solution, replay, csv) = solve_and_replay(dir.path(), problem);
        assert_eq!(solution["converged"], true, "{problem}");
        assert_within_limits(&csv, &robot);
        let planned = replay["planned_distance_m"].as_f64().unwrap();
        assert!((planned - 0.2).abs() < 1e-6, "{problem}: a 0.2 m hop");
        let error = replay["distance_error_rel"].as_f64().unwrap();
        assert!(
            error < 0.01,
            "{problem}: replay {error} off the plan's distance"
        );
        let events = replay["events"].as_array().unwrap();
        let contact_events = events
            .iter()
            .filter(|e| e["kind"] == "lift-off" || e["kind"] == "touchdown")
            .count();
        assert!(contact_events <= 2, "{problem}: no chatter: {events:?}");
        assert!(
            replay["joint_limits"].as_array().unwrap().len() == 4,
            "hip, knee and their rates are limited"
        );
    }
}

#[test]
fn robot_import_writes_a_robot_file_or_refuses_naming_the_joint() {
    let dir = TempDir::new("import");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/urdf");
    let urdf = fixtures.join("three_link_leg.urdf");
    let out = loam(
        dir.path(),
        &[
            "robot",
            "import",
            urdf.to_str().unwrap(),
            "--plane",
            "xz",
            "-o",
            "leg.yaml",
        ],
    );
    assert_eq!(out.code(), 0, "{}", out.dump());
    let imported = loam::problem::load_robot(&dir.path().join("leg.yaml"), &[])
        .expect("an imported robot file reads back")
        .build(G);
    let by_hand = loam::problem::load_robot(&fixtures.join("three_link_leg.yaml"), &[])
        .unwrap()
        .build(G);
    let q: Vec<f64> = (0..by_hand.n_q()).map(|i| 0.1 * i as f64 - 0.2).collect();
    let (a, b) = (imported.body.mass_matrix(&q), by_hand.body.mass_matrix(&q));
    for (ra, rb) in a.iter().zip(&b) {
        assert!(max_abs_diff(ra, rb) <= 1e-12);
    }

    let bad = fixtures.join("out_of_plane.urdf");
    let out = loam(
        dir.path(),
        &["robot", "import", bad.to_str().unwrap(), "-o", "bad.yaml"],
    );
    assert_eq!(out.code(), 2, "{}", out.dump());
    assert!(out.stderr.contains("hip_roll"), "{}", out.stderr);
    assert!(!dir.path().join("bad.yaml").exists(), "nothing written");
}
