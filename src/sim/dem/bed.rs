//! Preparing a bed: pour the grains, let them settle, optionally loosen the top layer, and
//! make a checkpoint that replays and intrusions start from (its bytes here, written by
//! `output::dem`'s `Checkpoint::save`).
//!
//! Pouring is deterministic: radii and the lattice jitter come from a SplitMix64 stream
//! seeded by `grains.seed`, and the step is bit-for-bit repeatable, so the same scene gives
//! the same checkpoint bytes.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::backend::{Backend, ContactLaw, Container, GrainState};
use super::layout;
use super::scene::Scene;
use super::sdf::Vec3;
use super::DemError;

/// A settled bed, as written by `loam dem prepare`.
#[derive(Clone, Debug, PartialEq)]
pub struct Checkpoint {
    pub scene: Scene,
    pub grains: GrainState,
    pub info: BedInfo,
}

/// What preparing the bed found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BedInfo {
    /// Height of the free surface [m] (mean top of the highest grains over the central
    /// half of the container).
    pub surface_height: f64,
    /// Whether the kinetic-energy threshold was reached (false: `settle.max_time` ran out).
    pub settled: bool,
    /// Simulated settling time [s].
    pub settle_time: f64,
    /// Mean kinetic energy per grain when saved [J].
    pub kinetic_energy_per_grain: f64,
    /// Volume fraction of the bed below the surface.
    pub volume_fraction: f64,
}

/// The first bytes of every checkpoint file.
pub const MAGIC: &[u8; 8] = b"LOAMDEM\n";
/// The format version this build writes and reads.
pub const VERSION: u32 = 2;

/// SplitMix64: a tiny, well-mixed generator; enough for jitter and radii.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Scale of the random initial velocities of poured grains [m/s].
pub const POUR_SPEED: f64 = 0.3;

/// Grains placed on a jittered lattice in the container (or in the scene's fill regions),
/// with random velocities, ready to fall; then the rough floor's fixed grains, if any.
pub fn pour(scene: &Scene) -> GrainState {
    let mut grains = if scene.has_fills() {
        layout::pour_fills(scene)
    } else {
        pour_container(scene)
    };
    layout::append(&mut grains, layout::rough_floor_grains(scene));
    grains
}

/// A whole-container bed on a jittered lattice (the pouring of every shipped bed).
fn pour_container(scene: &Scene) -> GrainState {
    let spec = &scene.grains;
    let n = scene.grain_count();
    let mut rng = Rng::new(spec.seed);
    let radius: Vec<f64> = (0..n)
        .map(|_| spec.radius * (1.0 + spec.size_spread * (2.0 * rng.uniform() - 1.0)))
        .collect();
    let r_max = spec.radius * (1.0 + spec.size_spread);
    // Sites 1.5 diameters apart in a layer, jittered by up to ±0.2 diameters, and random initial
    // velocities: neighbours never start overlapping, and the columns collapse into a random
    // packing instead of stacking as a lattice.
    let spacing = 2.0 * r_max * 1.5;
    let jitter = 0.4 * r_max;
    // Layers 1.1 diameters apart (vertical jitter stays within the 0.1-diameter gap).
    let layer_spacing = 2.0 * r_max * 1.1;
    // Lattice sites of one layer inside the container, keeping clear of the walls.
    let (half_x, half_y) = match scene.container {
        Container::Cylinder { radius } => (radius, radius),
        Container::Box { half_x, half_y } => (half_x, half_y),
    };
    let clearance = r_max + jitter + 1e-3 * r_max;
    let nx = ((2.0 * (half_x - clearance)) / spacing).floor() as i64;
    let ny = ((2.0 * (half_y - clearance)) / spacing).floor() as i64;
    let mut position = Vec::with_capacity(n);
    let mut velocity = Vec::with_capacity(n);
    let (mut site, mut layer) = (0usize, 0usize);
    let mut xy = Vec::new();
    for ix in 0..=nx {
        for iy in 0..=ny {
            let x = -half_x + clearance + ix as f64 * spacing;
            let y = -half_y + clearance + iy as f64 * spacing;
            let inside = match scene.container {
                Container::Cylinder { radius } => (x * x + y * y).sqrt() <= radius - clearance,
                Container::Box { .. } => true,
            };
            if inside {
                xy.push([x, y]);
            }
        }
    }
    if xy.is_empty() {
        xy.push([0.0, 0.0]);
    }
    let sites = xy.len();
    for _ in 0..n {
        let [x, y] = xy[site];
        let z = r_max + jitter + layer as f64 * layer_spacing;
        position.push([
            x + jitter * (2.0 * rng.uniform() - 1.0),
            y + jitter * (2.0 * rng.uniform() - 1.0),
            z + 0.1 * r_max * rng.uniform(),
        ]);
        velocity.push([
            POUR_SPEED * (2.0 * rng.uniform() - 1.0),
            POUR_SPEED * (2.0 * rng.uniform() - 1.0),
            -POUR_SPEED * rng.uniform(),
        ]);
        site += 1;
        if site == sites {
            site = 0;
            layer += 1;
        }
    }
    let inverse_mass = radius
        .iter()
        .map(|r| 1.0 / (spec.density * 4.0 / 3.0 * std::f64::consts::PI * r.powi(3)))
        .collect();
    GrainState {
        velocity,
        position,
        radius,
        inverse_mass,
        angular_velocity: Vec::new(),
    }
}

