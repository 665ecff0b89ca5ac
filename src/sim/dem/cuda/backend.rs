//! [`CudaBackend`], the CUDA implementation of the [`Backend`] trait.

use super::bed::{DeviceBed, DeviceBody, DeviceContainer, DeviceGrains, DeviceParams, DeviceShape};
use super::discovery::CudaError;
use super::HertzDeviceBed;
use crate::sim::dem::backend::{
    Backend, Body, BodyForce, BodyGeometry, BodyState, ContactLaw, Container, GrainState, Motion,
    StepParams, Timings,
};
use crate::sim::dem::sdf::{Shape, Vec3};
use crate::sim::dem::DemError;

/// The bed on the device: the step of its contact law.
enum Bed {
    Jacobi(Box<DeviceBed>),
    Hertz(Box<HertzDeviceBed>),
}

/// The CUDA implementation of [`Backend`]; the law in the step parameters picks the kernels
/// (Hertz-Mindlin: `kernels/hertz.cu`, the twin of the CPU's step; projected Jacobi: the
/// other kernel files). With `scenes` > 1 it holds that many copies of the uploaded bed,
/// stepped together in one launch per kernel: grains are then reported scene-major (scene
/// s's grain i at s × N + i) and body index s × bodies + k is body k of scene s, which
/// `set_body` drives independently.
pub struct CudaBackend {
    scenes: usize,
    bed: Option<Bed>,
    timings: Timings,
    contacts_at_reset: u64,
}

impl CudaBackend {
    /// A backend that replicates each uploaded bed into `scenes` copies (1 for one bed).
    pub fn new(scenes: usize) -> Self {
        Self {
            scenes: scenes.max(1),
            bed: None,
            timings: Timings::default(),
            contacts_at_reset: 0,
        }
    }

    /// The projected-Jacobi device bed, once uploaded.
    pub fn device_bed(&self) -> Option<&DeviceBed> {
        match &self.bed {
            Some(Bed::Jacobi(bed)) => Some(bed),
            _ => None,
        }
    }

    /// The Hertz-Mindlin device bed, once uploaded.
    pub fn hertz_bed(&self) -> Option<&HertzDeviceBed> {
        match &self.bed {
            Some(Bed::Hertz(bed)) => Some(bed),
            _ => None,
        }
    }

    fn bed(&self) -> Result<&Bed, DemError> {
        self.bed.as_ref().ok_or_else(no_bed)
    }

    fn bed_mut(&mut self) -> Result<&mut Bed, DemError> {
        self.bed.as_mut().ok_or_else(no_bed)
    }

    fn contacts_so_far(&self) -> Option<u64> {
        match self.bed.as_ref()? {
            Bed::Jacobi(bed) => bed.contacts_so_far().ok(),
            Bed::Hertz(bed) => bed.contacts_so_far().ok(),
        }
    }
}

fn no_bed() -> DemError {
    DemError::Invalid("the CUDA backend has no bed: call upload first".into())
}

fn dem_error(e: CudaError) -> DemError {
    DemError::Cuda(e)
}

fn device_params(p: &StepParams) -> DeviceParams {
    DeviceParams {
        time_step: p.time_step,
        gravity: p.gravity,
        iterations: p.iterations,
        relaxation: p.relaxation,
        stabilisation: p.stabilisation,
        friction: p.friction,
        wall_friction: p.wall_friction,
        contact_margin: p.contact_margin,
    }
}

