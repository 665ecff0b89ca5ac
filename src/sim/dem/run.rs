//! Running a general scene for a time (`loam dem run`): pour its grains, settle them with
//! every wall in place, call that t = 0, then step for the requested time, removing each
//! gate at its time, and measure what the grains did.
//!
//! The measurements (what `summary.json` holds; see docs/DEM.md):
//! - the kinetic energy of the moving grains at the end, and the extents of the grains at
//!   t = 0 and at the end;
//! - for a column collapse (a scene with one fill and one removed x-wall, a gate), the
//!   column's length L0 (the gate's distance from the container's back wall), its settled
//!   height H0 above the floor, the aspect ratio a = H0/L0, and the runout ΔL = L∞ − L0.
//!
//! L∞ is the deposit's front measured from the back wall: grains are sorted along the flow
//! and the deposit ends at the first gap between neighbouring centres wider than two mean
//! diameters, so that grains that rolled off alone do not count (they are reported apart,
//! `escaped`, with the farthest grain's position). H0 is the mean, over one-diameter-wide
//! bins along the column, of the highest grain top in the bin, above the floor's top (the
//! rough floor's grain tops at 2 r, or z = 0).

use serde::{Deserialize, Serialize};

use super::backend::{Backend, GrainState};
use super::bed;
use super::layout::{Axis, Side};
use super::scene::Scene;
use super::sdf::Vec3;
use super::DemError;

/// How long to run and how often to take a snapshot.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunSettings {
    /// Simulated time after settling [s].
    pub duration: f64,
    /// Snapshot interval [s]: t = 0, every interval, and the end.
    pub snapshot_every: f64,
}

/// What a scene run measured (`summary.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// The material the scene named, if any.
    pub material: Option<String>,
    /// Grains that move (the rough floor's fixed grains are not counted).
    pub grains: usize,
    /// The rough floor's fixed grains.
    pub fixed_grains: usize,
    /// Δt [s] and the steps taken after settling.
    pub time_step: f64,
    pub steps: usize,
    /// Simulated time after settling [s].
    pub time: f64,
    /// Whether settling reached the scene's kinetic-energy threshold, and its simulated time.
    pub settled: bool,
    pub settle_time: f64,
    /// Σ ½ m v² of the moving grains at the end [J], and per grain.
    pub kinetic_energy: f64,
    pub kinetic_energy_per_grain: f64,
    /// Bounding box of the moving grains' centres at t = 0 and at the end [m].
    pub extents_start: Extents,
    pub extents_end: Extents,
    /// The column-collapse measurements, for a scene with one fill and one x gate.
    pub collapse: Option<Collapse>,
}

/// An axis-aligned box: lowest and highest coordinates [m].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Extents {
    pub min: Vec3,
    pub max: Vec3,
}

/// A column collapse's geometry and runout (see the module docs for each definition).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Collapse {
    /// x of the back wall and of the gate [m]; +1 when the column flows towards +x.
    pub back: f64,
    pub gate: f64,
    pub direction: f64,
    /// Column length and settled height [m], a = H0/L0.
    pub initial_length: f64,
    pub initial_height: f64,
    pub aspect_ratio: f64,
    /// The floor's top, from which heights are measured [m].
    pub floor: f64,
    /// L∞: the deposit's front from the back wall [m]; ΔL = L∞ − L0 and ΔL/L0.
    pub final_length: f64,
    pub runout: f64,
    pub runout_ratio: f64,
    /// The deposit's height at the end: its highest grain top above the floor [m].
    pub final_height: f64,
    /// Grains beyond the deposit's front at the end, and the farthest one's distance from
    /// the back wall (its leading edge) [m].
    pub escaped: usize,
    pub farthest: f64,
}

/// The grains of a prepared scene at t = 0 and the settling's outcome.
pub struct Prepared {
    pub grains: GrainState,
    pub settled: bool,
    pub settle_time: f64,
}

