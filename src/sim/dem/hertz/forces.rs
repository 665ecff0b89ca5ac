//! [`HertzCpu`]'s forces: pair forces, the gather, the body sums and the closing kick.

use std::time::Instant;

use rayon::prelude::*;

use super::step::{body_half_kick, grain_half_kick};
use super::{
    add, mat_t_vec, mat_vec, scale, sub, BodyContact, HertzCpu, Packed, PairOut, GRAIN_CHUNK,
};
use crate::sim::dem::backend::BodyForce;
use crate::sim::dem::law::{cross, hertz_mindlin, ContactInput};
use crate::sim::dem::sdf::{Sdf, Vec3};

impl HertzCpu {
    /// Pair forces, gather, body sums; with `kick`, also the closing half-kick.
    pub(super) fn compute_forces(&mut self, kick: bool) {
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
}