/// The projected-Jacobi device bed of a backend-level bed.
fn jacobi_bed(
    grains: &GrainState,
    container: &Container,
    bodies: &[Body],
    params: &StepParams,
    scenes: usize,
) -> Result<DeviceBed, DemError> {
    let mut device_bodies = Vec::with_capacity(bodies.len());
    for (k, body) in bodies.iter().enumerate() {
        let shape = match &body.geometry {
            BodyGeometry::Shape(Shape::Plane) => DeviceShape::Plane,
            BodyGeometry::Shape(Shape::Box { half_extents }) => DeviceShape::Box {
                half_extents: *half_extents,
            },
            BodyGeometry::Shape(Shape::Cylinder {
                radius,
                half_height,
            }) => DeviceShape::Cylinder {
                radius: *radius,
                half_height: *half_height,
            },
            BodyGeometry::Shape(Shape::Disc { radius, thickness }) => DeviceShape::Disc {
                radius: *radius,
                thickness: *thickness,
            },
            BodyGeometry::Field(_) => {
                return Err(DemError::Invalid(format!(
                    "body {k}: the CUDA backend's projected-Jacobi kernels take analytic shapes \
                     (plane, box, cylinder, disc); a gridded mesh SDF needs the hertz_mindlin \
                     law or --backend dem-cpu"
                )))
            }
        };
        device_bodies.push(DeviceBody {
            shape,
            friction: body.friction,
            inverse_mass: match body.motion {
                Motion::Kinematic => 0.0,
                Motion::Dynamic | Motion::Rotating { .. } => 1.0 / body.mass,
            },
            position: body.state.position,
            velocity: body.state.velocity,
            external_force: body.state.external_force,
        });
    }
    let device_grains = DeviceGrains {
        position: grains.position.clone(),
        velocity: grains.velocity.clone(),
        radius: grains.radius.clone(),
        inverse_mass: grains.inverse_mass.clone(),
    };
    let device_container = match *container {
        Container::Cylinder { radius } => DeviceContainer::Cylinder { radius },
        Container::Box { half_x, half_y } => DeviceContainer::Box { half_x, half_y },
    };
    DeviceBed::new(
        &device_grains,
        device_container,
        &device_bodies,
        &device_params(params),
        scenes,
    )
    .map_err(dem_error)
}