/// Steps until the mean kinetic energy per grain is below the scene's threshold (checked
/// every 20 steps, after at least 0.05 s) or `max_time` runs out. Returns (settled, time).
pub fn settle(backend: &mut dyn Backend, scene: &Scene) -> Result<(bool, f64), DemError> {
    let dt = scene.time_step();
    let chunk = 20;
    let max_steps = (scene.settle.max_time / dt).ceil() as usize;
    let min_steps = (0.05 / dt).ceil() as usize;
    let mut steps = 0;
    while steps < max_steps {
        backend.step(chunk)?;
        steps += chunk;
        if steps >= min_steps {
            let grains = backend.grains()?;
            let mean = grains.kinetic_energy() / grains.len().max(1) as f64;
            if mean < scene.settle.kinetic_energy {
                return Ok((true, steps as f64 * dt));
            }
        }
    }
    Ok((false, steps as f64 * dt))
}

/// Pours, settles and (optionally) loosens a bed with `backend`.
pub fn prepare(backend: &mut dyn Backend, scene: &Scene) -> Result<Checkpoint, DemError> {
    scene
        .validate()
        .map_err(|(field, message)| DemError::Scene {
            file: "<scene>".into(),
            line: None,
            field: Some(field.into()),
            message,
        })?;
    let poured = pour(scene);
    let params = scene.step_params();
    // Walls stand while the bed settles (a checkpoint keeps the grains, not the walls).
    let walls = scene.wall_bodies();
    backend.upload(&poured, &scene.container, &walls, &params)?;
    let (mut settled, mut time) = settle(backend, scene)?;
    let mut grains = backend.grains()?;
    if scene.settle.loosen_depth > 0.0 {
        let surface = surface_height(&grains, &scene.container);
        let mut rng = Rng::new(scene.grains.seed.wrapping_add(1));
        for i in 0..grains.len() {
            let top = grains.position[i][2] + grains.radius[i];
            if top > surface - scene.settle.loosen_depth {
                grains.position[i][2] += 2.0 * grains.radius[i] * rng.uniform();
            }
            grains.velocity[i] = [0.0; 3];
        }
        backend.upload(&grains, &scene.container, &walls, &params)?;
        let (s, t) = settle(backend, scene)?;
        settled = s;
        time += t;
        grains = backend.grains()?;
    }
    let surface_height = surface_height(&grains, &scene.container);
    let volume: f64 = grains
        .radius
        .iter()
        .map(|r| 4.0 / 3.0 * std::f64::consts::PI * r.powi(3))
        .sum();
    let info = BedInfo {
        surface_height,
        settled,
        settle_time: time,
        kinetic_energy_per_grain: grains.kinetic_energy() / grains.len().max(1) as f64,
        volume_fraction: volume / (scene.container.area() * surface_height.max(f64::MIN_POSITIVE)),
    };
    check_sane(&grains, &info)?;
    Ok(Checkpoint {
        scene: scene.clone(),
        grains,
        info,
    })
}

