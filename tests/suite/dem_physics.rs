//! Textbook checks of the projected-Jacobi law's step (hard contact, symplectic Euler).
//! The Hertz-Mindlin law's are in dem_hertz.rs.
//! Each scene is small (at most a few hundred grains) so the suite stays quick.

use crate::common;

use common::pile;
use loam::sim::dem::sdf::Shape;
use loam::sim::dem::{
    bed, Backend, Body, BodyGeometry, BodyState, ContactLaw, Container, CpuBackend, GrainState,
    Motion, Scene, StepParams,
};

const G: f64 = 9.81;

fn params(friction: f64, gravity: [f64; 3]) -> StepParams {
    StepParams {
        law: ContactLaw::ProjectedJacobi,
        time_step: 1e-3,
        gravity,
        iterations: 20,
        relaxation: 1.0,
        stabilisation: 0.2,
        friction,
        wall_friction: friction,
        contact_margin: 0.1,
    }
}

fn grains(positions: &[[f64; 3]], radius: f64, density: f64) -> GrainState {
    let mass = density * 4.0 / 3.0 * std::f64::consts::PI * radius.powi(3);
    GrainState {
        position: positions.to_vec(),
        velocity: vec![[0.0; 3]; positions.len()],
        radius: vec![radius; positions.len()],
        inverse_mass: vec![1.0 / mass; positions.len()],
        angular_velocity: Vec::new(),
    }
}

fn wide_box() -> Container {
    Container::Box {
        half_x: 1.0,
        half_y: 1.0,
    }
}

#[test]
fn a_dropped_grain_comes_to_rest_on_the_floor_without_drift_or_penetration() {
    let r = 0.003;
    let mut backend = CpuBackend::new();
    let start = [0.01, -0.02, 0.05];
    backend
        .upload(
            &grains(&[start], r, 1000.0),
            &wide_box(),
            &[],
            &params(0.5, [0.0, 0.0, -G]),
        )
        .unwrap();
    let mut deepest: f64 = 0.0;
    for _ in 0..1000 {
        backend.step(1).unwrap();
        let z = backend.grains().unwrap().position[0][2];
        deepest = deepest.max(r - z);
    }
    let g = backend.grains().unwrap();
    let [x, y, z] = g.position[0];
    // Speculative contacts stop the grain at the floor in the step it arrives: the deepest
    // overlap is below 1 % of the radius, and it rests at z = r within 0.1 %.
    assert!(deepest < 0.01 * r, "deepest overlap {deepest}");
    assert!((z - r).abs() < 1e-3 * r, "rest height {z}");
    assert_eq!((x, y), (start[0], start[1]), "sideways drift");
    let speed = g.velocity[0].iter().map(|v| v * v).sum::<f64>().sqrt();
    assert!(speed < 1e-9, "still moving at {speed} m/s");
}

#[test]
fn a_head_on_collision_conserves_momentum() {
    let r = 0.002;
    let mut state = grains(&[[-0.01, 0.0, 0.5], [0.01, 0.0, 0.5]], r, 1000.0);
    state.inverse_mass[1] /= 3.0; // grain 1 is three times heavier
    state.velocity = vec![[1.0, 0.0, 0.0], [-0.5, 0.0, 0.0]];
    let momentum = |s: &GrainState| -> [f64; 3] {
        let mut p = [0.0; 3];
        for (v, w) in s.velocity.iter().zip(&s.inverse_mass) {
            for k in 0..3 {
                p[k] += v[k] / w;
            }
        }
        p
    };
    let before = momentum(&state);
    let mut backend = CpuBackend::new();
    backend
        .upload(&state, &wide_box(), &[], &params(0.5, [0.0; 3]))
        .unwrap();
    backend.step(40).unwrap();
    let after_state = backend.grains().unwrap();
    let after = momentum(&after_state);
    for k in 0..3 {
        assert!(
            (after[k] - before[k]).abs() < 1e-12 * before[0].abs().max(1e-30),
            "momentum {before:?} -> {after:?}"
        );
    }
    // Hard, inelastic contact: they leave together at the centre-of-mass velocity.
    let v_cm = before[0] * (state.inverse_mass[0] * state.inverse_mass[1])
        / (state.inverse_mass[0] + state.inverse_mass[1]);
    for v in &after_state.velocity {
        assert!((v[0] - v_cm).abs() < 1e-9, "{v:?} vs {v_cm}");
    }
    // And they did collide (no tunnelling through each other).
    assert!(after_state.position[0][0] < after_state.position[1][0]);
}

