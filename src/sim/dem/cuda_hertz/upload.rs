//! [`HertzDeviceBed`]'s upload: device arrays, grains, bodies, parameters and a body's state.

use std::sync::Arc;

use cudarc::driver::CudaStream;

use super::{
    HertzDeviceBed, HmParams, PairBuffers, HERTZ_KERNEL_NAMES, HM_BODY_FIELDS, HM_CONTACT_FIELDS,
    HM_GRAIN_FIELDS, HM_PAIR_FIELDS, MOTION_DYNAMIC, MOTION_KINEMATIC, MOTION_ROTATING, SHAPE_BOX,
    SHAPE_CYLINDER, SHAPE_DISC, SHAPE_GRID, SHAPE_PLANE,
};
use crate::sim::dem::backend::{Body, BodyGeometry, BodyState, ContactLaw, Container};
use crate::sim::dem::backend::{GrainState, Motion, StepParams};
use crate::sim::dem::cpu::bounding_radius;
use crate::sim::dem::cuda::{Arenas, CudaError, DeviceInfo, Kernels, Sizes};
use crate::sim::dem::hertz::SKIN;
use crate::sim::dem::law::LawConstants;
use crate::sim::dem::sdf::{Shape, Vec3};
use crate::sim::dem::DemError;

impl PairBuffers {
    pub(super) fn new(stream: &Arc<CudaStream>, capacity: usize) -> Result<Self, CudaError> {
        Ok(Self {
            arenas: Arenas::new(
                stream,
                HM_PAIR_FIELDS,
                Sizes {
                    items: capacity,
                    ..Sizes::default()
                },
            )?,
            capacity,
        })
    }
}

/// A body's surface as the kernels see it: shape code, the three size numbers, and for a
/// sampled field its grid.
fn device_shape(
    k: usize,
    body: &Body,
) -> Result<(i32, Vec3, Option<&crate::sim::dem::mesh::GridSdf>), DemError> {
    Ok(match &body.geometry {
        BodyGeometry::Shape(Shape::Plane) => (SHAPE_PLANE, [0.0; 3], None),
        BodyGeometry::Shape(Shape::Box { half_extents }) => (SHAPE_BOX, *half_extents, None),
        BodyGeometry::Shape(Shape::Cylinder {
            radius,
            half_height,
        }) => (SHAPE_CYLINDER, [*radius, *half_height, 0.0], None),
        BodyGeometry::Shape(Shape::Disc { radius, thickness }) => {
            (SHAPE_DISC, [*radius, 0.5 * thickness, 0.0], None)
        }
        BodyGeometry::Field(field) => match field.grid() {
            Some(grid) => (SHAPE_GRID, [0.0; 3], Some(grid)),
            None => {
                return Err(DemError::Invalid(format!(
                    "body {k}: the CUDA backend takes analytic shapes and sampled fields (a \
                     mesh's GridSdf); this body's signed distance field is neither (use \
                     --backend dem-cpu)"
                )))
            }
        },
    })
}

/// One bed's per-grain columns as the kernels' fields hold them. The CPU's upload: m = 1/w
/// (0 for a pinned grain), 1/I = w / (0.4 r²); the predicted velocities start as the
/// velocities.
fn grain_columns(grains: &GrainState) -> Vec<(&'static str, Vec<f64>)> {
    let n = grains.len();
    let spin = if grains.angular_velocity.is_empty() {
        vec![[0.0; 3]; n]
    } else {
        grains.angular_velocity.clone()
    };
    let mass: Vec<f64> = grains
        .inverse_mass
        .iter()
        .map(|w| if *w > 0.0 { 1.0 / w } else { 0.0 })
        .collect();
    let inverse_inertia: Vec<f64> = grains
        .inverse_mass
        .iter()
        .zip(&grains.radius)
        .map(|(w, r)| w / (0.4 * r * r))
        .collect();
    let column = |v: &[Vec3], i: usize| v.iter().map(|x| x[i]).collect::<Vec<f64>>();
    let mut columns = Vec::new();
    for (names, values) in [
        (["x", "y", "z"], &grains.position),
        (["vx", "vy", "vz"], &grains.velocity),
        (["pvx", "pvy", "pvz"], &grains.velocity),
        (["wx", "wy", "wz"], &spin),
        (["pwx", "pwy", "pwz"], &spin),
    ] {
        for (i, name) in names.into_iter().enumerate() {
            columns.push((name, column(values, i)));
        }
    }
    columns.push(("radius", grains.radius.clone()));
    columns.push(("inv_mass", grains.inverse_mass.clone()));
    columns.push(("mass", mass));
    columns.push(("inv_inertia", inverse_inertia));
    columns
}

