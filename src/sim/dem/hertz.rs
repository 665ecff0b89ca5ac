//! The CPU step of the Hertz-Mindlin law ([`super::law`]): soft spheres that spin, bodies
//! that turn, velocity Verlet, a Verlet neighbour list.
//!
//! # The step
//!
//! Grain i: position xᵢ, velocity vᵢ, spin ωᵢ, radius rᵢ, mass mᵢ, moment of inertia
//! Iᵢ = (2/5) mᵢ rᵢ²; Fᵢ, Tᵢ the force and torque of the previous step.
//!
//! 1. **Kick and drift.** vᵢ ← vᵢ + (Δt/2) Fᵢ/mᵢ, ωᵢ ← ωᵢ + (Δt/2) Tᵢ/Iᵢ, xᵢ ← xᵢ + Δt vᵢ.
//!    Bodies likewise (a kinematic body moves with its given V and Ω; a `Dynamic` one keeps
//!    its orientation; a `Rotating` one turns: Ω ← Ω + (Δt/2) I_w⁻¹ T with the world-frame
//!    inertia I_w = R I Rᵀ, gyroscopic term left out, q ← normalise(q + (Δt/2) (0, Ω) ⊗ q)).
//! 2. **Neighbour list.** Rebuilt when a grain has moved more than half the skin s = 0.4 r_max
//!    since the last build (so no pair closer than r_a + r_b can be missing): every pair a < b
//!    with |x_a − x_b| < r_a + r_b + s, found through a spatial hash of cells of size
//!    2 r_max + s (the PJ backend's hash, 27 cells searched). Each grain's pairs are sorted by
//!    b; a pair keeps its tangential spring from the previous list.
//! 3. **Pair forces**, for every listed pair at once: the law's force when the spheres
//!    overlap, nothing (and the spring cleared) when they do not.
//! 4. **Gather** per grain, in a fixed order (its pairs as a, summed by the pair loop, then
//!    as b, then walls, then bodies): Fᵢ = mᵢ g + Σ contact forces, Tᵢ = Σ contact torques
//!    (the CUDA twin adds the pairs as a one by one onto mᵢ g: the sums differ by round-off). Walls (floor, sides) and
//!    bodies are evaluated here, each with a spring per grain. A body's surface is its SDF in
//!    its own frame: ψ = f(Rᵀ(x − X)) − r, normal R ∇f.
//! 5. **Kick** (a grain's right after its gather). vᵢ ← vᵢ + (Δt/2) Fᵢ/mᵢ,
//!    ωᵢ ← ωᵢ + (Δt/2) Tᵢ/Iᵢ; a dynamic body's kick with
//!    F = −Σ (grain forces from it) + M g + F_ext and the torque about its origin.
//!
//! Every loop writes only its own element and sums run in a fixed order: a step is
//! bit-for-bit repeatable for any thread count.
//!
//! # Speed
//!
//! At upload the grains are put in the order of a Morton curve through their cells (and put
//! back in the caller's order on the way out), so that a grain's partners are mostly a few
//! cache lines from it: 6 % faster on the shipped 14k-grain bed, 14-30 % on a 66k one. Grains
//! of a bed at rest or a replay move little, so the order is not refreshed. The pair loop
//! sums grain a's share of its pairs on the spot and leaves only b's share in `pair_out`; the
//! closing kick rides on the gather, and the displacement test on the opening kick, so a step
//! is three parallel passes.

use std::time::Instant;

use rayon::prelude::*;

use super::backend::{Body, BodyForce, BodyState, Container, GrainState, Motion, StepParams};
use super::backend::{ContactLaw, Timings};
use super::cpu::{bounding_radius, cell_key, cell_of, hash};
use super::law::{cross, hertz_mindlin, ContactInput, LawConstants};
use super::sdf::{Sdf, Vec3};
use super::DemError;

const GRAIN_CHUNK: usize = 512;
/// The neighbour list's skin as a fraction of the largest radius.
pub const SKIN: f64 = 0.4;

/// The error of a step whose displacement test found a position that is not finite.
pub const EXPLODED: &str = "a grain's position is no longer finite: the bed exploded (is the \
                            time step above the contact law's stable step?)";

