//! Planar multibody dynamics of a tree of rigid bodies on a floating base, written once over
//! the scalar so that the simulators (`f64`) and the planner (CasADi `Sx`) share it.
//!
//! Convention: the x–z plane, z up; angles counter-clockwise (rotating +x toward +z), so
//! R(θ) = [[cos θ, −sin θ], [sin θ, cos θ]] maps body-frame (x, z) to world. A wrench is
//! (F_x, F_z, τ).
//!
//! Coordinates: q[0..3] = (x, z, θ) of body 0's frame in the world, then one coordinate per
//! joint in body order (body b ≥ 1 owns q[2 + b]); the generalized velocities are v = q̇.
//! Bodies are listed parents first, so every kinematic quantity is one forward pass.
//!
//! Everything generic is built from `+ − × ÷`, sin and cos only: no branch on a value, no
//! square root, no factorisation, so that tracing it symbolically gives the same function
//! everywhere (the planner differentiates it). The dynamics follow Kane's form for a tree
//! whose generalized speeds are q̇: M = Σ_b m_b J_bᵀ J_b + I_b J_θbᵀ J_θb with J_b the
//! Jacobian of body b's centre of mass and J_θb that of its angle, and
//! h = Σ_b J_bᵀ m_b (J̇_b v + (0, g)) (the J̇_θ v term vanishes: planar angles are linear in q),
//! so that M q̈ + h = Q.

use nalgebra::{DMatrix, DVector};
use thiserror::Error;

use crate::scalar::Scalar;

/// How a body moves relative to its parent.
#[derive(Clone, Debug, PartialEq)]
pub enum JointKind {
    /// The child frame rotates by q_j about the joint origin (counter-clockwise +).
    Revolute,
    /// The child frame translates by q_j along `axis` (a unit vector in the parent frame)
    /// from the joint origin, without rotating.
    Prismatic { axis: [f64; 2] },
}

/// The joint that attaches a body to its parent.
#[derive(Clone, Debug, PartialEq)]
pub struct Joint {
    pub kind: JointKind,
    /// Index of the parent body; smaller than the child's own index.
    pub parent: usize,
    /// Where the joint sits in the parent's frame [m]; at q_j = 0 the child frame's origin is
    /// here and its axes are the parent's.
    pub origin: [f64; 2],
}

/// One rigid body.
#[derive(Clone, Debug, PartialEq)]
pub struct Body {
    pub name: String,
    /// [kg]
    pub mass: f64,
    /// Moment of inertia about the centre of mass, perpendicular to the plane [kg m²].
    pub inertia: f64,
    /// Centre of mass in the body frame [m].
    pub com: [f64; 2],
    /// None for body 0 (the floating base), Some for every other body.
    pub joint: Option<Joint>,
}

/// A tree of rigid bodies on a floating base, under uniform gravity −g ẑ.
#[derive(Clone, Debug, PartialEq)]
pub struct Multibody {
    pub bodies: Vec<Body>,
    /// g [m/s²], acting along −z.
    pub gravity: f64,
    /// β [rad]: the angle by which the base's coordinate axes are turned from the world's
    /// (counter-clockwise +), 0 for a free robot. A guide tilted from the vertical (a rail at
    /// β holding `x` and `pitch`) moves the base along (−sin β, cos β): the base's frame is
    /// at R(β)(x, z) and its angle is pitch + β, so everything on it leans with the guide.
    pub guide_angle: f64,
}

/// A body's frame in the world at one configuration.
#[derive(Clone, Debug)]
pub struct Frame<S> {
    /// The frame origin [m].
    pub position: [S; 2],
    /// The frame's angle [rad]: the sum of the base angle and the revolute joints above it.
    pub angle: S,
    pub cos: S,
    pub sin: S,
}

impl<S: Scalar> Frame<S> {
    /// A body-frame vector rotated into the world.
    pub fn rotate(&self, local: [f64; 2]) -> [S; 2] {
        [
            self.cos.clone() * local[0] - self.sin.clone() * local[1],
            self.sin.clone() * local[0] + self.cos.clone() * local[1],
        ]
    }

    /// A body-frame point in the world.
    pub fn transform(&self, local: [f64; 2]) -> [S; 2] {
        let [dx, dz] = self.rotate(local);
        [self.position[0].clone() + dx, self.position[1].clone() + dz]
    }
}

