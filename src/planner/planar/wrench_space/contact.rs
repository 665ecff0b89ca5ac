//! A wrench-space hop's contact rows: each sole's frame and wrench, the equations of motion
//! with the grains' inertia, and the maximum-dissipation rows of a ground phase.

use super::{dot, ContactFrame, WrenchSpacePlanner};
use crate::model::multibody::Frame;
use crate::scalar::Scalar;

use crate::terrain::wrench_set::WrenchSet;

impl WrenchSpacePlanner {
    /// Contact `c`'s depth, tilt and twist Jacobians at q.
    pub fn contact_frame<S: Scalar>(&self, q: &[S], c: usize) -> ContactFrame<S> {
        self.frame_in(&self.robot.body.frames(q), c)
    }

    /// Every contact's frame at q, from one computation of the bodies' frames: CasADi does
    /// not merge repeated subexpressions, so recomputing them per contact and per Jacobian
    /// would enlarge every function IPOPT evaluates.
    pub fn contact_frames<S: Scalar>(&self, q: &[S]) -> Vec<ContactFrame<S>> {
        let frames = self.robot.body.frames(q);
        (0..self.robot.contacts.len())
            .map(|c| self.frame_in(&frames, c))
            .collect()
    }

    /// Contact `c`'s frame from the bodies' frames at q.
    pub(super) fn frame_in<S: Scalar>(&self, frames: &[Frame<S>], c: usize) -> ContactFrame<S> {
        let body = &self.robot.body;
        let spec = &self.robot.contacts[c];
        let frame = &frames[spec.body];
        let centre = frame.transform(spec.point);
        let rate: Vec<S> = body
            .angle_jacobian(spec.body)
            .into_iter()
            .map(S::constant)
            .collect();
        let torque_local = [spec.point[0], spec.point[1] + self.space.torque_point()];
        let [rx, rz] = body.point_jacobian_in(frames, spec.body, torque_local);
        let [cx, cz] = body.point_jacobian_in(frames, spec.body, spec.point);
        // A foot whose angle only locked coordinates turn (a rail's foot) has a constant
        // tilt: written as the constant, the wrench set's interpolant in the tilt folds away
        // instead of being traced and differentiated at every node.
        let angle = body.angle_jacobian(spec.body);
        let fixed = angle
            .iter()
            .enumerate()
            .all(|(j, &a)| a == 0.0 || self.robot.locked.contains(&j));
        let tilt = if fixed {
            S::constant(body.frames(&self.robot.standing)[spec.body].angle)
        } else {
            frame.angle.clone()
        };
        ContactFrame {
            depth: centre[1].clone(),
            tilt,
            directions: fixed.then(|| self.free_directions(spec.body, torque_local)),
            twist_r: [rx, rz, rate.clone()],
            twist_center: [cx, cz, rate],
        }
    }

    /// M_g of contact `c` (diagonal, surface axes).
    pub fn grain_inertia(&self, c: usize) -> [f64; 3] {
        let body = &self.robot.body.bodies[self.robot.contacts[c].body];
        let f = self.grain_inertia;
        [f * body.mass, f * body.mass, f * body.inertia]
    }

    /// An orthonormal basis of the twists (ṗ_r,x, ṗ_r,z, rate) a foot can have on a body
    /// that only locked coordinates turn: its free coordinates' twist columns, constant
    /// there (translations along fixed directions). The rail's foot has one.
    fn free_directions(&self, body: usize, torque_local: [f64; 2]) -> Vec<[f64; 3]> {
        let robot = &self.robot;
        let [jx, jz] = robot
            .body
            .point_jacobian(&robot.standing, body, torque_local);
        let mut basis: Vec<[f64; 3]> = Vec::new();
        for j in (0..robot.n_q()).filter(|j| !robot.locked.contains(j)) {
            let mut d = [jx[j], jz[j], 0.0];
            for b in &basis {
                let p = d[0] * b[0] + d[1] * b[1];
                d = [d[0] - p * b[0], d[1] - p * b[1], 0.0];
            }
            let norm = d[0].hypot(d[1]);
            if norm > 1e-9 {
                basis.push([d[0] / norm, d[1] / norm, 0.0]);
            }
        }
        basis
    }

    /// The contact's wrench w = B(θ) λ at q with weights `lambda`, and the vertices. On a
    /// foot with [`ContactFrame::directions`], each vertex is projected onto them: the
    /// equations of motion (J_tᵀ w over the free coordinates) and the dissipation (gᵀw, g in
    /// their span) see only that part, so the projection is exact, and it traces a third of
    /// the wrench set's outputs for a rail's foot. [`Self::full_wrench`] is the whole one.
    pub fn wrench<S: Scalar>(
        &self,
        frame: &ContactFrame<S>,
        lambda: &[S],
    ) -> ([S; 3], Vec<[S; 3]>) {
        let vertices = match &frame.directions {
            Some(directions) if directions.len() < 3 => {
                let parts: Vec<Vec<S>> = directions
                    .iter()
                    .map(|d| self.space.projected_vertices(&frame.depth, &frame.tilt, *d))
                    .collect();
                (0..self.space.n_directions())
                    .map(|i| {
                        [0, 1, 2].map(|k| {
                            directions
                                .iter()
                                .zip(&parts)
                                .fold(S::zero(), |s, (d, p)| s + p[i].clone() * d[k])
                        })
                    })
                    .collect()
            }
            _ => self.space.vertices(&frame.depth, &frame.tilt),
        };
        Self::combine(lambda, vertices)
    }

