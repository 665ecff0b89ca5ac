//! The transcription's error, interval by interval (docs/MODEL.md 5.3): how far the plan's
//! next node is from where the planning model itself carries the plan's own node.
//!
//! At a converged plan the collocation's residuals are zero whatever the mesh, so they say
//! nothing about its accuracy. What does: start at node k's state and integrate the model's
//! equations of motion over the interval, with the plan's inputs and contact wrenches
//! interpolated as the scheme interpolates them (linear for trapezoidal, quadratic through
//! the midpoint for Hermite-Simpson), and compare with node k + 1:
//!
//! ```text
//! M(q) q̈ = B u(t) + Σ_c J_cᵀ w_c(t) − h(q, q̇) (+ springs, drives)     from x_k, over h_k
//! e_k = max_i |x̂_i(t_k+1) − x_i,k+1| / (1 + max over the plan |x_i|)
//! ```
//!
//! e_k is the scheme's local error (O(h³) for trapezoidal, O(h⁵) for Hermite-Simpson on a
//! smooth interval), relative to each state's size as Betts weighs it. Choices, each for a
//! reason: the accelerations are solved from the equations of motion (the plan's own `a` is
//! what the scheme makes of them, so using it would measure nothing); the contact wrenches are
//! the plan's, interpolated (a held foot then drifts by what the mesh misses between nodes;
//! a foot under the bed's law keeps its planned force, so the law's own change between nodes
//! is not counted); a locked coordinate stays where it is. The integration is classical
//! Runge-Kutta with 16 steps per interval, whose own error is about 16⁴ times smaller than
//! what it measures.

use super::PlanarPlanner;
use crate::transcription::Trajectory;

/// Steps of the reference integration per interval.
const SUBSTEPS: usize = 16;

/// The plan's interval errors.
#[derive(Clone, Debug, serde::Serialize)]
pub struct MeshError {
    /// How it was measured (for solution.json).
    pub method: &'static str,
    /// Per phase, per interval: e_k (relative; see the module).
    pub intervals: Vec<Vec<f64>>,
    /// The largest e_k, and the phase and interval (0-based) where it is.
    pub max: f64,
    /// Σ e_k over every interval of every phase: the plan's error in total, a bound (to first
    /// order, where the dynamics do not amplify it) on how far the local errors can add up
    /// along the plan.
    pub total: f64,
    pub worst_phase: usize,
    pub worst_interval: usize,
    /// The state (a `trajectory.csv` column) whose error that is.
    pub worst_state: String,
}

/// `M x = b` for a small dense system by Gaussian elimination with partial pivoting;
/// `None` when M is singular.
fn solve_dense(mut m: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| m[i][col].abs().total_cmp(&m[j][col].abs()))?;
        if m[pivot][col].abs() < 1e-300 {
            return None;
        }
        m.swap(col, pivot);
        b.swap(col, pivot);
        for row in col + 1..n {
            let f = m[row][col] / m[col][col];
            for k in col..n {
                m[row][k] -= f * m[col][k];
            }
            b[row] -= f * b[col];
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let s: f64 = (row + 1..n).map(|k| m[row][k] * x[k]).sum();
        x[row] = (b[row] - s) / m[row][row];
    }
    Some(x)
}

impl PlanarPlanner {
    /// ẋ from the equations of motion at state `x` with controls `u` (their accelerations
    /// ignored) and the contacts `active` carrying the wrenches in `u`.
    fn state_rate(&self, x: &[f64], u: &[f64], active: &[usize]) -> Option<Vec<f64>> {
        let l = self.layout;
        let mut at_rest = u.to_vec();
        for a in &mut at_rest[l.accel(0)..l.accel(0) + l.n_q] {
            *a = 0.0;
        }
        // r(a) = M a + r(0): the free coordinates' accelerations solve M_ff a_f = −r_f(0).
        let r0 = self.dynamics_residual(x, &at_rest, active);
        let m = self.robot.body.mass_matrix(&x[..l.n_q]);
        let free: Vec<usize> = (0..l.n_q)
            .filter(|j| !self.robot.locked.contains(j))
            .collect();
        let m_ff = free
            .iter()
            .map(|&i| free.iter().map(|&j| m[i][j]).collect())
            .collect();
        let a_f = solve_dense(m_ff, free.iter().map(|&i| -r0[i]).collect())?;
        let mut rate = x[l.v()].to_vec();
        let mut a = vec![0.0; l.n_q];
        for (&j, value) in free.iter().zip(a_f) {
            a[j] = value;
        }
        rate.extend(a);
        rate.extend(self.robot.drive_rates(x, &u[..l.n_inputs]));
        Some(rate)
    }