impl HertzDeviceBed {
    /// Probes the machine, compiles (or reuses) the kernels for its GPU and uploads `scenes`
    /// copies of the bed; then, as the CPU's upload, builds the neighbour list and computes
    /// the starting forces.
    pub fn new(
        grains: &GrainState,
        container: &Container,
        bodies: &[Body],
        params: &StepParams,
        scenes: usize,
    ) -> Result<Self, DemError> {
        Self::with_scenes(&[grains], container, bodies, params, scenes)
    }

    /// As [`HertzDeviceBed::new`], with scene s's grains `beds[s]` (one bed per scene) or
    /// `beds[0]` in every scene (one bed given): realisations of one bed (nudged copies) step
    /// together. Every bed has the same number of grains.
    pub fn with_scenes(
        beds: &[&GrainState],
        container: &Container,
        bodies: &[Body],
        params: &StepParams,
        scenes: usize,
    ) -> Result<Self, DemError> {
        let scenes = scenes.max(1);
        let Some(grains) = beds.first().copied() else {
            return Err(DemError::Invalid("no bed to upload".into()));
        };
        if beds.len() != 1 && beds.len() != scenes {
            return Err(DemError::Invalid(format!(
                "{} beds for {scenes} scenes: give one bed (copied into every scene) or one per scene",
                beds.len()
            )));
        }
        if let Some(other) = beds.iter().find(|b| b.len() != grains.len()) {
            return Err(DemError::Invalid(format!(
                "the scenes' beds differ in size ({} and {} grains); scenes step one grain count",
                grains.len(),
                other.len()
            )));
        }
        let n = grains.len();
        let Some(total) = n.checked_mul(scenes).filter(|t| *t < i32::MAX as usize / 2) else {
            return Err(CudaError::Setup(format!(
                "{n} grains × {scenes} scenes exceeds the 2^30 grains the kernels index"
            ))
            .into());
        };
        let (info, stream, kernels) = Kernels::load(&HERTZ_KERNEL_NAMES)?;
        let shapes = bodies
            .iter()
            .enumerate()
            .map(|(k, b)| device_shape(k, b))
            .collect::<Result<Vec<_>, _>>()?;
        let grid_values: usize = shapes
            .iter()
            .filter_map(|s| s.2.map(|g| g.values().len()))
            .sum();
        let body_count = bodies.len() * scenes;
        let hash_table_size = (2 * total).max(64).next_power_of_two();
        let mut bed = Self {
            grains: Arenas::new(
                &stream,
                HM_GRAIN_FIELDS,
                Sizes {
                    items: total,
                    hash_table: hash_table_size,
                    other: 0,
                },
            )?,
            bodies: Arenas::new(
                &stream,
                HM_BODY_FIELDS,
                Sizes {
                    items: body_count,
                    hash_table: 0,
                    other: grid_values,
                },
            )?,
            contacts: Arenas::new(
                &stream,
                HM_CONTACT_FIELDS,
                Sizes {
                    items: body_count * n,
                    ..Sizes::default()
                },
            )?,
            list: PairBuffers::new(&stream, 0)?,
            old: PairBuffers::new(&stream, 0)?,
            stream,
            kernels,
            info,
            params: HmParams::default(),
            law: None,
            grains_per_scene: n,
            bodies_per_scene: bodies.len(),
            scenes,
            builds: 0,
        };
        // The CPU's choice: an empty bed still has a cell size.
        let mut max_radius = beds
            .iter()
            .flat_map(|g| g.radius.iter().copied())
            .fold(0.0, f64::max);
        if max_radius == 0.0 {
            max_radius = 1.0;
        }
        let skin = SKIN * max_radius;
        let (container_kind, a, b) = match *container {
            Container::Cylinder { radius } => (0, radius, 0.0),
            Container::Box { half_x, half_y } => (1, half_x, half_y),
        };
        bed.params = HmParams {
            grains_per_scene: n as i64,
            scenes: scenes as i64,
            bodies_per_scene: bodies.len() as i64,
            hash_table_size: hash_table_size as i64,
            container: container_kind,
            walls: container.wall_count() as i64,
            container_a: a,
            container_b: b,
            cell: 2.0 * max_radius + skin,
            skin,
            ..HmParams::default()
        };
        bed.set_params(params)?;
        bed.upload_grains(beds)?;
        bed.upload_bodies(bodies, &shapes)?;
        bed.build()?;
        bed.forces(false)?;
        Ok(bed)
    }

    /// What the probe found about the device in use.
    pub fn device(&self) -> &DeviceInfo {
        &self.info
    }

    pub fn scenes(&self) -> usize {
        self.scenes
    }

    /// Neighbour-list builds since upload.
    pub fn builds(&self) -> usize {
        self.builds
    }

