//! Projected Jacobi on the CPU, stages 4-7: solve, split-impulse correction, body forces.

use rayon::prelude::*;

use super::{cross, position_iterations, JacobiCpu, GRAIN_CHUNK, OVERLAP_SLOP};
use crate::sim::dem::backend::{BodyForce, Motion, StepParams};

impl JacobiCpu {
    /// Velocities from the predicted ones and the current impulses.
    fn gather(&mut self) {
        let impulse = &self.impulse;
        let contact_start = &self.contact_start;
        let partner_start = &self.partner_start;
        let partner_list = &self.partner_list;
        let predicted = &self.predicted;
        self.grains
            .velocity
            .par_iter_mut()
            .zip(self.grains.inverse_mass.par_iter())
            .enumerate()
            .with_min_len(GRAIN_CHUNK)
            .for_each(|(i, (v, w))| {
                let mut s = [0.0; 3];
                for l in &impulse[contact_start[i] as usize..contact_start[i + 1] as usize] {
                    s[0] += l[0];
                    s[1] += l[1];
                    s[2] += l[2];
                }
                for &k in &partner_list[partner_start[i] as usize..partner_start[i + 1] as usize] {
                    let l = impulse[k as usize];
                    s[0] -= l[0];
                    s[1] -= l[1];
                    s[2] -= l[2];
                }
                let p = predicted[i];
                *v = [p[0] + w * s[0], p[1] + w * s[1], p[2] + w * s[2]];
            });
        for (k, body) in self.bodies.iter().enumerate() {
            let p = self.predicted_body[k];
            self.velocity_body[k] = match body.motion {
                Motion::Kinematic => p,
                Motion::Dynamic | Motion::Rotating { .. } => {
                    let mut s = [0.0; 3];
                    for &c in &self.body_contacts[k] {
                        let l = impulse[c as usize];
                        s[0] -= l[0];
                        s[1] -= l[1];
                        s[2] -= l[2];
                    }
                    let w = 1.0 / body.mass;
                    [p[0] + w * s[0], p[1] + w * s[1], p[2] + w * s[2]]
                }
            };
        }
    }

    pub(super) fn solve(&mut self, params: &StepParams) {
        let n = self.grains.len();
        let walls = self.walls();
        let omega = params.relaxation;
        self.impulse.clear();
        self.impulse.extend(self.contacts.iter().map(|c| c.impulse));
        self.gather();
        for _ in 0..params.iterations {
            let velocity = &self.grains.velocity;
            let velocity_body = &self.velocity_body;
            self.impulse
                .par_iter_mut()
                .zip(self.contacts.par_iter())
                .with_min_len(GRAIN_CHUNK)
                .for_each(|(l, c)| {
                    let va = velocity[c.a as usize];
                    let b = c.b as usize;
                    let vb = if b < n {
                        velocity[b]
                    } else if b >= n + walls {
                        velocity_body[b - n - walls]
                    } else {
                        [0.0; 3]
                    };
                    let u = [va[0] - vb[0], va[1] - vb[1], va[2] - vb[2]];
                    let nrm = c.normal;
                    let un = u[0] * nrm[0] + u[1] * nrm[1] + u[2] * nrm[2];
                    let ut = [u[0] - un * nrm[0], u[1] - un * nrm[1], u[2] - un * nrm[2]];
                    let m = omega * c.effective_mass;
                    let ln_old = l[0] * nrm[0] + l[1] * nrm[1] + l[2] * nrm[2];
                    let ln = (ln_old - m * (un + c.bias)).max(0.0);
                    let mut lt = [
                        l[0] - ln_old * nrm[0] - m * ut[0],
                        l[1] - ln_old * nrm[1] - m * ut[1],
                        l[2] - ln_old * nrm[2] - m * ut[2],
                    ];
                    let lt_norm = (lt[0] * lt[0] + lt[1] * lt[1] + lt[2] * lt[2]).sqrt();
                    let limit = c.friction * ln;
                    if lt_norm > limit {
                        let s = if lt_norm > 0.0 { limit / lt_norm } else { 0.0 };
                        lt = [lt[0] * s, lt[1] * s, lt[2] * s];
                    }
                    *l = [
                        ln * nrm[0] + lt[0],
                        ln * nrm[1] + lt[1],
                        ln * nrm[2] + lt[2],
                    ];
                });
            self.gather();
        }
        self.contacts
            .par_iter_mut()
            .zip(self.impulse.par_iter())
            .with_min_len(GRAIN_CHUNK)
            .for_each(|(c, l)| c.impulse = *l);
    }

