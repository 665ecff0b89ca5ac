//! The longest stable step of a ground phase (the MDP step, semi-implicit Euler).
//!
//! The step is explicit in the robot's stiff forces: springs, dampers and drives (a drive's
//! velocity loop, K_m V_p over the reduced mass it moves, is about 270 1/s on the hopper and
//! turns its step unstable above about 5 ms). An open-loop replay of a plan with longer
//! steps then drifts away from it geometrically, so a ground phase's duration is capped at
//! (N − 1) · 0.9 · the longest stable step ([`super::WrenchSpacePlanner::ground_duration_cap`]).
//!
//! Choice: the stability of the step's *linear part*, with the mass matrix and gravity frozen
//! at the start's configuration. Springs, dampers and drives are linear in the state, so for
//! them this is exact; a robot's configuration-dependent forces (gravity's torque on a
//! pendulum) are left out, since they make even the exact flow grow and would cap every
//! step. The map is tested with every foot free and with the first phase's feet held (their
//! velocity removed in the metric of M every step, as a sticking foot), and a step is stable
//! when neither map's spectral radius exceeds 1 + 1e-6: the free map has the eigenvalue 1
//! several times in a Jordan block (moving the whole robot, a drive's command and its
//! integrator), whose computed eigenvalues scatter by about √ε.

use nalgebra::DMatrix;

use super::WrenchSpacePlanner;

/// The top of the search: a robot stable at this step has no cap.
const LONGEST: f64 = 0.1;

impl WrenchSpacePlanner {
    /// The longest stable step \[s\] (within 1e-6 s) at configuration `q`, `None` when the
    /// step is stable up to 0.1 s (a robot with no springs, dampers or drives).
    pub fn stable_step(&self, q: &[f64]) -> Option<f64> {
        let stable = |h: f64| {
            self.spectral_radius(q, h, true) <= 1.0 + 1e-6
                && self.spectral_radius(q, h, false) <= 1.0 + 1e-6
        };
        if stable(LONGEST) {
            return None;
        }
        let (mut low, mut high) = (0.0, LONGEST);
        while high - low > 1e-6 {
            let mid = 0.5 * (low + high);
            if stable(mid) {
                low = mid;
            } else {
                high = mid;
            }
        }
        Some(low)
    }

    /// The spectral radius of the step's linear part (see the module docs) of length `h` at
    /// configuration `q`, the first phase's feet `held` or every foot free.
    pub fn spectral_radius(&self, q: &[f64], h: f64, held: bool) -> f64 {
        let robot = &self.robot;
        let n = robot.n_q();
        let n_x = robot.n_x();
        let free: Vec<usize> = (0..n).filter(|j| !robot.locked.contains(j)).collect();
        let m = robot.body.mass_matrix_f64(q);
        let m_free = DMatrix::from_fn(free.len(), free.len(), |i, j| m[(free[i], free[j])]);
        let m_inv = m_free
            .clone()
            .try_inverse()
            .expect("a validated robot's mass matrix is invertible");
        // The held feet's point Jacobians over the free coordinates (x and z rows).
        let feet = &self.first_ground_phase().contacts;
        let mut jac = DMatrix::zeros(2 * feet.len(), free.len());
        for (r, &c) in feet.iter().enumerate() {
            let spec = &robot.contacts[c];
            let rows = robot.body.point_jacobian(q, spec.body, spec.point);
            for (k, row) in rows.iter().enumerate() {
                for (i, &j) in free.iter().enumerate() {
                    jac[(2 * r + k, i)] = row[j];
                }
            }
        }
        // v ↦ v − M⁻¹Jᵀ(J M⁻¹ Jᵀ)⁺ J v: the plastic impact that stops the held feet (the
        // pseudo-inverse, since a guide leaves a foot fewer directions than two).
        let projector = {
            let gram = &jac * &m_inv * jac.transpose();
            let inverse = gram
                .pseudo_inverse(1e-12)
                .expect("the pseudo-inverse of a symmetric matrix exists");
            DMatrix::identity(free.len(), free.len()) - &m_inv * jac.transpose() * inverse * &jac
        };
        let inputs = vec![0.0; robot.inputs.len()];
        let map = |x: &[f64]| -> Vec<f64> {
            let (qx, vx) = (&x[..n], &x[n..2 * n]);
            let efforts = robot.efforts(x, &inputs);
            let force = robot.generalized_forces(qx, vx, &efforts);
            let f = DMatrix::from_fn(free.len(), 1, |i, _| force[free[i]]);
            let a = &m_inv * f;
            let mut v_next = DMatrix::from_fn(free.len(), 1, |i, _| vx[free[i]] + h * a[i]);
            if held {
                v_next = &projector * v_next;
            }
            let mut next = x.to_vec();
            for (i, &j) in free.iter().enumerate() {
                next[n + j] = v_next[i];
                next[j] = qx[j] + h * v_next[i];
            }
            for (k, rate) in robot.drive_rates(x, &inputs).into_iter().enumerate() {
                next[2 * n + k] = x[2 * n + k] + h * rate;
            }
            next
        };
        let mut rest = q.to_vec();
        rest.resize(n_x, 0.0);
        let base = map(&rest);
        let jacobian = DMatrix::from_fn(n_x, n_x, |i, j| {
            let mut x = rest.clone();
            x[j] += 1.0;
            map(&x)[i] - base[i]
        });
        jacobian
            .complex_eigenvalues()
            .iter()
            .map(|l| l.norm())
            .fold(0.0, f64::max)
    }
}
