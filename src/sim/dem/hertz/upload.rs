//! [`HertzCpu`]'s upload in Morton order, its parameters, bodies and read-back.

use super::{BodyContact, HertzCpu, Packed, SKIN};
use crate::sim::dem::backend::{Body, BodyForce, BodyState, ContactLaw, Container, GrainState};
use crate::sim::dem::backend::{StepParams, Timings};
use crate::sim::dem::cpu::bounding_radius;
use crate::sim::dem::law::LawConstants;
use crate::sim::dem::sdf::Vec3;
use crate::sim::dem::DemError;

impl HertzCpu {
    pub(super) fn params(&self) -> Result<(StepParams, LawConstants), DemError> {
        match (self.params, self.law) {
            (Some(p), Some(l)) => Ok((p, l)),
            _ => Err(DemError::Invalid(
                "the backend has no bed: call upload first".into(),
            )),
        }
    }

    pub fn upload(
        &mut self,
        grains: &GrainState,
        container: &Container,
        bodies: &[Body],
        params: &StepParams,
    ) -> Result<(), DemError> {
        let n = grains.len();
        self.max_radius = grains.radius.iter().cloned().fold(0.0, f64::max);
        if self.max_radius == 0.0 {
            self.max_radius = 1.0;
        }
        self.skin = SKIN * self.max_radius;
        self.order = morton_order(&grains.position, 2.0 * self.max_radius + self.skin);
        let order = &self.order;
        self.grains = GrainState {
            position: sort(order, &grains.position),
            velocity: sort(order, &grains.velocity),
            radius: sort(order, &grains.radius),
            inverse_mass: sort(order, &grains.inverse_mass),
            angular_velocity: if grains.angular_velocity.is_empty() {
                vec![[0.0; 3]; n]
            } else {
                sort(order, &grains.angular_velocity)
            },
        };
        self.mass = self
            .grains
            .inverse_mass
            .iter()
            .map(|w| if *w > 0.0 { 1.0 / w } else { 0.0 })
            .collect();
        self.inverse_inertia = self
            .grains
            .inverse_mass
            .iter()
            .zip(&self.grains.radius)
            .map(|(w, r)| w / (0.4 * r * r))
            .collect();
        self.container = Some(container.clone());
        self.walls = container.wall_count();
        self.bodies = bodies.to_vec();
        self.body_reach = bodies.iter().map(bounding_radius).collect();
        self.set_params(params)?;
        self.reference.clear();
        self.pair_start = vec![0; n + 1];
        self.pair_b.clear();
        self.pair_spring.clear();
        self.pair_out.clear();
        // At least one slot per grain, so that the gather can walk it in chunks of `walls`.
        self.wall_spring = vec![[0.0; 3]; n * self.walls.max(1)];
        self.body_spring = vec![[0.0; 3]; n * bodies.len()];
        self.body_contact = vec![BodyContact::default(); n * bodies.len()];
        self.body_force = vec![[0.0; 3]; bodies.len()];
        self.body_torque = vec![[0.0; 3]; bodies.len()];
        self.forces = vec![BodyForce::default(); bodies.len()];
        self.force = vec![[0.0; 3]; n];
        self.torque = vec![[0.0; 3]; n];
        self.pair_sum = vec![([0.0; 3], [0.0; 3]); n];
        self.pack = (0..n)
            .map(|i| Packed {
                x: self.grains.position[i],
                r: self.grains.radius[i],
                v: self.grains.velocity[i],
                m: self.mass[i],
                w: self.grains.angular_velocity[i],
            })
            .collect();
        self.predicted_body = bodies
            .iter()
            .map(|b| (b.state.velocity, b.state.angular_velocity))
            .collect();
        // The forces of the starting configuration, so the first half-kick is right.
        self.build_neighbours();
        self.compute_forces(false);
        Ok(())
    }

    pub fn set_params(&mut self, params: &StepParams) -> Result<(), DemError> {
        let ContactLaw::HertzMindlin(law) = params.law else {
            return Err(DemError::Invalid(
                "the Hertz-Mindlin backend was given another contact law".into(),
            ));
        };
        // The damping constant takes a root-find: only when the material changes.
        let same = matches!(self.params, Some(p) if p.law == params.law);
        if !same || self.law.is_none() {
            self.law = Some(law.constants());
        }
        self.params = Some(*params);
        Ok(())
    }

    pub fn set_body(&mut self, index: usize, state: BodyState) -> Result<(), DemError> {
        let count = self.bodies.len();
        let body = self.bodies.get_mut(index).ok_or_else(|| {
            DemError::Invalid(format!("body {index} does not exist ({count} bodies)"))
        })?;
        body.state = state;
        Ok(())
    }

    /// The grains, in the caller's order.
    pub fn grains(&self) -> GrainState {
        let g = &self.grains;
        GrainState {
            position: self.unsort(&g.position),
            velocity: self.unsort(&g.velocity),
            radius: self.unsort(&g.radius),
            inverse_mass: self.unsort(&g.inverse_mass),
            angular_velocity: self.unsort(&g.angular_velocity),
        }
    }

    /// `values` (one per grain, in the step's order) in the caller's order.
    fn unsort<T: Copy + Default>(&self, values: &[T]) -> Vec<T> {
        let mut out = vec![T::default(); values.len()];
        for (k, &i) in self.order.iter().enumerate() {
            out[i as usize] = values[k];
        }
        out
    }

    pub fn bodies(&self) -> Vec<BodyState> {
        self.bodies.iter().map(|b| b.state).collect()
    }

    pub fn body_forces(&self) -> Vec<BodyForce> {
        self.forces.clone()
    }

    pub fn timings(&self) -> Timings {
        self.timings
    }

    pub fn reset_timings(&mut self) {
        self.timings = Timings::default();
    }

    /// Neighbour-list builds since upload.
    pub fn builds(&self) -> usize {
        self.builds
    }

    /// The force and torque on each grain from the last step (gravity included), in the
    /// caller's order: what the closing kick applied.
    pub fn grain_forces(&self) -> (Vec<Vec3>, Vec<Vec3>) {
        (self.unsort(&self.force), self.unsort(&self.torque))
    }
}

/// `values` (one per grain, in the caller's order) in the step's `order`.
fn sort<T: Copy>(order: &[u32], values: &[T]) -> Vec<T> {
    order.iter().map(|&i| values[i as usize]).collect()
}

/// The grains' indices sorted along a Morton (Z-order) curve of the cells of size `h` their
/// positions fall in: grains close in space end up close in the order. Ties keep the caller's
/// order, so the result depends on the positions alone.
fn morton_order(position: &[Vec3], h: f64) -> Vec<u32> {
    let low = position.iter().fold([f64::INFINITY; 3], |m, x| {
        [m[0].min(x[0]), m[1].min(x[1]), m[2].min(x[2])]
    });
    let key = |x: &Vec3| {
        let mut key = 0u64;
        for axis in 0..3 {
            // 21 bits per axis; a bed wider than 2²¹ cells only loses locality.
            let c = (((x[axis] - low[axis]) / h).max(0.0) as u64).min((1 << 21) - 1);
            for bit in 0..21 {
                key |= ((c >> bit) & 1) << (3 * bit + axis);
            }
        }
        key
    };
    // A position that is not finite gets some key (NaN clamps to cell 0, ±∞ to an end): the
    // step then reports it as an explosion.
    let mut order: Vec<(u64, u32)> = position.iter().zip(0..).map(|(x, i)| (key(x), i)).collect();
    order.sort_unstable();
    order.into_iter().map(|(_, i)| i).collect()
}