impl Backend for CudaBackend {
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
        self.scenes
    }

    /// One bed copied into every scene, or (Hertz-Mindlin) one bed per scene.
    fn upload_scenes(
        &mut self,
        beds: &[&GrainState],
        container: &Container,
        bodies: &[Body],
        params: &StepParams,
    ) -> Result<(), DemError> {
        for grains in beds {
            grains.check()?;
        }
        params.check()?;
        self.bed = None;
        let bed = match (params.law, beds) {
            (ContactLaw::HertzMindlin(_), _) => {
                crate::sim::dem::hertz::check_bodies(bodies)?;
                Bed::Hertz(Box::new(HertzDeviceBed::with_scenes(
                    beds,
                    container,
                    bodies,
                    params,
                    self.scenes,
                )?))
            }
            (ContactLaw::ProjectedJacobi, [grains]) => {
                let bed = jacobi_bed(grains, container, bodies, params, self.scenes)?;
                Bed::Jacobi(Box::new(bed))
            }
            (ContactLaw::ProjectedJacobi, _) => {
                return Err(DemError::Invalid(format!(
                    "the projected-Jacobi law copies one bed into every scene; {} beds were given \
                     (one bed per scene is Hertz-Mindlin only)",
                    beds.len()
                )))
            }
        };
        self.contacts_at_reset = 0;
        self.bed = Some(bed);
        Ok(())
    }

    fn set_external_forces(&mut self, forces: &[Vec3]) -> Result<(), DemError> {
        match self.bed_mut()? {
            Bed::Hertz(bed) => bed.set_external_forces(forces).map_err(dem_error),
            Bed::Jacobi(_) => crate::sim::dem::backend::set_external_forces_by_body(self, forces),
        }
    }

    fn set_params(&mut self, params: &StepParams) -> Result<(), DemError> {
        params.check()?;
        match (self.bed_mut()?, params.law) {
            (Bed::Jacobi(bed), ContactLaw::ProjectedJacobi) => {
                bed.set_params(&device_params(params)).map_err(dem_error)
            }
            (Bed::Hertz(bed), ContactLaw::HertzMindlin(_)) => bed.set_params(params),
            _ => Err(DemError::Invalid(
                "set_params cannot change the contact law; upload the bed again".into(),
            )),
        }
    }

    fn set_body(&mut self, index: usize, state: BodyState) -> Result<(), DemError> {
        match self.bed_mut()? {
            Bed::Jacobi(bed) => {
                bed.set_body(index, state.position, state.velocity, state.external_force)
            }
            Bed::Hertz(bed) => bed.set_body(index, state),
        }
        .map_err(dem_error)
    }

    fn set_bodies(&mut self, states: &[BodyState]) -> Result<(), DemError> {
        match self.bed_mut()? {
            Bed::Hertz(bed) => bed.set_bodies(states).map_err(dem_error),
            Bed::Jacobi(_) => {
                for (index, state) in states.iter().enumerate() {
                    self.set_body(index, *state)?;
                }
                Ok(())
            }
        }
    }

    fn step(&mut self, steps: usize) -> Result<(), DemError> {
        let start = std::time::Instant::now();
        match self.bed_mut()? {
            Bed::Jacobi(bed) => {
                bed.step(steps).map_err(dem_error)?;
                bed.check().map_err(dem_error)?;
            }
            Bed::Hertz(bed) => bed.step(steps)?,
        }
        // the GPU runs the phases back to back; their split is not measured, all is "solver"
        self.timings.solver += start.elapsed().as_secs_f64();
        self.timings.steps += steps;
        Ok(())
    }

    fn grains(&self) -> Result<GrainState, DemError> {
        let mut out = GrainState::default();
        match self.bed()? {
            Bed::Jacobi(bed) => {
                for scene in 0..bed.scenes() {
                    let g = bed.grains(scene).map_err(dem_error)?;
                    out.position.extend(g.position);
                    out.velocity.extend(g.velocity);
                    out.radius.extend(g.radius);
                    out.inverse_mass.extend(g.inverse_mass);
                }
            }
            Bed::Hertz(bed) => {
                for scene in 0..bed.scenes() {
                    let g = bed.grains(scene).map_err(dem_error)?;
                    out.position.extend(g.position);
                    out.velocity.extend(g.velocity);
                    out.radius.extend(g.radius);
                    out.inverse_mass.extend(g.inverse_mass);
                    out.angular_velocity.extend(g.angular_velocity);
                }
            }
        }
        Ok(out)
    }

    fn bodies(&self) -> Result<Vec<BodyState>, DemError> {
        match self.bed()? {
            Bed::Jacobi(bed) => {
                let readout = bed.bodies().map_err(dem_error)?;
                // the external force is host data: read it back from what set_body last wrote
                let external = bed.external_forces().map_err(dem_error)?;
                Ok(readout
                    .iter()
                    .zip(external)
                    .map(|(b, f)| BodyState {
                        position: b.position,
                        velocity: b.velocity,
                        external_force: f,
                        ..BodyState::default()
                    })
                    .collect())
            }
            Bed::Hertz(bed) => bed.bodies().map_err(dem_error),
        }
    }

    fn body_forces(&self) -> Result<Vec<BodyForce>, DemError> {
        match self.bed()? {
            Bed::Jacobi(bed) => Ok(bed
                .bodies()
                .map_err(dem_error)?
                .iter()
                .map(|b| BodyForce {
                    force: b.force,
                    torque: b.torque,
                    contacts: b.contacts,
                })
                .collect()),
            Bed::Hertz(bed) => bed.body_forces().map_err(dem_error),
        }
    }

    fn timings(&self) -> Timings {
        let mut t = self.timings;
        if let Some(total) = self.contacts_so_far() {
            t.contacts = total.saturating_sub(self.contacts_at_reset) as usize;
        }
        t
    }

    fn reset_timings(&mut self) {
        self.timings = Timings::default();
        self.contacts_at_reset = self.contacts_so_far().unwrap_or(0);
    }

    fn name(&self) -> &'static str {
        "cuda"
    }
}