/// Why a multibody description is not usable.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum MultibodyError {
    #[error("a multibody needs at least one body (the floating base)")]
    NoBodies,
    #[error("gravity must be finite, got {0} m/s^2")]
    Gravity(f64),
    #[error("the guide's angle must be finite and within (-pi/2, pi/2) rad, got {0}")]
    GuideAngle(f64),
    #[error("body `{body}`: {message}")]
    Body { body: String, message: String },
}

/// Velocity and bias acceleration (acceleration at q̈ = 0) of every frame origin, with the
/// frames' angular rates.
struct FrameMotion<S> {
    velocity: [S; 2],
    rate: S,
    bias: [S; 2],
}

/// perp(d) = (−d_z, d_x): the world velocity of a point at offset d from a centre rotating
/// at unit rate counter-clockwise.
fn perp<S: Scalar>(d: &[S; 2]) -> [S; 2] {
    [-d[1].clone(), d[0].clone()]
}

fn sub<S: Scalar>(a: &[S; 2], b: &[S; 2]) -> [S; 2] {
    [a[0].clone() - b[0].clone(), a[1].clone() - b[1].clone()]
}

impl Multibody {
    /// Number of generalized coordinates: 3 for the base and one per joint.
    pub fn n_q(&self) -> usize {
        self.bodies.len() + 2
    }

    /// The coordinate a body's joint drives (None for the base).
    pub fn joint_coordinate(&self, body: usize) -> Option<usize> {
        (body > 0).then_some(body + 2)
    }

    /// The world directions in which the base's `x` and `z` move: R(β) x̂ and R(β) ẑ, β the
    /// [`guide_angle`](Self::guide_angle) ((1, 0) and (0, 1) for a free robot).
    pub fn base_axes(&self) -> [[f64; 2]; 2] {
        let (s, c) = self.guide_angle.sin_cos();
        [[c, s], [-s, c]]
    }

    pub fn total_mass(&self) -> f64 {
        self.bodies.iter().map(|b| b.mass).sum()
    }

    fn joint(&self, body: usize) -> &Joint {
        self.bodies[body]
            .joint
            .as_ref()
            .unwrap_or_else(|| panic!("body `{}` has no joint", self.bodies[body].name))
    }

