//! The Hertz-Mindlin step on an NVIDIA GPU: the twin of [`super::hertz`] (the step) and
//! [`super::law`] (the contact law), in `kernels/hertz.cu`. The kernels repeat the CPU's
//! floating-point operations in the CPU's order, so a grain's force after a step agrees with
//! the CPU's to rounding; only the body sums (a tree on the GPU, rayon's split on the CPU)
//! add in another order.
//!
//! [`HertzDeviceBed`] holds one bed, replicated into `scenes` copies that step together (one
//! launch per kernel for all of them). The neighbour list is compressed rows (pair starts by a
//! prefix sum on the device), double buffered so that a rebuild carries each pair's spring
//! over; it grows when a build finds more pairs than it holds. Each step reads one number
//! back, the largest displacement since the last build, to decide on a rebuild as the CPU
//! does (and to stop a bed that exploded with the CPU's error); a rebuild reads the pair count.
//! `kernels/README.md` lists the kernels and the memory layout.

use std::sync::Arc;

use cudarc::driver::{CudaStream, DeviceRepr, LaunchConfig, PushKernelArg};

use super::backend::{
    Body, BodyForce, BodyGeometry, BodyState, ContactLaw, Container, GrainState, Motion, StepParams,
};
use super::cpu::bounding_radius;
use super::cuda::{
    driver_error, Arenas, Count, CudaError, DeviceInfo, Kernels, Kind, Pointers, Sizes, BLOCK,
    BODY_BLOCKS, GATHER_THREADS,
};
use super::hertz::{EXPLODED, SKIN};
use super::law::{HertzMindlin, LawConstants};
use super::sdf::{Shape, Vec3};
use super::DemError;

/// The Hertz-Mindlin step's `__global__` functions, in launch order.
pub const HERTZ_KERNEL_NAMES: [&str; 16] = [
    "hm_kick_drift",
    "hm_body_kick_drift",
    "hm_displacement",
    "hm_hash_clear",
    "hm_hash_insert",
    "hm_count_pairs",
    "hm_scan_blocks",
    "hm_scan_sums",
    "hm_scan_add",
    "hm_fill_pairs",
    "hm_sort_partners",
    "hm_pair_forces",
    "hm_gather",
    "hm_body_partials",
    "hm_body_totals",
    "hm_kick",
];

// The same numbers as the #defines in kernels/hertz.cu.
const SCAN_THREADS: u32 = 256;
const HM_BODY_SUMS: usize = 7;
const MAX_WALLS: usize = 5;
const MOTION_KINEMATIC: i32 = 0;
const MOTION_DYNAMIC: i32 = 1;
const MOTION_ROTATING: i32 = 2;
// common.cuh's SHAPE_* and hertz.cu's SHAPE_GRID.
const SHAPE_PLANE: i32 = 0;
const SHAPE_BOX: i32 = 1;
const SHAPE_CYLINDER: i32 = 2;
const SHAPE_DISC: i32 = 3;
const SHAPE_GRID: i32 = 4;

/// The constants above with their names in the CUDA source, for the test that they agree.
#[cfg(test)]
pub(super) fn hertz_defines() -> [(&'static str, i64); 11] {
    [
        ("SCAN_THREADS", SCAN_THREADS as i64),
        ("HM_BODY_SUMS", HM_BODY_SUMS as i64),
        ("MAX_WALLS", MAX_WALLS as i64),
        ("MOTION_KINEMATIC", MOTION_KINEMATIC as i64),
        ("MOTION_DYNAMIC", MOTION_DYNAMIC as i64),
        ("MOTION_ROTATING", MOTION_ROTATING as i64),
        ("SHAPE_PLANE", SHAPE_PLANE as i64),
        ("SHAPE_BOX", SHAPE_BOX as i64),
        ("SHAPE_CYLINDER", SHAPE_CYLINDER as i64),
        ("SHAPE_DISC", SHAPE_DISC as i64),
        ("SHAPE_GRID", SHAPE_GRID as i64),
    ]
}

/// `struct HmParams` of kernels/hertz.cu.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct HmParams {
    grains_per_scene: i64,
    scenes: i64,
    bodies_per_scene: i64,
    hash_table_size: i64,
    container: i64,
    walls: i64,
    pairs: i64,
    container_a: f64,
    container_b: f64,
    gravity_x: f64,
    gravity_y: f64,
    gravity_z: f64,
    dt: f64,
    friction: f64,
    wall_friction: f64,
    cell: f64,
    skin: f64,
    e_star: f64,
    g_star: f64,
    damping: f64,
    rolling: f64,
}

