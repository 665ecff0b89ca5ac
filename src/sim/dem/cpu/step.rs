//! Projected Jacobi on the CPU: the step, and stages 1-3 (predict, broad- and narrowphase).

use std::time::Instant;

use rayon::prelude::*;

use super::{cell_key, cell_of, hash, Contact, JacobiCpu, GRAIN_CHUNK, HALF_SHELL};
use crate::sim::dem::backend::{Motion, StepParams};
use crate::sim::dem::sdf::Sdf;
use crate::sim::dem::DemError;

impl JacobiCpu {
    fn params(&self) -> Result<StepParams, DemError> {
        self.params
            .ok_or_else(|| DemError::Invalid("the backend has no bed: call upload first".into()))
    }

    pub(super) fn walls(&self) -> usize {
        self.container.as_ref().map_or(0, |c| c.wall_count())
    }

    /// One step of the algorithm in the backend docs.
    pub(super) fn step_once(&mut self) -> Result<(), DemError> {
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
}
