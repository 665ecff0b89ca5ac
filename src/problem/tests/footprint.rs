//! One robot, one foot: a robot file's contact `radius` is the added-mass bed's
//! `foot_radius` unless the problem gives another.

use super::planar::AddedMassGroundConfig;
use super::*;

/// A two-footed sled (one body, two point feet of `left` and `right` radii) and a problem on
/// the bed written beside it, `terrain` as given; the problem's parse.
fn sled(name: &str, left: &str, right: &str, terrain: &str) -> Result<PlanarProblem, ProblemError> {
    let dir = scratch(name);
    let radius = |r: &str| {
        if r.is_empty() {
            String::new()
        } else {
            format!(", radius: {r}")
        }
    };
    std::fs::write(
        dir.join("sled.yaml"),
        format!(
            "name: sled\nbodies:\n  - {{name: base, mass: 1.0, inertia: 0.01}}\ncontacts:\n  \
             - {{name: left, body: base, point: [-0.1, 0.0]{}}}\n  \
             - {{name: right, body: base, point: [0.1, 0.0]{}}}\n",
            radius(left),
            radius(right)
        ),
    )
    .unwrap();
    let problem = dir.join("problem.yaml");
    let text = format!(
        "robot: {{file: sled.yaml}}\nterrain: {terrain}\nschedule:\n  - {{contacts: [left, right]}}\n"
    );
    std::fs::write(&problem, &text).unwrap();
    parse_problem(&text, &problem, &[])
}

fn bed_radius(problem: &PlanarProblem) -> Option<f64> {
    match &problem.terrain {
        PlanarTerrainConfig::AddedMass(AddedMassGroundConfig { foot_radius, .. }) => *foot_radius,
        other => panic!("not the bed: {other:?}"),
    }
}

#[test]
fn the_bed_presses_the_robots_own_foot() {
    // The robot's radius, written into the problem (so `solution.json` records it).
    let problem = sled("own", "0.03", "0.03", "{model: added_mass}").unwrap();
    assert_eq!(bed_radius(&problem), Some(0.03));
    // A radius the problem gives wins: a study of another foot on the same robot.
    let problem = sled(
        "given",
        "0.03",
        "0.03",
        "{model: added_mass, foot_radius: 0.05}",
    )
    .unwrap();
    assert_eq!(bed_radius(&problem), Some(0.05));
    // Feet without a radius: the bed's default disc.
    let problem = sled("none", "", "", "{model: added_mass}").unwrap();
    assert_eq!(bed_radius(&problem), Some(planar::DEFAULT_FOOT_RADIUS));
    // Only one foot gives one: that one.
    let problem = sled("one", "0.02", "", "{model: added_mass}").unwrap();
    assert_eq!(bed_radius(&problem), Some(0.02));
    // The shipped hopper: its foot disc, 3.8 cm, from robots/hopper.yaml.
    let problem = read_in_repo(&format!("{HOPPER}terrain: {{model: added_mass}}\n"), &[]).unwrap();
    assert_eq!(bed_radius(&problem), Some(0.038));
}

#[test]
fn feet_of_different_radii_need_the_beds_radius() {
    let error = sled("differ", "0.02", "0.03", "{model: added_mass}").unwrap_err();
    assert_eq!(error.field.as_deref(), Some("terrain.foot_radius"));
    assert_contains(
        &error,
        &["left: 0.02 m, right: 0.03 m", "give `foot_radius` [m]"],
    );
    // The problem's own radius settles it; rigid ground needs none.
    sled(
        "differ-given",
        "0.02",
        "0.03",
        "{model: added_mass, foot_radius: 0.025}",
    )
    .unwrap();
    sled("differ-rigid", "0.02", "0.03", "{model: rigid}").unwrap();
}

#[test]
fn a_radius_is_a_point_foots_and_positive() {
    let error = sled("negative", "-0.01", "", "{model: rigid}").unwrap_err();
    assert_eq!(error.field.as_deref(), Some("contacts[0].radius"));
    assert!(error.to_string().contains("sled.yaml"), "{error}");
    assert_contains(&error, &["-0.01"]);
    let dir = scratch("sole");
    std::fs::write(
        dir.join("sole.yaml"),
        "name: sole\nbodies:\n  - {name: base, mass: 1.0, inertia: 0.01}\ncontacts:\n  \
         - {name: foot, body: base, shape: sole, half_width: 0.05, radius: 0.02}\n",
    )
    .unwrap();
    let text = "robot: {file: sole.yaml}\nschedule:\n  - {contacts: [foot]}\n";
    let error = parse_problem(text, &dir.join("problem.yaml"), &[]).unwrap_err();
    assert_contains(&error, &["a sole has a half width, not a radius"]);
}
