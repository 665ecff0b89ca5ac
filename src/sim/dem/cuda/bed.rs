//! [`DeviceBed`], the projected-Jacobi bed on the device: its types, upload and parameters.

use std::sync::Arc;

use cudarc::driver::CudaStream;

use super::compile::{Kernels, KERNEL_NAMES};
use super::discovery::{CudaError, DeviceInfo};
use super::layout::{Arenas, Params, Sizes, BODY_FIELDS, GRAIN_FIELDS};

/// The container, as the kernels see it (the floor is z = 0 and the top is open).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DeviceContainer {
    Cylinder { radius: f64 },
    Box { half_x: f64, half_y: f64 },
}

/// A body's analytic shape, as the kernels see it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DeviceShape {
    Plane,
    Box { half_extents: [f64; 3] },
    Cylinder { radius: f64, half_height: f64 },
    Disc { radius: f64, thickness: f64 },
}

/// One body of one scene: shape, friction, inverse mass (0: kinematic) and state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeviceBody {
    pub shape: DeviceShape,
    pub friction: f64,
    pub inverse_mass: f64,
    pub position: [f64; 3],
    pub velocity: [f64; 3],
    pub external_force: [f64; 3],
}

/// Numbers of a step; see the backend docs for where each enters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeviceParams {
    pub time_step: f64,
    pub gravity: [f64; 3],
    pub iterations: usize,
    pub relaxation: f64,
    pub stabilisation: f64,
    pub friction: f64,
    pub wall_friction: f64,
    /// Speculative contact distance as a fraction of the largest grain radius.
    pub contact_margin: f64,
}

/// Grains of one scene, structure of arrays.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeviceGrains {
    pub position: Vec<[f64; 3]>,
    pub velocity: Vec<[f64; 3]>,
    pub radius: Vec<f64>,
    pub inverse_mass: Vec<f64>,
}

/// A body's state and the grains' action on it over the last step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DeviceBodyReadout {
    pub position: [f64; 3],
    pub velocity: [f64; 3],
    /// Σ −λ / Δt over the body's contacts.
    pub force: [f64; 3],
    /// About the body's origin.
    pub torque: [f64; 3],
    /// Contacts with a non-zero impulse.
    pub contacts: usize,
}

/// One bed, replicated into `scenes` independent copies, on the device.
pub struct DeviceBed {
    pub(super) stream: Arc<CudaStream>,
    pub(super) kernels: Kernels,
    pub(super) grains: Arenas,
    pub(super) bodies: Arenas,
    pub(super) grain_pointers: Vec<u64>,
    pub(super) body_pointers: Vec<u64>,
    pub(super) params: Params,
    pub(super) iterations: usize,
    pub(super) grains_per_scene: usize,
    pub(super) bodies_per_scene: usize,
    pub(super) scenes: usize,
    pub(super) time_step: f64,
    /// The largest grain radius: the cell size and the contact margin scale with it.
    pub(super) max_radius: f64,
    pub(super) info: DeviceInfo,
}