/// What the Hertz-Mindlin step needs of the bodies, on any backend: a dynamic body has a
/// positive mass, a rotating one positive moments of inertia.
pub fn check_bodies(bodies: &[Body]) -> Result<(), DemError> {
    for (k, body) in bodies.iter().enumerate() {
        if body.motion.is_dynamic() && !(body.mass > 0.0 && body.mass.is_finite()) {
            return Err(DemError::Invalid(format!(
                "body {k} is dynamic with mass {}; its mass must be positive",
                body.mass
            )));
        }
        if let Motion::Rotating { inertia } = body.motion {
            if !inertia.iter().all(|i| *i > 0.0 && i.is_finite()) {
                return Err(DemError::Invalid(format!(
                    "body {k} rotates with moments of inertia {inertia:?}; each must \
                     be positive"
                )));
            }
        }
    }
    Ok(())
}

#[derive(Clone, Copy, Debug, Default)]
struct Packed {
    x: Vec3,
    r: f64,
    v: Vec3,
    m: f64,
    w: Vec3,
}

/// What a pair leaves for its grain b (a's share is summed in the pair loop itself): the
/// force on a, which b feels negated, and the torque on b.
#[derive(Clone, Copy, Debug, Default)]
struct PairOut {
    force: Vec3,
    torque_b: Vec3,
}

/// A grain's contact with a body this step: force on the body, torque about its origin.
#[derive(Clone, Copy, Debug, Default)]
struct BodyContact {
    force: Vec3,
    torque: Vec3,
    touching: bool,
}

#[derive(Default)]
pub struct HertzCpu {
    /// The grains in the step's own order: sorted along a Morton curve of their cells at
    /// upload, so that a grain's neighbours lie near it in memory. `order[k]` is the caller's
    /// index of grain k; every array below is in the step's order, and what leaves the step
    /// (grains, grain forces) is put back in the caller's.
    order: Vec<u32>,
    grains: GrainState,
    mass: Vec<f64>,
    inverse_inertia: Vec<f64>,
    force: Vec<Vec3>,
    torque: Vec<Vec3>,
    /// What the contacts read of each grain, packed into one record so that a partner's
    /// data is one or two cache lines: position, radius, mass and the velocities the
    /// damping sees, v̂ = v(n+½) + (Δt/2) F(n)/m and likewise ω̂ (the end of the step
    /// predicted with the last force).
    pack: Vec<Packed>,
    /// A body's predicted velocity and spin.
    predicted_body: Vec<(Vec3, Vec3)>,
    container: Option<Container>,
    walls: usize,
    bodies: Vec<Body>,
    body_reach: Vec<f64>,
    body_force: Vec<Vec3>,
    body_torque: Vec<Vec3>,
    params: Option<StepParams>,
    law: Option<LawConstants>,
    max_radius: f64,
    skin: f64,

    /// Positions at the last neighbour-list build.
    reference: Vec<Vec3>,
    pair_start: Vec<u32>,
    pair_b: Vec<u32>,
    pair_spring: Vec<Vec3>,
    pair_out: Vec<PairOut>,
    /// Each grain's sum over its pairs as a (force, torque), written by the pair loop.
    pair_sum: Vec<(Vec3, Vec3)>,
    /// Pairs in which grain i is b: partner_list[partner_start[i]..partner_start[i + 1]].
    partner_start: Vec<u32>,
    partner_list: Vec<u32>,
    /// Springs of grain–wall (grain-major, `walls` per grain) and grain–body contacts
    /// (body-major, one per grain).
    wall_spring: Vec<Vec3>,
    body_spring: Vec<Vec3>,
    body_contact: Vec<BodyContact>,
    forces: Vec<BodyForce>,
    /// Grain–grain pairs in contact this step.
    touching: usize,
    builds: usize,
    timings: Timings,
}