    /// Every interval's error of `trajectory` (a plan of this problem on this mesh).
    pub fn interval_errors(&self, trajectory: &Trajectory) -> MeshError {
        let n_x = self.layout.n_x();
        let mut scale = vec![1.0_f64; n_x];
        for phase in &trajectory.phases {
            for x in &phase.states {
                for (s, v) in scale.iter_mut().zip(x) {
                    *s = s.max(1.0 + v.abs());
                }
            }
        }
        let mut intervals = Vec::new();
        for (p, phase) in trajectory.phases.iter().enumerate() {
            let active = &self.phases[p];
            let n = phase.states.len();
            let h = phase.duration / (n - 1) as f64;
            let hermite = !phase.mid_controls.is_empty();
            let errors: Vec<(f64, usize)> = (0..n - 1)
                .map(|k| {
                    let (u0, u1) = (&phase.controls[k], &phase.controls[k + 1]);
                    let control = |s: f64| -> Vec<f64> {
                        if hermite {
                            // Lagrange through s = 0, ½, 1.
                            let um = &phase.mid_controls[k];
                            let (l0, lm, l1) = (
                                2.0 * (s - 0.5) * (s - 1.0),
                                -4.0 * s * (s - 1.0),
                                2.0 * s * (s - 0.5),
                            );
                            (0..u0.len())
                                .map(|i| l0 * u0[i] + lm * um[i] + l1 * u1[i])
                                .collect()
                        } else {
                            u0.iter().zip(u1).map(|(a, b)| a + s * (b - a)).collect()
                        }
                    };
                    let reached = self.integrate(&phase.states[k], h, &control, active);
                    match reached {
                        Some(x) => x
                            .iter()
                            .zip(&phase.states[k + 1])
                            .zip(&scale)
                            .map(|((a, b), s)| (a - b).abs() / s)
                            .enumerate()
                            .fold((0.0, 0), |m, (i, e)| if e > m.0 { (e, i) } else { m }),
                        None => (f64::INFINITY, 0),
                    }
                })
                .collect();
            intervals.push(errors);
        }
        let (mut max, mut worst_phase, mut worst_interval, mut state) = (0.0, 0, 0, 0);
        for (p, errors) in intervals.iter().enumerate() {
            for (k, &(e, i)) in errors.iter().enumerate() {
                if !(e <= max) {
                    (max, worst_phase, worst_interval, state) = (e, p, k, i);
                }
            }
        }
        let intervals: Vec<Vec<f64>> = intervals
            .into_iter()
            .map(|errors| errors.into_iter().map(|(e, _)| e).collect())
            .collect();
        let total = intervals.iter().flatten().sum();
        MeshError {
            method: "the planning model integrated over each interval from its first node \
                     (RK4, 16 steps), inputs and contact wrenches as planned; error relative \
                     to 1 + the state's largest magnitude",
            intervals,
            max,
            total,
            worst_phase,
            worst_interval,
            worst_state: self.state_names()[state].clone(),
        }
    }

    /// RK4 from `x0` over `h` with the controls `control(s)`, s = t / h.
    fn integrate(
        &self,
        x0: &[f64],
        h: f64,
        control: &dyn Fn(f64) -> Vec<f64>,
        active: &[usize],
    ) -> Option<Vec<f64>> {
        let dt = h / SUBSTEPS as f64;
        let mut x = x0.to_vec();
        let axpy = |x: &[f64], k: &[f64], c: f64| -> Vec<f64> {
            x.iter().zip(k).map(|(a, b)| a + c * b).collect()
        };
        for step in 0..SUBSTEPS {
            let s = step as f64 / SUBSTEPS as f64;
            let ds = 1.0 / SUBSTEPS as f64;
            let k1 = self.state_rate(&x, &control(s), active)?;
            let k2 = self.state_rate(&axpy(&x, &k1, 0.5 * dt), &control(s + 0.5 * ds), active)?;
            let k3 = self.state_rate(&axpy(&x, &k2, 0.5 * dt), &control(s + 0.5 * ds), active)?;
            let k4 = self.state_rate(&axpy(&x, &k3, dt), &control(s + ds), active)?;
            for i in 0..x.len() {
                x[i] += dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
            }
        }
        x.iter().all(|v| v.is_finite()).then_some(x)
    }
}