/// A settled bed must be physical: every grain finite and above the container floor, a finite
/// kinetic energy, a free surface above the floor, a volume fraction in (0, 1) (no packing of
/// spheres fills space). Otherwise the bed exploded: `DemError::Unphysical`.
pub fn check_sane(grains: &GrainState, info: &BedInfo) -> Result<(), DemError> {
    let exploded = |why: String| {
        DemError::Unphysical(format!(
            "the bed exploded while settling: {why}; a smaller time_step or more \
             solver.iterations may hold it"
        ))
    };
    for (i, (x, r)) in grains.position.iter().zip(&grains.radius).enumerate() {
        if !x.iter().all(|c| c.is_finite()) {
            return Err(exploded(format!(
                "grain {i} is at a non-finite position {x:?}"
            )));
        }
        if x[2] < -r {
            return Err(exploded(format!(
                "grain {i} is at z = {:.4e} m, below the container floor (z = 0)",
                x[2]
            )));
        }
    }
    if !info.kinetic_energy_per_grain.is_finite() {
        return Err(exploded(format!(
            "the kinetic energy per grain is {}",
            info.kinetic_energy_per_grain
        )));
    }
    if !(info.surface_height > 0.0 && info.surface_height.is_finite()) {
        return Err(exploded(format!(
            "the free surface is at {} m",
            info.surface_height
        )));
    }
    if !(info.volume_fraction > 0.0 && info.volume_fraction < 1.0) {
        return Err(exploded(format!(
            "the volume fraction is {:.3e}, outside (0, 1)",
            info.volume_fraction
        )));
    }
    Ok(())
}