    /// The whole wrench B(θ) λ (the guide's share included), for what a run reports.
    pub fn full_wrench(&self, frame: &ContactFrame<f64>, lambda: &[f64]) -> [f64; 3] {
        Self::combine(lambda, self.space.vertices(&frame.depth, &frame.tilt)).0
    }

    fn combine<S: Scalar>(lambda: &[S], vertices: Vec<[S; 3]>) -> ([S; 3], Vec<[S; 3]>) {
        let mut w = [S::zero(), S::zero(), S::zero()];
        for (l, v) in lambda.iter().zip(&vertices) {
            for k in 0..3 {
                w[k] = w[k].clone() + l.clone() * v[k].clone();
            }
        }
        (w, vertices)
    }

    /// M a + bias − B u − springs − Σ_c J_t,cᵀ w_c at one node, for the contacts `active`
    /// with their frames at the node's q (`frames[c]` for contact c).
    pub fn dynamics_residual<S: Scalar>(
        &self,
        x: &[S],
        u: &[S],
        active: &[usize],
        frames: &[ContactFrame<S>],
    ) -> Vec<S> {
        let l = self.layout();
        let (q, v) = (&x[..l.n_q], &x[l.n_q..2 * l.n_q]);
        let a = &u[l.accel()..l.accel() + l.n_q];
        let body = &self.robot.body;
        let m = body.mass_matrix(q);
        let bias = body.bias_forces(q, v);
        let efforts = self.robot.efforts(x, &u[..l.n_inputs]);
        let f = self.robot.generalized_forces(q, v, &efforts);
        let mut r: Vec<S> = (0..l.n_q)
            .map(|i| dot(&m[i], a) + bias[i].clone() - f[i].clone())
            .collect();
        for &c in active {
            let frame = &frames[c];
            let lambda = &u[l.lambda(c)..l.lambda(c) + l.m];
            let (w, _) = self.wrench(frame, lambda);
            for (i, ri) in r.iter_mut().enumerate() {
                let g = (0..3).fold(S::zero(), |s, k| {
                    s + frame.twist_r[k][i].clone() * w[k].clone()
                });
                *ri = ri.clone() - g;
            }
        }
        r
    }

    /// The variational inequality of one ground interval and the equation that defines y,
    /// given node k (state and controls) and node k + 1 (only its velocities are used).
    pub fn dissipation_rows<S: Scalar>(
        &self,
        now: &[S],
        next: &[S],
        active: &[usize],
    ) -> Vec<(String, S, f64, f64)> {
        let l = self.layout();
        let inf = f64::INFINITY;
        let q = &now[..l.n_q];
        let u = &now[l.n_x()..];
        let y = &u[l.aux()..l.aux() + l.n_q];
        let v_next = &next[l.n_q..2 * l.n_q];
        let all = self.contact_frames(q);
        let frames: Vec<&ContactFrame<S>> = active.iter().map(|&c| &all[c]).collect();
        // M y − Σ J_pᵀ M_g J_p v⁺ = 0.
        let m = self.robot.body.mass_matrix(q);
        let mut rows = Vec::new();
        let mut metric: Vec<S> = (0..l.n_q).map(|i| dot(&m[i], y)).collect();
        for (&frame, &c) in frames.iter().zip(active) {
            let mg = self.grain_inertia(c);
            for k in 0..3 {
                let speed = dot(&frame.twist_center[k], v_next) * mg[k];
                for (i, mi) in metric.iter_mut().enumerate() {
                    *mi = mi.clone() - frame.twist_center[k][i].clone() * speed.clone();
                }
            }
        }
        let names = &self.robot.coordinates;
        // Over the free coordinates: a locked one's y is 0 and its row the guide's.
        for (i, r) in metric.into_iter().enumerate() {
            if !self.robot.locked.contains(&i) {
                rows.push((format!("grain metric {}", names[i].name), r, 0.0, 0.0));
            }
        }
        let moved: Vec<S> = (0..l.n_q)
            .map(|i| v_next[i].clone() + y[i].clone())
            .collect();
        if !self.maximum_dissipation {
            return rows;
        }
        for (&frame, &c) in frames.iter().zip(active) {
            let lambda = &u[l.lambda(c)..l.lambda(c) + l.m];
            let (w, vertices) = self.wrench(frame, lambda);
            let g: Vec<S> = (0..3).map(|k| dot(&frame.twist_r[k], &moved)).collect();
            let dissipated = dot(&g, &w);
            let name = &self.robot.contacts[c].name;
            for (i, vertex) in vertices.iter().enumerate() {
                rows.push((
                    format!("{name} dissipation vertex {}", i + 1),
                    dot(&g, vertex) - dissipated.clone(),
                    0.0,
                    inf,
                ));
            }
            rows.push((
                format!("{name} dissipation origin"),
                S::zero() - dissipated,
                0.0,
                inf,
            ));
        }
        rows
    }
}
