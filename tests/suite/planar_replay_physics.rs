//! The planar replay (`loam::sim::planar::replay`) of the hopper's robot file against
//! mechanics it must reproduce exactly: free flight is a parabola of the centre of mass,
//! energy is conserved in flight without damper or motor, and the robot at rest stays at
//! rest on rigid ground and on the poppy-seed bed.
//!
//! Each replay starts from a state chosen here and follows a plan table of nodes whose
//! inputs (the drive's command rate u = ż_d) are 0: the drive holds its command still. The
//! replay's error control is rtol 1e-9, atol 1e-11 (`sim::planar`), which sets the
//! tolerances below.

use std::path::Path;

use loam::model::planar::PlanarRobot;
use loam::planner::planar::centre_of_mass_velocity;
use loam::problem::load_any;
use loam::problem::planar::{PlanarProblem, RobotConfig};
use loam::sim::planar::{replay, PlanTable, PlanarReplay, ReplaySettings};

const G: f64 = 9.81;
const RIGID: &str = "terrain={model: rigid}";
const POPPY_SEEDS: &str = "terrain={model: added_mass, medium: poppy_seeds, foot_radius: 0.038}";

/// problems/hopper_granular.yaml (robots/hopper.yaml) with `overrides`.
fn problem(overrides: &[&str]) -> PlanarProblem {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/hopper_granular.yaml");
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    load_any(&path, &overrides).unwrap()
}

/// The same problem with its schedule reduced to the flight: the replay starts in the first
/// phase's mode, so with no foot held.
fn in_flight(overrides: &[&str]) -> PlanarProblem {
    let mut problem = problem(overrides);
    problem.schedule.remove(0);
    assert!(
        problem.schedule[0].contacts.is_empty(),
        "the second phase flies"
    );
    problem
}

/// Replays `problem` from `x0` along a plan table whose nodes at `times` all hold `x0` with
/// every input 0: the drive's command stays where `x0` puts it.
fn hold_still(problem: &PlanarProblem, x0: &[f64], times: &[f64]) -> PlanarReplay {
    let n_inputs = problem.robot.build(problem.gravity).inputs.len();
    let plan = PlanTable {
        t: times.to_vec(),
        x: times.iter().map(|_| x0.to_vec()).collect(),
        u: times.iter().map(|_| vec![0.0; n_inputs]).collect(),
        phase: vec![0; times.len()],
    };
    let run = replay(problem, &plan, &ReplaySettings::default()).unwrap();
    assert!(run.summary.complete, "{:?}", run.summary.stopped);
    run
}

/// The indices of the hopper file's coordinates z (the motor block's height), stroke
/// (z_motor − z_rod) and leg (z_rod − z_foot), and its number of coordinates.
fn indices(robot: &PlanarRobot) -> (usize, usize, usize, usize) {
    let at = |name| robot.coordinate(name).expect("a hopper coordinate");
    (at("z"), at("stroke"), at("leg"), robot.n_q())
}

fn mass(robot: &PlanarRobot, body: &str) -> f64 {
    robot.body.bodies[robot.body_index(body).expect("a hopper body")].mass
}

/// The drive's integrator holding the motor block's weight with the drive at rest (v_err =
/// 0): e = m_m g / (K_m V_i) (docs/MODEL.md section 1), and its command at `stroke`.
fn drive_holding(robot: &PlanarRobot, stroke: f64) -> [f64; 2] {
    let (_, drive) = robot.drives().next().expect("the hopper's drive");
    [drive.holding_integral(mass(robot, "motor") * G), stroke]
}

