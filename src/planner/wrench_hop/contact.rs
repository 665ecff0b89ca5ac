//! A wrench-space hop's contact rows: each sole's frame and wrench, the equations of motion
//! with the grains' inertia, and the maximum-dissipation rows of a ground phase.

use super::{dot, ContactFrame, WrenchHop};
use crate::model::multibody::Frame;
use crate::scalar::Scalar;

use crate::terrain::wrench_set::WrenchSet;

impl WrenchHop {
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
        ContactFrame {
            depth: centre[1].clone(),
            tilt: frame.angle.clone(),
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

    /// The contact's wrench w = B(θ) λ at q with weights `lambda`, and the vertices.
    pub fn wrench<S: Scalar>(
        &self,
        frame: &ContactFrame<S>,
        lambda: &[S],
    ) -> ([S; 3], Vec<[S; 3]>) {
        let vertices = self.space.vertices(&frame.depth, &frame.tilt);
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
        let (q, v) = x.split_at(l.n_q);
        let a = &u[l.accel()..l.accel() + l.n_q];
        let body = &self.robot.body;
        let m = body.mass_matrix(q);
        let bias = body.bias_forces(q, v);
        let f = self.robot.generalized_forces(q, v, &u[..l.n_inputs]);
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
        let v_next = &next[l.n_q..l.n_x()];
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
        for (i, r) in metric.into_iter().enumerate() {
            rows.push((format!("grain metric {}", names[i].name), r, 0.0, 0.0));
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
