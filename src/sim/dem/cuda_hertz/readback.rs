//! What [`HertzDeviceBed`] reads back: grains, their forces, bodies and the contact count.

use super::{rows, HertzDeviceBed};
use crate::sim::dem::backend::{BodyForce, BodyState, GrainState};
use crate::sim::dem::cuda::CudaError;
use crate::sim::dem::sdf::Vec3;

impl HertzDeviceBed {
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
