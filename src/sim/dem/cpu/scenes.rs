//! [`CpuScenes`]: several realisations of one bed on the CPU, stepped side by side.

use rayon::prelude::*;

use super::backend::CpuBackend;
use crate::sim::dem::backend::{
    Backend, Body, BodyForce, BodyState, Container, GrainState, StepParams, Timings,
};
use crate::sim::dem::sdf::Vec3;
use crate::sim::dem::DemError;

/// `scenes` independent [`CpuBackend`]s behind one [`Backend`], with the CUDA backend's
/// conventions (grains and bodies reported scene-major: body s × bodies + k is body k of
/// scene s). A step advances every scene, the scenes in parallel on rayon's pool (each
/// scene's own step is parallel too, and bit-for-bit the same whatever the thread count, so
/// scene s is exactly the single replay of its bed). On a few cores this buys what the
/// grain loops' synchronisation costs a small bed; it is not the GPU's one launch.
pub struct CpuScenes {
    scenes: Vec<CpuBackend>,
    /// Bodies per scene, from the upload.
    bodies: usize,
}

impl CpuScenes {
    pub fn new(scenes: usize) -> Self {
        CpuScenes {
            scenes: (0..scenes.max(1)).map(|_| CpuBackend::new()).collect(),
            bodies: 0,
        }
    }

    /// Scene and body-in-scene of body `index`.
    fn locate(&self, index: usize) -> Result<(usize, usize), DemError> {
        let count = self.bodies * self.scenes.len();
        if index >= count {
            return Err(DemError::Invalid(format!(
                "body {index} does not exist; there are {count} (bodies per scene × scenes)"
            )));
        }
        Ok((index / self.bodies, index % self.bodies))
    }
}

impl Backend for CpuScenes {
    fn upload(
        &mut self,
        grains: &GrainState,
        container: &Container,
        bodies: &[Body],
        params: &StepParams,
    ) -> Result<(), DemError> {
        self.upload_scenes(&[grains], container, bodies, params)
    }

    fn scenes(&self) -> usize {
        self.scenes.len()
    }

    fn upload_scenes(
        &mut self,
        beds: &[&GrainState],
        container: &Container,
        bodies: &[Body],
        params: &StepParams,
    ) -> Result<(), DemError> {
        let count = self.scenes.len();
        if beds.is_empty() || (beds.len() != 1 && beds.len() != count) {
            return Err(DemError::Invalid(format!(
                "{} beds for {count} scenes: give one bed (copied into every scene) or one per scene",
                beds.len()
            )));
        }
        for (s, scene) in self.scenes.iter_mut().enumerate() {
            scene.upload(beds[s % beds.len()], container, bodies, params)?;
        }
        self.bodies = bodies.len();
        Ok(())
    }

    fn set_params(&mut self, params: &StepParams) -> Result<(), DemError> {
        self.scenes
            .iter_mut()
            .try_for_each(|s| s.set_params(params))
    }

    fn set_body(&mut self, index: usize, state: BodyState) -> Result<(), DemError> {
        let (scene, k) = self.locate(index)?;
        self.scenes[scene].set_body(k, state)
    }

    fn set_external_forces(&mut self, forces: &[Vec3]) -> Result<(), DemError> {
        let count = self.bodies * self.scenes.len();
        if forces.len() != count {
            return Err(DemError::Invalid(format!(
                "{} external forces for {count} bodies (bodies per scene × scenes)",
                forces.len()
            )));
        }
        if self.bodies == 0 {
            return Ok(());
        }
        for (scene, forces) in self.scenes.iter_mut().zip(forces.chunks(self.bodies)) {
            scene.set_external_forces(forces)?;
        }
        Ok(())
    }

    fn step(&mut self, steps: usize) -> Result<(), DemError> {
        if self.scenes.len() == 1 {
            return self.scenes[0].step(steps);
        }
        self.scenes.par_iter_mut().try_for_each(|s| s.step(steps))
    }

    fn grains(&self) -> Result<GrainState, DemError> {
        let mut out = GrainState::default();
        for scene in &self.scenes {
            let g = scene.grains()?;
            out.position.extend(g.position);
            out.velocity.extend(g.velocity);
            out.radius.extend(g.radius);
            out.inverse_mass.extend(g.inverse_mass);
            out.angular_velocity.extend(g.angular_velocity);
        }
        Ok(out)
    }

    fn bodies(&self) -> Result<Vec<BodyState>, DemError> {
        let mut out = Vec::with_capacity(self.bodies * self.scenes.len());
        for scene in &self.scenes {
            out.extend(scene.bodies()?);
        }
        Ok(out)
    }

    fn body_forces(&self) -> Result<Vec<BodyForce>, DemError> {
        let mut out = Vec::with_capacity(self.bodies * self.scenes.len());
        for scene in &self.scenes {
            out.extend(scene.body_forces()?);
        }
        Ok(out)
    }

    /// The scenes' timings summed (`steps` counts a step of all scenes once).
    fn timings(&self) -> Timings {
        let mut total = Timings::default();
        for t in self.scenes.iter().map(|s| s.timings()) {
            total.broadphase += t.broadphase;
            total.narrowphase += t.narrowphase;
            total.solver += t.solver;
            total.integrate += t.integrate;
            total.contacts += t.contacts;
            total.steps = t.steps;
        }
        total
    }

    fn reset_timings(&mut self) {
        self.scenes.iter_mut().for_each(|s| s.reset_timings());
    }

    fn name(&self) -> &'static str {
        "cpu"
    }
}