/// A 3×3×2 block of touching grains on the floor, gravity tilted by `angle`: returns its
/// mean acceleration along the slope over 0.3 s.
fn block_on_incline(angle: f64, friction: f64) -> f64 {
    let r = 0.002;
    let mut positions = Vec::new();
    for i in 0..3 {
        for j in 0..3 {
            for k in 0..2 {
                positions.push([
                    2.0 * r * i as f64,
                    2.0 * r * j as f64,
                    r + 2.0 * r * k as f64,
                ]);
            }
        }
    }
    let gravity = [G * angle.sin(), 0.0, -G * angle.cos()];
    let mut backend = CpuBackend::new();
    backend
        .upload(
            &grains(&positions, r, 1000.0),
            &wide_box(),
            &[],
            &params(friction, gravity),
        )
        .unwrap();
    let steps = 300;
    backend.step(steps).unwrap();
    let g = backend.grains().unwrap();
    let mean_v = g.velocity.iter().map(|v| v[0]).sum::<f64>() / g.len() as f64;
    mean_v / (steps as f64 * 1e-3)
}

#[test]
fn a_block_of_grains_sticks_below_the_friction_angle_and_slides_above_it() {
    let mu: f64 = 0.4;
    let friction_angle = mu.atan();
    for degrees in [5.0, 15.0, 20.0] {
        let angle: f64 = f64::to_radians(degrees);
        assert!(angle < friction_angle);
        let a = block_on_incline(angle, mu);
        assert!(a.abs() < 1e-6, "{degrees}°: slides at {a} m/s²");
    }
    for degrees in [25.0, 35.0, 50.0] {
        let angle: f64 = f64::to_radians(degrees);
        let expected = G * (angle.sin() - mu * angle.cos());
        let a = block_on_incline(angle, mu);
        // Coulomb sliding: a = g (sin a − μ cos a), within 1 %.
        assert!(
            (a - expected).abs() < 0.01 * expected,
            "{degrees}°: a = {a}, expected {expected}"
        );
    }
}

fn small_scene(friction: f64, count: usize, seed: u64) -> Scene {
    Scene::parse(
        &format!(
            "container: {{ shape: box, half_x: 0.02, half_y: 0.02 }}\n\
             grains: {{ radius: 0.002, size_spread: 0.1, density: 1000, friction: {friction}, count: {count}, seed: {seed} }}\n\
             settle: {{ kinetic_energy: 1.0e-15, max_time: 2.0 }}\n\
             contact: {{ law: projected_jacobi }}\n"
        ),
        std::path::Path::new("<test>"),
    )
    .unwrap()
}

#[test]
fn a_resting_pile_stays_at_rest_for_ten_thousand_steps() {
    let scene = small_scene(0.5, 300, 3);
    let mut backend = CpuBackend::new();
    let bed = bed::prepare(&mut backend, &scene).unwrap();
    assert!(bed.info.settled, "{:?}", bed.info);
    let start = bed.grains.clone();
    let mut max_energy: f64 = 0.0;
    for _ in 0..20 {
        backend.step(500).unwrap();
        let g = backend.grains().unwrap();
        max_energy = max_energy.max(g.kinetic_energy() / g.len() as f64);
    }
    let end = backend.grains().unwrap();
    let moved = start
        .position
        .iter()
        .zip(&end.position)
        .map(|(a, b)| {
            ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
        })
        .fold(0.0, f64::max);
    // No explosion and no creep: over 10 s no grain moves by a tenth of a radius, and the
    // kinetic energy stays at the settling threshold's scale.
    assert!(moved < 0.1 * 0.002, "a grain moved {moved} m");
    assert!(
        max_energy < 1e-10,
        "kinetic energy per grain reached {max_energy} J"
    );
}

#[test]
fn preparing_a_bed_is_deterministic_and_independent_of_the_thread_count() {
    let scene = small_scene(0.5, 200, 7);
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut backend = CpuBackend::new();
            bed::prepare(&mut backend, &scene).unwrap().to_bytes()
        })
    };
    let one = run(2);
    assert_eq!(one, run(2), "two runs differ");
    assert_eq!(one, run(1), "one thread and two threads differ");
    // A different seed gives a different bed.
    let mut other = scene.clone();
    other.grains.seed = 8;
    let mut backend = CpuBackend::new();
    assert_ne!(one, bed::prepare(&mut backend, &other).unwrap().to_bytes());
}