/// Pours the scene's grains and settles them with every wall in place; leaves `backend`
/// holding the settled bed (walls included) at t = 0.
pub fn prepare(backend: &mut dyn Backend, scene: &Scene) -> Result<Prepared, DemError> {
    let poured = bed::pour(scene);
    backend.upload(
        &poured,
        &scene.container,
        &scene.wall_bodies(),
        &scene.step_params(),
    )?;
    let dt = scene.time_step();
    let (chunk, max_steps) = (20, (scene.settle.max_time / dt).ceil() as usize);
    let min_steps = (0.05 / dt).ceil() as usize;
    let mut steps = 0;
    let mut settled = false;
    while steps < max_steps {
        backend.step(chunk)?;
        steps += chunk;
        if steps >= min_steps {
            let grains = backend.grains()?;
            let moving = grains.inverse_mass.iter().filter(|w| **w > 0.0).count();
            let mean = grains.kinetic_energy() / moving.max(1) as f64;
            if mean < scene.settle.kinetic_energy {
                settled = true;
                break;
            }
        }
    }
    let grains = backend.grains()?;
    // A scene is not a bed (no surface or packing to check): only that it did not explode.
    for (i, (x, r)) in grains.position.iter().zip(&grains.radius).enumerate() {
        if !x.iter().all(|c| c.is_finite()) || x[2] < -r {
            return Err(DemError::Unphysical(format!(
                "the scene exploded while settling: grain {i} is at {x:?}; a smaller \
                 time_step may hold it"
            )));
        }
    }
    Ok(Prepared {
        grains,
        settled,
        settle_time: steps as f64 * dt,
    })
}

/// Runs a prepared scene (`backend` as [`prepare`] left it) for `settings.duration`,
/// removing each gate at its time; `snapshot(t, grains)` is called at t = 0, every
/// `snapshot_every` and at the end.
pub fn run(
    backend: &mut dyn Backend,
    scene: &Scene,
    prepared: &Prepared,
    settings: RunSettings,
    snapshot: &mut dyn FnMut(f64, &GrainState) -> Result<(), DemError>,
) -> Result<RunSummary, DemError> {
    let dt = scene.time_step();
    let total = (settings.duration / dt).round() as usize;
    let every = ((settings.snapshot_every / dt).round() as usize).max(1);
    let bodies = scene.wall_bodies();
    let removal: Vec<Option<usize>> = scene
        .walls
        .iter()
        .map(|w| w.remove_at.map(|t| (t / dt).round() as usize))
        .collect();
    let mut removed = vec![false; bodies.len()];
    snapshot(0.0, &prepared.grains)?;
    let mut steps = 0;
    loop {
        for (k, at) in removal.iter().enumerate() {
            if !removed[k] && at.is_some_and(|s| s <= steps) {
                backend.set_body(k, scene.removed_wall_state(&bodies[k]))?;
                removed[k] = true;
            }
        }
        if steps >= total {
            break;
        }
        let next_snapshot = (steps / every + 1) * every;
        let next_removal = removal
            .iter()
            .zip(&removed)
            .filter_map(|(at, done)| at.filter(|s| !done && *s > steps))
            .min()
            .unwrap_or(usize::MAX);
        let next = next_snapshot.min(next_removal).min(total);
        backend.step(next - steps)?;
        steps = next;
        if steps % every == 0 || steps == total {
            let grains = backend.grains()?;
            if grains
                .position
                .iter()
                .any(|x| !x.iter().all(|c| c.is_finite()))
            {
                return Err(DemError::Unphysical(format!(
                    "a grain left physics (a non-finite position) at t = {:.4} s; a smaller \
                     time_step may hold it",
                    steps as f64 * dt
                )));
            }
            snapshot(steps as f64 * dt, &grains)?;
        }
    }
    let end = backend.grains()?;
    Ok(summarise(
        scene,
        &prepared.grains,
        &end,
        prepared,
        dt,
        steps,
    ))
}

fn moving(grains: &GrainState) -> impl Iterator<Item = usize> + '_ {
    (0..grains.len()).filter(|&i| grains.inverse_mass[i] > 0.0)
}

fn extents(grains: &GrainState) -> Extents {
    let mut e = Extents {
        min: [f64::INFINITY; 3],
        max: [f64::NEG_INFINITY; 3],
    };
    for i in moving(grains) {
        for k in 0..3 {
            e.min[k] = e.min[k].min(grains.position[i][k]);
            e.max[k] = e.max[k].max(grains.position[i][k]);
        }
    }
    e
}