    pub(super) fn grain_field(name: &str) -> usize {
        Arenas::index(HM_GRAIN_FIELDS, name)
    }

    pub(super) fn body_field(name: &str) -> usize {
        Arenas::index(HM_BODY_FIELDS, name)
    }

    /// Writes the grains of every scene: scene s gets `beds[s]`, or `beds[0]` when one bed
    /// is given (the columns are scene-major: scene s's grain i at s × N + i).
    fn upload_grains(&mut self, beds: &[&GrainState]) -> Result<(), CudaError> {
        let mut columns: Vec<(&str, Vec<f64>)> = Vec::new();
        for scene in 0..self.scenes {
            let scene_columns = grain_columns(beds[scene % beds.len()]);
            if columns.is_empty() {
                columns = scene_columns
                    .into_iter()
                    .map(|(name, mut c)| {
                        c.reserve(c.len() * (self.scenes - 1));
                        (name, c)
                    })
                    .collect();
            } else {
                for ((_, all), (_, c)) in columns.iter_mut().zip(scene_columns) {
                    all.extend(c);
                }
            }
        }
        for (name, column) in &columns {
            self.grains
                .write_real(&self.stream, Self::grain_field(name), column)?;
        }
        Ok(())
    }

    /// Sets every body's external force (body index order, as [`Self::set_body`]), one copy
    /// per field: a robot coupling that drives one foot per scene writes all scenes at once.
    pub fn set_external_forces(&mut self, forces: &[Vec3]) -> Result<(), CudaError> {
        let count = self.bodies_per_scene * self.scenes;
        if forces.len() != count {
            return Err(CudaError::Setup(format!(
                "{} external forces for {count} bodies (bodies per scene × scenes)",
                forces.len()
            )));
        }
        for (axis, name) in ["efx", "efy", "efz"].into_iter().enumerate() {
            let column: Vec<f64> = forces.iter().map(|f| f[axis]).collect();
            self.bodies
                .write_real(&self.stream, Self::body_field(name), &column)?;
        }
        Ok(())
    }

    /// Sets every body's state (one per body, scene-major, as `set_body` sets one), each
    /// field of all bodies in one transfer: what a coupling of kinematic feet writes each
    /// step, in 19 copies whatever the number of scenes.
    pub fn set_bodies(&mut self, states: &[BodyState]) -> Result<(), CudaError> {
        let count = self.bodies_per_scene * self.scenes;
        if states.len() != count {
            return Err(CudaError::Setup(format!(
                "{} body states for {count} bodies (bodies per scene × scenes)",
                states.len()
            )));
        }
        if count == 0 {
            return Ok(());
        }
        type Field = fn(&BodyState) -> Vec3;
        let vectors: [([&str; 3], Field); 5] = [
            (["px", "py", "pz"], |s| s.position),
            (["vx", "vy", "vz"], |s| s.velocity),
            (["efx", "efy", "efz"], |s| s.external_force),
            (["ox", "oy", "oz"], |s| s.angular_velocity),
            (["etx", "ety", "etz"], |s| s.external_torque),
        ];
        for (names, field) in vectors {
            for (axis, name) in names.into_iter().enumerate() {
                let column: Vec<f64> = states.iter().map(|s| field(s)[axis]).collect();
                self.bodies
                    .write_real(&self.stream, Self::body_field(name), &column)?;
            }
        }
        for (axis, name) in ["qw", "qx", "qy", "qz"].into_iter().enumerate() {
            let column: Vec<f64> = states.iter().map(|s| s.orientation[axis]).collect();
            self.bodies
                .write_real(&self.stream, Self::body_field(name), &column)?;
        }
        Ok(())
    }

