//! The footholds guess (`initial_guess: footholds`): a gait's starting point built from its
//! schedule, for a robot whose legs must stand still on the ground while its body moves
//! (TOWR's initialisation, in the plane).
//!
//! - The base moves evenly over the task's distance in the schedule's guessed durations, at
//!   the start's height and pitch (the rest guess's base).
//! - Each stance of each foot has one foothold: where the start posture puts that foot when
//!   the base is at its position at the middle of the stance. The foot's target is its
//!   foothold at every node of the stance.
//! - Between two stances of a foot (or before its first, or after its last, from and to
//!   where the start posture puts it), the foot's target moves linearly in time from one
//!   foothold to the next and rises in a half sine to a tenth of the leg's standing height
//!   (the base's height above the foot at the start) in the middle.
//! - At each node the joints reach the targets by damped least squares from the start
//!   posture (Gauss-Newton on the joint coordinates, regularised toward the start posture,
//!   held within their limits); the velocities are the positions' differences.
//! - The weight is shared by the feet of each stance, as in the rest guess.
//!
//! Choices: the base is not solved for (its even motion is the gait's mean speed, which the
//! task fixes); a foot that cannot reach its target gets as near as its joints allow, which
//! the optimiser then corrects. The rest guess keeps every foot under the moving body, so
//! its stance feet slide by the stride; these footholds do not.

use nalgebra::{DMatrix, DVector};

use super::PlanarPlanner;
use crate::transcription::{Scheme, Trajectory};

impl PlanarPlanner {
    pub(super) fn footholds_guess(&self) -> Trajectory {
        let mut trajectory = self.rest_guess();
        let n = self.layout.n_q;
        let robot = &self.robot;
        let n_contacts = robot.contacts.len();
        let q0: Vec<f64> = trajectory.phases[0].states[0][..n].to_vec();
        // Node times, and each phase's start and end.
        let mut times: Vec<Vec<f64>> = Vec::new();
        let mut spans = Vec::new();
        let mut t0 = 0.0;
        for phase in &trajectory.phases {
            let m = phase.states.len();
            times.push(
                (0..m)
                    .map(|k| t0 + phase.duration * k as f64 / (m - 1) as f64)
                    .collect(),
            );
            spans.push((t0, t0 + phase.duration));
            t0 += phase.duration;
        }
        let total = t0;
        let (first, last) = (
            trajectory.phases[0].states[0][0],
            trajectory
                .phases
                .last()
                .expect("a phase")
                .states
                .last()
                .expect("a node")[0],
        );
        let base_x = |t: f64| first + (last - first) * t / total;
        // Where the start posture puts contact c with the base at x.
        let placed = |c: usize, x: f64| {
            let mut q = q0.clone();
            q[0] = x;
            robot.contact_point(&q, c)
        };
        // Each contact's stances: (start, end, foothold).
        let stances: Vec<Vec<(f64, f64, [f64; 2])>> = (0..n_contacts)
            .map(|c| {
                self.phases
                    .iter()
                    .zip(&spans)
                    .filter(|(active, _)| active.contains(&c))
                    .map(|(_, &(a, b))| (a, b, placed(c, base_x(0.5 * (a + b)))))
                    .collect()
            })
            .collect();
        let lift = |c: usize| 0.1 * (q0[1] - robot.contact_point(&q0, c)[1]).abs();
        // Contact c's target at time t.
        let target = |c: usize, t: f64| -> [f64; 2] {
            let list = &stances[c];
            if let Some(&(_, _, hold)) = list.iter().find(|(a, b, _)| *a <= t && t <= *b) {
                return hold;
            }
            let before = list.iter().rev().find(|(_, b, _)| *b < t);
            let after = list.iter().find(|(a, _, _)| *a > t);
            let (ta, from) = before.map_or((0.0, placed(c, base_x(0.0))), |&(_, b, p)| (b, p));
            let (tb, to) = after.map_or((total, placed(c, base_x(total))), |&(a, _, p)| (a, p));
            let s = if tb > ta { (t - ta) / (tb - ta) } else { 0.0 };
            let rise = lift(c) * (std::f64::consts::PI * s).sin();
            [
                from[0] + s * (to[0] - from[0]),
                from[1] + s * (to[1] - from[1]) + rise,
            ]
        };
        let bounds = robot.state_bounds();
        let joints: Vec<usize> = (3..n).filter(|j| !robot.locked.contains(j)).collect();
        for (p, phase) in trajectory.phases.iter_mut().enumerate() {
            for (k, x) in phase.states.iter_mut().enumerate() {
                let t = times[p][k];
                let targets: Vec<[f64; 2]> = (0..n_contacts).map(|c| target(c, t)).collect();
                let q = self.reach(&x[..n], &q0, &joints, &targets, &bounds);
                x[..n].copy_from_slice(&q);
            }
        }
        // Velocities: the positions' differences over the whole schedule.
        let nodes: Vec<(f64, Vec<f64>)> = trajectory
            .phases
            .iter()
            .zip(&times)
            .flat_map(|(phase, ts)| {
                ts.iter()
                    .zip(&phase.states)
                    .map(|(t, x)| (*t, x[..n].to_vec()))
            })
            .collect();
        let mut i: usize = 0;
        for phase in trajectory.phases.iter_mut() {
            for x in phase.states.iter_mut() {
                let (a, b) = (i.saturating_sub(1), (i + 1).min(nodes.len() - 1));
                let dt = nodes[b].0 - nodes[a].0;
                for j in 0..n {
                    x[n + j] = if dt > 0.0 {
                        (nodes[b].1[j] - nodes[a].1[j]) / dt
                    } else {
                        0.0
                    };
                }
                i += 1;
            }
            if self.scheme == Scheme::HermiteSimpson {
                for k in 0..phase.states.len() - 1 {
                    let mid: Vec<f64> = phase.states[k]
                        .iter()
                        .zip(&phase.states[k + 1])
                        .map(|(a, b)| 0.5 * (a + b))
                        .collect();
                    phase.mid_states[k] = mid;
                }
            }
        }
        trajectory
    }

