//! The CPU backend: the step of [`super::backend`] with rayon across grains and contacts.
//!
//! Choices (see the backend docs for the algorithm):
//! - every parallel loop writes only its own element (a grain's velocity, a contact's impulse)
//!   and every sum runs in the contact order, so a step is bit-for-bit repeatable for any
//!   thread count;
//! - contacts are kept as an array of small structs (the update reads all their fields), the
//!   grain state as structure-of-arrays;
//! - grain–body contacts evaluate the body's SDF (its gradient by central differences for
//!   shapes without an analytic one) only for grains inside the body's bounding sphere.

use std::time::Instant;

use rayon::prelude::*;

use super::backend::{
    Backend, Body, BodyForce, BodyState, ContactLaw, Container, GrainState, Motion, StepParams,
    Timings,
};
use super::hertz::HertzCpu;
use super::sdf::{Sdf, Vec3};
use super::DemError;

/// Grains per rayon task in the per-grain loops (big enough to amortise the task overhead).
const GRAIN_CHUNK: usize = 512;

/// Overlap left alone by the stabilisation, as a fraction of the largest radius: pushing out
/// the last fraction of a percent makes an unconverged Jacobi sweep jitter a resting pile
/// (the same reason Box2D keeps a "linear slop").
pub const OVERLAP_SLOP: f64 = 0.005;

#[derive(Clone, Copy, Debug, Default)]
struct Contact {
    /// Grain a (the impulse acts on it).
    a: u32,
    /// Partner key: a grain index < N, N + wall, or N + walls + body.
    b: u32,
    /// Unit normal pointing from b towards a.
    normal: Vec3,
    /// ψ: gap (negative when overlapping).
    gap: f64,
    friction: f64,
    /// 1 / m_c⁻¹ (mass-split effective mass).
    effective_mass: f64,
    /// b: the normal velocity bias, max(ψ, 0)/Δt (a speculative contact may close).
    bias: f64,
    /// λ: accumulated impulse on a.
    impulse: Vec3,
}

/// The projected-Jacobi step on the CPU (the law [`ContactLaw::ProjectedJacobi`]).
#[derive(Default)]
pub struct JacobiCpu {
    grains: GrainState,
    container: Option<Container>,
    bodies: Vec<Body>,
    /// Bounding radius of each body's geometry around its origin (f64::INFINITY: unbounded).
    body_reach: Vec<f64>,
    params: Option<StepParams>,
    max_radius: f64,
    /// This step's speculative contact distance (grain–grain and grain–wall).
    margin: f64,

    predicted: Vec<Vec3>,
    // Spatial hash (counting sort by bucket): grains of bucket k are
    // sorted[cell_start[k]..cell_start[k + 1]].
    cell_of: Vec<u64>,
    bucket_of: Vec<u32>,
    cell_start: Vec<u32>,
    sorted: Vec<u32>,
    /// Cell key, position and radius of sorted[k], stored in bucket order so the
    /// narrowphase reads a bucket's grains from contiguous memory.
    sorted_key: Vec<u64>,
    sorted_position: Vec<Vec3>,
    sorted_radius: Vec<f64>,
    /// λ of each contact while the solver runs (copied back into `contacts` after it).
    impulse: Vec<Vec3>,

    contacts: Vec<Contact>,
    /// Contacts of grain a are contacts[contact_start[a]..contact_start[a + 1]].
    contact_start: Vec<u32>,
    previous: Vec<Contact>,
    previous_start: Vec<u32>,
    /// CSR of the contacts in which a grain is partner b.
    partner_start: Vec<u32>,
    partner_list: Vec<u32>,
    /// Contacts of each body.
    body_contacts: Vec<Vec<u32>>,
    contact_count: Vec<u32>,

    /// Split-impulse position correction: the overlapping contacts, their pseudo-impulses,
    /// effective masses, and each grain's incidence (contact, sign) in CSR form.
    deep: Vec<u32>,
    deep_impulse: Vec<f64>,
    deep_mass: Vec<f64>,
    deep_start: Vec<u32>,
    deep_list: Vec<(u32, f64)>,
    deep_body: Vec<Vec<u32>>,
    pseudo: Vec<Vec3>,
    pseudo_body: Vec<Vec3>,
    velocity_body: Vec<Vec3>,
    predicted_body: Vec<Vec3>,
    forces: Vec<BodyForce>,
    timings: Timings,
}

