//! [`HertzCpu`]'s step (kick, drift, rebuild test, forces) and the half-kicks.

use std::time::Instant;

use rayon::prelude::*;

use super::{add, mat_t_vec, mat_vec, scale, sub, turn, HertzCpu, EXPLODED, GRAIN_CHUNK};
use crate::sim::dem::backend::{Body, BodyState, Motion};
use crate::sim::dem::sdf::Vec3;
use crate::sim::dem::DemError;

impl HertzCpu {
    pub fn step(&mut self, steps: usize) -> Result<(), DemError> {
        for _ in 0..steps {
            self.step_once()?;
        }
        Ok(())
    }

    fn step_once(&mut self) -> Result<(), DemError> {
        let (params, _) = self.params()?;
        let dt = params.time_step;
        let t0 = Instant::now();

        // 1. Kick and drift, and how far the grains have moved since the last list build.
        let half = 0.5 * dt;
        let moved = {
            let force = &self.force;
            let torque = &self.torque;
            let mass = &self.mass;
            let inverse_inertia = &self.inverse_inertia;
            let reference = &self.reference;
            self.grains
                .position
                .par_iter_mut()
                .zip(self.grains.velocity.par_iter_mut())
                .zip(self.grains.angular_velocity.par_iter_mut())
                .zip(self.pack.par_iter_mut())
                .enumerate()
                .with_min_len(GRAIN_CHUNK)
                .map(|(i, (((x, v), w), pack))| {
                    let (dv, dw) =
                        grain_half_kick(force[i], torque[i], mass[i], inverse_inertia[i], half);
                    *v = add(*v, dv);
                    *w = add(*w, dw);
                    pack.v = add(*v, dv);
                    pack.w = add(*w, dw);
                    *x = add(*x, scale(*v, dt));
                    pack.x = *x;
                    let d = sub(*x, reference[i]);
                    let d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
                    // A NaN would vanish in the max: report it as infinitely far.
                    if d2 >= 0.0 {
                        d2
                    } else {
                        f64::INFINITY
                    }
                })
                .reduce(|| 0.0, f64::max)
        };
        let g = params.gravity;
        for (k, body) in self.bodies.iter_mut().enumerate() {
            let (dv, dw) = body_half_kick(body, self.body_force[k], self.body_torque[k], g, half);
            let s = &mut body.state;
            s.velocity = add(s.velocity, dv);
            s.angular_velocity = add(s.angular_velocity, dw);
            self.predicted_body[k] = (add(s.velocity, dv), add(s.angular_velocity, dw));
            s.position = add(s.position, scale(s.velocity, dt));
            if !matches!(body.motion, Motion::Dynamic) {
                s.orientation = turn(s.orientation, s.angular_velocity, dt);
            }
        }

        // 2. Neighbour list.
        let skin = self.skin;
        if !(moved < 0.25 * skin * skin) {
            if !moved.is_finite() {
                return Err(DemError::Unphysical(EXPLODED.into()));
            }
            self.build_neighbours();
        }
        let t1 = Instant::now();
        self.timings.broadphase += (t1 - t0).as_secs_f64();

        // 3-5. Forces and the closing kick.
        self.compute_forces(true);
        self.timings.steps += 1;
        self.timings.contacts += self.touching;
        Ok(())
    }
}

/// A grain's half-kick (Δv, Δω) over `half` from its force and torque; none for a pinned
/// grain (mass 0). The opening kick, the predicted velocities and the closing kick all use it.
#[inline(always)]
pub(super) fn grain_half_kick(
    force: Vec3,
    torque: Vec3,
    mass: f64,
    inverse_inertia: f64,
    half: f64,
) -> (Vec3, Vec3) {
    if mass > 0.0 {
        (
            scale(force, half / mass),
            scale(torque, half * inverse_inertia),
        )
    } else {
        ([0.0; 3], [0.0; 3])
    }
}

/// The half-kick (Δv, Δω) of a body over Δt/2 = `half`: gravity, its external force and
/// torque and the grains' `force` and `torque` of the last step. Zero for a kinematic body; a
/// `Dynamic` body keeps its orientation, so its Δω is zero.
pub(super) fn body_half_kick(
    body: &Body,
    force: Vec3,
    torque: Vec3,
    g: Vec3,
    half: f64,
) -> (Vec3, Vec3) {
    let s = &body.state;
    if !body.motion.is_dynamic() {
        return ([0.0; 3], [0.0; 3]);
    }
    let f = add(add(force, s.external_force), scale(g, body.mass));
    let dw = match body.motion {
        Motion::Rotating { inertia } => scale(
            world_solve(s, inertia, add(torque, s.external_torque)),
            half,
        ),
        _ => [0.0; 3],
    };
    (scale(f, half / body.mass), dw)
}

/// I_w⁻¹ t for a body with principal moments `inertia` (body frame) turned by `s`.
fn world_solve(s: &BodyState, inertia: Vec3, t: Vec3) -> Vec3 {
    let r = s.rotation();
    let local = mat_t_vec(&r, t);
    mat_vec(
        &r,
        [
            local[0] / inertia[0],
            local[1] / inertia[1],
            local[2] / inertia[2],
        ],
    )
}
