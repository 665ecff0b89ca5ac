//! [`DeviceBed`]'s launch sequence of one step, its overflow check and its read-back.

use cudarc::driver::{LaunchConfig, PushKernelArg};

use super::bed::{DeviceBed, DeviceBodyReadout, DeviceGrains};
use super::discovery::{driver_error, CudaError};
use super::layout::{
    Arenas, Pointers, BLOCK, BODY_BLOCKS, BODY_FIELDS, BODY_FIELD_COUNT, EXTERNAL_SLOTS,
    GATHER_THREADS, GRAIN_FIELDS, GRAIN_FIELD_COUNT, PAIR_SLOTS, REVERSE_SLOTS, SWAPPED,
};

impl DeviceBed {
    fn launch(
        &self,
        name: &str,
        config: LaunchConfig,
        with_grains: bool,
        with_bodies: bool,
        flag: Option<i32>,
    ) -> Result<(), CudaError> {
        let function = &self.kernels.functions[name];
        let grains = Pointers::<GRAIN_FIELD_COUNT>(
            self.grain_pointers
                .as_slice()
                .try_into()
                .expect("GRAIN_FIELD_COUNT matches GRAIN_FIELDS"),
        );
        let bodies = Pointers::<BODY_FIELD_COUNT>(
            self.body_pointers
                .as_slice()
                .try_into()
                .expect("BODY_FIELD_COUNT matches BODY_FIELDS"),
        );
        let mut builder = self.stream.launch_builder(function);
        builder.arg(&self.params);
        if with_grains {
            builder.arg(&grains);
        }
        if with_bodies {
            builder.arg(&bodies);
        }
        let flag_value = flag.unwrap_or(0);
        if flag.is_some() {
            builder.arg(&flag_value);
        }
        // SAFETY: the argument list matches the kernel's CUDA signature: (Params, [Grains],
        // [Bodies], [int]) by value, as each call site below states for its kernel; the struct
        // layouts are checked against the source by a test; every pointer in them addresses
        // an allocation of this bed sized for the counts in `params`.
        unsafe { builder.launch(config) }.map_err(driver_error(&format!("launching {name}")))?;
        Ok(())
    }

