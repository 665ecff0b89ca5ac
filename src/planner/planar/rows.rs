//! The planar planner's rows, element by element: the equations of motion, the running
//! cost, the path rows of a phase (held feet, clearance), the impact of a landing and the
//! lift-off from a bed.

use std::rc::Rc;

use super::{dynamics_rows, to_bounded, PlanarPlanner, NORMAL_FORCE_MARGIN};
use crate::problem::planar::Objective;
use crate::scalar::Scalar;
use crate::symbolic::Sx;
use crate::terrain::rigid::{self, WRENCH};
use crate::transcription::{Bounded, Node, Point, PointConstraint};

impl PlanarPlanner {
    /// The equations of motion's residual M a + h − B u − Σ Jᵀ w for the contacts `active`.
    pub fn dynamics_residual<S: Scalar>(&self, x: &[S], u: &[S], active: &[usize]) -> Vec<S> {
        let l = self.layout;
        let (q, v) = x.split_at(l.n_q);
        let a = &u[l.accel(0)..l.accel(0) + l.n_q];
        let m = self.robot.body.mass_matrix(q);
        let h = self.robot.body.bias_forces(q, v);
        let inputs = &u[..l.n_inputs];
        let f = self.robot.generalized_forces(q, v, inputs);
        let mut r: Vec<S> = (0..l.n_q)
            .map(|i| {
                let ma = m[i]
                    .iter()
                    .zip(a)
                    .fold(S::zero(), |acc, (mij, aj)| acc + mij.clone() * aj.clone());
                ma + h[i].clone() - f[i].clone()
            })
            .collect();
        for &c in active {
            let w = &u[l.wrench(c)..l.wrench(c) + WRENCH];
            let g = rigid::generalized_force(&self.robot, c, q, w);
            for (ri, gi) in r.iter_mut().zip(g) {
                *ri = ri.clone() - gi;
            }
        }
        r
    }

    pub(super) fn running_cost(&self) -> impl Fn(&[Sx], &[Sx]) -> Sx {
        let inputs = self.robot.inputs.clone();
        let objective = self.problem.task.objective;
        let n_q = self.layout.n_q;
        let transport = self.weight() * self.problem.task.distance.unwrap_or(1.0).abs();
        move |x: &[Sx], u: &[Sx]| {
            let mut cost = Sx::from(0.0);
            for (i, input) in inputs.iter().enumerate() {
                let term = match objective {
                    Objective::Effort => {
                        let scale = input.scale();
                        (u[i].clone() / scale).square() * 0.5
                    }
                    Objective::TorqueSquared => u[i].square() * 0.5,
                    Objective::CostOfTransport => {
                        // |power|, smoothed at 0 so the NLP stays twice differentiable.
                        let power = u[i].clone() * x[n_q + input.coordinate].clone();
                        (power.square() + 1e-4).sqrt() / transport
                    }
                };
                cost = cost + term;
            }
            cost
        }
    }

    /// Contact `c` leaving the bed as phase `p` starts: it has stopped sinking (ż = 0 at the
    /// stance's last node) and, free of the bed, accelerates upward (z̈ ≥ 0 at the next
    /// phase's first node, whose state is the same); then it stays above its crater's floor,
    /// the height it left from, at every later node. (The crater's walls are not modelled.)
    ///
    /// The upward acceleration has a margin, [`NORMAL_FORCE_MARGIN`] g, for the reason the
    /// held feet's force has one: a plan that lifts a foot with z̈ = 0 leaves a replay's foot
    /// stuck in the bed under a load of round-off size.
    pub(super) fn leaves_the_bed(self: &Rc<Self>, p: usize, c: usize) -> [PointConstraint; 2] {
        let l = self.layout;
        let lift = Point {
            phase: p - 1,
            node: Node::Last,
        };
        let mut later = Vec::new();
        for phase in p..self.phases.len() {
            for k in 1..self.problem.schedule[phase].nodes {
                later.push(vec![
                    lift,
                    Point {
                        phase,
                        node: Node::Index(k),
                    },
                ]);
            }
        }
        let name = self.robot.contacts[c].name.clone();
        let planner = Rc::clone(self);
        let guard_name = name.clone();
        let least_lift = NORMAL_FORCE_MARGIN * self.problem.gravity;
        let guard = PointConstraint {
            name: format!("{name} leaves the bed"),
            f: Box::new(move |points: &[Vec<Sx>]| {
                let robot = &planner.robot;
                let (before, after) = (&points[0], &points[1]);
                let (q0, v0) = (&before[..l.n_q], &before[l.n_q..l.n_x()]);
                let (q1, v1) = (&after[..l.n_q], &after[l.n_q..l.n_x()]);
                let a1 = &after[l.n_x() + l.accel(0)..l.n_x() + l.accel(0) + l.n_q];
                let vz = rigid::velocity(robot, c, q0, v0).swap_remove(1);
                let az = rigid::acceleration(robot, c, q1, v1, a1).swap_remove(1);
                vec![
                    Bounded::equal(format!("{guard_name} stops sinking"), vz, 0.0).nominal(0.1),
                    Bounded::at_least(format!("{guard_name} accelerates up"), az, least_lift)
                        .nominal(1.0),
                ]
            }),
            instances: vec![vec![
                lift,
                Point {
                    phase: p,
                    node: Node::First,
                },
            ]],
        };
        let planner = Rc::clone(self);
        let crater = PointConstraint {
            name: format!("{name} above its crater"),
            f: Box::new(move |points: &[Vec<Sx>]| {
                let robot = &planner.robot;
                let floor = robot.contact_point(&points[0][..l.n_q], c)[1].clone();
                let z = robot.contact_point(&points[1][..l.n_q], c)[1].clone();
                vec![
                    Bounded::at_least(format!("{name} above its crater"), z - floor, 0.0)
                        .nominal(0.01),
                ]
            }),
            instances: later,
        };
        [guard, crater]
    }