#[test]
fn a_kinematic_body_pushes_grains_and_feels_their_reaction() {
    // A single grain resting on a kinematic plate that moves up: the grain rides along, and
    // the plate feels the grain's weight plus the force that accelerates it.
    let r = 0.003;
    let state = grains(&[[0.0, 0.0, 0.1 + r]], r, 1000.0);
    let plate = Body {
        geometry: BodyGeometry::Shape(Shape::Box {
            half_extents: [0.02, 0.02, 0.005],
        }),
        motion: Motion::Kinematic,
        mass: 1.0,
        friction: 0.5,
        state: BodyState {
            position: [0.0, 0.0, 0.095],
            velocity: [0.0; 3],
            external_force: [0.0; 3],
            ..BodyState::default()
        },
    };
    let mut backend = CpuBackend::new();
    backend
        .upload(&state, &wide_box(), &[plate], &params(0.5, [0.0, 0.0, -G]))
        .unwrap();
    backend.step(100).unwrap();
    let weight = G / state.inverse_mass[0];
    let f = backend.body_forces().unwrap()[0];
    assert!(
        (f.force[2] + weight).abs() < 1e-3 * weight,
        "{f:?} vs weight {weight}"
    );
    assert!(f.torque.iter().all(|t| t.abs() < 1e-12), "{f:?}");
}

/// A steep (60°) cone of 800 non-spinning grains on a jittered lattice (each layer shifted at
/// random, so no grain starts stacked on another) slumps on a rough floor for 0.8 s.
/// Returns the final slope angle in degrees: the slope of the surface profile (highest grain
/// top in radial bins one diameter wide) between 75 % and 25 % of the peak height.
fn angle_of_repose(friction: f64) -> f64 {
    let r: f64 = 0.002;
    let n = 800;
    let s = 2.2 * r;
    let mut rng = bed::Rng::new(5);
    let tan = 60f64.to_radians().tan();
    let mut position = Vec::new();
    let mut base = 0.0;
    while position.len() < n {
        base += s;
        position.clear();
        let m = (base / s) as i64 + 1;
        'fill: for k in 0.. {
            let z = r + k as f64 * s;
            let reach = base - (z - r) / tan;
            if reach < 0.0 {
                break;
            }
            let (ox, oy) = (s * rng.uniform(), s * rng.uniform());
            for i in -m..=m {
                for j in -m..=m {
                    let (x, y) = (i as f64 * s + ox, j as f64 * s + oy);
                    if (x * x + y * y).sqrt() <= reach {
                        position.push([x, y, z]);
                        if position.len() == n {
                            break 'fill;
                        }
                    }
                }
            }
        }
    }
    let mut backend = CpuBackend::new();
    let container = Container::Box {
        half_x: 0.2,
        half_y: 0.2,
    };
    let mut p = params(friction, [0.0, 0.0, -G]);
    p.stabilisation = 0.1;
    backend
        .upload(&grains(&position, r, 1000.0), &container, &[], &p)
        .unwrap();
    backend.step(800).unwrap();
    let g = backend.grains().unwrap();
    let width = 2.0 * r;
    pile::flank_angle(&pile::surface_profile(&g, width, 400.0 * width, 0.0), width)
}

/// The angle of repose grows with the friction coefficient, and for μ = 0.3 lies in the
/// 25–40° band reported for coarse spheres with sliding friction around 0.3 and resisted
/// rolling (Zhou, Xu, Yu & Zulli 2002, "An experimental and numerical study of the angle of
/// repose of coarse spheres", Powder Technology 125, 45–54: the angle rises with both the
/// sliding and the rolling friction coefficient). loam's grains do not spin, the limit of
/// strong rolling resistance, so its piles sit at the steep end of that band.
#[test]
fn the_angle_of_repose_grows_with_friction_and_sits_in_the_literature_range() {
    let angles: Vec<f64> = [0.1, 0.2, 0.3].map(angle_of_repose).to_vec();
    assert!(angles[0] < angles[1] && angles[1] < angles[2], "{angles:?}");
    assert!((25.0..=40.0).contains(&angles[2]), "μ = 0.3: {angles:?}");
}