    /// Checks masses, inertias, centres of mass, joints and gravity; the messages name the
    /// body at fault.
    pub fn validate(&self) -> Result<(), MultibodyError> {
        if self.bodies.is_empty() {
            return Err(MultibodyError::NoBodies);
        }
        if !self.gravity.is_finite() {
            return Err(MultibodyError::Gravity(self.gravity));
        }
        if !(self.guide_angle.is_finite() && self.guide_angle.abs() < std::f64::consts::FRAC_PI_2) {
            return Err(MultibodyError::GuideAngle(self.guide_angle));
        }
        for (index, body) in self.bodies.iter().enumerate() {
            let fail = |message: String| {
                Err(MultibodyError::Body {
                    body: body.name.clone(),
                    message,
                })
            };
            if !(body.mass.is_finite() && body.mass > 0.0) {
                return fail(format!("mass must be > 0 kg, got {}", body.mass));
            }
            if !(body.inertia.is_finite() && body.inertia > 0.0) {
                return fail(format!("inertia must be > 0 kg m^2, got {}", body.inertia));
            }
            if !body.com.iter().all(|c| c.is_finite()) {
                return fail(format!("centre of mass must be finite, got {:?}", body.com));
            }
            match (&body.joint, index) {
                (Some(_), 0) => return fail("body 0 is the floating base and has no joint".into()),
                (None, 0) => {}
                (None, _) => return fail("every body but the base needs a joint".into()),
                (Some(joint), _) => {
                    if joint.parent >= index {
                        return fail(format!(
                            "parent must be an earlier body (index < {index}), got {}",
                            joint.parent
                        ));
                    }
                    if !joint.origin.iter().all(|c| c.is_finite()) {
                        return fail(format!(
                            "joint origin must be finite, got {:?}",
                            joint.origin
                        ));
                    }
                    if let JointKind::Prismatic { axis } = joint.kind {
                        let norm = axis[0].hypot(axis[1]);
                        if !norm.is_finite() || (norm - 1.0).abs() > 1e-9 {
                            return fail(format!(
                                "prismatic axis must be a unit vector, got {axis:?}"
                            ));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Every body's frame in the world.
    pub fn frames<S: Scalar>(&self, q: &[S]) -> Vec<Frame<S>> {
        assert_eq!(
            q.len(),
            self.n_q(),
            "q has {} entries, want {}",
            q.len(),
            self.n_q()
        );
        let mut frames: Vec<Frame<S>> = Vec::with_capacity(self.bodies.len());
        let base = self.base_axes();
        let angle = q[2].clone() + self.guide_angle;
        frames.push(Frame {
            position: [
                q[0].clone() * base[0][0] + q[1].clone() * base[1][0],
                q[0].clone() * base[0][1] + q[1].clone() * base[1][1],
            ],
            cos: angle.cos(),
            sin: angle.sin(),
            angle,
        });
        for b in 1..self.bodies.len() {
            let joint = self.joint(b);
            let qj = q[b + 2].clone();
            let parent = &frames[joint.parent];
            let frame = match joint.kind {
                JointKind::Revolute => {
                    let angle = parent.angle.clone() + qj;
                    Frame {
                        position: parent.transform(joint.origin),
                        cos: angle.cos(),
                        sin: angle.sin(),
                        angle,
                    }
                }
                JointKind::Prismatic { axis } => {
                    let [ox, oz] = parent.transform(joint.origin);
                    let [ax, az] = parent.rotate(axis);
                    Frame {
                        position: [ox + ax * qj.clone(), oz + az * qj],
                        angle: parent.angle.clone(),
                        cos: parent.cos.clone(),
                        sin: parent.sin.clone(),
                    }
                }
            };
            frames.push(frame);
        }
        frames
    }

    /// A body-frame point in the world [m].
    pub fn point<S: Scalar>(&self, q: &[S], body: usize, local: [f64; 2]) -> [S; 2] {
        self.frames(q)[body].transform(local)
    }

    /// Bodies from `body` up to (not including) the base.
    fn chain(&self, body: usize) -> Vec<usize> {
        let mut chain = Vec::new();
        let mut b = body;
        while b != 0 {
            chain.push(b);
            b = self.joint(b).parent;
        }
        chain
    }

    /// [`point_jacobian`](Self::point_jacobian) from frames already computed at q.
    pub fn point_jacobian_in<S: Scalar>(
        &self,
        frames: &[Frame<S>],
        body: usize,
        local: [f64; 2],
    ) -> [Vec<S>; 2] {
        let n = self.n_q();
        let r = frames[body].transform(local);
        let mut jx = vec![S::zero(); n];
        let mut jz = vec![S::zero(); n];
        let base = self.base_axes();
        jx[0] = S::constant(base[0][0]);
        jz[0] = S::constant(base[0][1]);
        jx[1] = S::constant(base[1][0]);
        jz[1] = S::constant(base[1][1]);
        // The base angle turns everything about the base origin.
        let [px, pz] = perp(&sub(&r, &frames[0].position));
        jx[2] = px;
        jz[2] = pz;
        for b in self.chain(body) {
            let joint = self.joint(b);
            let [cx, cz] = match joint.kind {
                // A revolute joint turns the point about the joint, which is the child frame's
                // origin.
                JointKind::Revolute => perp(&sub(&r, &frames[b].position)),
                JointKind::Prismatic { axis } => frames[joint.parent].rotate(axis),
            };
            jx[b + 2] = cx;
            jz[b + 2] = cz;
        }
        [jx, jz]
    }

    /// ∂(point)/∂q: rows x and z, n_q columns.
    pub fn point_jacobian<S: Scalar>(&self, q: &[S], body: usize, local: [f64; 2]) -> [Vec<S>; 2] {
        self.point_jacobian_in(&self.frames(q), body, local)
    }

    /// ∂(body angle)/∂q: 1 for the base angle and each revolute joint above the body, else 0.
    /// Constant, since planar angles add.
    pub fn angle_jacobian(&self, body: usize) -> Vec<f64> {
        let mut j = vec![0.0; self.n_q()];
        j[2] = 1.0;
        for b in self.chain(body) {
            if self.joint(b).kind == JointKind::Revolute {
                j[b + 2] = 1.0;
            }
        }
        j
    }

    /// Velocities and bias accelerations of all frame origins (one forward pass).
    fn motions<S: Scalar>(&self, frames: &[Frame<S>], v: &[S]) -> Vec<FrameMotion<S>> {
        assert_eq!(
            v.len(),
            self.n_q(),
            "v has {} entries, want {}",
            v.len(),
            self.n_q()
        );
        let mut motions: Vec<FrameMotion<S>> = Vec::with_capacity(self.bodies.len());
        let base = self.base_axes();
        motions.push(FrameMotion {
            velocity: [
                v[0].clone() * base[0][0] + v[1].clone() * base[1][0],
                v[0].clone() * base[0][1] + v[1].clone() * base[1][1],
            ],
            rate: v[2].clone(),
            bias: [S::zero(), S::zero()],
        });
        for b in 1..self.bodies.len() {
            let joint = self.joint(b);
            let vj = v[b + 2].clone();
            let parent = &motions[joint.parent];
            let w = parent.rate.clone();
            let w2 = w.clone() * w.clone();
            // Offset of the child origin from the parent origin, in the world.
            let d = sub(&frames[b].position, &frames[joint.parent].position);
            let [tx, tz] = perp(&d);
            // Carried along by the parent: v = v_p + ω_p ⊥d, a = a_p − ω_p² d.
            let mut velocity = [
                parent.velocity[0].clone() + w.clone() * tx,
                parent.velocity[1].clone() + w.clone() * tz,
            ];
            let mut bias = [
                parent.bias[0].clone() - w2.clone() * d[0].clone(),
                parent.bias[1].clone() - w2 * d[1].clone(),
            ];
            let rate = match joint.kind {
                JointKind::Revolute => w + vj,
                JointKind::Prismatic { axis } => {
                    // Sliding along the turning axis e adds e v_j and the Coriolis term
                    // 2 ω_p v_j ⊥e.
                    let e = frames[joint.parent].rotate(axis);
                    let [ex, ez] = e.clone();
                    let [px, pz] = perp(&e);
                    velocity[0] = velocity[0].clone() + ex * vj.clone();
                    velocity[1] = velocity[1].clone() + ez * vj.clone();
                    let coriolis = w.clone() * vj * 2.0;
                    bias[0] = bias[0].clone() + coriolis.clone() * px;
                    bias[1] = bias[1].clone() + coriolis * pz;
                    w
                }
            };
            motions.push(FrameMotion {
                velocity,
                rate,
                bias,
            });
        }
        motions
    }

    fn point_velocity_in<S: Scalar>(
        frames: &[Frame<S>],
        motions: &[FrameMotion<S>],
        body: usize,
        local: [f64; 2],
    ) -> [S; 2] {
        let m = &motions[body];
        let [tx, tz] = perp(&frames[body].rotate(local));
        [
            m.velocity[0].clone() + m.rate.clone() * tx,
            m.velocity[1].clone() + m.rate.clone() * tz,
        ]
    }

    fn point_bias_in<S: Scalar>(
        frames: &[Frame<S>],
        motions: &[FrameMotion<S>],
        body: usize,
        local: [f64; 2],
    ) -> [S; 2] {
        let m = &motions[body];
        let [dx, dz] = frames[body].rotate(local);
        let w2 = m.rate.clone() * m.rate.clone();
        [
            m.bias[0].clone() - w2.clone() * dx,
            m.bias[1].clone() - w2 * dz,
        ]
    }

    /// World velocity of a body-frame point, J(q) v [m/s].
    pub fn point_velocity<S: Scalar>(
        &self,
        q: &[S],
        v: &[S],
        body: usize,
        local: [f64; 2],
    ) -> [S; 2] {
        let frames = self.frames(q);
        let motions = self.motions(&frames, v);
        Self::point_velocity_in(&frames, &motions, body, local)
    }

    /// The world velocities of body-frame points `(body, local)` and their bodies' angular
    /// rates at (q, v), from frames already computed at q: one pass over the tree for all.
    pub fn point_twists_in<S: Scalar>(
        &self,
        frames: &[Frame<S>],
        v: &[S],
        points: &[(usize, [f64; 2])],
    ) -> Vec<([S; 2], S)> {
        let motions = self.motions(frames, v);
        points
            .iter()
            .map(|&(body, local)| {
                (
                    Self::point_velocity_in(frames, &motions, body, local),
                    motions[body].rate.clone(),
                )
            })
            .collect()
    }

    /// J̇(q, v) v: the point's world acceleration when q̈ = 0 [m/s²]; its acceleration is
    /// J q̈ + this.
    pub fn point_bias_acceleration<S: Scalar>(
        &self,
        q: &[S],
        v: &[S],
        body: usize,
        local: [f64; 2],
    ) -> [S; 2] {
        let frames = self.frames(q);
        let motions = self.motions(&frames, v);
        Self::point_bias_in(&frames, &motions, body, local)
    }

    /// M(q) = Σ_b m_b J_bᵀ J_b + I_b J_θbᵀ J_θb, symmetric positive definite for a valid
    /// multibody.
    pub fn mass_matrix<S: Scalar>(&self, q: &[S]) -> Vec<Vec<S>> {
        let n = self.n_q();
        let frames = self.frames(q);
        let mut m = vec![vec![S::zero(); n]; n];
        for (b, body) in self.bodies.iter().enumerate() {
            let [jx, jz] = self.point_jacobian_in(&frames, b, body.com);
            let ja = self.angle_jacobian(b);
            // Only the columns this body depends on: the base's and its chain's.
            let mut cols = vec![0, 1, 2];
            cols.extend(self.chain(b).into_iter().map(|c| c + 2));
            for &i in &cols {
                for &j in &cols {
                    if j > i {
                        continue;
                    }
                    let mut term =
                        (jx[i].clone() * jx[j].clone() + jz[i].clone() * jz[j].clone()) * body.mass;
                    let angular = ja[i] * ja[j] * body.inertia;
                    if angular != 0.0 {
                        term = term + angular;
                    }
                    m[i][j] = m[i][j].clone() + term;
                }
            }
        }
        // Fill the upper triangle from the lower one.
        for i in 0..n {
            let column: Vec<S> = m[i + 1..].iter().map(|row| row[i].clone()).collect();
            m[i][i + 1..].clone_from_slice(&column);
        }
        m
    }

    /// h(q, v): Coriolis, centrifugal and gravity terms, so that M q̈ + h = Q.
    pub fn bias_forces<S: Scalar>(&self, q: &[S], v: &[S]) -> Vec<S> {
        let n = self.n_q();
        let frames = self.frames(q);
        let motions = self.motions(&frames, v);
        let mut h = vec![S::zero(); n];
        for (b, body) in self.bodies.iter().enumerate() {
            let [jx, jz] = self.point_jacobian_in(&frames, b, body.com);
            let [ax, az] = Self::point_bias_in(&frames, &motions, b, body.com);
            let fx = ax * body.mass;
            let fz = (az + self.gravity) * body.mass;
            for i in 0..n {
                h[i] = h[i].clone() + jx[i].clone() * fx.clone() + jz[i].clone() * fz.clone();
            }
        }
        h
    }

    /// T = Σ_b ½ m_b |ṙ_b|² + ½ I_b ω_b² [J], from the bodies' velocities (not from M).
    pub fn kinetic_energy<S: Scalar>(&self, q: &[S], v: &[S]) -> S {
        let frames = self.frames(q);
        let motions = self.motions(&frames, v);
        let mut t = S::zero();
        for (b, body) in self.bodies.iter().enumerate() {
            let [vx, vz] = Self::point_velocity_in(&frames, &motions, b, body.com);
            let w = motions[b].rate.clone();
            t = t
                + (vx.clone() * vx + vz.clone() * vz) * (0.5 * body.mass)
                + w.clone() * w * (0.5 * body.inertia);
        }
        t
    }

    /// V = Σ_b m_b g z_b [J], zero at z = 0.
    pub fn potential_energy<S: Scalar>(&self, q: &[S]) -> S {
        let frames = self.frames(q);
        let mut v = S::zero();
        for (b, body) in self.bodies.iter().enumerate() {
            let [_, z] = frames[b].transform(body.com);
            v = v + z * (body.mass * self.gravity);
        }
        v
    }

    /// The whole system's centre of mass in the world [m].
    pub fn centre_of_mass<S: Scalar>(&self, q: &[S]) -> [S; 2] {
        self.centre_of_mass_in(&self.frames(q))
    }

    /// [`centre_of_mass`](Self::centre_of_mass) from frames already computed at q.
    pub fn centre_of_mass_in<S: Scalar>(&self, frames: &[Frame<S>]) -> [S; 2] {
        let mut c = [S::zero(), S::zero()];
        for (b, body) in self.bodies.iter().enumerate() {
            let [x, z] = frames[b].transform(body.com);
            c[0] = c[0].clone() + x * body.mass;
            c[1] = c[1].clone() + z * body.mass;
        }
        let total = self.total_mass();
        [c[0].clone() / total, c[1].clone() / total]
    }

    /// Generalized force of a wrench (F_x, F_z, τ) applied at a body-frame point:
    /// J_pᵀ F + J_θᵀ τ.
    pub fn wrench_to_generalized<S: Scalar>(
        &self,
        q: &[S],
        body: usize,
        local: [f64; 2],
        wrench: &[S; 3],
    ) -> Vec<S> {
        self.wrench_to_generalized_in(&self.frames(q), body, local, wrench)
    }

    /// [`wrench_to_generalized`](Self::wrench_to_generalized) from frames already computed
    /// at q.
    pub fn wrench_to_generalized_in<S: Scalar>(
        &self,
        frames: &[Frame<S>],
        body: usize,
        local: [f64; 2],
        wrench: &[S; 3],
    ) -> Vec<S> {
        let [jx, jz] = self.point_jacobian_in(frames, body, local);
        let ja = self.angle_jacobian(body);
        (0..self.n_q())
            .map(|i| {
                let mut g = jx[i].clone() * wrench[0].clone() + jz[i].clone() * wrench[1].clone();
                if ja[i] != 0.0 {
                    g = g + wrench[2].clone() * ja[i];
                }
                g
            })
            .collect()
    }

    /// M(q) as a dense matrix.
    pub fn mass_matrix_f64(&self, q: &[f64]) -> DMatrix<f64> {
        let m = self.mass_matrix(q);
        let n = self.n_q();
        DMatrix::from_fn(n, n, |i, j| m[i][j])
    }

    /// q̈ from M q̈ = Q − h, by Cholesky.
    ///
    /// Panics if M is not positive definite, which `validate` rules out (positive masses and
    /// inertias, unit prismatic axes).
    pub fn forward_dynamics_f64(
        &self,
        q: &[f64],
        v: &[f64],
        generalized_force: &[f64],
    ) -> DVector<f64> {
        let n = self.n_q();
        assert_eq!(
            generalized_force.len(),
            n,
            "generalized force has the wrong length"
        );
        let h = self.bias_forces(q, v);
        let rhs = DVector::from_fn(n, |i, _| generalized_force[i] - h[i]);
        let cholesky = self
            .mass_matrix_f64(q)
            .cholesky()
            .expect("mass matrix not positive definite: validate the multibody first");
        cholesky.solve(&rhs)
    }
}

#[cfg(all(test, feature = "planner"))]
mod tests {
    use super::*;
    use crate::symbolic::{Function, Sx};

    /// The generic code traces with CasADi symbols, and the traced mass matrix and bias
    /// forces evaluate to the f64 ones.
    #[test]
    fn symbolic_trace_matches_f64() {
        let body = Multibody {
            gravity: 9.81,
            guide_angle: 0.0,
            bodies: vec![
                Body {
                    name: "base".into(),
                    mass: 3.0,
                    inertia: 0.2,
                    com: [0.1, -0.05],
                    joint: None,
                },
                Body {
                    name: "arm".into(),
                    mass: 1.0,
                    inertia: 0.05,
                    com: [0.0, -0.2],
                    joint: Some(Joint {
                        kind: JointKind::Revolute,
                        parent: 0,
                        origin: [0.2, 0.0],
                    }),
                },
                Body {
                    name: "slider".into(),
                    mass: 0.5,
                    inertia: 0.01,
                    com: [0.0, 0.0],
                    joint: Some(Joint {
                        kind: JointKind::Prismatic { axis: [0.0, -1.0] },
                        parent: 1,
                        origin: [0.0, -0.1],
                    }),
                },
            ],
        };
        let n = body.n_q();
        let (qs, q) = Sx::symbols("q", n);
        let (vs, v) = Sx::symbols("v", n);
        let m = body.mass_matrix(&q);
        let h = body.bias_forces(&q, &v);
        let flat: Vec<Sx> = m.into_iter().flatten().chain(h).collect();
        let out = Sx::vertcat(&flat);
        let mut f = Function::new("multibody", &[&qs, &vs], &[&out]).unwrap();
        let q0 = [0.3, 0.7, 0.4, -0.6, 0.25];
        let v0 = [0.5, -0.2, 1.1, 0.8, -0.3];
        let input: Vec<f64> = q0.iter().chain(v0.iter()).copied().collect();
        let mut output = vec![0.0; f.output_len()];
        f.eval(&input, &mut output).unwrap();
        // Structural zeros are left out of the output; place the rest by the sparsity.
        let mut dense = vec![0.0; n * n + n];
        let (rows, _) = out.sparsity();
        for (&row, value) in rows.iter().zip(&output) {
            dense[row] = *value;
        }
        let mf = body.mass_matrix(&q0);
        let hf = body.bias_forces(&q0, &v0);
        let expected: Vec<f64> = mf.into_iter().flatten().chain(hf).collect();
        for (a, b) in dense.iter().zip(&expected) {
            assert!((a - b).abs() < 1e-12, "{a} vs {b}");
        }
    }
}