// SAFETY: #[repr(C)], all fields 8-byte plain numbers, field for field the CUDA `HmParams`.
unsafe impl DeviceRepr for HmParams {}

/// The fields of `struct HmGrains` in kernels/hertz.cu, in order.
pub(super) const HM_GRAIN_FIELDS: &[(&str, Kind, Count)] = {
    use Count::*;
    use Kind::*;
    &[
        ("x", Real, Each(1)),
        ("y", Real, Each(1)),
        ("z", Real, Each(1)),
        ("vx", Real, Each(1)),
        ("vy", Real, Each(1)),
        ("vz", Real, Each(1)),
        ("wx", Real, Each(1)),
        ("wy", Real, Each(1)),
        ("wz", Real, Each(1)),
        ("pvx", Real, Each(1)),
        ("pvy", Real, Each(1)),
        ("pvz", Real, Each(1)),
        ("pwx", Real, Each(1)),
        ("pwy", Real, Each(1)),
        ("pwz", Real, Each(1)),
        ("fx", Real, Each(1)),
        ("fy", Real, Each(1)),
        ("fz", Real, Each(1)),
        ("tx", Real, Each(1)),
        ("ty", Real, Each(1)),
        ("tz", Real, Each(1)),
        ("rx", Real, Each(1)),
        ("ry", Real, Each(1)),
        ("rz", Real, Each(1)),
        ("radius", Real, Each(1)),
        ("inv_mass", Real, Each(1)),
        ("mass", Real, Each(1)),
        ("inv_inertia", Real, Each(1)),
        ("wall_sx", Real, Each(MAX_WALLS)),
        ("wall_sy", Real, Each(MAX_WALLS)),
        ("wall_sz", Real, Each(MAX_WALLS)),
        ("cell", Int, Each(3)),
        ("next", Int, Each(1)),
        ("table", Int, HashTable),
        ("partner_fill", Int, Each(1)),
        ("key", Counter, Each(1)),
        ("pair_start", Counter, OnePast),
        ("old_pair_start", Counter, OnePast),
        ("partner_start", Counter, OnePast),
        ("scan_sums", Counter, OnePast),
        ("counters", Counter, Fixed(2)),
    ]
};

/// The fields of `struct HmBodies` in kernels/hertz.cu, in order.
pub(super) const HM_BODY_FIELDS: &[(&str, Kind, Count)] = {
    use Count::*;
    use Kind::*;
    &[
        ("motion", Int, Each(1)),
        ("shape", Int, Each(1)),
        ("size", Real, Each(3)),
        ("mass", Real, Each(1)),
        ("inertia", Real, Each(3)),
        ("friction", Real, Each(1)),
        ("reach", Real, Each(1)),
        ("px", Real, Each(1)),
        ("py", Real, Each(1)),
        ("pz", Real, Each(1)),
        ("vx", Real, Each(1)),
        ("vy", Real, Each(1)),
        ("vz", Real, Each(1)),
        ("qw", Real, Each(1)),
        ("qx", Real, Each(1)),
        ("qy", Real, Each(1)),
        ("qz", Real, Each(1)),
        ("ox", Real, Each(1)),
        ("oy", Real, Each(1)),
        ("oz", Real, Each(1)),
        ("efx", Real, Each(1)),
        ("efy", Real, Each(1)),
        ("efz", Real, Each(1)),
        ("etx", Real, Each(1)),
        ("ety", Real, Each(1)),
        ("etz", Real, Each(1)),
        ("pvx", Real, Each(1)),
        ("pvy", Real, Each(1)),
        ("pvz", Real, Each(1)),
        ("pox", Real, Each(1)),
        ("poy", Real, Each(1)),
        ("poz", Real, Each(1)),
        ("fx", Real, Each(1)),
        ("fy", Real, Each(1)),
        ("fz", Real, Each(1)),
        ("tx", Real, Each(1)),
        ("ty", Real, Each(1)),
        ("tz", Real, Each(1)),
        ("contacts", Real, Each(1)),
        ("partial", Real, Each(BODY_BLOCKS as usize * HM_BODY_SUMS)),
        ("grid_origin", Real, Each(3)),
        ("grid_spacing", Real, Each(1)),
        ("grid_dims", Int, Each(3)),
        ("grid_offset", Counter, Each(1)),
        ("grid_values", Real, Other),
    ]
};