/// The robot thrown upward: its standing posture 5 cm up, the motor block rising at 1.2 m/s,
/// the rod at 1.6 m/s and the foot at 0.9 m/s (each body differently, so that the spring and
/// the drive work inside it), the drive's integrator holding the motor's weight.
fn thrown(robot: &PlanarRobot) -> Vec<f64> {
    let (z, stroke, leg, n) = indices(robot);
    let mut x = vec![0.0; robot.n_x()];
    x[..n].copy_from_slice(&robot.standing);
    x[z] += 0.05;
    let (v_motor, v_rod, v_foot) = (1.2, 1.6, 0.9);
    x[n + z] = v_motor;
    x[n + stroke] = v_motor - v_rod;
    x[n + leg] = v_rod - v_foot;
    let drive = drive_holding(robot, x[stroke]);
    x[2 * n..].copy_from_slice(&drive);
    x
}

/// Whatever the spring and the drive do inside the robot, its centre of mass is ballistic
/// in flight: z_c(t) = z_c0 + v_c0 t − g t²/2 at every sample, to 1e-9 m (measured: 7e-16 m;
/// the integrator's steps are exact for a quadratic, so only round-off and a wrong mass
/// matrix, gravity or internal force would show). The apex, where the centre of mass's
/// vertical velocity (linear in t, so interpolated exactly between samples) crosses 0, is at
/// t = v_c0/g to 1e-9 s, and the replay's own peak rise (its summary, the highest centre of
/// mass over every sample and step) is v_c0²/(2g) to 1e-9 m; a plan node placed at v_c0/g
/// makes the replay sample there, so the peak is not missed between samples. The drive holds
/// its command still all along, and the foot (5 cm up, 0.2 s) never lands.
#[test]
fn free_flight_follows_the_parabola() {
    let problem = in_flight(&[RIGID]);
    let robot = problem.robot.build(problem.gravity);
    let n = robot.n_q();
    let x0 = thrown(&robot);
    let com = |x: &[f64]| robot.body.centre_of_mass(&x[..n])[1];
    let com_velocity = |x: &[f64]| centre_of_mass_velocity(&robot, &x[..n], &x[n..2 * n]);
    let (z_c0, v_c0) = (com(&x0), com_velocity(&x0));
    let t_apex = v_c0 / G;
    let run = hold_still(&problem, &x0, &[0.0, t_apex, 0.2]);
    assert!(run.summary.events.is_empty(), "{:?}", run.summary.events);
    assert!(run.modes.iter().all(|m| m == "flight"));
    assert!(run.rows.len() > 150);
    let command = 2 * n + 1;
    let mut worst: f64 = 0.0;
    let mut crossing = None;
    for (k, row) in run.rows.iter().enumerate() {
        let (t, x) = (row[0], &row[1..]);
        assert_eq!(x[command], x0[command], "the drive's command moved");
        let expected = z_c0 + v_c0 * t - 0.5 * G * t * t;
        worst = worst.max((com(x) - expected).abs());
        if let Some(next) = run.rows.get(k + 1) {
            let (v0, v1) = (com_velocity(x), com_velocity(&next[1..]));
            if v0 > 0.0 && v1 <= 0.0 {
                crossing = Some(t + (next[0] - t) * v0 / (v0 - v1));
            }
        }
    }
    println!("centre of mass off the parabola by {worst:e} m at most");
    assert!(worst < 1e-9, "centre of mass off the parabola by {worst} m");
    let apex = crossing.expect("the centre of mass stops rising");
    let replayed = run.summary.achieved_com_peak_m;
    let peak = v_c0 * v_c0 / (2.0 * G);
    println!(
        "apex at {apex} s against v_c0/g = {t_apex} s; peak rise {replayed} m against {peak} m"
    );
    assert!(
        (apex - t_apex).abs() < 1e-9,
        "apex at {apex} s, v_c0/g = {t_apex} s"
    );
    assert!(
        (replayed - peak).abs() < 1e-9,
        "peak rise {replayed} m against {peak} m"
    );
}