/// The free surface: the mean over the central half of the container (by radius) of the
/// highest grain top in each square column one mean diameter wide.
pub fn surface_height(grains: &GrainState, container: &Container) -> f64 {
    if grains.is_empty() {
        return 0.0;
    }
    let mean_radius = grains.radius.iter().sum::<f64>() / grains.len() as f64;
    let width = 2.0 * mean_radius;
    let (half_x, half_y) = match *container {
        Container::Cylinder { radius } => (radius, radius),
        Container::Box { half_x, half_y } => (half_x, half_y),
    };
    let central = |x: Vec3| match *container {
        Container::Cylinder { radius } => (x[0] * x[0] + x[1] * x[1]).sqrt() < 0.5 * radius,
        Container::Box { half_x, half_y } => x[0].abs() < 0.5 * half_x && x[1].abs() < 0.5 * half_y,
    };
    let nx = (2.0 * half_x / width).ceil() as usize + 1;
    let ny = (2.0 * half_y / width).ceil() as usize + 1;
    let mut top = vec![f64::NEG_INFINITY; nx * ny];
    for (x, r) in grains.position.iter().zip(&grains.radius) {
        if !central(*x) {
            continue;
        }
        let i = (((x[0] + half_x) / width).floor().max(0.0) as usize).min(nx - 1);
        let j = (((x[1] + half_y) / width).floor().max(0.0) as usize).min(ny - 1);
        top[i * ny + j] = top[i * ny + j].max(x[2] + r);
    }
    let tops: Vec<f64> = top.into_iter().filter(|t| t.is_finite()).collect();
    if tops.is_empty() {
        return grains
            .position
            .iter()
            .zip(&grains.radius)
            .map(|(x, r)| x[2] + r)
            .fold(0.0, f64::max);
    }
    tops.iter().sum::<f64>() / tops.len() as f64
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Header {
    scene: Scene,
    info: BedInfo,
    grains: usize,
}

impl Checkpoint {
    /// The file's bytes: MAGIC, version (u32 LE), header length (u64 LE), the JSON header
    /// (scene and bed info), the grain count (u64 LE), then positions, velocities (3 f64
    /// each), radii, inverse masses and angular velocities (3 f64 each) as little-endian f64,
    /// so the state is bit-exact. Version 1 had no angular velocities and only the
    /// projected-Jacobi law; it is still read (grains at rest, law projected_jacobi).
    pub fn to_bytes(&self) -> Vec<u8> {
        let header = Header {
            scene: self.scene.clone(),
            info: self.info.clone(),
            grains: self.grains.len(),
        };
        // Scene and info hold only plain numbers and strings: serialising cannot fail.
        let json = serde_json::to_vec(&header).unwrap_or_default();
        let n = self.grains.len();
        let mut out = Vec::with_capacity(32 + json.len() + n * 8 * 8);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&(json.len() as u64).to_le_bytes());
        out.extend_from_slice(&json);
        out.extend_from_slice(&(n as u64).to_le_bytes());
        for v in self.grains.position.iter().chain(&self.grains.velocity) {
            for x in v {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
        for x in self.grains.radius.iter().chain(&self.grains.inverse_mass) {
            out.extend_from_slice(&x.to_le_bytes());
        }
        for i in 0..n {
            let w = self
                .grains
                .angular_velocity
                .get(i)
                .copied()
                .unwrap_or([0.0; 3]);
            for x in w {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
        out
    }

    /// The same bed with grain `grain` moved by one rounding step (one ulp, towards +x).
    ///
    /// A bed is a chaotic system: a replay's rounding (another backend, another order of a
    /// sum) grows until the grains under a foot are another realisation. Replaying a plan on
    /// beds nudged at different grains samples that spread, the part of a DEM verdict that
    /// is not the bed's material but its one realisation.
    pub fn nudged(&self, grain: usize) -> Result<Checkpoint, DemError> {
        let count = self.grains.len();
        if grain >= count {
            return Err(DemError::Invalid(format!(
                "grain {grain} does not exist: the bed has {count} grains (0 to {})",
                count.saturating_sub(1)
            )));
        }
        let mut out = self.clone();
        let x = &mut out.grains.position[grain][0];
        *x = x.next_up();
        Ok(out)
    }

    /// Reads a checkpoint; a missing, foreign, truncated or newer file is a clear error.
    pub fn load(path: &Path) -> Result<Checkpoint, DemError> {
        let bytes = std::fs::read(path).map_err(|e| DemError::Checkpoint {
            path: path.to_path_buf(),
            reason: format!("cannot read the bed checkpoint: {e}"),
        })?;
        Checkpoint::from_bytes(&bytes).map_err(|reason| DemError::Checkpoint {
            path: path.to_path_buf(),
            reason,
        })
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Checkpoint, String> {
        if bytes.len() < 8 || &bytes[..8] != MAGIC {
            return Err(
                "not a loam bed checkpoint (make one with `loam dem prepare BED.yaml`)".into(),
            );
        }
        let mut at = 8;
        let mut take = |len: usize| -> Result<&[u8], String> {
            let slice = bytes
                .get(at..at + len)
                .ok_or_else(|| "the checkpoint is truncated".to_string())?;
            at += len;
            Ok(slice)
        };
        let version = u32::from_le_bytes(take(4)?.try_into().unwrap_or_default());
        if version != VERSION && version != 1 {
            return Err(format!(
                "checkpoint format version {version}; this loam reads version {VERSION}"
            ));
        }
        let len = u64::from_le_bytes(take(8)?.try_into().unwrap_or_default()) as usize;
        let mut header: Header = serde_json::from_slice(take(len)?)
            .map_err(|e| format!("damaged checkpoint header: {e}"))?;
        let n = u64::from_le_bytes(take(8)?.try_into().unwrap_or_default()) as usize;
        if n != header.grains {
            return Err(format!(
                "damaged checkpoint: header says {} grains, body {n}",
                header.grains
            ));
        }
        if version == 1 {
            header.scene.contact = ContactLaw::ProjectedJacobi;
        }
        let per_grain = if version == 1 { 64 } else { 88 };
        let data = take(
            n.checked_mul(per_grain)
                .ok_or("damaged checkpoint: grain count")?,
        )?;
        let f = |k: usize| f64::from_le_bytes(data[8 * k..8 * k + 8].try_into().unwrap_or([0; 8]));
        let vec3 =
            |base: usize, i: usize| [f(base + 3 * i), f(base + 3 * i + 1), f(base + 3 * i + 2)];
        let grains = GrainState {
            position: (0..n).map(|i| vec3(0, i)).collect(),
            velocity: (0..n).map(|i| vec3(3 * n, i)).collect(),
            radius: (0..n).map(|i| f(6 * n + i)).collect(),
            inverse_mass: (0..n).map(|i| f(7 * n + i)).collect(),
            angular_velocity: if version == 1 {
                Vec::new()
            } else {
                (0..n).map(|i| vec3(8 * n, i)).collect()
            },
        };
        grains
            .check()
            .map_err(|e| format!("damaged checkpoint: {e}"))?;
        if at != bytes.len() {
            return Err(format!(
                "damaged checkpoint: {} unexpected bytes at the end",
                bytes.len() - at
            ));
        }
        Ok(Checkpoint {
            scene: header.scene,
            grains,
            info: header.info,
        })
    }
}