    /// Whether some foot lands when phase `p` starts.
    pub fn lands(&self, p: usize) -> bool {
        p > 0
            && self.phases[p]
                .iter()
                .any(|c| !self.phases[p - 1].contains(c))
    }

    pub(super) fn path(&self, x: &[Sx], u: &[Sx], active: &[usize]) -> Vec<Bounded> {
        let l = self.layout;
        let weight = self.weight();
        let (q, v) = x.split_at(l.n_q);
        let a = &u[l.accel(0)..l.accel(0) + l.n_q];
        let mut rows = dynamics_rows(&self.robot, self.dynamics_residual(x, u, active), weight);
        for c in 0..l.n_contacts {
            let name = &self.robot.contacts[c].name;
            if active.contains(&c) {
                let w = &u[l.wrench(c)..l.wrench(c) + WRENCH];
                for (k, acc) in rigid::acceleration(&self.robot, c, q, v, a)
                    .into_iter()
                    .enumerate()
                {
                    match &self.bed {
                        // The bed holds the foot sideways (and level) like rigid ground, and
                        // vertically by its law, F_z = F_hyd + drag − m_a z̈, while it sinks.
                        Some(bed) if k == 1 => {
                            let z = self.robot.contact_point(q, c)[1].clone();
                            let vz = rigid::velocity(&self.robot, c, q, v).swap_remove(1);
                            let law = bed.resistance(&z, &vz).on_foot(&acc);
                            rows.push(
                                Bounded::equal(format!("{name} bed"), w[1].clone() - law, 0.0)
                                    .nominal(weight),
                            );
                            rows.push(
                                Bounded::at_most(format!("{name} sinks"), vz, 0.0).nominal(0.1),
                            );
                        }
                        _ => rows.push(
                            Bounded::equal(format!("{name} holds {k}"), acc, 0.0).nominal(1.0),
                        ),
                    }
                }
                rows.extend(
                    self.ground
                        .cone(name, w, self.robot.contacts[c].half_width, weight)
                        .into_iter()
                        .map(to_bounded),
                );
            } else if !(self.bed.is_some() && self.phases[0].contains(&c)) {
                // (A foot that left the bed stays above its crater: `crater_rows`.)
                for (k, z) in rigid::clearance(&self.robot, c, q).into_iter().enumerate() {
                    rows.push(
                        Bounded::at_least(format!("{name} clearance {k}"), z, 0.0).nominal(0.01),
                    );
                }
            }
        }
        rows
    }

    /// Entering a phase where feet land: touchdown guards and a plastic impact.
    pub(super) fn impact(
        &self,
        before: &[Sx],
        after: &[Sx],
        was: &[usize],
        active: &[usize],
    ) -> Vec<Bounded> {
        let l = self.layout;
        let weight = self.weight();
        let (q0, v0) = (&before[..l.n_q], &before[l.n_q..l.n_x()]);
        let (q1, v1) = (&after[..l.n_q], &after[l.n_q..l.n_x()]);
        let u1 = &after[l.n_x()..];
        let mut rows = Vec::new();
        for j in 0..l.n_q {
            rows.push(
                Bounded::equal(
                    format!("continuity {}", self.robot.coordinates[j].name),
                    q1[j].clone() - q0[j].clone(),
                    0.0,
                )
                .nominal(self.robot.coordinates[j].nominal),
            );
        }
        let m = self.robot.body.mass_matrix(q1);
        let mut momentum: Vec<Sx> = (0..l.n_q)
            .map(|i| {
                (0..l.n_q).fold(Sx::from(0.0), |acc, j| {
                    acc + m[i][j].clone() * (v1[j].clone() - v0[j].clone())
                })
            })
            .collect();
        for &c in active {
            let impulse = &u1[l.impulse(c)..l.impulse(c) + WRENCH];
            for (mi, gi) in
                momentum
                    .iter_mut()
                    .zip(rigid::generalized_force(&self.robot, c, q1, impulse))
            {
                *mi = mi.clone() - gi;
            }
            let name = &self.robot.contacts[c].name;
            for (k, vel) in rigid::velocity(&self.robot, c, q1, v1)
                .into_iter()
                .enumerate()
            {
                rows.push(Bounded::equal(format!("{name} stops {k}"), vel, 0.0).nominal(0.1));
            }
            rows.extend(
                self.ground
                    .cone(
                        &format!("{name} impulse"),
                        impulse,
                        self.robot.contacts[c].half_width,
                        weight * 0.01,
                    )
                    .into_iter()
                    .map(to_bounded),
            );
            if !was.contains(&c) {
                for (k, gap) in rigid::touchdown_gap(&self.robot, c, q1)
                    .into_iter()
                    .enumerate()
                {
                    rows.push(
                        Bounded::equal(format!("{name} touchdown {k}"), gap, 0.0).nominal(0.01),
                    );
                }
            }
        }
        for (j, r) in momentum.into_iter().enumerate() {
            rows.push(
                Bounded::equal(format!("impact {}", self.robot.coordinates[j].name), r, 0.0)
                    .nominal(weight * 0.01),
            );
        }
        rows
    }
}