/// The energy ½ vᵀM(q)v + m g z_c + ½ k (leg − l_0)² of the thrown robot.
fn energy(robot: &PlanarRobot, x: &[f64]) -> f64 {
    let n = robot.n_q();
    let m = robot.body.mass_matrix_f64(&x[..n]);
    let v = nalgebra::DVector::from_column_slice(&x[n..2 * n]);
    let kinetic = 0.5 * v.dot(&(&m * &v));
    let potential = robot.body.total_mass() * G * robot.body.centre_of_mass(&x[..n])[1];
    kinetic + potential + robot.spring_energy(&x[..n])
}

/// The largest drift of the energy over a flight from the thrown state, relative to the
/// energy that moves (kinetic plus elastic at the start).
fn energy_drift(problem: &PlanarProblem) -> f64 {
    let robot = problem.robot.build(problem.gravity);
    // The file's robot thrown (the same bodies), its drive's integrator at 0: with K_m = 0
    // there is no holding value, and the drive's states act on nothing.
    let n = robot.n_q();
    let mut x0 = thrown(&in_flight(&[RIGID]).robot.build(problem.gravity));
    x0[2 * n] = 0.0;
    let run = hold_still(problem, &x0, &[0.0, 0.2]);
    assert!(run.summary.events.is_empty(), "{:?}", run.summary.events);
    assert!(run.rows.len() > 100);
    let e0 = energy(&robot, &x0);
    let scale = e0 - robot.body.total_mass() * G * robot.body.centre_of_mass(&x0[..n])[1];
    run.rows
        .iter()
        .map(|row| (energy(&robot, &row[1..]) - e0).abs() / scale)
        .fold(0.0, f64::max)
}

/// Without the spring's damper (`--set robot.description.springs.0.damping=0`) and without
/// the motor (the drive's force constant K_m set to 0 in the robot description, so that its
/// force K_m (V_p v_err + V_i e) is 0 whatever its states do; a file must have K_m > 0, so
/// this is set on the loaded description, not through `--set`), the flying robot is a
/// conservative system: its energy drifts by less than 1e-8 of the energy that moves
/// (measured: 2.8e-9, the integrator's error over 0.2 s of the spring's ~250 rad/s
/// oscillation at rtol 1e-9). With the file's damper (2 N s/m) the same flight loses 3 % of
/// it (asserted: more than 1e-4), so the measure can fail.
#[test]
fn energy_is_conserved_in_flight_without_damping_or_motor() {
    let mut problem = in_flight(&[RIGID, "robot.description.springs.0.damping=0"]);
    let RobotConfig::File(file) = &mut problem.robot else {
        panic!("the hopper is a robot file");
    };
    let drive = file.description.actuators[0]
        .drive
        .as_mut()
        .expect("the hopper's drive");
    drive.force_constant = 0.0;
    let robot = problem.robot.build(problem.gravity);
    assert_eq!(robot.springs[0].damping, 0.0);
    let drift = energy_drift(&problem);
    println!("relative energy drift {drift:e}");
    assert!(drift < 1e-8, "relative energy drift {drift:e}");

    // The control: the damper on (the motor still off) dissipates energy.
    problem.robot = in_flight(&[RIGID]).robot;
    let RobotConfig::File(file) = &mut problem.robot else {
        unreachable!()
    };
    file.description.actuators[0]
        .drive
        .as_mut()
        .unwrap()
        .force_constant = 0.0;
    let damped = energy_drift(&problem);
    println!("relative energy loss with the damper {damped:e}");
    assert!(damped > 1e-4, "the damper dissipates only {damped:e}");
}