impl DeviceBed {
    /// Probes the machine, compiles (or reuses) the kernels for its GPU and uploads
    /// `scenes` copies of the bed: grains in a container, with `bodies` (each scene gets its
    /// own copy of every body; `set_body` then drives them apart).
    pub fn new(
        grains: &DeviceGrains,
        container: DeviceContainer,
        bodies: &[DeviceBody],
        params: &DeviceParams,
        scenes: usize,
    ) -> Result<Self, CudaError> {
        let n = grains.position.len();
        if grains.velocity.len() != n || grains.radius.len() != n || grains.inverse_mass.len() != n
        {
            return Err(CudaError::Setup(format!(
                "grain arrays differ in length: {n} positions, {} velocities, {} radii, {} inverse masses",
                grains.velocity.len(),
                grains.radius.len(),
                grains.inverse_mass.len()
            )));
        }
        if n == 0 || scenes == 0 {
            return Err(CudaError::Setup(format!(
                "{n} grains in {scenes} scenes; at least one of each is needed"
            )));
        }
        let total = n.checked_mul(scenes).filter(|t| *t < i32::MAX as usize / 2);
        let Some(total) = total else {
            return Err(CudaError::Setup(format!(
                "{n} grains × {scenes} scenes exceeds the 2^30 grains the kernels index"
            )));
        };
        let (info, stream, kernels) = Kernels::load(&KERNEL_NAMES)?;
        let hash_table_size = (2 * total).next_power_of_two();
        let body_count = bodies.len() * scenes;
        let grain_arenas = Arenas::new(
            &stream,
            GRAIN_FIELDS,
            Sizes {
                items: total,
                hash_table: hash_table_size,
                other: 0,
            },
        )?;
        let body_arenas = Arenas::new(
            &stream,
            BODY_FIELDS,
            Sizes {
                items: body_count.max(1),
                ..Sizes::default()
            },
        )?;
        let mut bed = Self {
            stream,
            kernels,
            grain_pointers: Vec::new(),
            body_pointers: Vec::new(),
            grains: grain_arenas,
            bodies: body_arenas,
            params: Params::default(),
            iterations: 1,
            grains_per_scene: n,
            bodies_per_scene: bodies.len(),
            scenes,
            time_step: params.time_step,
            max_radius: grains.radius.iter().cloned().fold(0.0, f64::max),
            info,
        };
        bed.grain_pointers = bed.grains.pointers(&bed.stream);
        bed.body_pointers = bed.bodies.pointers(&bed.stream);
        bed.upload_grains(grains)?;
        bed.upload_bodies(bodies)?;
        let (kind, a, b, walls) = match container {
            DeviceContainer::Cylinder { radius } => (0, radius, 0.0, 2),
            DeviceContainer::Box { half_x, half_y } => (1, half_x, half_y, 5),
        };
        bed.params = Params {
            grains_per_scene: n as i64,
            scenes: scenes as i64,
            bodies_per_scene: bodies.len() as i64,
            hash_table_size: hash_table_size as i64,
            container: kind,
            walls,
            container_a: a,
            container_b: b,
            ..Params::default()
        };
        bed.set_params(params)?;
        Ok(bed)
    }

    /// What the probe found about the device in use.
    pub fn device(&self) -> &DeviceInfo {
        &self.info
    }

    pub fn scenes(&self) -> usize {
        self.scenes
    }

    pub fn grains_per_scene(&self) -> usize {
        self.grains_per_scene
    }

    pub fn bodies_per_scene(&self) -> usize {
        self.bodies_per_scene
    }

    /// Changes the step's numbers in place.
    pub fn set_params(&mut self, params: &DeviceParams) -> Result<(), CudaError> {
        let positive = |v: f64| v > 0.0 && v.is_finite();
        if !positive(params.time_step) || !positive(params.relaxation) || params.iterations == 0 {
            return Err(CudaError::Setup(format!(
                "time_step {} and relaxation {} must be positive and iterations ({}) at least 1",
                params.time_step, params.relaxation, params.iterations
            )));
        }
        let max_radius = self.max_radius;
        let margin = params.contact_margin;
        self.params.gravity_x = params.gravity[0];
        self.params.gravity_y = params.gravity[1];
        self.params.gravity_z = params.gravity[2];
        self.params.dt = params.time_step;
        self.params.friction = params.friction;
        self.params.wall_friction = params.wall_friction;
        self.params.stabilisation = params.stabilisation;
        self.params.relaxation = params.relaxation;
        self.params.max_radius = max_radius;
        self.params.margin_fraction = margin;
        self.params.overlap_slop = crate::sim::dem::cpu::OVERLAP_SLOP * max_radius;
        self.iterations = params.iterations;
        self.time_step = params.time_step;
        Ok(())
    }