/// The fields of `struct BodyContacts` in kernels/hertz.cu: one per body and grain.
pub(super) const HM_CONTACT_FIELDS: &[(&str, Kind, Count)] = {
    use Count::*;
    use Kind::*;
    &[
        ("sx", Real, Each(1)),
        ("sy", Real, Each(1)),
        ("sz", Real, Each(1)),
        ("fx", Real, Each(1)),
        ("fy", Real, Each(1)),
        ("fz", Real, Each(1)),
        ("tx", Real, Each(1)),
        ("ty", Real, Each(1)),
        ("tz", Real, Each(1)),
        ("touching", Int, Each(1)),
    ]
};

/// The fields of `struct PairList` in kernels/hertz.cu: one per pair of the list's capacity.
pub(super) const HM_PAIR_FIELDS: &[(&str, Kind, Count)] = {
    use Count::*;
    use Kind::*;
    &[
        ("a", Int, Each(1)),
        ("b", Int, Each(1)),
        ("sx", Real, Each(1)),
        ("sy", Real, Each(1)),
        ("sz", Real, Each(1)),
        ("fx", Real, Each(1)),
        ("fy", Real, Each(1)),
        ("fz", Real, Each(1)),
        ("tax", Real, Each(1)),
        ("tay", Real, Each(1)),
        ("taz", Real, Each(1)),
        ("tbx", Real, Each(1)),
        ("tby", Real, Each(1)),
        ("tbz", Real, Each(1)),
        ("partner", Counter, Each(1)),
    ]
};

pub(super) const HM_GRAIN_FIELD_COUNT: usize = 41;
pub(super) const HM_BODY_FIELD_COUNT: usize = 45;
pub(super) const HM_CONTACT_FIELD_COUNT: usize = 10;
pub(super) const HM_PAIR_FIELD_COUNT: usize = 15;

/// A neighbour list on the device and the pairs it has room for.
struct PairBuffers {
    arenas: Arenas,
    capacity: usize,
}

