//! Two-way coupling between the DEM bed and bodies: dropped discs, a pressed disc, and the
//! hopper standing on a bed. One small bed (about 700 grains of 4 mm radius) is prepared
//! once and shared by the tests.

use std::sync::OnceLock;

use loam::model::hopper::{state, Hopper};
use loam::sim::dem::hopper::{bodies_csv, replay_hopper, HopperReplaySettings};
use loam::sim::dem::intrude::{intrude, IntrudeSettings};
use loam::sim::dem::sdf::Shape;
use loam::sim::dem::{
    bed, Backend, Body, BodyGeometry, BodyState, Checkpoint, CpuBackend, Motion, Scene,
};

const SCENE: &str = "
container: { shape: cylinder, radius: 0.05 }
grains: { radius: 0.004, size_spread: 0.1, density: 1000, friction: 0.5, fill_height: 0.04, seed: 11 }
settle: { kinetic_energy: 1.0e-12, max_time: 3.0 }
";

fn test_bed() -> &'static Checkpoint {
    static BED: OnceLock<Checkpoint> = OnceLock::new();
    BED.get_or_init(|| {
        let scene = Scene::parse(SCENE, std::path::Path::new("<coupling test>")).unwrap();
        let mut backend = CpuBackend::new();
        let bed = bed::prepare(&mut backend, &scene).unwrap();
        assert!(bed.info.settled, "{:?}", bed.info);
        bed
    })
}

/// Drops a dynamic disc of `mass` with its sole one grain radius above the surface and
/// returns its sole's depth below the surface and its speed after 0.4 s.
fn dropped_disc_depth(mass: f64) -> (f64, f64) {
    let bed = test_bed();
    let thickness = 0.005;
    let r = bed.scene.grains.radius;
    let disc = Body {
        geometry: BodyGeometry::Shape(Shape::Disc {
            radius: 0.025,
            thickness,
        }),
        motion: Motion::Dynamic,
        mass,
        friction: 0.5,
        state: BodyState {
            position: [0.0, 0.0, bed.info.surface_height + r + 0.5 * thickness],
            velocity: [0.0; 3],
            external_force: [0.0; 3],
            ..BodyState::default()
        },
    };
    let mut backend = CpuBackend::new();
    backend
        .upload(
            &bed.grains,
            &bed.scene.container,
            &[disc],
            &bed.scene.step_params(),
        )
        .unwrap();
    let dt = bed.scene.time_step();
    backend.step((0.4 / dt).round() as usize).unwrap();
    let s = backend.bodies().unwrap()[0];
    let depth = bed.info.surface_height - (s.position[2] - 0.5 * thickness);
    (depth, s.velocity[2].abs())
}

#[test]
fn a_dropped_disc_rests_deeper_the_heavier_it_is() {
    let results: Vec<(f64, f64)> = [0.1, 0.3, 0.9].map(dropped_disc_depth).to_vec();
    for (depth, speed) in &results {
        assert!(*speed < 0.02, "still sinking at {speed} m/s ({results:?})");
        assert!(*depth > -0.004, "floats above the surface: {results:?}");
    }
    // Each threefold weight sinks the disc deeper by a clear margin (0.5 mm).
    assert!(results[1].0 > results[0].0 + 0.0005, "{results:?}");
    assert!(results[2].0 > results[1].0 + 0.0005, "{results:?}");
}