    fn upload_bodies(
        &mut self,
        bodies: &[Body],
        shapes: &[(i32, Vec3, Option<&crate::sim::dem::mesh::GridSdf>)],
    ) -> Result<(), CudaError> {
        if bodies.is_empty() {
            return Ok(());
        }
        let mut ints: [(&str, Vec<i32>); 3] = [
            ("motion", Vec::new()),
            ("shape", Vec::new()),
            ("grid_dims", Vec::new()),
        ];
        let mut reals: [(&str, Vec<f64>); 7] = [
            ("size", Vec::new()),
            ("mass", Vec::new()),
            ("inertia", Vec::new()),
            ("friction", Vec::new()),
            ("reach", Vec::new()),
            ("grid_origin", Vec::new()),
            ("grid_spacing", Vec::new()),
        ];
        let mut offsets = Vec::new();
        let mut values = Vec::new();
        let mut scene_offsets = Vec::new();
        for (_, _, grid) in shapes {
            scene_offsets.push(values.len() as u64);
            if let Some(grid) = grid {
                values.extend_from_slice(grid.values());
            }
        }
        for _ in 0..self.scenes {
            for (k, body) in bodies.iter().enumerate() {
                let (shape, size, grid) = shapes[k];
                let (motion, inertia) = match body.motion {
                    Motion::Kinematic => (MOTION_KINEMATIC, [0.0; 3]),
                    Motion::Dynamic => (MOTION_DYNAMIC, [0.0; 3]),
                    Motion::Rotating { inertia } => (MOTION_ROTATING, inertia),
                };
                let dims = grid.map_or([0; 3], |g| g.dims().map(|d| d as i32));
                ints[0].1.push(motion);
                ints[1].1.push(shape);
                ints[2].1.extend_from_slice(&dims);
                reals[0].1.extend_from_slice(&size);
                reals[1].1.push(body.mass);
                reals[2].1.extend_from_slice(&inertia);
                reals[3].1.push(body.friction);
                reals[4].1.push(bounding_radius(body));
                reals[5]
                    .1
                    .extend_from_slice(&grid.map_or([0.0; 3], |g| g.origin()));
                reals[6].1.push(grid.map_or(0.0, |g| g.spacing()));
                offsets.push(scene_offsets[k]);
            }
        }
        for (name, data) in &ints {
            self.bodies
                .write_int(&self.stream, Self::body_field(name), data)?;
        }
        for (name, data) in &reals {
            self.bodies
                .write_real(&self.stream, Self::body_field(name), data)?;
        }
        self.bodies
            .write_counter_at(&self.stream, Self::body_field("grid_offset"), 0, &offsets)?;
        self.bodies
            .write_real(&self.stream, Self::body_field("grid_values"), &values)?;
        for scene in 0..self.scenes {
            for (k, body) in bodies.iter().enumerate() {
                let index = scene * bodies.len() + k;
                self.set_body(index, body.state)?;
                // the CPU's upload predicts a body's velocities as its velocities
                let s = &body.state;
                let predicted: Vec<(&str, f64)> = ["pvx", "pvy", "pvz"]
                    .into_iter()
                    .zip(s.velocity)
                    .chain(["pox", "poy", "poz"].into_iter().zip(s.angular_velocity))
                    .collect();
                self.write_body_values(index, &predicted)?;
            }
        }
        Ok(())
    }

    /// Writes (field, value) pairs into body `index`'s entries.
    fn write_body_values(&mut self, index: usize, values: &[(&str, f64)]) -> Result<(), CudaError> {
        for (name, x) in values {
            self.bodies
                .write_real_at(&self.stream, Self::body_field(name), index, &[*x])?;
        }
        Ok(())
    }

    /// Changes the step's numbers in place; the damping constant (a root-find on the host)
    /// only when the material changes, as the CPU backend does.
    pub fn set_params(&mut self, params: &StepParams) -> Result<(), DemError> {
        let ContactLaw::HertzMindlin(law) = params.law else {
            return Err(DemError::Invalid(
                "the Hertz-Mindlin backend was given another contact law".into(),
            ));
        };
        if self.law != Some(law) {
            let LawConstants {
                e_star,
                g_star,
                damping,
                rolling,
                // The kernel's law_of computes √(4 G*/E*) from these the same way.
                tangential: _,
            } = law.constants();
            self.params.e_star = e_star;
            self.params.g_star = g_star;
            self.params.damping = damping;
            self.params.rolling = rolling;
            self.law = Some(law);
        }
        self.params.dt = params.time_step;
        [
            self.params.gravity_x,
            self.params.gravity_y,
            self.params.gravity_z,
        ] = params.gravity;
        self.params.friction = params.friction;
        self.params.wall_friction = params.wall_friction;
        Ok(())
    }

    /// Sets body `index` (scene × bodies per scene + k): its whole state, as the CPU backend.
    pub fn set_body(&mut self, index: usize, state: BodyState) -> Result<(), CudaError> {
        let count = self.bodies_per_scene * self.scenes;
        if index >= count {
            return Err(CudaError::Setup(format!(
                "body {index} does not exist; there are {count} (bodies per scene × scenes)"
            )));
        }
        let mut values: Vec<(&str, f64)> = Vec::with_capacity(19);
        for (names, v) in [
            (["px", "py", "pz"], state.position),
            (["vx", "vy", "vz"], state.velocity),
            (["efx", "efy", "efz"], state.external_force),
            (["ox", "oy", "oz"], state.angular_velocity),
            (["etx", "ety", "etz"], state.external_torque),
        ] {
            values.extend(names.into_iter().zip(v));
        }
        values.extend(["qw", "qx", "qy", "qz"].into_iter().zip(state.orientation));
        self.write_body_values(index, &values)
    }
}