    fn grid(items: usize) -> LaunchConfig {
        LaunchConfig {
            grid_dim: ((items as u32).div_ceil(BLOCK).max(1), 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    fn body_sums(&self, update_velocity: bool) -> Result<(), CudaError> {
        let bodies = self.bodies_per_scene * self.scenes;
        let partial = LaunchConfig {
            grid_dim: (BODY_BLOCKS, bodies as u32, 1),
            block_dim: (GATHER_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        self.launch("body_partial_sums", partial, true, true, None)?;
        self.launch(
            "body_totals",
            Self::grid(bodies),
            false,
            true,
            Some(update_velocity as i32),
        )
    }

    /// A body's contacts overlapping beyond the slop and its pseudo-velocity (split.cu).
    fn body_deep_sums(&self) -> Result<(), CudaError> {
        let bodies = self.bodies_per_scene * self.scenes;
        let partial = LaunchConfig {
            grid_dim: (BODY_BLOCKS, bodies as u32, 1),
            block_dim: (GATHER_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        self.launch("body_deep_partial_sums", partial, true, true, None)?;
        self.launch("body_deep_totals", Self::grid(bodies), false, true, None)
    }

    /// Advances every scene by `steps` steps. Returns without waiting for the device; a
    /// read waits.
    pub fn step(&mut self, steps: usize) -> Result<(), CudaError> {
        let n = self.grains_per_scene * self.scenes;
        let bodies = self.bodies_per_scene * self.scenes;
        let per_grain = Self::grid(n);
        for _ in 0..steps {
            for (current, previous) in SWAPPED {
                let a = Arenas::index(GRAIN_FIELDS, current);
                let b = Arenas::index(GRAIN_FIELDS, previous);
                self.grain_pointers.swap(a, b);
            }
            self.launch("predict_grains", per_grain, true, false, None)?;
            if bodies > 0 {
                self.launch("predict_bodies", Self::grid(bodies), false, true, None)?;
            }
            self.launch(
                "hash_clear",
                Self::grid(self.params.hash_table_size as usize),
                true,
                false,
                None,
            )?;
            self.launch("hash_insert", per_grain, true, false, None)?;
            self.launch("find_pairs", per_grain, true, false, None)?;
            self.launch("find_external", per_grain, true, true, None)?;
            self.launch("sort_reverse", per_grain, true, false, None)?;
            self.launch("gather_grains", per_grain, true, false, None)?;
            if bodies > 0 {
                self.body_sums(true)?;
            }
            for _ in 0..self.iterations {
                self.launch("solve_contacts", per_grain, true, true, None)?;
                self.launch("gather_grains", per_grain, true, false, None)?;
                if bodies > 0 {
                    self.body_sums(true)?;
                }
            }
            // The split-impulse pass (split.cu), the CPU's correct_positions: its sweeps are
            // position_iterations(K) whatever the overlaps (an empty pass costs little).
            self.launch("deep_prepare", per_grain, true, false, None)?;
            if bodies > 0 {
                self.body_deep_sums()?;
            }
            for _ in 0..crate::sim::dem::cpu::position_iterations(self.iterations) {
                self.launch("solve_deep", per_grain, true, true, None)?;
                self.launch("gather_deep", per_grain, true, false, None)?;
                if bodies > 0 {
                    self.body_deep_sums()?;
                }
            }
            self.launch("integrate_grains", per_grain, true, false, None)?;
            if bodies > 0 {
                self.launch("integrate_bodies", Self::grid(bodies), false, true, None)?;
                // the step's force and moment, about the moved origin, as the CPU backend
                self.body_sums(false)?;
            }
        }
        Ok(())
    }

    /// Waits for the device and fails if a contact list overflowed since the bed was made.
    pub fn check(&self) -> Result<(), CudaError> {
        let counters = self.counters()?;
        let bits = counters[0];
        for (bit, list, capacity) in [
            (1, "grain-grain", PAIR_SLOTS),
            (2, "partner", REVERSE_SLOTS),
            (4, "wall and body", EXTERNAL_SLOTS),
        ] {
            if bits & bit != 0 {
                return Err(CudaError::ContactOverflow { list, capacity });
            }
        }
        Ok(())
    }

    /// [overflow bits, contacts summed over all steps and scenes].
    fn counters(&self) -> Result<[u64; 2], CudaError> {
        let mut out = [0u64; 2];
        self.stream
            .memcpy_dtoh(&self.grains.counter.slice(0..2), &mut out)
            .map_err(driver_error("reading the step counters"))?;
        Ok(out)
    }

    /// Contacts summed over all steps and scenes so far.
    pub fn contacts_so_far(&self) -> Result<u64, CudaError> {
        Ok(self.counters()?[1])
    }

    /// The grains of scene `scene`.
    pub fn grains(&self, scene: usize) -> Result<DeviceGrains, CudaError> {
        self.check()?;
        if scene >= self.scenes {
            return Err(CudaError::Setup(format!(
                "scene {scene} does not exist; there are {}",
                self.scenes
            )));
        }
        let n = self.grains_per_scene;
        let read = |name: &str| -> Result<Vec<f64>, CudaError> {
            let field = Arenas::index(GRAIN_FIELDS, name);
            let all = self
                .grains
                .read_real(&self.stream, field, n * (scene + 1))?;
            Ok(all[n * scene..].to_vec())
        };
        let [x, y, z, vx, vy, vz, radius, inverse_mass] =
            ["x", "y", "z", "vx", "vy", "vz", "radius", "inv_mass"].map(read);
        let (x, y, z, vx, vy, vz) = (x?, y?, z?, vx?, vy?, vz?);
        Ok(DeviceGrains {
            position: (0..n).map(|i| [x[i], y[i], z[i]]).collect(),
            velocity: (0..n).map(|i| [vx[i], vy[i], vz[i]]).collect(),
            radius: radius?,
            inverse_mass: inverse_mass?,
        })
    }

    /// The external forces `set_body` last gave the bodies (scene-major).
    pub fn external_forces(&self) -> Result<Vec<[f64; 3]>, CudaError> {
        let count = self.bodies_per_scene * self.scenes;
        if count == 0 {
            return Ok(Vec::new());
        }
        let read = |name: &str| {
            self.bodies
                .read_real(&self.stream, Arenas::index(BODY_FIELDS, name), count)
        };
        let (x, y, z) = (read("ext_fx")?, read("ext_fy")?, read("ext_fz")?);
        Ok((0..count).map(|k| [x[k], y[k], z[k]]).collect())
    }

    /// Every body of every scene (scene-major), with the grains' force over the last step.
    pub fn bodies(&self) -> Result<Vec<DeviceBodyReadout>, CudaError> {
        self.check()?;
        let count = self.bodies_per_scene * self.scenes;
        if count == 0 {
            return Ok(Vec::new());
        }
        let read = |name: &str| -> Result<Vec<f64>, CudaError> {
            self.bodies
                .read_real(&self.stream, Arenas::index(BODY_FIELDS, name), count)
        };
        let columns = [
            "px",
            "py",
            "pz",
            "vx",
            "vy",
            "vz",
            "impulse_x",
            "impulse_y",
            "impulse_z",
            "moment_x",
            "moment_y",
            "moment_z",
            "touching",
        ]
        .map(read);
        let mut c = Vec::with_capacity(columns.len());
        for column in columns {
            c.push(column?);
        }
        let dt = self.time_step;
        Ok((0..count)
            .map(|k| DeviceBodyReadout {
                position: [c[0][k], c[1][k], c[2][k]],
                velocity: [c[3][k], c[4][k], c[5][k]],
                force: [c[6][k] / dt, c[7][k] / dt, c[8][k] / dt],
                torque: [c[9][k] / dt, c[10][k] / dt, c[11][k] / dt],
                contacts: c[12][k] as usize,
            })
            .collect())
    }
}