fn add(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

fn sub(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn scale(a: Vec3, s: f64) -> Vec3 {
    [a[0] * s, a[1] * s, a[2] * s]
}

fn mat_vec(m: &[[f64; 3]; 3], v: Vec3) -> Vec3 {
    [
        m[0][0] * v[0] + m[0][1] * v[1] + m[0][2] * v[2],
        m[1][0] * v[0] + m[1][1] * v[1] + m[1][2] * v[2],
        m[2][0] * v[0] + m[2][1] * v[1] + m[2][2] * v[2],
    ]
}

fn mat_t_vec(m: &[[f64; 3]; 3], v: Vec3) -> Vec3 {
    [
        m[0][0] * v[0] + m[1][0] * v[1] + m[2][0] * v[2],
        m[0][1] * v[0] + m[1][1] * v[1] + m[2][1] * v[2],
        m[0][2] * v[0] + m[1][2] * v[1] + m[2][2] * v[2],
    ]
}

/// q ← normalise(q + dt/2 (0, Ω) ⊗ q): the orientation turned by Ω over dt.
pub fn turn(q: [f64; 4], omega: Vec3, dt: f64) -> [f64; 4] {
    let [w, x, y, z] = q;
    let [a, b, c] = omega;
    let h = 0.5 * dt;
    let r = [
        w - h * (a * x + b * y + c * z),
        x + h * (a * w + b * z - c * y),
        y + h * (b * w + c * x - a * z),
        z + h * (c * w + a * y - b * x),
    ];
    let n = (r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3]).sqrt();
    [r[0] / n, r[1] / n, r[2] / n, r[3] / n]
}

impl HertzCpu {
    fn params(&self) -> Result<(StepParams, LawConstants), DemError> {
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

    /// Pair forces, gather, body sums; with `kick`, also the closing half-kick.
    fn compute_forces(&mut self, kick: bool) {
        let Ok((params, law)) = self.params() else {
            return;
        };
        let dt = params.time_step;
        let n = self.grains.len();
        let t0 = Instant::now();

        // 3. Pair forces.
        {
            let pack = &self.pack;
            let pair_start = &self.pair_start;
            let pair_b = &self.pair_b;
            let friction = params.friction;
            let out = &mut self.pair_out;
            let springs = &mut self.pair_spring;
            let sums = &mut self.pair_sum;
            // Chunks of whole grains: split the pair arrays at grain boundaries.
            let mut chunks = Vec::with_capacity(n / GRAIN_CHUNK + 2);
            let (mut out_rest, mut spring_rest, mut sum_rest) =
                (&mut out[..], &mut springs[..], &mut sums[..]);
            let mut first = 0;
            while first < n {
                let last = (first + GRAIN_CHUNK).min(n);
                let len = (pair_start[last] - pair_start[first]) as usize;
                let (o, or) = out_rest.split_at_mut(len);
                let (s, sr) = spring_rest.split_at_mut(len);
                let (m, mr) = sum_rest.split_at_mut(last - first);
                chunks.push((first, o, s, m));
                out_rest = or;
                spring_rest = sr;
                sum_rest = mr;
                first = last;
            }
            self.touching = chunks
                .into_par_iter()
                .map(|(first, out, springs, sums)| {
                    let mut touching = 0usize;
                    let base = pair_start[first] as usize;
                    for (k, sum) in sums.iter_mut().enumerate() {
                        let a = first + k;
                        let pa = &pack[a];
                        let (xa, ra) = (pa.x, pa.r);
                        let (mut force, mut torque) = ([0.0; 3], [0.0; 3]);
                        for p in pair_start[a] as usize..pair_start[a + 1] as usize {
                            let pb = &pack[pair_b[p] as usize];
                            let rb = pb.r;
                            let d = sub(xa, pb.x);
                            let dist2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
                            let reach = ra + rb;
                            let slot = p - base;
                            if dist2 >= reach * reach || dist2 == 0.0 {
                                springs[slot] = [0.0; 3];
                                out[slot] = PairOut::default();
                                continue;
                            }
                            let dist = dist2.sqrt();
                            let overlap = reach - dist;
                            let (ma, mb) = (pa.m, pb.m);
                            let m = if ma > 0.0 && mb > 0.0 {
                                ma * mb / (ma + mb)
                            } else {
                                ma.max(mb)
                            };
                            let c = ContactInput {
                                normal: scale(d, 1.0 / dist),
                                overlap,
                                radius: ra * rb / reach,
                                mass: m,
                                lever_a: ra - 0.5 * overlap,
                                lever_b: rb - 0.5 * overlap,
                                velocity_a: pa.v,
                                velocity_b: pb.v,
                                spin_a: pa.w,
                                spin_b: pb.w,
                                friction,
                            };
                            let f = hertz_mindlin(&law, &c, dt, &mut springs[slot]);
                            touching += 1;
                            force = add(force, f.force);
                            torque = add(torque, f.torque_a);
                            out[slot] = PairOut {
                                force: f.force,
                                torque_b: f.torque_b,
                            };
                        }
                        *sum = (force, torque);
                    }
                    touching
                })
                .sum();
        }
        let t1 = Instant::now();

        // 4. Gather, walls and bodies.
        {
            let g = params.gravity;
            let pack = &self.pack;
            let predicted_body = &self.predicted_body;
            let pair_sum = &self.pair_sum;
            let pair_out = &self.pair_out;
            let partner_start = &self.partner_start;
            let partner_list = &self.partner_list;
            let walls = self.walls;
            let container = self.container.as_ref();
            let bodies = &self.bodies;
            let body_reach = &self.body_reach;
            let wall_friction = params.wall_friction;
            let nb = bodies.len();
            let rotations: Vec<[[f64; 3]; 3]> = bodies.iter().map(|b| b.state.rotation()).collect();
            // Each grain owns its slots of the wall arrays (grain-major) and, in each body's
            // row, of the body arrays (body-major).
            let wall_spring = &mut self.wall_spring;
            let body_spring = &mut self.body_spring;
            let body_contact = &mut self.body_contact;
            let mut body_spring_rows: Vec<&mut [Vec3]> = body_spring.chunks_mut(n.max(1)).collect();
            let mut body_contact_rows: Vec<&mut [BodyContact]> =
                body_contact.chunks_mut(n.max(1)).collect();
            // Bodies are few: evaluate their contacts in a separate parallel pass per body,
            // grain by grain, writing its own slot; the gather then reads them.
            for k in 0..nb {
                let body = &bodies[k];
                let rot = &rotations[k];
                let reach = body_reach[k];
                let o = body.state.position;
                let spring_row = &mut body_spring_rows[k];
                let contact_row = &mut body_contact_rows[k];
                spring_row
                    .par_iter_mut()
                    .zip(contact_row.par_iter_mut())
                    .enumerate()
                    .with_min_len(GRAIN_CHUNK)
                    .for_each(|(i, (spring, out))| {
                        *out = BodyContact::default();
                        let Packed { x, r, v, m, w } = pack[i];
                        let rel = sub(x, o);
                        if rel[0] * rel[0] + rel[1] * rel[1] + rel[2] * rel[2]
                            > (reach + r) * (reach + r)
                        {
                            *spring = [0.0; 3];
                            return;
                        }
                        let local = mat_t_vec(rot, rel);
                        let gap = body.geometry.distance(local) - r;
                        if gap >= 0.0 {
                            *spring = [0.0; 3];
                            return;
                        }
                        let normal = mat_vec(rot, body.geometry.gradient(local));
                        let overlap = -gap;
                        let lever = r - 0.5 * overlap;
                        let point = sub(x, scale(normal, lever));
                        let arm = sub(point, o);
                        let (v_body, w_body) = predicted_body[k];
                        let vb = add(v_body, cross(w_body, arm));
                        let c = ContactInput {
                            normal,
                            overlap,
                            radius: r,
                            mass: m,
                            lever_a: lever,
                            lever_b: 0.0,
                            velocity_a: v,
                            velocity_b: vb,
                            spin_a: w,
                            spin_b: [0.0; 3],
                            friction: body.friction,
                        };
                        let f = hertz_mindlin(&law, &c, dt, spring);
                        *out = BodyContact {
                            force: f.force,
                            torque: f.torque_a,
                            touching: f.normal > 0.0,
                        };
                    });
            }
            let body_contact = &self.body_contact;
            let body_rows: Vec<&[BodyContact]> = if nb > 0 {
                body_contact.chunks(n.max(1)).collect()
            } else {
                Vec::new()
            };
            // With `kick`, each grain's closing half-kick follows its gather in the same pass.
            let half = 0.5 * dt;
            let mass = &self.mass;
            let inverse_inertia = &self.inverse_inertia;
            self.force
                .par_iter_mut()
                .zip(self.torque.par_iter_mut())
                .zip(wall_spring.par_chunks_mut(walls.max(1)))
                .zip(self.grains.velocity.par_iter_mut())
                .zip(self.grains.angular_velocity.par_iter_mut())
                .enumerate()
                .with_min_len(GRAIN_CHUNK)
                .for_each(|(i, ((((f, t), wall_springs), velocity), spin))| {
                    let Packed { x, r, v, m, w } = pack[i];
                    let mut force = add(scale(g, m), pair_sum[i].0);
                    let mut torque = pair_sum[i].1;
                    for &p in
                        &partner_list[partner_start[i] as usize..partner_start[i + 1] as usize]
                    {
                        let o = &pair_out[p as usize];
                        force = sub(force, o.force);
                        torque = add(torque, o.torque_b);
                    }
                    if let Some(container) = container {
                        for (wall, spring) in wall_springs[..walls].iter_mut().enumerate() {
                            if !container.may_touch(wall, x, r) {
                                *spring = [0.0; 3];
                                continue;
                            }
                            match container.wall_contact(wall, x, r) {
                                Some((gap, normal)) if gap < 0.0 => {
                                    let overlap = -gap;
                                    let c = ContactInput {
                                        normal,
                                        overlap,
                                        radius: r,
                                        mass: m,
                                        lever_a: r - 0.5 * overlap,
                                        lever_b: 0.0,
                                        velocity_a: v,
                                        velocity_b: [0.0; 3],
                                        spin_a: w,
                                        spin_b: [0.0; 3],
                                        friction: wall_friction,
                                    };
                                    let o = hertz_mindlin(&law, &c, dt, spring);
                                    force = add(force, o.force);
                                    torque = add(torque, o.torque_a);
                                }
                                _ => *spring = [0.0; 3],
                            }
                        }
                    }
                    for row in &body_rows {
                        let c = row[i];
                        force = add(force, c.force);
                        torque = add(torque, c.torque);
                    }
                    *f = force;
                    *t = torque;
                    if kick {
                        let (dv, dw) =
                            grain_half_kick(force, torque, mass[i], inverse_inertia[i], half);
                        *velocity = add(*velocity, dv);
                        *spin = add(*spin, dw);
                    }
                });
        }

        // Body sums: the grains' force on each body and its torque about the origin.
        for k in 0..self.bodies.len() {
            let o = self.bodies[k].state.position;
            let row = &self.body_contact[k * n..(k + 1) * n];
            let grains = &self.grains;
            // In grain order, so the sums are the same for any thread count (a handful of
            // touching grains among n: cheap next to the step).
            let (mut force, mut torque, mut contacts) = ([0.0; 3], [0.0; 3], 0usize);
            for (i, bc) in row.iter().enumerate() {
                if !bc.touching && bc.force == [0.0; 3] {
                    continue;
                }
                let on_body = scale(bc.force, -1.0);
                // Lever from the body's origin to the grain's centre; the grain's own contact
                // torque corrects it to the contact point.
                let arm = sub(grains.position[i], o);
                force = add(force, on_body);
                torque = add(torque, add(cross(arm, on_body), scale(bc.torque, -1.0)));
                contacts += usize::from(bc.touching);
            }
            self.body_force[k] = force;
            self.body_torque[k] = torque;
            self.forces[k] = BodyForce {
                force,
                torque,
                contacts,
            };
        }
        let t2 = Instant::now();

        // 5. The bodies' closing kick (the grains' came with their gather).
        if kick {
            let half = 0.5 * dt;
            let g = params.gravity;
            for (k, body) in self.bodies.iter_mut().enumerate() {
                let (dv, dw) =
                    body_half_kick(body, self.body_force[k], self.body_torque[k], g, half);
                body.state.velocity = add(body.state.velocity, dv);
                body.state.angular_velocity = add(body.state.angular_velocity, dw);
            }
        }
        let t3 = Instant::now();
        self.timings.narrowphase += (t1 - t0).as_secs_f64();
        self.timings.solver += (t2 - t1).as_secs_f64();
        self.timings.integrate += (t3 - t2).as_secs_f64();
    }

    /// Rebuilds the pair list (every a < b within r_a + r_b + skin), carrying each surviving
    /// pair's spring over, and the partner lists.
    fn build_neighbours(&mut self) {
        self.builds += 1;
        let n = self.grains.len();
        let h = 2.0 * self.max_radius + self.skin;
        let table = (2 * n).max(64).next_power_of_two();
        let mask = (table - 1) as u64;
        let positions = &self.grains.position;
        let radius = &self.grains.radius;
        let keys: Vec<(u64, u32)> = positions
            .par_iter()
            .with_min_len(GRAIN_CHUNK)
            .map(|x| {
                let c = cell_of(*x, h);
                (cell_key(c), (hash(c) & mask) as u32)
            })
            .collect();
        let mut cell_start = vec![0u32; table + 1];
        for (_, b) in &keys {
            cell_start[*b as usize + 1] += 1;
        }
        for k in 0..table {
            cell_start[k + 1] += cell_start[k];
        }
        let mut fill = cell_start[..table].to_vec();
        let mut sorted = vec![0u32; n];
        for (i, (_, b)) in keys.iter().enumerate() {
            sorted[fill[*b as usize] as usize] = i as u32;
            fill[*b as usize] += 1;
        }
        let skin = self.skin;
        let old_start = std::mem::take(&mut self.pair_start);
        let old_b = std::mem::take(&mut self.pair_b);
        let old_spring = std::mem::take(&mut self.pair_spring);
        let has_old = old_start.len() == n + 1;
        let blocks: Vec<(Vec<u32>, Vec<Vec3>, Vec<u32>)> = (0..n.div_ceil(GRAIN_CHUNK))
            .into_par_iter()
            .map(|block| {
                let mut partners = Vec::with_capacity(GRAIN_CHUNK * 8);
                let mut springs = Vec::with_capacity(GRAIN_CHUNK * 8);
                let mut counts = Vec::with_capacity(GRAIN_CHUNK);
                let start = block * GRAIN_CHUNK;
                for a in start..(start + GRAIN_CHUNK).min(n) {
                    let first = partners.len();
                    let xa = positions[a];
                    let ra = radius[a];
                    let ca = cell_of(xa, h);
                    for dz in -1..=1 {
                        for dy in -1..=1 {
                            for dx in -1..=1 {
                                let c = [ca[0] + dx, ca[1] + dy, ca[2] + dz];
                                let key = cell_key(c);
                                let bucket = (hash(c) & mask) as usize;
                                for &b in &sorted
                                    [cell_start[bucket] as usize..cell_start[bucket + 1] as usize]
                                {
                                    let bi = b as usize;
                                    if bi <= a || keys[bi].0 != key {
                                        continue;
                                    }
                                    let d = sub(xa, positions[bi]);
                                    let reach = ra + radius[bi] + skin;
                                    if d[0] * d[0] + d[1] * d[1] + d[2] * d[2] < reach * reach {
                                        partners.push(b);
                                    }
                                }
                            }
                        }
                    }
                    partners[first..].sort_unstable();
                    // Springs carried over: both lists are sorted by b.
                    if has_old {
                        let old = old_start[a] as usize..old_start[a + 1] as usize;
                        let mut j = old.start;
                        for &b in &partners[first..] {
                            while j < old.end && old_b[j] < b {
                                j += 1;
                            }
                            springs.push(if j < old.end && old_b[j] == b {
                                old_spring[j]
                            } else {
                                [0.0; 3]
                            });
                        }
                    } else {
                        springs.extend(std::iter::repeat([0.0; 3]).take(partners.len() - first));
                    }
                    counts.push((partners.len() - first) as u32);
                }
                (partners, springs, counts)
            })
            .collect();
        let mut start = Vec::with_capacity(n + 1);
        start.push(0u32);
        let mut total = 0u32;
        let mut pair_b = Vec::with_capacity(blocks.iter().map(|b| b.0.len()).sum());
        let mut springs = Vec::with_capacity(pair_b.capacity());
        for (partners, block_springs, counts) in blocks {
            pair_b.extend_from_slice(&partners);
            springs.extend_from_slice(&block_springs);
            for c in counts {
                total += c;
                start.push(total);
            }
        }
        // Partner lists: the pairs in which each grain is b, in pair order.
        let mut partner_start = vec![0u32; n + 1];
        for &b in &pair_b {
            partner_start[b as usize + 1] += 1;
        }
        for i in 0..n {
            partner_start[i + 1] += partner_start[i];
        }
        let mut fill = partner_start[..n].to_vec();
        let mut partner_list = vec![0u32; pair_b.len()];
        for (p, &b) in pair_b.iter().enumerate() {
            partner_list[fill[b as usize] as usize] = p as u32;
            fill[b as usize] += 1;
        }
        self.pair_out = vec![PairOut::default(); pair_b.len()];
        self.pair_start = start;
        self.pair_b = pair_b;
        self.pair_spring = springs;
        self.partner_start = partner_start;
        self.partner_list = partner_list;
        self.reference = self.grains.position.clone();
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

/// A grain's half-kick (Δv, Δω) over `half` from its force and torque; none for a pinned
/// grain (mass 0). The opening kick, the predicted velocities and the closing kick all use it.
#[inline(always)]
fn grain_half_kick(
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
fn body_half_kick(body: &Body, force: Vec3, torque: Vec3, g: Vec3, half: f64) -> (Vec3, Vec3) {
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