    /// Split-impulse stabilisation: a projected Jacobi on the overlapping contacts alone
    /// (ψ < −slop), normal only, solving for pseudo-velocities p with
    /// n·(p_a − p_b) ≥ −α (ψ + slop)/Δt. Positions move by Δt (v + p); velocities keep no trace
    /// of it, so pushing overlaps apart never adds kinetic energy (with the bias in the
    /// velocity solve, a heavy body on the bed bounces on the overlaps as on a spring).
    pub(super) fn correct_positions(&mut self, params: &StepParams) {
        let n = self.grains.len();
        let walls = self.walls();
        let dt = params.time_step;
        let alpha = params.stabilisation;
        let slop = OVERLAP_SLOP * self.max_radius;
        self.pseudo.iter_mut().for_each(|p| *p = [0.0; 3]);
        self.pseudo_body.iter_mut().for_each(|p| *p = [0.0; 3]);
        self.deep.clear();
        if alpha == 0.0 {
            return;
        }
        self.deep.extend(
            self.contacts
                .iter()
                .enumerate()
                .filter(|(_, c)| c.gap < -slop)
                .map(|(i, _)| i as u32),
        );
        if self.deep.is_empty() {
            return;
        }
        // Incidence of grains in deep contacts (counting sort, in contact order).
        self.deep_start.clear();
        self.deep_start.resize(n + 1, 0);
        for list in &mut self.deep_body {
            list.clear();
        }
        for (d, &c) in self.deep.iter().enumerate() {
            let c = &self.contacts[c as usize];
            self.deep_start[c.a as usize + 1] += 1;
            let b = c.b as usize;
            if b < n {
                self.deep_start[b + 1] += 1;
            } else if b >= n + walls {
                self.deep_body[b - n - walls].push(d as u32);
            }
        }
        for i in 0..n {
            self.deep_start[i + 1] += self.deep_start[i];
        }
        self.deep_list.clear();
        self.deep_list.resize(self.deep_start[n] as usize, (0, 0.0));
        let mut fill: Vec<u32> = self.deep_start[..n].to_vec();
        for (d, &c) in self.deep.iter().enumerate() {
            let c = &self.contacts[c as usize];
            let a = c.a as usize;
            self.deep_list[fill[a] as usize] = (d as u32, 1.0);
            fill[a] += 1;
            let b = c.b as usize;
            if b < n {
                self.deep_list[fill[b] as usize] = (d as u32, -1.0);
                fill[b] += 1;
            }
        }
        let count = |i: usize| (self.deep_start[i + 1] - self.deep_start[i]) as f64;
        self.deep_mass.clear();
        for &c in &self.deep {
            let c = &self.contacts[c as usize];
            let a = c.a as usize;
            let b = c.b as usize;
            let mut w = self.grains.inverse_mass[a] * count(a);
            if b < n {
                w += self.grains.inverse_mass[b] * count(b);
            } else if b >= n + walls {
                let k = b - n - walls;
                if self.bodies[k].motion == Motion::Dynamic {
                    w += self.deep_body[k].len() as f64 / self.bodies[k].mass;
                }
            }
            self.deep_mass.push(if w > 0.0 { 1.0 / w } else { 0.0 });
        }
        self.deep_impulse.clear();
        self.deep_impulse.resize(self.deep.len(), 0.0);
        for _ in 0..position_iterations(params.iterations) {
            let pseudo = &self.pseudo;
            let pseudo_body = &self.pseudo_body;
            let contacts = &self.contacts;
            let deep = &self.deep;
            self.deep_impulse
                .par_iter_mut()
                .zip(self.deep_mass.par_iter())
                .enumerate()
                .with_min_len(GRAIN_CHUNK)
                .for_each(|(d, (l, m))| {
                    let c = &contacts[deep[d] as usize];
                    let pa = pseudo[c.a as usize];
                    let b = c.b as usize;
                    let pb = if b < n {
                        pseudo[b]
                    } else if b >= n + walls {
                        pseudo_body[b - n - walls]
                    } else {
                        [0.0; 3]
                    };
                    let nrm = c.normal;
                    let un = (pa[0] - pb[0]) * nrm[0]
                        + (pa[1] - pb[1]) * nrm[1]
                        + (pa[2] - pb[2]) * nrm[2];
                    let bias = alpha * (c.gap + slop) / dt;
                    *l = (*l - m * (un + bias)).max(0.0);
                });
            let impulse = &self.deep_impulse;
            let deep_start = &self.deep_start;
            let deep_list = &self.deep_list;
            self.pseudo
                .par_iter_mut()
                .zip(self.grains.inverse_mass.par_iter())
                .enumerate()
                .with_min_len(GRAIN_CHUNK)
                .for_each(|(i, (p, w))| {
                    let mut s = [0.0; 3];
                    for &(d, sign) in &deep_list[deep_start[i] as usize..deep_start[i + 1] as usize]
                    {
                        let nrm = contacts[deep[d as usize] as usize].normal;
                        let l = sign * impulse[d as usize];
                        s[0] += l * nrm[0];
                        s[1] += l * nrm[1];
                        s[2] += l * nrm[2];
                    }
                    *p = [w * s[0], w * s[1], w * s[2]];
                });
            for (k, body) in self.bodies.iter().enumerate() {
                if body.motion != Motion::Dynamic {
                    continue;
                }
                let mut s = [0.0; 3];
                for &d in &self.deep_body[k] {
                    let nrm = contacts[deep[d as usize] as usize].normal;
                    let l = impulse[d as usize];
                    s[0] -= l * nrm[0];
                    s[1] -= l * nrm[1];
                    s[2] -= l * nrm[2];
                }
                self.pseudo_body[k] = s.map(|x| x / body.mass);
            }
        }
    }

    pub(super) fn body_forces_of_step(&mut self, dt: f64) {
        self.forces.clear();
        for (k, body) in self.bodies.iter().enumerate() {
            let o = body.state.position;
            let mut f = BodyForce::default();
            for &c in &self.body_contacts[k] {
                let c = &self.contacts[c as usize];
                let force = [-c.impulse[0] / dt, -c.impulse[1] / dt, -c.impulse[2] / dt];
                let xa = self.grains.position[c.a as usize];
                let reach = self.grains.radius[c.a as usize] + 0.5 * c.gap.min(0.0);
                let arm = [
                    xa[0] - c.normal[0] * reach - o[0],
                    xa[1] - c.normal[1] * reach - o[1],
                    xa[2] - c.normal[2] * reach - o[2],
                ];
                let t = cross(arm, force);
                for ((sum_f, sum_t), (fi, ti)) in f
                    .force
                    .iter_mut()
                    .zip(f.torque.iter_mut())
                    .zip(force.iter().zip(&t))
                {
                    *sum_f += fi;
                    *sum_t += ti;
                }
                if c.impulse.iter().any(|x| *x != 0.0) {
                    f.contacts += 1;
                }
            }
            self.forces.push(f);
        }
    }
}
