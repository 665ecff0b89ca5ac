//! The benchmark scene of `loam bench dem` and its measurement (printing is the CLI's).

use std::time::Instant;

use super::backend::{Backend, Container, GrainState, StepParams, Timings};
use super::DemError;

/// The benchmark grains' radius [m].
pub const RADIUS: f64 = 0.002;

/// One benchmark measurement.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BenchRow {
    pub grains: usize,
    /// Median over the repeats.
    pub particle_steps_per_second: f64,
    /// Simulated seconds per wall-clock second.
    pub real_time_factor: f64,
    pub milliseconds_per_step: f64,
    /// Contacts per grain (each contact counted once).
    pub contacts_per_grain: f64,
    /// Broadphase, narrowphase, solver, integrate: fractions of the step time.
    pub fractions: [f64; 4],
}

/// The benchmark scene: `count` grains of radius 2 mm at rest in a face-centred cubic
/// packing inside a cylinder whose column is about four diameters tall, GranularGym's
/// "grains at rest in a tall column" at Δt = 1 ms.
pub fn column(count: usize) -> (GrainState, Container) {
    let r: f64 = RADIUS;
    let d = 2.0 * r * 1.0005;
    let volume = count as f64 * 4.0 / 3.0 * std::f64::consts::PI * r.powi(3) / 0.74;
    let radius = (volume / (8.0 * std::f64::consts::PI)).cbrt().max(3.0 * d);
    let a = d / std::f64::consts::SQRT_2; // FCC: points of the cubic grid a·(i, j, k), i + j + k even
    let reach = radius - r * 1.01;
    let n = (reach / a).floor() as i64;
    let mut layer = Vec::new();
    for i in -n..=n {
        for j in -n..=n {
            let (x, y) = (i as f64 * a, j as f64 * a);
            if (x * x + y * y).sqrt() <= reach {
                layer.push((i, j));
            }
        }
    }
    let mut position = Vec::with_capacity(count);
    let mut k = 0i64;
    'fill: loop {
        for &(i, j) in &layer {
            if (i + j + k).rem_euclid(2) == 0 {
                position.push([i as f64 * a, j as f64 * a, r * 1.0005 + k as f64 * a]);
                if position.len() == count {
                    break 'fill;
                }
            }
        }
        k += 1;
    }
    let mass = 1000.0 * 4.0 / 3.0 * std::f64::consts::PI * r.powi(3);
    (
        GrainState {
            velocity: vec![[0.0; 3]; count],
            radius: vec![r; count],
            inverse_mass: vec![1.0 / mass; count],
            position,
            angular_velocity: Vec::new(),
        },
        Container::Cylinder { radius },
    )
}

/// The measurement on any backend: `backend` steps `scenes` copies of the bed together (the
/// CUDA backend's many scenes per launch; 1 on the CPU), and a particle-step counts every
/// copy's grains. A step returns when its work is done (the CUDA step reads the largest
/// displacement back), so the wall clock times the device's work.
pub fn measure_on(
    backend: &mut dyn Backend,
    scenes: usize,
    grains: &GrainState,
    container: &Container,
    steps: usize,
    repeat: usize,
    params: &StepParams,
) -> Result<BenchRow, DemError> {
    let size = grains.len() * scenes.max(1);
    backend.upload(grains, container, &[], params)?;
    backend.step(10)?;
    let mut rates = Vec::new();
    let mut total = Timings::default();
    for _ in 0..repeat.max(1) {
        backend.reset_timings();
        let start = Instant::now();
        backend.step(steps)?;
        let wall = start.elapsed().as_secs_f64();
        rates.push((size * steps) as f64 / wall);
        let t = backend.timings();
        total.broadphase += t.broadphase;
        total.narrowphase += t.narrowphase;
        total.solver += t.solver;
        total.integrate += t.integrate;
        total.steps += t.steps;
        total.contacts += t.contacts;
    }
    rates.sort_by(f64::total_cmp);
    let rate = rates[rates.len() / 2];
    let sum = (total.broadphase + total.narrowphase + total.solver + total.integrate).max(1e-300);
    Ok(BenchRow {
        grains: size,
        particle_steps_per_second: rate,
        real_time_factor: rate / size as f64 * params.time_step,
        milliseconds_per_step: size as f64 / rate * 1e3,
        contacts_per_grain: total.contacts as f64 / total.steps.max(1) as f64 / size as f64,
        fractions: [
            total.broadphase / sum,
            total.narrowphase / sum,
            total.solver / sum,
            total.integrate / sum,
        ],
    })
}