#[test]
fn the_bed_resists_a_slowly_pressed_disc_more_the_deeper_it_goes() {
    let bed = test_bed();
    let settings = IntrudeSettings {
        speed: 0.05,
        depth: 0.02,
        start_height: None,
        sample_travel: Some(0.005),
        friction: None,
        iterations: None,
        time_step: None,
    };
    let mut backend = CpuBackend::new();
    let samples = intrude(
        &mut backend,
        bed,
        BodyGeometry::Shape(Shape::Disc {
            radius: 0.025,
            thickness: 0.005,
        }),
        &settings,
    )
    .unwrap();
    // Rows average 5 mm of travel: the last four lie at 2.5, 7.5, 12.5, 17.5 mm depth.
    let forces: Vec<(f64, f64)> = samples
        .iter()
        .filter(|s| s.depth > 0.0)
        .map(|s| (s.depth, s.force[2]))
        .collect();
    assert!(forces.len() >= 3, "{forces:?}");
    // Soft grains slip and re-jam under the disc, so the force fluctuates by a few newtons
    // about its trend: the trend (a least-squares slope) rises, and the deeper half of the
    // rows carries at least a quarter more than the shallower half. Over beds poured with
    // seeds 11-15 the ratio of the halves was 1.33-2.3; the deepest row alone fell below the
    // shallowest's 1.5x on two of them (a row can sit in a slip: 8.7, 12.9, 6.7, 22.1 N).
    let n = forces.len() as f64;
    let (md, mf) = (
        forces.iter().map(|p| p.0).sum::<f64>() / n,
        forces.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let slope = forces.iter().map(|p| (p.0 - md) * (p.1 - mf)).sum::<f64>()
        / forces.iter().map(|p| (p.0 - md).powi(2)).sum::<f64>();
    assert!(slope > 0.0, "force falls with depth: {forces:?}");
    let half = forces.len() / 2;
    let mean = |rows: &[(f64, f64)]| rows.iter().map(|p| p.1).sum::<f64>() / rows.len() as f64;
    assert!(
        mean(&forces[forces.len() - half..]) > 1.25 * mean(&forces[..half]),
        "force does not grow with depth: {forces:?}"
    );
    // Lateral force and torque stay small next to the vertical force on an axisymmetric bed.
    let last = samples.last().unwrap();
    assert!(last.force[2] > 0.0);
    assert!(last.force[0].abs() < 0.3 * last.force[2], "{last:?}");
}

/// The paper's robot: the problem file's defaults are MODEL.md's table.
fn paper_hopper() -> Hopper {
    Hopper::from_problem(&loam::problem::Problem::default())
}

fn hold_still(_t: f64) -> (f64, f64) {
    (0.0, 0.0)
}

#[test]
fn the_hopper_stands_still_on_the_bed_in_its_analytic_rest_state() {
    let bed = test_bed();
    let robot = paper_hopper();
    let settings = HopperReplaySettings {
        t_max: 0.15,
        ..HopperReplaySettings::default()
    };
    let mut backend = CpuBackend::new();
    let replay =
        replay_hopper(&mut backend, bed, &robot, 0.03, &hold_still, 0.0, &settings).unwrap();
    let weight = robot.total_mass() * robot.gravity;
    // After settling, the bed carries the whole robot (within 5 %).
    assert!(
        (replay.rest_bed_force - weight).abs() < 0.05 * weight,
        "bed force {} vs weight {weight}",
        replay.rest_bed_force
    );
    // Held still for 0.15 s the coupled step keeps the analytic rest state: the rod–foot
    // gap stays l_0 − (m_m + m_r) g / k_s (56 mm) within 0.5 mm, the integrator holds the
    // motor's weight within 2 %, nothing moves faster than 2 cm/s and it never takes off.
    let gap = robot.params.spring_rest_length
        - (robot.params.motor_mass + robot.params.rod_mass) * robot.gravity
            / robot.params.spring_stiffness;
    let e_rest = robot.params.motor_mass * robot.gravity
        / (robot.params.force_constant * robot.params.integral_gain);
    for s in &replay.samples {
        assert!(
            (s.z_r - s.z_f - gap).abs() < 5e-4,
            "gap {} at t = {}",
            s.z_r - s.z_f,
            s.t
        );
        assert!(
            s.v_m.abs().max(s.v_r.abs()).max(s.v_f.abs()) < 0.02,
            "{s:?}"
        );
    }
    assert!((replay.initial_state[state::E] - e_rest).abs() < 0.02 * e_rest);
    assert!(replay.takeoff_time.is_none() && !replay.reached_apex);
    assert!(replay.rest_depth > -0.004, "depth {}", replay.rest_depth);
}

/// A quick push: the command retracts then extends the actuator by 25 mm over 0.1 s.
fn push(t: f64) -> (f64, f64) {
    let w = 2.0 * std::f64::consts::PI / 0.1;
    if t < 0.1 {
        (-0.0125 * (1.0 - (w * t).cos()), -0.0125 * w * (w * t).sin())
    } else {
        (0.0, 0.0)
    }
}

#[test]
fn a_replay_is_bit_for_bit_repeatable_and_writes_the_documented_columns() {
    let bed = test_bed();
    let robot = paper_hopper();
    let settings = HopperReplaySettings {
        t_max: 0.12,
        settle_time: 0.05,
        snapshot_every: Some(0.05),
        iterations: Some(20),
        ..HopperReplaySettings::default()
    };
    let run = || {
        let mut backend = CpuBackend::new();
        replay_hopper(&mut backend, bed, &robot, 0.03, &push, 0.0, &settings).unwrap()
    };
    let (a, b) = (run(), run());
    let csv = bodies_csv(&a);
    assert_eq!(csv, bodies_csv(&b));
    assert_eq!(
        csv.lines().next().unwrap(),
        "t,z_m,v_m,z_r,v_r,z_f,v_f,z_d,F_m,F_s,F_bed,F_added_mass"
    );
    assert_eq!(csv.lines().count(), a.samples.len() + 1);
    // Snapshots at t = 0, 0.05, 0.10 while the replay ran, each the whole bed.
    let last_t = a.samples.last().unwrap().t;
    let expected = (last_t / 0.05 - 1e-9).floor() as usize + 1;
    assert_eq!(a.snapshots.len(), expected.min(3), "last t {last_t}");
    assert!(a
        .snapshots
        .iter()
        .all(|s| s.grains.len() == bed.grains.len()));
    // The push moved the robot.
    let moved = a.samples.iter().map(|s| s.v_r.abs()).fold(0.0, f64::max);
    assert!(moved > 0.05, "peak rod speed {moved}");
}
