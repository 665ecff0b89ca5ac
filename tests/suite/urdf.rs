//! URDF import (`loam::model::planar::urdf`): a leg written as a URDF gives the same robot as
//! the same leg written by hand as a robot file; URDF joint angles map onto loam's
//! counter-clockwise angles with the sign of the joint's axis; a joint origin that turns the
//! child's frame is folded into the child; prismatic joints, dampers and massless leaves
//! import as documented; and joints or links that cannot be projected onto the plane are
//! refused, naming them.

use crate::common;

use std::path::{Path, PathBuf};

use common::compare::max_abs_diff;
use common::fd::Rng;

use loam::model::planar::urdf::{import, UrdfError};
use loam::model::planar::PlanarRobot;

const G: f64 = 9.81;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/urdf")
        .join(name)
}

fn read(name: &str) -> String {
    let path = fixture(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Imports a URDF text and builds it, checking that the description is valid.
fn imported(text: &str) -> PlanarRobot {
    let description = import(text, None).unwrap_or_else(|e| panic!("import failed: {e}"));
    assert!(
        description.violations().is_empty(),
        "{:?}",
        description.violations()
    );
    let robot = description.build(G);
    robot.validate().expect("an imported robot is consistent");
    robot
}

fn refusal(text: &str) -> String {
    match import(text, None) {
        Ok(d) => panic!("imported, though it should be refused: {d:?}"),
        Err(e) => e.to_string(),
    }
}

/// M(q), the centre of mass and every contact point agree to 1e-12 at 20 random
/// configurations; the coordinates (names, limits), inputs and contacts are the same.
fn assert_same_robot(a: &PlanarRobot, b: &PlanarRobot) {
    assert_eq!(a.n_q(), b.n_q());
    for (ca, cb) in a.coordinates.iter().zip(&b.coordinates) {
        assert_eq!(ca.name, cb.name);
        assert_eq!(ca.unit, cb.unit);
        assert_eq!(
            ca.position_limit, cb.position_limit,
            "limits of `{}`",
            ca.name
        );
        assert_eq!(
            ca.velocity_limit, cb.velocity_limit,
            "rate limit of `{}`",
            ca.name
        );
    }
    assert_eq!(a.inputs, b.inputs);
    assert_eq!(a.springs, b.springs);
    assert_eq!(a.contacts.len(), b.contacts.len());
    for (ca, cb) in a.contacts.iter().zip(&b.contacts) {
        assert_eq!((&ca.name, ca.body), (&cb.name, cb.body));
    }
    let mut rng = Rng::new(11);
    for _ in 0..20 {
        let q: Vec<f64> = (0..a.n_q()).map(|_| rng.uniform(-1.5, 1.5)).collect();
        let (ma, mb) = (a.body.mass_matrix(&q), b.body.mass_matrix(&q));
        for (ra, rb) in ma.iter().zip(&mb) {
            let d = max_abs_diff(ra, rb);
            assert!(d <= 1e-12, "M(q) differs by {d} at q = {q:?}");
        }
        let d = max_abs_diff(&a.body.centre_of_mass(&q), &b.body.centre_of_mass(&q));
        assert!(d <= 1e-12, "the centre of mass differs by {d} at q = {q:?}");
        for c in 0..a.contacts.len() {
            let d = max_abs_diff(&a.contact_point(&q, c), &b.contact_point(&q, c));
            assert!(d <= 1e-12, "contact {c} differs by {d} at q = {q:?}");
        }
    }
    assert!(max_abs_diff(&a.standing, &b.standing) <= 1e-12);
}

#[test]
fn the_leg_imports_as_its_hand_written_robot_file() {
    let urdf = imported(&read("three_link_leg.urdf"));
    let file = loam::problem::load_robot(&fixture("three_link_leg.yaml"), &[])
        .expect("the hand-written leg loads")
        .build(G);
    assert_eq!(urdf.name, "three_link_leg");
    let bodies: Vec<&str> = urdf.body.bodies.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(
        bodies,
        ["base_link", "thigh", "shank"],
        "the foot is merged"
    );
    assert_same_robot(&urdf, &file);
    // The hip turns about +y: its limits [-1.2, 0.8] are negated and swapped.
    let hip = urdf.coordinate("hip").unwrap();
    assert_eq!(urdf.coordinates[hip].position_limit, (-0.8, 1.2));
    let knee = urdf.coordinate("knee").unwrap();
    assert_eq!(urdf.coordinates[knee].position_limit, (-0.1, 2.5));

    let renamed = import(&read("three_link_leg.urdf"), Some("leg")).unwrap();
    assert_eq!(renamed.name, "leg");
}

/// A 3-D rotation by `angle` about the unit `axis` (Rodrigues).
fn rotation(axis: [f64; 3], angle: f64) -> [[f64; 3]; 3] {
    let (s, c) = angle.sin_cos();
    let [x, y, z] = axis;
    [
        [
            c + x * x * (1.0 - c),
            x * y * (1.0 - c) - z * s,
            x * z * (1.0 - c) + y * s,
        ],
        [
            y * x * (1.0 - c) + z * s,
            c + y * y * (1.0 - c),
            y * z * (1.0 - c) - x * s,
        ],
        [
            z * x * (1.0 - c) - y * s,
            z * y * (1.0 - c) + x * s,
            c + z * z * (1.0 - c),
        ],
    ]
}

fn apply(r: &[[f64; 3]; 3], v: [f64; 3]) -> [f64; 3] {
    [0, 1, 2].map(|i| r[i][0] * v[0] + r[i][1] * v[1] + r[i][2] * v[2])
}

fn compose(a: &[[f64; 3]; 3], b: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
    [0, 1, 2].map(|i| [0, 1, 2].map(|j| (0..3).map(|k| a[i][k] * b[k][j]).sum()))
}

fn add(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

#[test]
fn urdf_angles_map_onto_loam_angles_with_the_sign_of_the_axis() {
    // three_link_leg.urdf's kinematics, by the URDF's own rules: the hip turns about +y, the
    // knee about -y; the foot's contact is the bottom of its sphere in the shank's frame.
    let robot = imported(&read("three_link_leg.urdf"));
    let foot = robot.contact("foot").unwrap();
    let mut rng = Rng::new(5);
    for _ in 0..20 {
        let (hip, knee) = (rng.uniform(-1.2, 0.8), rng.uniform(-0.1, 2.5));
        let r_thigh = rotation([0.0, 1.0, 0.0], hip);
        let r_shank = compose(&r_thigh, &rotation([0.0, -1.0, 0.0], knee));
        let thigh = [0.05, 0.0, -0.03];
        let shank = add(thigh, apply(&r_thigh, [0.0, 0.0, -0.25]));
        let point = add(shank, apply(&r_shank, [0.01, 0.0, -0.25 + 0.005 - 0.02]));
        // Loam's angle is counter-clockwise in x-z, a turn about -y: hip = -q, knee = +q.
        let q = [0.0, 0.0, 0.0, -hip, knee];
        let loam = robot.contact_point(&q, foot);
        let d = max_abs_diff(&loam, &[point[0], point[2]]);
        assert!(
            d <= 1e-12,
            "the foot differs by {d} at hip {hip}, knee {knee}"
        );
    }
}

#[test]
fn a_joint_turning_about_x_is_refused_naming_it() {
    let message = refusal(&read("out_of_plane.urdf"));
    assert!(message.contains("`hip_roll`"), "{message}");
    assert!(message.contains("(1, 0, 0)"), "{message}");
    assert!(matches!(
        import(&read("out_of_plane.urdf"), None),
        Err(UrdfError::Joint { ref joint, .. }) if joint == "hip_roll"
    ));
}

/// A URDF of `links` and `joints` (their XML elements).
fn urdf(links: &[String], joints: &[String]) -> String {
    format!(
        "<robot name=\"test\">\n{}\n{}\n</robot>",
        links.join("\n"),
        joints.join("\n")
    )
}

/// A link with a mass at `com` (rotated by `rpy`) and a diagonal inertia, optionally with a
/// collision sphere of radius `sphere` at its origin.
fn link(name: &str, mass: f64, com: [f64; 3], rpy: [f64; 3], sphere: Option<f64>) -> String {
    let collision = sphere.map_or(String::new(), |r| {
        format!("<collision><geometry><sphere radius=\"{r:?}\"/></geometry></collision>")
    });
    format!(
        "<link name=\"{name}\"><inertial><origin xyz=\"{:?} {:?} {:?}\" rpy=\"{:?} {:?} {:?}\"/>\
         <mass value=\"{mass:?}\"/><inertia ixx=\"0.02\" ixy=\"0.001\" ixz=\"0.002\" iyy=\"0.01\" \
         iyz=\"0.003\" izz=\"0.015\"/></inertial>{collision}</link>",
        com[0], com[1], com[2], rpy[0], rpy[1], rpy[2]
    )
}

/// A joint with its origin, axis and limit.
fn joint(
    name: &str,
    kind: &str,
    parent: &str,
    child: &str,
    xyz: [f64; 3],
    rpy: [f64; 3],
    axis: [f64; 3],
) -> String {
    format!(
        "<joint name=\"{name}\" type=\"{kind}\"><parent link=\"{parent}\"/><child link=\"{child}\"/>\
         <origin xyz=\"{:?} {:?} {:?}\" rpy=\"{:?} {:?} {:?}\"/><axis xyz=\"{:?} {:?} {:?}\"/>\
         <limit lower=\"-1.0\" upper=\"0.5\" effort=\"30.0\" velocity=\"10.0\"/></joint>",
        xyz[0], xyz[1], xyz[2], rpy[0], rpy[1], rpy[2], axis[0], axis[1], axis[2]
    )
}

const Y: [f64; 3] = [0.0, 1.0, 0.0];
const NO_TURN: [f64; 3] = [0.0, 0.0, 0.0];

#[test]
fn a_floating_joint_is_refused_naming_it() {
    let text = urdf(
        &[
            link("base", 4.0, [0.0; 3], NO_TURN, None),
            link("free", 1.0, [0.0; 3], NO_TURN, None),
        ],
        &[joint(
            "loose", "floating", "base", "free", [0.0; 3], NO_TURN, Y,
        )],
    );
    let message = refusal(&text);
    assert!(
        message.contains("`loose`") && message.contains("floating"),
        "{message}"
    );
}

/// The leg of `folded_origin_rotations`, with the hip's origin turned by `turn` (its axis
/// `hip_axis` in the joint frame) and the thigh's contents expressed in the turned frame by
/// `into` (the turn's inverse); the knee's origin turns back by `back`.
fn turned_leg(
    turn: [f64; 3],
    hip_axis: [f64; 3],
    into: impl Fn([f64; 3]) -> [f64; 3],
    back: [f64; 3],
) -> String {
    urdf(
        &[
            link("base", 4.0, [0.01, 0.0, 0.02], NO_TURN, None),
            link("thigh", 1.2, into([0.02, 0.0, -0.15]), back, None),
            link("shank", 0.4, [0.0, 0.0, -0.14], NO_TURN, None),
            link("toe", 0.05, [0.0; 3], NO_TURN, Some(0.015)),
        ],
        &[
            joint(
                "hip",
                "revolute",
                "base",
                "thigh",
                [0.1, 0.0, -0.02],
                turn,
                hip_axis,
            ),
            joint(
                "knee",
                "revolute",
                "thigh",
                "shank",
                into([0.03, 0.0, -0.3]),
                back,
                [0.0, -1.0, 0.0],
            ),
            joint(
                "toe_joint",
                "fixed",
                "shank",
                "toe",
                [0.0, 0.0, -0.28],
                NO_TURN,
                Y,
            ),
        ],
    )
}

#[test]
fn a_joint_origin_that_turns_the_child_frame_is_folded_into_the_child() {
    let plain = imported(&turned_leg(NO_TURN, Y, |v| v, NO_TURN));
    // A pitch of 0.4 rad at the hip: the thigh's frame turns about y; its contents, written
    // in the turned frame, are the plain leg's turned back.
    let p: f64 = 0.4;
    let (s, c) = p.sin_cos();
    let pitched = imported(&turned_leg(
        [0.0, p, 0.0],
        Y,
        |[x, y, z]| [c * x - s * z, y, s * x + c * z],
        [0.0, -p, 0.0],
    ));
    assert_same_robot(&pitched, &plain);
    // A DH-style roll of 90° with the hip's axis along its frame's -z (which is +y in the
    // base): still a turn in the plane.
    let half_pi = std::f64::consts::FRAC_PI_2;
    let rolled = imported(&turned_leg(
        [half_pi, 0.0, 0.0],
        [0.0, 0.0, -1.0],
        |[x, y, z]| [x, z, -y],
        [-half_pi, 0.0, 0.0],
    ));
    assert_same_robot(&rolled, &plain);
}

#[test]
fn prismatic_joints_dampers_and_massless_leaves_import_as_documented() {
    // A leg sliding along -z of a frame pitched by 0.3 rad: along (-sin 0.3, -cos 0.3) in
    // loam's (x, z); with a damper, a massless sensor link on a revolute joint and a wheel
    // on a continuous one.
    let leg = joint(
        "leg",
        "prismatic",
        "base",
        "foot",
        [0.0; 3],
        [0.0, 0.3, 0.0],
        [0.0, 0.0, -1.0],
    )
    .replace(
        "</joint>",
        "<dynamics damping=\"2.5\" friction=\"1.0\"/></joint>",
    );
    let text = urdf(
        &[
            link("base", 4.0, [0.0; 3], NO_TURN, None),
            link("foot", 0.5, [0.0; 3], NO_TURN, Some(0.02)),
            "<link name=\"camera\"/>".to_owned(),
            link("wheel", 0.3, [0.0; 3], NO_TURN, None),
        ],
        &[
            leg,
            joint("pan", "revolute", "base", "camera", [0.0; 3], NO_TURN, Y),
            joint(
                "spin",
                "continuous",
                "base",
                "wheel",
                [0.2, 0.0, 0.0],
                NO_TURN,
                Y,
            ),
        ],
    );
    let description = import(&text, None).unwrap();
    assert!(description.violations().is_empty());
    let names: Vec<&str> = description.bodies.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(
        names,
        ["base", "foot", "wheel"],
        "the massless camera is dropped"
    );
    let spin = description.bodies[2].joint.as_ref().unwrap();
    assert_eq!(
        spin.position, None,
        "a continuous joint has no position limits"
    );
    assert_eq!(spin.velocity, Some(10.0));
    let joint = description.bodies[1].joint.as_ref().unwrap();
    let axis = joint.axis.unwrap();
    assert!((axis[0] + 0.3f64.sin()).abs() < 1e-15 && (axis[1] + 0.3f64.cos()).abs() < 1e-15);
    assert_eq!(
        joint.position,
        Some([-1.0, 0.5]),
        "a slide keeps its limits' sign"
    );
    assert_eq!(joint.velocity, Some(10.0));
    let actuators: Vec<&str> = description
        .actuators
        .iter()
        .map(|a| a.name.as_str())
        .collect();
    assert_eq!(actuators, ["leg_force", "spin_torque"]);
    assert_eq!(description.actuators[0].limit, [-30.0, 30.0]);
    assert_eq!(description.springs.len(), 1);
    assert_eq!(
        (
            description.springs[0].stiffness,
            description.springs[0].damping
        ),
        (0.0, 2.5)
    );
    let contacts: Vec<&str> = description
        .contacts
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(contacts, ["foot", "wheel"], "one per leaf link kept");
    assert_eq!(description.contacts[0].point, [0.0, -0.02]);
    description.build(G).validate().unwrap();
}

#[test]
fn joints_and_links_that_leave_the_plane_or_break_the_rules_are_refused_naming_them() {
    let base = || link("base", 4.0, [0.0; 3], NO_TURN, None);
    let thigh = || link("thigh", 1.0, [0.0, 0.0, -0.1], NO_TURN, None);
    let one_joint = |j: String| urdf(&[base(), thigh()], &[j]);
    let cases: Vec<(String, &[&str])> = vec![
        (
            one_joint(joint(
                "side",
                "prismatic",
                "base",
                "thigh",
                [0.0; 3],
                NO_TURN,
                Y,
            )),
            &["`side`", "out of the plane"],
        ),
        (
            one_joint(joint(
                "wide_hip",
                "revolute",
                "base",
                "thigh",
                [0.0, 0.1, 0.0],
                NO_TURN,
                Y,
            )),
            &["`wide_hip`", "y = 0.1"],
        ),
        (
            // Turned about z by 1 rad: the hip's y axis leaves the base's y axis.
            one_joint(joint(
                "yawed",
                "revolute",
                "base",
                "thigh",
                [0.0; 3],
                [0.0, 0.0, 1.0],
                Y,
            )),
            &["`yawed`", "not about the plane's normal"],
        ),
        (
            one_joint(joint(
                "slider", "planar", "base", "thigh", [0.0; 3], NO_TURN, Y,
            )),
            &["`slider`", "planar"],
        ),
        (
            one_joint(joint(
                "pitch", "revolute", "base", "thigh", [0.0; 3], NO_TURN, Y,
            )),
            &["`pitch`", "floating base"],
        ),
        (
            one_joint(
                joint("copy", "revolute", "base", "thigh", [0.0; 3], NO_TURN, Y)
                    .replace("</joint>", "<mimic joint=\"other\"/></joint>"),
            ),
            &["`copy`", "mimic"],
        ),
        (
            one_joint(joint(
                "hip", "revolute", "base", "shin", [0.0; 3], NO_TURN, Y,
            )),
            &["`hip`", "`shin`"],
        ),
        (
            urdf(&[base(), thigh()], &[]),
            &["`base`", "`thigh`", "root"],
        ),
        (
            // A massless link that carries another.
            urdf(
                &[base(), "<link name=\"bracket\"/>".to_owned(), thigh()],
                &[
                    joint("a", "revolute", "base", "bracket", [0.0; 3], NO_TURN, Y),
                    joint("b", "revolute", "bracket", "thigh", [0.0; 3], NO_TURN, Y),
                ],
            ),
            &["`bracket`", "no mass", "`b`"],
        ),
        (
            urdf(&[link("base", -1.0, [0.0; 3], NO_TURN, None)], &[]),
            &["`base`", "mass"],
        ),
        (
            "<robot name=\"broken\"><link name=\"a\"></robot>".to_owned(),
            &["not a readable URDF"],
        ),
    ];
    for (text, wanted) in cases {
        let message = refusal(&text);
        eprintln!("MSG {message}");
        for w in wanted {
            assert!(message.contains(w), "`{w}` not in: {message}");
        }
    }
}
