//! The CPU's [`Backend`] implementations: the projected-Jacobi step's and [`CpuBackend`]'s.

use super::{bounding_radius, JacobiCpu};
use crate::sim::dem::backend::{
    Backend, Body, BodyForce, BodyState, ContactLaw, Container, GrainState, Motion, StepParams,
    Timings,
};
use crate::sim::dem::hertz::HertzCpu;
use crate::sim::dem::DemError;

impl Backend for JacobiCpu {
    fn upload(
        &mut self,
        grains: &GrainState,
        container: &Container,
        bodies: &[Body],
        params: &StepParams,
    ) -> Result<(), DemError> {
        grains.check()?;
        params.check()?;
        for (k, body) in bodies.iter().enumerate() {
            if matches!(body.motion, Motion::Rotating { .. }) || !body.state.is_unturned() {
                return Err(DemError::Invalid(format!(
                    "body {k} turns; the projected_jacobi contact law moves bodies by \
                     translation only (use hertz_mindlin)"
                )));
            }
        }
        crate::sim::dem::hertz::check_bodies(bodies)?;
        let n = grains.len();
        self.grains = grains.clone();
        self.container = Some(container.clone());
        self.bodies = bodies.to_vec();
        self.body_reach = bodies.iter().map(bounding_radius).collect();
        self.params = Some(*params);
        self.max_radius = grains.radius.iter().cloned().fold(0.0, f64::max);
        if self.max_radius == 0.0 {
            self.max_radius = 1.0;
        }
        self.predicted = vec![[0.0; 3]; n];
        self.cell_of = vec![0; n];
        self.bucket_of = vec![0; n];
        let table = (2 * n).max(64).next_power_of_two();
        self.cell_start = vec![0; table + 1];
        self.sorted = vec![0; n];
        self.sorted_key = vec![0; n];
        self.sorted_position = vec![[0.0; 3]; n];
        self.sorted_radius = vec![0.0; n];
        self.contacts.clear();
        self.contact_start.clear();
        self.previous.clear();
        self.previous_start.clear();
        self.contact_count = vec![0; n];
        self.body_contacts = vec![Vec::new(); bodies.len()];
        self.velocity_body = bodies.iter().map(|b| b.state.velocity).collect();
        self.pseudo = vec![[0.0; 3]; n];
        self.pseudo_body = vec![[0.0; 3]; bodies.len()];
        self.deep_body = vec![Vec::new(); bodies.len()];
        self.predicted_body = self.velocity_body.clone();
        self.forces = vec![BodyForce::default(); bodies.len()];
        Ok(())
    }

    fn set_params(&mut self, params: &StepParams) -> Result<(), DemError> {
        params.check()?;
        self.params = Some(*params);
        Ok(())
    }

    fn set_body(&mut self, index: usize, state: BodyState) -> Result<(), DemError> {
        let count = self.bodies.len();
        let body = self.bodies.get_mut(index).ok_or_else(|| {
            DemError::Invalid(format!("body {index} does not exist ({count} bodies)"))
        })?;
        body.state = state;
        Ok(())
    }

    fn step(&mut self, steps: usize) -> Result<(), DemError> {
        for _ in 0..steps {
            self.step_once()?;
        }
        Ok(())
    }

    fn grains(&self) -> Result<GrainState, DemError> {
        Ok(self.grains.clone())
    }

    fn bodies(&self) -> Result<Vec<BodyState>, DemError> {
        Ok(self.bodies.iter().map(|b| b.state).collect())
    }

    fn body_forces(&self) -> Result<Vec<BodyForce>, DemError> {
        Ok(self.forces.clone())
    }

    fn timings(&self) -> Timings {
        self.timings
    }

    fn reset_timings(&mut self) {
        self.timings = Timings::default();
    }

    fn name(&self) -> &'static str {
        "cpu"
    }
}

/// The rayon CPU backend. Build with [`CpuBackend::new`], then [`Backend::upload`]: the law
/// in the step parameters picks the step, projected Jacobi (above) or Hertz-Mindlin
/// ([`hertz`](crate::sim::dem::hertz)).
#[derive(Default)]
pub struct CpuBackend {
    jacobi: JacobiCpu,
    hertz: HertzCpu,
    soft: bool,
}

impl CpuBackend {
    pub fn new() -> Self {
        Self::default()
    }

    /// The Hertz-Mindlin step, when the uploaded bed uses that law.
    pub fn hertz(&self) -> Option<&HertzCpu> {
        self.soft.then_some(&self.hertz)
    }

    /// Neighbour-list builds since upload (Hertz-Mindlin only; 0 otherwise).
    pub fn neighbour_builds(&self) -> usize {
        if self.soft {
            self.hertz.builds()
        } else {
            0
        }
    }
}

impl Backend for CpuBackend {
    fn upload(
        &mut self,
        grains: &GrainState,
        container: &Container,
        bodies: &[Body],
        params: &StepParams,
    ) -> Result<(), DemError> {
        grains.check()?;
        params.check()?;
        self.soft = matches!(params.law, ContactLaw::HertzMindlin(_));
        if self.soft {
            crate::sim::dem::hertz::check_bodies(bodies)?;
            self.hertz.upload(grains, container, bodies, params)
        } else {
            self.jacobi.upload(grains, container, bodies, params)
        }
    }

    fn set_params(&mut self, params: &StepParams) -> Result<(), DemError> {
        params.check()?;
        if self.soft != matches!(params.law, ContactLaw::HertzMindlin(_)) {
            return Err(DemError::Invalid(
                "set_params cannot change the contact law; upload the bed again".into(),
            ));
        }
        if self.soft {
            self.hertz.set_params(params)
        } else {
            self.jacobi.set_params(params)
        }
    }

    fn set_body(&mut self, index: usize, state: BodyState) -> Result<(), DemError> {
        if self.soft {
            self.hertz.set_body(index, state)
        } else {
            self.jacobi.set_body(index, state)
        }
    }

    fn step(&mut self, steps: usize) -> Result<(), DemError> {
        if self.soft {
            self.hertz.step(steps)
        } else {
            self.jacobi.step(steps)
        }
    }

    fn grains(&self) -> Result<GrainState, DemError> {
        if self.soft {
            Ok(self.hertz.grains())
        } else {
            self.jacobi.grains()
        }
    }

    fn bodies(&self) -> Result<Vec<BodyState>, DemError> {
        if self.soft {
            Ok(self.hertz.bodies())
        } else {
            self.jacobi.bodies()
        }
    }

    fn body_forces(&self) -> Result<Vec<BodyForce>, DemError> {
        if self.soft {
            Ok(self.hertz.body_forces())
        } else {
            self.jacobi.body_forces()
        }
    }

    fn timings(&self) -> Timings {
        if self.soft {
            self.hertz.timings()
        } else {
            self.jacobi.timings()
        }
    }

    fn reset_timings(&mut self) {
        self.hertz.reset_timings();
        self.jacobi.reset_timings();
    }

    fn name(&self) -> &'static str {
        "cpu"
    }
}