    fn upload_grains(&mut self, grains: &DeviceGrains) -> Result<(), CudaError> {
        let total = self.grains_per_scene * self.scenes;
        let replicate = |f: &dyn Fn(usize) -> f64| -> Vec<f64> {
            (0..total).map(|i| f(i % self.grains_per_scene)).collect()
        };
        let columns: [(&str, Vec<f64>); 8] = [
            ("x", replicate(&|i| grains.position[i][0])),
            ("y", replicate(&|i| grains.position[i][1])),
            ("z", replicate(&|i| grains.position[i][2])),
            ("vx", replicate(&|i| grains.velocity[i][0])),
            ("vy", replicate(&|i| grains.velocity[i][1])),
            ("vz", replicate(&|i| grains.velocity[i][2])),
            ("radius", replicate(&|i| grains.radius[i])),
            ("inv_mass", replicate(&|i| grains.inverse_mass[i])),
        ];
        for (name, data) in columns {
            let field = Arenas::index(GRAIN_FIELDS, name);
            self.grains.write_real(&self.stream, field, &data)?;
        }
        // no contacts from a previous step
        for name in [
            "prev_pair_count",
            "prev_ext_count",
            "pair_count",
            "ext_count",
        ] {
            let field = Arenas::index(GRAIN_FIELDS, name);
            self.grains
                .write_int(&self.stream, field, &vec![0; total])?;
        }
        Ok(())
    }

    fn upload_bodies(&mut self, bodies: &[DeviceBody]) -> Result<(), CudaError> {
        if bodies.is_empty() {
            return Ok(());
        }
        let all: Vec<DeviceBody> = (0..self.scenes)
            .flat_map(|_| bodies.iter().copied())
            .collect();
        let mut shape = Vec::new();
        let mut size = Vec::new();
        for b in &all {
            let (s, z) = match b.shape {
                DeviceShape::Plane => (0, [0.0; 3]),
                DeviceShape::Box { half_extents } => (1, half_extents),
                DeviceShape::Cylinder {
                    radius,
                    half_height,
                } => (2, [radius, half_height, 0.0]),
                DeviceShape::Disc { radius, thickness } => (3, [radius, 0.5 * thickness, 0.0]),
            };
            shape.push(s);
            size.extend_from_slice(&z);
        }
        let field = Arenas::index(BODY_FIELDS, "shape");
        self.bodies.write_int(&self.stream, field, &shape)?;
        let field = Arenas::index(BODY_FIELDS, "size");
        self.bodies.write_real(&self.stream, field, &size)?;
        let columns: [(&str, Vec<f64>); 2] = [
            ("friction", all.iter().map(|b| b.friction).collect()),
            ("inv_mass", all.iter().map(|b| b.inverse_mass).collect()),
        ];
        for (name, data) in columns {
            let field = Arenas::index(BODY_FIELDS, name);
            self.bodies.write_real(&self.stream, field, &data)?;
        }
        for (index, b) in all.iter().enumerate() {
            self.set_body(index, b.position, b.velocity, b.external_force)?;
        }
        Ok(())
    }

    /// Sets body `index` (scene × bodies_per_scene + k) position, velocity and external force.
    pub fn set_body(
        &mut self,
        index: usize,
        position: [f64; 3],
        velocity: [f64; 3],
        external_force: [f64; 3],
    ) -> Result<(), CudaError> {
        let count = self.bodies_per_scene * self.scenes;
        if index >= count {
            return Err(CudaError::Setup(format!(
                "body {index} does not exist; there are {count} (bodies per scene × scenes)"
            )));
        }
        let names = [
            "px", "py", "pz", "vx", "vy", "vz", "ext_fx", "ext_fy", "ext_fz",
        ];
        let values = [position, velocity, external_force].concat();
        for (name, value) in names.iter().zip(values) {
            let field = Arenas::index(BODY_FIELDS, name);
            self.bodies
                .write_real_at(&self.stream, field, index, &[value])?;
        }
        Ok(())
    }
}