fn summarise(
    scene: &Scene,
    start: &GrainState,
    end: &GrainState,
    prepared: &Prepared,
    dt: f64,
    steps: usize,
) -> RunSummary {
    let count = moving(end).count();
    let kinetic_energy = end.kinetic_energy();
    RunSummary {
        material: scene.material.clone(),
        grains: count,
        fixed_grains: end.len() - count,
        time_step: dt,
        steps,
        time: steps as f64 * dt,
        settled: prepared.settled,
        settle_time: prepared.settle_time,
        kinetic_energy,
        kinetic_energy_per_grain: kinetic_energy / count.max(1) as f64,
        extents_start: extents(start),
        extents_end: extents(end),
        collapse: collapse(scene, start, end),
    }
}

/// The column-collapse measurements, when the scene is one: one fill and one x wall that
/// is removed (see the module docs).
pub fn collapse(scene: &Scene, start: &GrainState, end: &GrainState) -> Option<Collapse> {
    if scene.fills.len() != 1 {
        return None;
    }
    let mut gates = scene
        .walls
        .iter()
        .filter(|w| w.axis == Axis::X && w.remove_at.is_some());
    let gate = gates.next()?;
    if gates.next().is_some() {
        return None;
    }
    let [half_x, _] = scene.container.half_extents();
    let direction = match gate.grains {
        Side::Below => 1.0,
        Side::Above => -1.0,
    };
    let back = -direction * half_x;
    let floor = scene.floor_top();
    let initial_length = (gate.at - back) * direction;
    let mean_radius = scene.grains.radius;
    let along = |g: &GrainState, i: usize| (g.position[i][0] - back) * direction;
    let initial_height = top_height(start, mean_radius, &along, [0.0, initial_length]) - floor;
    // The deposit: grains sorted along the flow, cut at the first gap wider than 2 d.
    let mut order: Vec<usize> = moving(end).collect();
    order.sort_by(|&a, &b| along(end, a).total_cmp(&along(end, b)));
    let gap = 4.0 * mean_radius;
    let mut last = 0;
    for k in 1..order.len() {
        if along(end, order[k]) - along(end, order[k - 1]) > gap {
            break;
        }
        last = k;
    }
    let edge = |i: usize| along(end, i) + end.radius[i];
    let final_length = order.get(last).map_or(0.0, |&i| edge(i));
    let farthest = order.iter().map(|&i| edge(i)).fold(0.0, f64::max);
    let final_height = order[..order.len().min(last + 1)]
        .iter()
        .map(|&i| end.position[i][2] + end.radius[i])
        .fold(floor, f64::max)
        - floor;
    let runout = final_length - initial_length;
    Some(Collapse {
        back,
        gate: gate.at,
        direction,
        initial_length,
        initial_height,
        aspect_ratio: initial_height / initial_length,
        floor,
        final_length,
        runout,
        runout_ratio: runout / initial_length,
        final_height,
        escaped: order.len().saturating_sub(last + 1),
        farthest,
    })
}

/// The mean over one-diameter bins of `range` (distance along the flow) of the highest
/// grain top in each bin (bins with no grain left out): a column's height.
fn top_height(
    grains: &GrainState,
    mean_radius: f64,
    along: &dyn Fn(&GrainState, usize) -> f64,
    range: [f64; 2],
) -> f64 {
    let width = 2.0 * mean_radius;
    let bins = (((range[1] - range[0]) / width).ceil() as usize).max(1);
    let mut top = vec![f64::NEG_INFINITY; bins];
    for i in moving(grains) {
        let s = along(grains, i);
        if s < range[0] || s > range[1] {
            continue;
        }
        let b = (((s - range[0]) / width) as usize).min(bins - 1);
        top[b] = top[b].max(grains.position[i][2] + grains.radius[i]);
    }
    let tops: Vec<f64> = top.into_iter().filter(|t| t.is_finite()).collect();
    if tops.is_empty() {
        return 0.0;
    }
    tops.iter().sum::<f64>() / tops.len() as f64
}