impl PairBuffers {
    fn new(stream: &Arc<CudaStream>, capacity: usize) -> Result<Self, CudaError> {
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
) -> Result<(i32, Vec3, Option<&super::mesh::GridSdf>), DemError> {
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

/// One Hertz-Mindlin bed, replicated into `scenes` independent copies, on the device.
pub struct HertzDeviceBed {
    stream: Arc<CudaStream>,
    kernels: Kernels,
    info: DeviceInfo,
    grains: Arenas,
    bodies: Arenas,
    contacts: Arenas,
    /// The current neighbour list and the one of the build before.
    list: PairBuffers,
    old: PairBuffers,
    params: HmParams,
    /// The material whose constants `params` holds.
    law: Option<HertzMindlin>,
    grains_per_scene: usize,
    bodies_per_scene: usize,
    scenes: usize,
    builds: usize,
}

fn per_item(items: usize, threads: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: ((items as u32).div_ceil(threads).max(1), 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    }
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
        let n = grains.len();
        let scenes = scenes.max(1);
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
        let mut max_radius = grains.radius.iter().cloned().fold(0.0, f64::max);
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
        bed.upload_grains(grains)?;
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

    fn grain_field(name: &str) -> usize {
        Arenas::index(HM_GRAIN_FIELDS, name)
    }

    fn body_field(name: &str) -> usize {
        Arenas::index(HM_BODY_FIELDS, name)
    }

    /// Writes per-grain columns, each replicated into every scene.
    fn write_grain_columns(&mut self, columns: &[(&str, Vec<f64>)]) -> Result<(), CudaError> {
        for (name, column) in columns {
            let all: Vec<f64> = (0..self.scenes)
                .flat_map(|_| column.iter().copied())
                .collect();
            self.grains
                .write_real(&self.stream, Self::grain_field(name), &all)?;
        }
        Ok(())
    }

    fn upload_grains(&mut self, grains: &GrainState) -> Result<(), CudaError> {
        let n = grains.len();
        let spin = if grains.angular_velocity.is_empty() {
            vec![[0.0; 3]; n]
        } else {
            grains.angular_velocity.clone()
        };
        // The CPU's upload: m = 1/w (0 for a pinned grain), 1/I = w / (0.4 r²).
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
        self.write_grain_columns(&columns)
    }

    fn upload_bodies(
        &mut self,
        bodies: &[Body],
        shapes: &[(i32, Vec3, Option<&super::mesh::GridSdf>)],
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

    fn launch(&self, name: &str, config: LaunchConfig, flag: i32) -> Result<(), CudaError> {
        let function = &self.kernels.functions[name];
        let pointers = |arenas: &Arenas| arenas.pointers(&self.stream);
        let grains = Pointers::<HM_GRAIN_FIELD_COUNT>(
            pointers(&self.grains)
                .try_into()
                .expect("HM_GRAIN_FIELD_COUNT matches HM_GRAIN_FIELDS"),
        );
        let bodies = Pointers::<HM_BODY_FIELD_COUNT>(
            pointers(&self.bodies)
                .try_into()
                .expect("HM_BODY_FIELD_COUNT matches HM_BODY_FIELDS"),
        );
        let contacts = Pointers::<HM_CONTACT_FIELD_COUNT>(
            pointers(&self.contacts)
                .try_into()
                .expect("HM_CONTACT_FIELD_COUNT matches HM_CONTACT_FIELDS"),
        );
        let pair_pointers = |list: &PairBuffers| {
            Pointers::<HM_PAIR_FIELD_COUNT>(
                pointers(&list.arenas)
                    .try_into()
                    .expect("HM_PAIR_FIELD_COUNT matches HM_PAIR_FIELDS"),
            )
        };
        let (list, old) = (pair_pointers(&self.list), pair_pointers(&self.old));
        let mut builder = self.stream.launch_builder(function);
        builder
            .arg(&self.params)
            .arg(&grains)
            .arg(&bodies)
            .arg(&contacts)
            .arg(&list)
            .arg(&old)
            .arg(&flag);
        // SAFETY: every hm_ kernel has the signature (HmParams, HmGrains, HmBodies,
        // BodyContacts, PairList, PairList, int), all by value; the structs are #[repr(C)] or
        // arrays of device addresses whose layout a test checks against hertz.cu; every
        // address lies in an allocation of this bed sized for the counts in `params`
        // (`pairs` never exceeds the current list's capacity).
        unsafe { builder.launch(config) }.map_err(driver_error(&format!("launching {name}")))?;
        Ok(())
    }

    fn grains_total(&self) -> usize {
        self.grains_per_scene * self.scenes
    }

    fn bodies_total(&self) -> usize {
        self.bodies_per_scene * self.scenes
    }

    /// Advances every scene by `steps` steps.
    pub fn step(&mut self, steps: usize) -> Result<(), DemError> {
        for _ in 0..steps {
            self.step_once()?;
        }
        Ok(())
    }

    fn step_once(&mut self) -> Result<(), DemError> {
        let n = self.grains_total();
        let bodies = self.bodies_total();
        // 1. Kick and drift.
        if n > 0 {
            self.launch("hm_kick_drift", per_item(n, BLOCK), 0)?;
        }
        if bodies > 0 {
            self.launch("hm_body_kick_drift", per_item(bodies, BLOCK), 0)?;
        }
        // 2. Neighbour list, rebuilt on the CPU's test.
        let moved = if n > 0 {
            let counters = Self::grain_field("counters");
            self.launch("hm_displacement", per_item(n, SCAN_THREADS), 0)?;
            f64::from_bits(self.grains.read_counter_at(&self.stream, counters, 0)?)
        } else {
            0.0
        };
        let skin = self.params.skin;
        if !(moved < 0.25 * skin * skin) {
            if !moved.is_finite() {
                return Err(DemError::Unphysical(EXPLODED.into()));
            }
            self.build()?;
        }
        // 3-5. Forces and the closing kick.
        self.forces(true)?;
        Ok(())
    }

    /// Pair forces, gather, body sums; with `kick`, the closing half-kick and the contact count.
    fn forces(&mut self, kick: bool) -> Result<(), CudaError> {
        let n = self.grains_total();
        let bodies = self.bodies_total();
        if self.params.pairs > 0 {
            self.launch(
                "hm_pair_forces",
                per_item(self.params.pairs as usize, BLOCK),
                0,
            )?;
        }
        if n > 0 {
            self.launch("hm_gather", per_item(n, BLOCK), 0)?;
        }
        if bodies > 0 {
            let partial = LaunchConfig {
                grid_dim: (BODY_BLOCKS, bodies as u32, 1),
                block_dim: (GATHER_THREADS, 1, 1),
                shared_mem_bytes: 0,
            };
            self.launch("hm_body_partials", partial, 0)?;
            self.launch("hm_body_totals", per_item(bodies, BLOCK), kick as i32)?;
        }
        if kick && n > 0 {
            self.launch("hm_kick", per_item(n, BLOCK), 0)?;
        }
        Ok(())
    }

    /// Rebuilds the neighbour list, carrying springs over from the previous one.
    fn build(&mut self) -> Result<(), CudaError> {
        self.builds += 1;
        // The current list becomes the old one.
        std::mem::swap(&mut self.list, &mut self.old);
        let current = Self::grain_field("pair_start");
        let previous = Self::grain_field("old_pair_start");
        self.grains.fields.swap(current, previous);
        let n = self.grains_total();
        if n == 0 {
            self.params.pairs = 0;
            return Ok(());
        }
        let per_grain = per_item(n, BLOCK);
        self.launch(
            "hm_hash_clear",
            per_item(self.params.hash_table_size as usize, BLOCK),
            0,
        )?;
        self.launch("hm_hash_insert", per_grain, 0)?;
        self.launch("hm_count_pairs", per_grain, 0)?;
        for flag in [0, 1] {
            let blocks = per_item(n + 1, SCAN_THREADS);
            self.launch("hm_scan_blocks", blocks, flag)?;
            self.launch("hm_scan_sums", per_item(1, SCAN_THREADS), flag)?;
            self.launch("hm_scan_add", blocks, flag)?;
        }
        let pairs = self.grains.read_counter_at(&self.stream, current, n)? as usize;
        if pairs > self.list.capacity {
            self.list = PairBuffers::new(&self.stream, pairs + pairs / 4 + 1024)?;
        }
        self.params.pairs = pairs as i64;
        self.launch("hm_fill_pairs", per_grain, 0)?;
        self.launch("hm_sort_partners", per_grain, 0)?;
        Ok(())
    }

    /// Columns `names` of scene `scene`'s grains, one array per grain.
    fn grain_columns<const K: usize>(
        &self,
        scene: usize,
        names: [&str; K],
    ) -> Result<Vec<[f64; K]>, CudaError> {
        let n = self.grains_per_scene;
        rows(names.map(|name| {
            self.grains
                .read_real_at(&self.stream, Self::grain_field(name), n * scene, n)
        }))
    }

    /// Columns `names` of every body, one array per body.
    fn body_columns<const K: usize>(&self, names: [&str; K]) -> Result<Vec<[f64; K]>, CudaError> {
        let count = self.bodies_total();
        rows(names.map(|name| {
            self.bodies
                .read_real(&self.stream, Self::body_field(name), count)
        }))
    }

    fn check_scene(&self, scene: usize) -> Result<(), CudaError> {
        if scene >= self.scenes {
            return Err(CudaError::Setup(format!(
                "scene {scene} does not exist; there are {}",
                self.scenes
            )));
        }
        Ok(())
    }

    /// The grains of scene `scene`.
    pub fn grains(&self, scene: usize) -> Result<GrainState, CudaError> {
        self.check_scene(scene)?;
        let n = self.grains_per_scene;
        let read = |name: &str| {
            self.grains
                .read_real_at(&self.stream, Self::grain_field(name), n * scene, n)
        };
        Ok(GrainState {
            position: self.grain_columns(scene, ["x", "y", "z"])?,
            velocity: self.grain_columns(scene, ["vx", "vy", "vz"])?,
            radius: read("radius")?,
            inverse_mass: read("inv_mass")?,
            angular_velocity: self.grain_columns(scene, ["wx", "wy", "wz"])?,
        })
    }

    /// The force and torque on each grain of scene `scene` from the last step (gravity
    /// included): what the closing kick applied.
    pub fn grain_forces(&self, scene: usize) -> Result<(Vec<Vec3>, Vec<Vec3>), CudaError> {
        self.check_scene(scene)?;
        Ok((
            self.grain_columns(scene, ["fx", "fy", "fz"])?,
            self.grain_columns(scene, ["tx", "ty", "tz"])?,
        ))
    }

    /// Every body of every scene (scene-major).
    pub fn bodies(&self) -> Result<Vec<BodyState>, CudaError> {
        let count = self.bodies_total();
        if count == 0 {
            return Ok(Vec::new());
        }
        let position = self.body_columns(["px", "py", "pz"])?;
        let velocity = self.body_columns(["vx", "vy", "vz"])?;
        let external_force = self.body_columns(["efx", "efy", "efz"])?;
        let angular_velocity = self.body_columns(["ox", "oy", "oz"])?;
        let external_torque = self.body_columns(["etx", "ety", "etz"])?;
        let orientation = self.body_columns(["qw", "qx", "qy", "qz"])?;
        Ok((0..count)
            .map(|k| BodyState {
                position: position[k],
                velocity: velocity[k],
                external_force: external_force[k],
                orientation: orientation[k],
                angular_velocity: angular_velocity[k],
                external_torque: external_torque[k],
            })
            .collect())
    }

    /// The grains' force and torque (about the origin) on every body over the last step.
    pub fn body_forces(&self) -> Result<Vec<BodyForce>, CudaError> {
        let count = self.bodies_total();
        if count == 0 {
            return Ok(Vec::new());
        }
        let force = self.body_columns(["fx", "fy", "fz"])?;
        let torque = self.body_columns(["tx", "ty", "tz"])?;
        let contacts = self.body_columns(["contacts"])?;
        Ok((0..count)
            .map(|k| BodyForce {
                force: force[k],
                torque: torque[k],
                contacts: contacts[k][0] as usize,
            })
            .collect())
    }

    /// Touching grain pairs summed over all force evaluations and scenes so far (the CPU's
    /// `Timings::contacts` of the Hertz-Mindlin step).
    pub fn contacts_so_far(&self) -> Result<u64, CudaError> {
        self.grains
            .read_counter_at(&self.stream, Self::grain_field("counters"), 1)
    }
}

/// Columns of equal length, read back, as one array per row.
fn rows<const K: usize>(
    columns: [Result<Vec<f64>, CudaError>; K],
) -> Result<Vec<[f64; K]>, CudaError> {
    let mut read = Vec::with_capacity(K);
    for column in columns {
        read.push(column?);
    }
    let len = read.first().map_or(0, Vec::len);
    Ok((0..len)
        .map(|i| std::array::from_fn(|k| read[k][i]))
        .collect())
}