/// The hopper standing at rest on `problem`'s ground with its foot `deeper` below its rest
/// depth (the depth at which the ground carries the robot's weight: 0 on rigid ground): the
/// drive at mid-stroke holding the motor's weight, the spring at the length that carries
/// motor and rod, l = l_0 − (m_m + m_r) g / k, every velocity 0.
fn at_rest(problem: &PlanarProblem, deeper: f64) -> Vec<f64> {
    let robot = problem.robot.build(problem.gravity);
    let (z, stroke, leg, n) = indices(&robot);
    let contact = problem
        .terrain
        .contact_model::<f64>()
        .expect("a closed-form ground");
    let depth = contact.rest_depth(robot.body.total_mass() * G) + deeper;
    let spring = &robot.springs[0];
    assert_eq!(spring.coordinate, leg);
    let load = (mass(&robot, "motor") + mass(&robot, "rod")) * G;
    let mut x = vec![0.0; robot.n_x()];
    x[stroke] = 0.0;
    x[leg] = spring.rest - load / spring.stiffness;
    // The foot hangs stroke + leg below the motor block (both axes point down).
    x[z] = x[stroke] + x[leg] - depth;
    let foot = robot.contact("foot").expect("the hopper's foot");
    assert!((robot.contact_point(&x[..n], foot)[1] + depth).abs() < 1e-12);
    let drive = drive_holding(&robot, x[stroke]);
    x[2 * n..].copy_from_slice(&drive);
    x
}

/// Replays the robot at rest for 0.3 s; returns the largest departure of any state from the
/// start over the samples, and the events.
fn rest_replay(problem: &PlanarProblem, x0: &[f64]) -> (f64, Vec<&'static str>) {
    let run = hold_still(problem, x0, &[0.0, 0.3]);
    assert!(run.rows.len() > 250);
    let n_x = x0.len();
    let drift = run
        .rows
        .iter()
        .flat_map(|row| row[1..1 + n_x].iter().zip(x0).map(|(a, b)| (a - b).abs()))
        .fold(0.0, f64::max);
    (drift, run.summary.events.iter().map(|e| e.kind).collect())
}

/// A command that holds still leaves the equilibrium alone: on rigid ground no event and no
/// state moves by 1e-9 (measured: 4e-11 over 0.3 s).
#[test]
fn the_robot_at_rest_stays_at_rest_on_rigid_ground() {
    let problem = problem(&[RIGID]);
    let x0 = at_rest(&problem, 0.0);
    let (drift, events) = rest_replay(&problem, &x0);
    println!("rigid ground: drift {drift:e}, events {events:?}");
    assert!(events.is_empty(), "{events:?}");
    assert!(drift < 1e-9, "drift {drift:e}");
}

/// On the poppy-seed bed (the added-mass model's stick law, MODEL.md section 2) a foot at
/// rest stays where it is while its load is within [0, F_hyd(d)].
///
/// Pressed 1 mm below its rest depth (F_hyd > the robot's weight, the foot firmly stuck) the
/// robot at rest has no event and no state moves by 1e-9 (measured: 4e-11 over 0.3 s).
///
/// At its rest depth exactly (F_hyd = the weight: how a plan on the bed starts), the foot is
/// on the verge of sinking and the replay's guard F_hyd − F_z sits at 0 up to round-off:
/// measured, 15 `sinks`/`sticks` events over 0.3 s, each at round-off level (the state moves
/// by 3e-11). What is held there: the foot never lifts off, every event is the stick law's
/// sinking or sticking, and no state moves by 1e-9.
#[test]
fn the_robot_at_rest_stays_at_rest_on_poppy_seeds() {
    let problem = problem(&[POPPY_SEEDS]);
    let x0 = at_rest(&problem, 0.001);
    let (drift, events) = rest_replay(&problem, &x0);
    println!("poppy seeds, 1 mm below rest depth: drift {drift:e}, events {events:?}");
    assert!(events.is_empty(), "{events:?}");
    assert!(drift < 1e-9, "drift {drift:e}");

    let x0 = at_rest(&problem, 0.0);
    let (drift, events) = rest_replay(&problem, &x0);
    println!(
        "poppy seeds at rest depth: drift {drift:e}, {} events {events:?}",
        events.len()
    );
    assert!(
        events.iter().all(|e| matches!(*e, "sinks" | "sticks")),
        "{events:?}"
    );
    assert!(drift < 1e-9, "drift {drift:e}");
}