impl JacobiCpu {
    fn params(&self) -> Result<StepParams, DemError> {
        self.params
            .ok_or_else(|| DemError::Invalid("the backend has no bed: call upload first".into()))
    }

    fn walls(&self) -> usize {
        self.container.as_ref().map_or(0, |c| c.wall_count())
    }

    /// One step of the algorithm in the backend docs.
    fn step_once(&mut self) -> Result<(), DemError> {
        let params = self.params()?;
        let n = self.grains.len();
        let dt = params.time_step;
        let g = params.gravity;

        // 1. Predict.
        let t0 = Instant::now();
        self.predicted
            .par_iter_mut()
            .zip(self.grains.velocity.par_iter())
            .zip(self.grains.inverse_mass.par_iter())
            .with_min_len(GRAIN_CHUNK)
            .for_each(|((p, v), w)| {
                *p = if *w > 0.0 {
                    [v[0] + dt * g[0], v[1] + dt * g[1], v[2] + dt * g[2]]
                } else {
                    *v
                };
            });
        self.predicted_body.clear();
        for body in &self.bodies {
            let v = body.state.velocity;
            self.predicted_body.push(match body.motion {
                Motion::Kinematic => v,
                Motion::Dynamic | Motion::Rotating { .. } => {
                    let f = body.state.external_force;
                    let m = body.mass;
                    [
                        v[0] + dt * (g[0] + f[0] / m),
                        v[1] + dt * (g[1] + f[1] / m),
                        v[2] + dt * (g[2] + f[2] / m),
                    ]
                }
            });
        }

        // The speculative margin: the configured one, or twice the distance the fastest
        // grain moves in a step, so approaching grains are in the contact list before they
        // touch (capped at a diameter: faster grains than that tunnel in any case).
        let fastest = self
            .predicted
            .par_iter()
            .with_min_len(GRAIN_CHUNK)
            .map(|v| v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
            .reduce(|| 0.0, f64::max)
            .sqrt();
        self.margin = (params.contact_margin * self.max_radius)
            .max(2.0 * dt * fastest)
            .min(2.0 * self.max_radius);

        // 2. Broadphase.
        self.broadphase(&params);
        let t1 = Instant::now();

        // 3. Narrowphase, warm start, incidence lists and mass splitting.
        std::mem::swap(&mut self.contacts, &mut self.previous);
        std::mem::swap(&mut self.contact_start, &mut self.previous_start);
        self.narrowphase(&params);
        self.build_incidence(n, &params);
        let t2 = Instant::now();

        // 4-5. Projected Jacobi.
        self.solve(&params);
        let t3 = Instant::now();

        // 6. Position correction (split impulse), then integrate.
        self.correct_positions(&params);
        self.grains
            .position
            .par_iter_mut()
            .zip(self.grains.velocity.par_iter())
            .zip(self.pseudo.par_iter())
            .with_min_len(GRAIN_CHUNK)
            .for_each(|((x, v), p)| {
                x[0] += dt * (v[0] + p[0]);
                x[1] += dt * (v[1] + p[1]);
                x[2] += dt * (v[2] + p[2]);
            });
        for (k, body) in self.bodies.iter_mut().enumerate() {
            if body.motion == Motion::Dynamic {
                body.state.velocity = self.velocity_body[k];
            }
            let v = body.state.velocity;
            let p = self.pseudo_body[k];
            for i in 0..3 {
                body.state.position[i] += dt * (v[i] + p[i]);
            }
        }
        // 7. Body forces.
        self.body_forces_of_step(dt);
        let t4 = Instant::now();

        self.timings.broadphase += (t1 - t0).as_secs_f64();
        self.timings.narrowphase += (t2 - t1).as_secs_f64();
        self.timings.solver += (t3 - t2).as_secs_f64();
        self.timings.integrate += (t4 - t3).as_secs_f64();
        self.timings.steps += 1;
        self.timings.contacts += self.contacts.len();
        Ok(())
    }

    fn cell_size(&self, params: &StepParams) -> f64 {
        let _ = params;
        2.0 * self.max_radius + self.margin
    }

    fn broadphase(&mut self, params: &StepParams) {
        let n = self.grains.len();
        let h = self.cell_size(params);
        let table = self.cell_start.len() - 1;
        let mask = (table - 1) as u64;
        self.cell_of
            .par_iter_mut()
            .zip(self.bucket_of.par_iter_mut())
            .zip(self.grains.position.par_iter())
            .with_min_len(GRAIN_CHUNK)
            .for_each(|((cell, bucket), x)| {
                let c = cell_of(*x, h);
                *cell = cell_key(c);
                *bucket = (hash(c) & mask) as u32;
            });
        // Counting sort, stable in grain order.
        self.cell_start.iter_mut().for_each(|c| *c = 0);
        for &b in &self.bucket_of {
            self.cell_start[b as usize + 1] += 1;
        }
        for k in 0..table {
            self.cell_start[k + 1] += self.cell_start[k];
        }
        let mut fill: Vec<u32> = self.cell_start[..table].to_vec();
        for i in 0..n {
            let b = self.bucket_of[i] as usize;
            self.sorted[fill[b] as usize] = i as u32;
            fill[b] += 1;
        }
        let grains = &self.grains;
        let cell_of_grain = &self.cell_of;
        self.sorted_key
            .par_iter_mut()
            .zip(self.sorted_position.par_iter_mut())
            .zip(self.sorted_radius.par_iter_mut())
            .zip(self.sorted.par_iter())
            .with_min_len(GRAIN_CHUNK)
            .for_each(|(((key, x), r), &i)| {
                *key = cell_of_grain[i as usize];
                *x = grains.position[i as usize];
                *r = grains.radius[i as usize];
            });
    }

    fn narrowphase(&mut self, params: &StepParams) {
        let dt = params.time_step;
        let n = self.grains.len();
        let margin = self.margin;
        let table = self.cell_start.len() - 1;
        let mask = (table - 1) as u64;
        let walls = self.walls();
        let grains = &self.grains;
        let h = 2.0 * self.max_radius + self.margin;
        let cell_start = &self.cell_start;
        let sorted = &self.sorted;
        let sorted_key = &self.sorted_key;
        let sorted_position = &self.sorted_position;
        let sorted_radius = &self.sorted_radius;
        let container = self.container.as_ref();
        let bodies = &self.bodies;
        let body_reach = &self.body_reach;
        let previous = &self.previous;
        let previous_start = &self.previous_start;
        let has_previous = previous_start.len() == n + 1;

        let blocks: Vec<(Vec<Contact>, Vec<u32>)> = (0..n.div_ceil(GRAIN_CHUNK))
            .into_par_iter()
            .map(|block| {
                let mut out = Vec::with_capacity(GRAIN_CHUNK * 8);
                let mut counts = Vec::with_capacity(GRAIN_CHUNK);
                let start = block * GRAIN_CHUNK;
                for a in start..(start + GRAIN_CHUNK).min(n) {
                    let first = out.len();
                    let xa = grains.position[a];
                    let ra = grains.radius[a];
                    let ca = cell_of(xa, h);
                    // Grain–grain over the half shell: the own cell (partners b > a) and the
                    // 13 neighbour cells after it in (z, y, x) order, so each pair is found
                    // once, by the grain in the lower cell.
                    for &(dx, dy, dz) in &HALF_SHELL {
                        let c = [ca[0] + dx, ca[1] + dy, ca[2] + dz];
                        let own = (dx, dy, dz) == (0, 0, 0);
                        let key = cell_key(c);
                        let bucket = (hash(c) & mask) as usize;
                        for k in cell_start[bucket] as usize..cell_start[bucket + 1] as usize {
                            let b = sorted[k] as usize;
                            if sorted_key[k] != key || (own && b <= a) {
                                continue;
                            }
                            let xb = sorted_position[k];
                            let rb = sorted_radius[k];
                            let d = [xa[0] - xb[0], xa[1] - xb[1], xa[2] - xb[2]];
                            let dist2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
                            let reach = ra + rb + margin;
                            if dist2 >= reach * reach || dist2 == 0.0 {
                                continue;
                            }
                            let dist = dist2.sqrt();
                            out.push(Contact {
                                a: a as u32,
                                b: b as u32,
                                normal: [d[0] / dist, d[1] / dist, d[2] / dist],
                                gap: dist - ra - rb,
                                friction: params.friction,
                                ..Contact::default()
                            });
                        }
                    }
                    // Keys in increasing order within a grain (the warm-start lookup and the
                    // determinism of the order do not depend on the hash's bucket order).
                    out[first..].sort_unstable_by_key(|c| c.b);
                    // Walls.
                    if let Some(container) = container {
                        for wall in 0..walls {
                            if let Some((gap, normal)) = container.wall_contact(wall, xa, ra) {
                                if gap < margin {
                                    out.push(Contact {
                                        a: a as u32,
                                        b: (n + wall) as u32,
                                        normal,
                                        gap,
                                        friction: params.wall_friction,
                                        ..Contact::default()
                                    });
                                }
                            }
                        }
                    }
                    // Bodies.
                    for (k, body) in bodies.iter().enumerate() {
                        let o = body.state.position;
                        let p = [xa[0] - o[0], xa[1] - o[1], xa[2] - o[2]];
                        let v = body.state.velocity;
                        let margin = margin + dt * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
                        let reach = body_reach[k] + ra + margin;
                        if p[0] * p[0] + p[1] * p[1] + p[2] * p[2] > reach * reach {
                            continue;
                        }
                        let gap = body.geometry.distance(p) - ra;
                        if gap < margin {
                            out.push(Contact {
                                a: a as u32,
                                b: (n + walls + k) as u32,
                                normal: body.geometry.gradient(p),
                                gap,
                                friction: body.friction,
                                ..Contact::default()
                            });
                        }
                    }
                    // Warm start from the previous step's contact with the same key.
                    if has_previous {
                        let old =
                            &previous[previous_start[a] as usize..previous_start[a + 1] as usize];
                        for c in &mut out[first..] {
                            if let Some(p) = old.iter().find(|p| p.b == c.b) {
                                c.impulse = p.impulse;
                            } else if (c.b as usize) < n {
                                // The pair may have been found from the other grain last step
                                // (the grains changed cell order): its impulse, reversed.
                                let b = c.b as usize;
                                let other = &previous
                                    [previous_start[b] as usize..previous_start[b + 1] as usize];
                                if let Some(p) = other.iter().find(|p| p.b as usize == a) {
                                    c.impulse = p.impulse.map(|x| -x);
                                }
                            }
                        }
                    }
                    counts.push((out.len() - first) as u32);
                }
                (out, counts)
            })
            .collect();

        self.contacts.clear();
        self.contact_start.clear();
        self.contact_start.push(0);
        let mut total = 0u32;
        for (block, counts) in &blocks {
            self.contacts.extend_from_slice(block);
            for c in counts {
                total += c;
                self.contact_start.push(total);
            }
        }
    }

    /// Partner lists, per-body contact lists, contact counts and the mass-split effective
    /// masses.
    fn build_incidence(&mut self, n: usize, params: &StepParams) {
        let walls = self.walls();
        self.partner_start.clear();
        self.partner_start.resize(n + 1, 0);
        for body in &mut self.body_contacts {
            body.clear();
        }
        for (index, c) in self.contacts.iter().enumerate() {
            let b = c.b as usize;
            if b < n {
                self.partner_start[b + 1] += 1;
            } else if b >= n + walls {
                self.body_contacts[b - n - walls].push(index as u32);
            }
        }
        for i in 0..n {
            self.partner_start[i + 1] += self.partner_start[i];
        }
        self.partner_list.clear();
        self.partner_list
            .resize(self.partner_start[n] as usize, u32::MAX);
        let mut fill: Vec<u32> = self.partner_start[..n].to_vec();
        for (index, c) in self.contacts.iter().enumerate() {
            let b = c.b as usize;
            if b < n {
                self.partner_list[fill[b] as usize] = index as u32;
                fill[b] += 1;
            }
        }
        // n_i: contacts per grain.
        for i in 0..n {
            self.contact_count[i] = (self.contact_start[i + 1] - self.contact_start[i])
                + (self.partner_start[i + 1] - self.partner_start[i]);
        }
        let inverse_mass = &self.grains.inverse_mass;
        let counts = &self.contact_count;
        let dt = params.time_step;
        let bodies = &self.bodies;
        let body_contacts = &self.body_contacts;
        self.contacts
            .par_iter_mut()
            .with_min_len(GRAIN_CHUNK)
            .for_each(|c| {
                let a = c.a as usize;
                let b = c.b as usize;
                let mut w = inverse_mass[a] * counts[a] as f64;
                if b < n {
                    w += inverse_mass[b] * counts[b] as f64;
                } else if b >= n + walls {
                    let k = b - n - walls;
                    if bodies[k].motion == Motion::Dynamic {
                        w += body_contacts[k].len() as f64 / bodies[k].mass;
                    }
                }
                c.effective_mass = if w > 0.0 { 1.0 / w } else { 0.0 };
                c.bias = c.gap.max(0.0) / dt;
            });
    }

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

    fn solve(&mut self, params: &StepParams) {
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
    fn correct_positions(&mut self, params: &StepParams) {
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

    fn body_forces_of_step(&mut self, dt: f64) {
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

/// The own cell and the 13 neighbour cells that follow it in (z, y, x) order.
const HALF_SHELL: [(i64, i64, i64); 14] = [
    (0, 0, 0),
    (1, 0, 0),
    (-1, 1, 0),
    (0, 1, 0),
    (1, 1, 0),
    (-1, -1, 1),
    (0, -1, 1),
    (1, -1, 1),
    (-1, 0, 1),
    (0, 0, 1),
    (1, 0, 1),
    (-1, 1, 1),
    (0, 1, 1),
    (1, 1, 1),
];

/// Iterations of the position correction: a quarter of the velocity solve's (at least 2).
/// It only has to remove a fraction α of each overlap, not converge.
pub fn position_iterations(iterations: usize) -> usize {
    iterations.div_ceil(4).max(2)
}

fn cross(a: Vec3, b: Vec3) -> Vec3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

pub(super) fn cell_of(x: Vec3, h: f64) -> [i64; 3] {
    [
        (x[0] / h).floor() as i64,
        (x[1] / h).floor() as i64,
        (x[2] / h).floor() as i64,
    ]
}

/// The three cell coordinates packed into one integer (21 bits each, wrapping): equal keys
/// are equal cells for any bed smaller than 2²¹ cells across.
pub(super) fn cell_key(c: [i64; 3]) -> u64 {
    let m = (1u64 << 21) - 1;
    ((c[0] as u64) & m) | (((c[1] as u64) & m) << 21) | (((c[2] as u64) & m) << 42)
}

pub(super) fn hash(c: [i64; 3]) -> u64 {
    (c[0] as u64).wrapping_mul(73856093)
        ^ (c[1] as u64).wrapping_mul(19349663)
        ^ (c[2] as u64).wrapping_mul(83492791)
}

/// The radius of a sphere about the body's origin that holds the body: found by walking out
/// along the axes and diagonals until the SDF is positive and then adding it (an SDF bounds
/// the distance to the surface, so origin-distance + f(p) ≥ every surface point's distance
/// in that direction). Generous by design; only used to skip far grains.
pub(super) fn bounding_radius(body: &Body) -> f64 {
    let g = &body.geometry;
    let mut reach: f64 = 0.0;
    let dirs: [Vec3; 14] = [
        [1.0, 0.0, 0.0],
        [-1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, -1.0, 0.0],
        [0.0, 0.0, 1.0],
        [0.0, 0.0, -1.0],
        [1.0, 1.0, 1.0],
        [1.0, 1.0, -1.0],
        [1.0, -1.0, 1.0],
        [1.0, -1.0, -1.0],
        [-1.0, 1.0, 1.0],
        [-1.0, 1.0, -1.0],
        [-1.0, -1.0, 1.0],
        [-1.0, -1.0, -1.0],
    ];
    // Far away, |p| − f(p) bounds the body's extent in every direction (f is 1-Lipschitz).
    let far = 1e3;
    for d in dirs {
        let n = super::sdf::normalized(d);
        let p = [n[0] * far, n[1] * far, n[2] * far];
        let f = g.distance(p);
        reach = reach.max(far - f);
    }
    if !(reach.is_finite()) || reach > 0.9 * far {
        return f64::INFINITY;
    }
    // Corners of a box lie off those 14 rays; the Lipschitz bound above already accounts for
    // them only approximately, so pad by the gap between ray and corner.
    reach * 3f64.sqrt()
}

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
        super::hertz::check_bodies(bodies)?;
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
/// ([`super::hertz`]).
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
            super::hertz::check_bodies(bodies)?;
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