    /// The joints `joints` of the posture `q` moved so that every contact nears its target,
    /// by damped Gauss-Newton regularised toward `rest`, within the coordinates' `bounds`.
    fn reach(
        &self,
        q: &[f64],
        rest: &[f64],
        joints: &[usize],
        targets: &[[f64; 2]],
        bounds: &[(f64, f64)],
    ) -> Vec<f64> {
        let robot = &self.robot;
        let mut q = q.to_vec();
        if joints.is_empty() {
            return q;
        }
        let (m, n_j) = (2 * targets.len(), joints.len());
        let regularisation = 1e-4;
        for _ in 0..50 {
            let mut jacobian = DMatrix::zeros(m, n_j);
            let mut residual = DVector::zeros(m);
            for (c, goal) in targets.iter().enumerate() {
                let contact = &robot.contacts[c];
                let p = robot.contact_point(&q, c);
                let rows = robot.body.point_jacobian(&q, contact.body, contact.point);
                for axis in 0..2 {
                    residual[2 * c + axis] = p[axis] - goal[axis];
                    for (col, &j) in joints.iter().enumerate() {
                        jacobian[(2 * c + axis, col)] = rows[axis][j];
                    }
                }
            }
            let pull = DVector::from_iterator(n_j, joints.iter().map(|&j| q[j] - rest[j]));
            let normal =
                jacobian.transpose() * &jacobian + DMatrix::identity(n_j, n_j) * regularisation;
            let rhs = -(jacobian.transpose() * &residual) - pull * regularisation;
            let Some(step) = normal.cholesky().map(|c| c.solve(&rhs)) else {
                break;
            };
            for (col, &j) in joints.iter().enumerate() {
                let (low, high) = bounds[j];
                q[j] = (q[j] + step[col]).clamp(low, high);
            }
            if step.norm() < 1e-10 {
                break;
            }
        }
        q
    }
}
