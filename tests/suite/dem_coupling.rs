//! Two-way coupling between the DEM bed and bodies: dropped discs, a pressed disc, and the
//! hopper (its robot file, `robots/hopper.yaml`, through the planar coupling) standing and
//! jumping on a bed. One small bed (about 700 grains of 4 mm radius) is prepared
//! once and shared by the tests.

use std::sync::OnceLock;

use loam::api::SavedPlanarPlan;
use loam::sim::dem::intrude::{intrude, IntrudeSettings};
use loam::sim::dem::planar::{replay_planar, PlanarDemReplay, PlanarDemSettings};
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

/// The hopper's committed robot-file run (`results/hopper_granular`): the robot, its 60 mm jump
/// and its feet on grains (a disc of the plan's `foot_radius`).
fn hopper_run() -> &'static SavedPlanarPlan {
    static RUN: OnceLock<SavedPlanarPlan> = OnceLock::new();
    RUN.get_or_init(|| {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("results/hopper_granular");
        loam::api::read_planar_run(&dir).unwrap()
    })
}

/// The jump's first state held for `duration`: every node the first one, the drive's command
/// rate 0.
fn hold_still(run: &SavedPlanarPlan, duration: f64) -> loam::sim::planar::PlanTable {
    let table = &run.table;
    loam::sim::planar::PlanTable {
        t: vec![0.0, duration],
        x: vec![table.x[0].clone(), table.x[0].clone()],
        u: vec![vec![0.0; run.robot.inputs.len()]; 2],
        phase: vec![0, 0],
    }
}

/// The hopper's rest state on the bed, through the planar coupling (the checks of the
/// hopper's own coupling, which is gone, on what the planar samples hold): after settling the
/// grains carry the whole robot; held still for 0.15 s the spring's length stays at
/// l_0 − (m_m + m_r) g / k_s (56 mm) within 0.5 mm, the drive holds its stroke within 0.5 mm,
/// nothing moves faster than 2 cm/s, the foot never leaves the grains and rests no higher
/// than a grain radius above the surface. (The hopper's coupling also held the drive's
/// integrator at the motor's weight; the planar samples do not carry the drive's states, and
/// the planar coupling starts the integrator at the plan's, which holds the motor: the stroke
/// holding still is what that integrator shows.)
#[test]
fn the_hopper_stands_still_on_the_bed_in_its_analytic_rest_state() {
    let bed = test_bed();
    let run = hopper_run();
    let robot = &run.robot;
    let settings = PlanarDemSettings {
        feet: run.grain_feet(),
        settle_time: 0.3,
        ..PlanarDemSettings::default()
    };
    let replay = replay_planar(
        &mut CpuBackend::new(),
        bed,
        robot,
        &hold_still(run, 0.15),
        &settings,
    )
    .unwrap();
    let s = &replay.summary;
    let weight = s.robot_weight_n;
    // After settling, the bed carries the whole robot (within 5 %).
    assert!(
        (s.settled_bed_force_n - weight).abs() < 0.05 * weight,
        "bed force {} vs weight {weight}",
        s.settled_bed_force_n
    );
    let (leg, stroke) = (
        robot.coordinate("leg").unwrap(),
        robot.coordinate("stroke").unwrap(),
    );
    let spring = &robot.springs[0];
    let mass = |name: &str| robot.body.bodies[robot.body_index(name).unwrap()].mass;
    let (m_m, m_r) = (mass("motor"), mass("rod"));
    let gap = spring.rest - (m_m + m_r) * robot.body.gravity / spring.stiffness;
    let stroke0 = run.table.x[0][stroke];
    let held: Vec<_> = replay.samples.iter().filter(|s| s.t >= 0.0).collect();
    assert!(held.len() > 100, "{} samples", held.len());
    for sample in &held {
        assert!(
            (sample.q[leg] - gap).abs() < 5e-4,
            "spring length {} at t = {}",
            sample.q[leg],
            sample.t
        );
        assert!(
            (sample.q[stroke] - stroke0).abs() < 5e-4,
            "stroke {} at t = {}",
            sample.q[stroke],
            sample.t
        );
        let fastest = sample.v.iter().fold(0.0, |m: f64, v| m.max(v.abs()));
        assert!(fastest < 0.02, "{sample:?}");
        assert!(
            sample.wrenches[0][1] > 0.0,
            "the foot left the grains: {sample:?}"
        );
    }
    assert!(
        held[0].heights[0] < 0.004,
        "sole at {} m",
        held[0].heights[0]
    );
    assert!(s.fell_at_s.is_none() && s.stopped_at_s.is_none(), "{s:?}");
}

/// What a replay computed, every number to the bit.
fn bits(replay: &PlanarDemReplay) -> String {
    format!("{:?} {:?}", replay.samples, replay.summary)
}

/// The hopper's jump on the bed twice: the same to the bit, the snapshots asked for (at
/// t = 0, 0.05, 0.10, … while the replay ran), each the whole bed and the foot disc where it
/// was, and the jump moved the robot.
#[test]
fn a_replay_is_bit_for_bit_repeatable_and_saves_the_snapshots_asked_for() {
    let bed = test_bed();
    let run = hopper_run();
    let settings = PlanarDemSettings {
        feet: run.grain_feet(),
        apex: run.dem_apex(),
        settle_time: 0.05,
        snapshot_every: Some(0.05),
        ..PlanarDemSettings::default()
    };
    let replay = || {
        replay_planar(
            &mut CpuBackend::new(),
            bed,
            &run.robot,
            &run.table,
            &settings,
        )
        .unwrap()
    };
    let (a, b) = (replay(), replay());
    assert_eq!(bits(&a), bits(&b));
    assert_eq!(a.snapshots, b.snapshots);
    // The snapshots at the first step starting at or after each multiple of 0.05 s, up to
    // the replay's last step.
    let dt = a.summary.time_step_s;
    let last_start = a.samples.last().unwrap().t - dt;
    let expected = (last_start / 0.05 + 1e-9).floor() as usize + 1;
    assert_eq!(a.snapshots.len(), expected, "last step at {last_start}");
    for (m, snap) in a.snapshots.iter().enumerate() {
        let at = m as f64 * 0.05;
        assert!(
            snap.t >= at - 1e-12 && snap.t < at + dt,
            "{} for {at}",
            snap.t
        );
        assert_eq!(snap.grains.len(), bed.grains.len());
        assert_eq!(snap.surface_height, bed.info.surface_height);
        assert_eq!(snap.feet.len(), 1);
        assert_eq!(
            snap.feet[0].0,
            Shape::Disc {
                radius: 0.038,
                thickness: 0.005
            }
        );
    }
    // The foot rose with the jump.
    let first = a.snapshots.first().unwrap().feet[0].1.position[2];
    let highest = a
        .snapshots
        .iter()
        .map(|s| s.feet[0].1.position[2])
        .fold(f64::NEG_INFINITY, f64::max);
    assert!(highest > first + 0.01, "foot from {first} m to {highest} m");
    let rise = a.summary.achieved_apex_rise_m.unwrap();
    assert!(rise > 0.03, "{:?}", a.summary);
}
